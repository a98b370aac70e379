//! The server under measurement ([`Subject`]): how it runs code (which tool, which argument
//! names, found from its tool list so other MCP servers can be measured with the same calls),
//! whether it has sessions, and the calls every measurement makes through it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use sandbox_tests::Client;
use serde_json::{Map, Value, json};

/// A language (and runtime) a figure is measured on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lang {
    /// The figure labels' prefix: the runtime's name.
    pub label: &'static str,
    /// `language` of `create_session` and `execute_code`.
    pub language: &'static str,
    /// `runtime` of `create_session`, when it is named.
    pub runtime: Option<&'static str>,
    /// A trivial cell: what a warm call and a throughput call run.
    pub trivial: &'static str,
    /// The pause between two measured new sessions: long enough for a pool of pre-started
    /// workers to refill in the background (a Python worker from the memory image or a QuickJS
    /// one starts in tens of milliseconds), so each sample is the cost a user meets at a normal
    /// pace.
    pub refill_pause: Duration,
}

pub const PYTHON: Lang = Lang {
    label: "python",
    language: "python",
    runtime: Some("python"),
    trivial: "x = 1\nx + 1",
    refill_pause: Duration::from_millis(300),
};
pub const JAVASCRIPT: Lang = Lang {
    label: "javascript",
    language: "javascript",
    runtime: None,
    trivial: "var x = 1; x + 1",
    refill_pause: Duration::from_millis(300),
};

/// How a server runs code: the tool, and the names of its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeTool {
    pub name: String,
    /// The required string argument that takes the code.
    pub code: String,
    /// The argument that names the language, if the tool has one.
    pub language: Option<String>,
    /// The argument that names a session, if the tool has one.
    pub session: Option<String>,
    /// The languages it is expected to run ("python", "javascript"), each with the value its
    /// language argument takes for it (`python3` in an enum of `python3`; the same name when
    /// the argument has no enum).
    pub languages: Vec<(&'static str, String)>,
}

/// The argument names that take code: `code`, `script`, `source`, or ending in `_code`,
/// `_script` or `_source` (`python_code` of mcp-run-python's `run_python_code`).
fn takes_code(property: &str) -> bool {
    let property = property.to_ascii_lowercase();
    ["code", "script", "source"].contains(&property.as_str())
        || ["_code", "_script", "_source"]
            .iter()
            .any(|suffix| property.ends_with(suffix))
}

/// Whether an argument names the language: `language`, `lang`, or starting with `language`
/// (`languageId` of mcp-server-code-runner's `run-code`).
fn names_language(property: &str) -> bool {
    let property = property.to_ascii_lowercase();
    property == "lang" || property.starts_with("language")
}

/// The properties of a JSON schema object and its `required` list.
fn properties_of(schema: &Value) -> (Map<String, Value>, Vec<String>) {
    let properties = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let required = schema["required"]
        .as_array()
        .map(|r| {
            r.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    (properties, required)
}

/// Whether a schema property is a string (`"type": "string"` or a list including it).
fn is_string(property: &Value) -> bool {
    match &property["type"] {
        Value::String(kind) => kind == "string",
        Value::Array(kinds) => kinds.iter().any(|k| k == "string"),
        _ => false,
    }
}

/// The code tool among `tools` (`(name, input schema)` pairs): `execute_code` when present,
/// else the first tool with a required string argument that takes code ([`takes_code`]).
///
/// # Errors
/// When no tool qualifies (the message lists the tools seen).
pub fn choose_code_tool(tools: &[(String, Value)]) -> Result<CodeTool> {
    let code_argument = |schema: &Value| {
        let (properties, required) = properties_of(schema);
        required
            .into_iter()
            .find(|name| takes_code(name) && properties.get(name).is_some_and(is_string))
    };
    let chosen = tools
        .iter()
        .find(|(name, schema)| name == "execute_code" && code_argument(schema).is_some())
        .or_else(|| {
            tools
                .iter()
                .find(|(_, schema)| code_argument(schema).is_some())
        });
    let Some((name, schema)) = chosen else {
        let names: Vec<&str> = tools.iter().map(|(n, _)| n.as_str()).collect();
        bail!("no tool takes code as a required string argument (tools: {names:?})");
    };
    let code = code_argument(schema).context("checked above")?;
    let (properties, _) = properties_of(schema);
    let language = properties.keys().find(|name| names_language(name)).cloned();
    let session = properties
        .contains_key("session_id")
        .then(|| "session_id".to_owned());
    let languages = match &language {
        Some(l) => languages_of_enum(&properties[l]),
        None => languages_named_in(&format!("{name} {code}")),
    };
    Ok(CodeTool {
        name: name.clone(),
        code,
        language,
        session,
        languages,
    })
}

/// Both languages, under their own names.
fn both_languages() -> Vec<(&'static str, String)> {
    vec![
        ("python", "python".to_owned()),
        ("javascript", "javascript".to_owned()),
    ]
}

/// The languages a `language` argument accepts, with the enum value for each; both when it has
/// no enum.
fn languages_of_enum(property: &Value) -> Vec<(&'static str, String)> {
    let Some(values) = property["enum"].as_array() else {
        return both_languages();
    };
    let value_for = |names: &[&str]| {
        values
            .iter()
            .filter_map(Value::as_str)
            .find(|v| names.contains(&v.to_ascii_lowercase().as_str()))
            .map(str::to_owned)
    };
    let mut languages = Vec::new();
    languages.extend(value_for(&["python", "python3", "py"]).map(|v| ("python", v)));
    languages.extend(value_for(&["javascript", "js", "node"]).map(|v| ("javascript", v)));
    languages
}

/// The languages named in a tool's and argument's names (`run_python_code` runs Python); both
/// when none is named, so a refusal shows in the figure.
fn languages_named_in(names: &str) -> Vec<(&'static str, String)> {
    let words: Vec<String> = names
        .split(|c: char| !c.is_ascii_alphanumeric())
        .map(str::to_ascii_lowercase)
        .collect();
    let named = |options: &[&str]| words.iter().any(|w| options.contains(&w.as_str()));
    let mut languages = Vec::new();
    if named(&["python", "python3", "py"]) {
        languages.push(("python", "python".to_owned()));
    }
    if named(&[
        "javascript",
        "js",
        "node",
        "nodejs",
        "typescript",
        "ts",
        "deno",
    ]) {
        languages.push(("javascript", "javascript".to_owned()));
    }
    if languages.is_empty() {
        languages = both_languages();
    }
    languages
}

/// A server's client, shared with the tasks of a throughput run.
pub type SharedClient = Arc<dyn std::ops::Deref<Target = Client> + Send + Sync>;

/// A server being measured.
pub struct Subject {
    /// The connection to the server.
    pub client: SharedClient,
    /// Process id of the server (for its process tree).
    pub pid: u32,
    /// How the server runs code.
    pub tool: CodeTool,
    /// The arguments `create_session` takes, when the server has sessions.
    pub create_session: Option<Vec<String>>,
    /// Numbers the sessions this run creates.
    next_session: AtomicUsize,
}

impl Subject {
    /// Learns how `client`'s server runs code from its tool list.
    ///
    /// # Errors
    /// When the tools cannot be listed or none runs code.
    pub async fn new(client: SharedClient, pid: u32) -> Result<Subject> {
        let tools: Vec<(String, Value)> = client
            .tools()
            .await?
            .into_iter()
            .map(|t| (t.name.to_string(), Value::Object((*t.input_schema).clone())))
            .collect();
        let tool = choose_code_tool(&tools)?;
        let create_session = tools
            .iter()
            .find(|(name, _)| name == "create_session")
            .map(|(_, schema)| properties_of(schema).0.keys().cloned().collect());
        Ok(Subject {
            client,
            pid,
            tool,
            create_session,
            next_session: AtomicUsize::new(0),
        })
    }

    /// Whether sessions are created explicitly (our server, or one like it).
    pub fn has_sessions(&self) -> bool {
        self.create_session.is_some() && self.tool.session.is_some()
    }

    /// Whether the code tool is expected to run `lang`.
    pub fn runs(&self, lang: Lang) -> bool {
        self.tool.languages.iter().any(|(l, _)| *l == lang.language)
    }

    /// The code tool's arguments for `code` in `lang`, in `session` if given.
    pub fn code_arguments(&self, lang: Lang, code: &str, session: Option<&str>) -> Value {
        let mut args = json!({ self.tool.code.clone(): code });
        if let Some(language) = &self.tool.language {
            let value = self
                .tool
                .languages
                .iter()
                .find(|(l, _)| *l == lang.language);
            args[language] = json!(value.map_or(lang.language, |(_, v)| v.as_str()));
        }
        if let (Some(name), Some(id)) = (&self.tool.session, session) {
            args[name] = json!(id);
        }
        args
    }

    /// Runs `code` and returns the result and the time of the call.
    ///
    /// # Errors
    /// A JSON-RPC error or transport failure, or a result marked as an error.
    pub async fn run(
        &self,
        lang: Lang,
        code: &str,
        session: Option<&str>,
    ) -> Result<(CallToolResult, Duration)> {
        call_ok(
            &self.client,
            &self.tool.name,
            self.code_arguments(lang, code, session),
        )
        .await
    }

    /// A session id not used before in this run.
    pub fn next_session_id(&self, lang: Lang) -> String {
        let n = self.next_session.fetch_add(1, Ordering::Relaxed);
        format!("bench-{}-{n}", lang.label)
    }

    /// The arguments of `create_session` for session `id` on `lang`: those of `session_id`,
    /// `language` and `runtime` that the server's `create_session` takes.
    ///
    /// # Errors
    /// When the server has no sessions.
    pub fn session_arguments(&self, lang: Lang, id: &str) -> Result<Value> {
        let properties = self
            .create_session
            .as_ref()
            .context("the server has no sessions")?;
        let mut args = json!({});
        for (name, value) in [
            ("session_id", Some(id)),
            ("language", Some(lang.language)),
            ("runtime", lang.runtime),
        ] {
            if let Some(value) = value.filter(|_| properties.iter().any(|p| p == name)) {
                args[name] = json!(value);
            }
        }
        Ok(args)
    }

    /// Creates a session on `lang` and returns its id.
    ///
    /// # Errors
    /// When the server has no sessions, or refuses.
    pub async fn create_session(&self, lang: Lang) -> Result<String> {
        let id = self.next_session_id(lang);
        call_ok(
            &self.client,
            "create_session",
            self.session_arguments(lang, &id)?,
        )
        .await?;
        Ok(id)
    }

    /// A new session on `lang` when the server has sessions; `None` when it has none (its calls
    /// then go to the connection).
    ///
    /// # Errors
    /// When the server refuses the session.
    pub async fn session_if_any(&self, lang: Lang) -> Result<Option<String>> {
        if self.has_sessions() {
            Ok(Some(self.create_session(lang).await?))
        } else {
            Ok(None)
        }
    }

    /// Destroys a session (errors are ignored: the figures are taken already).
    pub async fn destroy_session(&self, id: &str) {
        let _ = self
            .client
            .call("destroy_session", json!({ "session_id": id }))
            .await;
    }
}

/// Calls `tool` and returns its result and the time of the call.
///
/// # Errors
/// A JSON-RPC error or transport failure, or a result marked as an error (its text quoted).
pub async fn call_ok(
    client: &SharedClient,
    tool: &str,
    args: Value,
) -> Result<(CallToolResult, Duration)> {
    let Value::Object(arguments) = args else {
        bail!("arguments must be an object");
    };
    let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
    let started = Instant::now();
    let result = client
        .service()
        .call_tool(params)
        .await
        .with_context(|| format!("calling {tool}"))?;
    let elapsed = started.elapsed();
    ensure!(
        !result.is_error.unwrap_or(false),
        "{tool} answered an error: {}",
        summary_of(&result)
    );
    Ok((result, elapsed))
}

/// A short account of a tool result: its error type and message when structured, else the
/// start of its text.
pub fn summary_of(result: &CallToolResult) -> String {
    if let Some(structured) = &result.structured_content {
        let kind = structured["error_type"].as_str().unwrap_or("");
        let message = structured["error_message"].as_str().unwrap_or("");
        let stderr = structured["stderr"].as_str().unwrap_or("").trim();
        if !kind.is_empty() || !message.is_empty() {
            return match stderr {
                "" => format!("{kind}: {message}"),
                stderr => format!("{kind}: {message} (stderr: {stderr})"),
            };
        }
    }
    let text: String = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join(" ");
    text.chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, schema: Value) -> (String, Value) {
        (name.to_owned(), schema)
    }

    /// Our names of the languages a tool runs.
    fn runs(tool: &CodeTool) -> Vec<&'static str> {
        tool.languages.iter().map(|(l, _)| *l).collect()
    }

    /// mcp-run-python's tool, as it lists it.
    fn run_python_code() -> (String, Value) {
        tool(
            "run_python_code",
            json!({
                "type": "object",
                "properties": {
                    "python_code": { "type": "string", "description": "Python code to run" },
                    "global_variables": { "type": "object" }
                },
                "required": ["python_code"]
            }),
        )
    }

    fn execute_code() -> (String, Value) {
        tool(
            "execute_code",
            json!({
                "type": "object",
                "properties": {
                    "code": { "type": "string" },
                    "language": { "type": "string", "enum": ["python", "javascript"] },
                    "session_id": { "type": ["string", "null"] }
                },
                "required": ["code", "language"]
            }),
        )
    }

    #[test]
    fn execute_code_is_chosen_when_present() {
        let tools = [run_python_code(), execute_code()];
        assert_eq!(
            choose_code_tool(&tools).unwrap(),
            CodeTool {
                name: "execute_code".into(),
                code: "code".into(),
                language: Some("language".into()),
                session: Some("session_id".into()),
                languages: both_languages(),
            }
        );
    }

    #[test]
    fn another_server_s_python_tool_is_found_by_its_code_argument() {
        let listing = tool("list_files", json!({ "type": "object", "properties": {} }));
        let chosen = choose_code_tool(&[listing, run_python_code()]).unwrap();
        assert_eq!(chosen.name, "run_python_code");
        assert_eq!(chosen.code, "python_code");
        assert_eq!((&chosen.language, &chosen.session), (&None, &None));
        assert_eq!(runs(&chosen), ["python"], "named by the tool");
    }

    #[test]
    fn only_required_string_arguments_take_code() {
        let optional = tool(
            "lint",
            json!({ "properties": { "code": { "type": "string" } }, "required": [] }),
        );
        let not_a_string = tool(
            "compile",
            json!({ "properties": { "source": { "type": "object" } }, "required": ["source"] }),
        );
        let script = tool(
            "node_eval",
            json!({ "properties": { "script": { "type": "string" } }, "required": ["script"] }),
        );
        assert!(choose_code_tool(&[optional.clone(), not_a_string.clone()]).is_err());
        let chosen = choose_code_tool(&[optional, not_a_string, script]).unwrap();
        assert_eq!(
            (chosen.name.as_str(), chosen.code.as_str()),
            ("node_eval", "script")
        );
        assert_eq!(runs(&chosen), ["javascript"]);
        let neither = tool(
            "run",
            json!({ "properties": { "code": { "type": "string" } }, "required": ["code"] }),
        );
        assert_eq!(
            runs(&choose_code_tool(&[neither]).unwrap()),
            ["python", "javascript"],
            "no language named: both are tried"
        );
    }

    #[test]
    fn a_language_enum_decides_what_is_run() {
        let python_only = tool(
            "execute",
            json!({
                "properties": {
                    "source": { "type": "string" },
                    "language": { "enum": ["python3"] }
                },
                "required": ["source"]
            }),
        );
        let python3 = choose_code_tool(&[python_only]).unwrap();
        assert_eq!(python3.languages, [("python", "python3".to_owned())]);
        // mcp-server-code-runner's tool, shortened.
        let run_code = tool(
            "run-code",
            json!({
                "properties": {
                    "code": { "type": "string" },
                    "languageId": { "type": "string", "enum": ["javascript", "php", "python"] }
                },
                "required": ["code", "languageId"]
            }),
        );
        let chosen = choose_code_tool(&[run_code]).unwrap();
        assert_eq!(chosen.language.as_deref(), Some("languageId"));
        assert_eq!(runs(&chosen), ["python", "javascript"]);
        assert!(takes_code("JS_CODE") && !takes_code("codec") && !takes_code("encoding"));
    }
}
