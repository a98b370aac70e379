//! Advice that is never wrong (issue 12): the labelled corpus in `tests/corpus/advice.json`
//! runs through one real server, and every failing snippet must come back with its expected
//! `error_type`, a first fix (and a summary) that contains the expected words, and none of the
//! words that would be advice about something the code did not do. The expected words name
//! what only the right advice says: the file, name or line of this snippet in the advice's own
//! wording, not a word that the generic advice of its error class says anyway or that is
//! merely echoed from the error message. The score is printed as a figure
//! (overall and per kind) before the test fails on any mismatch, listing them all. Every
//! `next_call` an answer carries must be a call the server's tools accept, as their input
//! schemas say: here, and for every recorded fact of guidance's own snapshot tests.

use std::collections::BTreeMap;

use anyhow::{Context, Result, bail};
use rmcp::model::Tool;
use sandbox_guidance::fixture::{Fixture, files};
use sandbox_guidance::{ErrorFacts, advise};
use sandbox_protocol::{ErrorType, Language};
use sandbox_tests::{Reply, Server, next_call_violations};
use serde_json::{Value, json};

/// The corpus file, relative to the `sandbox-tests` crate.
const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/corpus/advice.json");

struct Corpus {
    /// Sessions created before the cases run (session id to `create_session` arguments), for
    /// cases that need a small fuel budget.
    sessions: BTreeMap<String, Value>,
    cases: Vec<Case>,
}

struct Case {
    /// The group the case belongs to, for the per-kind figures.
    kind: String,
    name: String,
    /// `python`, `javascript`, or `shell` for `execute_command`.
    language: String,
    code: String,
    error_type: String,
    /// Words (case-insensitive) that `actionable_guidance[0]` must contain.
    first_fix_contains: Vec<String>,
    /// Words (case-insensitive) that `guidance_summary` must contain (what went wrong, where
    /// the first fix says what to do).
    summary_contains: Vec<String>,
    /// Words (case-insensitive) that neither the summary nor any fix may contain.
    must_not_contain: Vec<String>,
    /// The session to run in; by default one per language (`corpus-py`, `corpus-js`,
    /// `corpus-sh`).
    session: Option<String>,
    /// Code run first in the same session (a declaration, a failed call). It must succeed, or
    /// fail with `setup_error_type` when that is given: a setup that does not do what the case
    /// relies on fails the case instead of leaving it to test something else.
    setup: Option<String>,
    /// The `error_type` the setup must fail with (for a setup that is a failed call).
    setup_error_type: Option<String>,
    /// Run in a new session made with the arguments of `session` from the corpus's sessions,
    /// destroyed afterwards: for what earlier calls would change (a first import's cost).
    fresh: bool,
    /// Seconds, for the timeout cases.
    timeout: Option<f64>,
}

impl Case {
    fn session(&self) -> &str {
        self.session
            .as_deref()
            .unwrap_or(match self.language.as_str() {
                "python" => "corpus-py",
                "javascript" => "corpus-js",
                _ => "corpus-sh",
            })
    }

    /// Runs the case, in a fresh session when it asks for one.
    async fn run(&self, server: &Server, sessions: &BTreeMap<String, Value>) -> Result<Reply> {
        if !self.fresh {
            return self.run_in(server, self.session()).await;
        }
        let template = sessions
            .get(self.session())
            .with_context(|| format!("{}: no session {} to copy", self.name, self.session()))?;
        let id = format!("corpus-fresh-{}", self.name.replace('_', "-"));
        let mut args = template.clone();
        args["session_id"] = json!(id);
        let created = server.call("create_session", args).await?;
        anyhow::ensure!(!created.is_error, "create_session {id}: {created:?}");
        let reply = self.run_in(server, &id).await;
        server
            .call("destroy_session", json!({ "session_id": id }))
            .await?;
        reply
    }

    async fn run_in(&self, server: &Server, session: &str) -> Result<Reply> {
        if let Some(setup) = &self.setup {
            let done = server
                .exec(&self.language, setup, json!({ "session_id": session }))
                .await?;
            let got = done.value["error_type"].as_str();
            anyhow::ensure!(
                got == self.setup_error_type.as_deref(),
                "the setup {setup:?} answered error_type {got:?}, expected {:?}: {done:?}",
                self.setup_error_type
            );
        }
        let mut args = json!({ "session_id": session });
        if let Some(timeout) = self.timeout {
            args["timeout"] = json!(timeout);
        }
        if self.language == "shell" {
            args["command"] = json!(self.code);
            server.call("execute_command", args).await
        } else {
            server.exec(&self.language, &self.code, args).await
        }
    }

    /// Every way the reply differs from the expectation (empty when it matches), its
    /// `next_call` checked against the server's `tools`.
    fn mismatches(&self, reply: &Reply, tools: &[Tool]) -> Vec<String> {
        let mut wrong = Vec::new();
        if reply.has("next_call") {
            wrong.extend(next_call_violations(reply.field("next_call"), tools));
        }
        let got_type = reply.value["error_type"].as_str().unwrap_or("none");
        if got_type != self.error_type {
            wrong.push(format!(
                "error_type {got_type}, expected {}",
                self.error_type
            ));
        }
        let fixes: Vec<&str> = reply.value["actionable_guidance"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let first = fixes.first().copied().unwrap_or("").to_lowercase();
        for word in &self.first_fix_contains {
            if !first.contains(&word.to_lowercase()) {
                wrong.push(format!("first fix lacks {word:?}"));
            }
        }
        let summary = reply.value["guidance_summary"].as_str().unwrap_or("");
        for word in &self.summary_contains {
            if !summary.to_lowercase().contains(&word.to_lowercase()) {
                wrong.push(format!("summary lacks {word:?}"));
            }
        }
        let all = format!("{summary}\n{}", fixes.join("\n")).to_lowercase();
        for word in &self.must_not_contain {
            if all.contains(&word.to_lowercase()) {
                wrong.push(format!("says {word:?}"));
            }
        }
        if !wrong.is_empty() {
            wrong.push(format!(
                "summary: {summary}\n      first fix: {}",
                fixes.first().copied().unwrap_or("(none)")
            ));
        }
        wrong
    }
}

impl Case {
    /// A case from its JSON object (the crate has no serde derive, so fields are read by hand).
    fn parse(value: &Value) -> Result<Self> {
        let text = |key: &str| -> Result<String> {
            value[key]
                .as_str()
                .map(str::to_owned)
                .with_context(|| format!("case field {key:?} missing in {value}"))
        };
        let words = |key: &str| -> Vec<String> {
            value[key]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        };
        Ok(Case {
            kind: text("kind")?,
            name: text("name")?,
            language: text("language")?,
            code: text("code")?,
            error_type: text("error_type")?,
            first_fix_contains: words("first_fix_contains"),
            summary_contains: words("summary_contains"),
            must_not_contain: words("must_not_contain"),
            session: value["session"].as_str().map(str::to_owned),
            setup: value["setup"].as_str().map(str::to_owned),
            setup_error_type: value["setup_error_type"].as_str().map(str::to_owned),
            timeout: value["timeout"].as_f64(),
            fresh: value["fresh"].as_bool().unwrap_or(false),
        })
    }
}

fn load() -> Result<Corpus> {
    let text = std::fs::read_to_string(CORPUS).with_context(|| format!("reading {CORPUS}"))?;
    let json: Value = serde_json::from_str(&text).with_context(|| format!("parsing {CORPUS}"))?;
    let sessions = json["sessions"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    let cases = json["cases"]
        .as_array()
        .context("the corpus has no cases list")?
        .iter()
        .map(Case::parse)
        .collect::<Result<Vec<_>>>()?;
    let mut names = std::collections::HashSet::new();
    for case in &cases {
        anyhow::ensure!(names.insert(&case.name), "duplicate case {}", case.name);
        anyhow::ensure!(
            !case.first_fix_contains.is_empty(),
            "{}: no expected words",
            case.name
        );
        anyhow::ensure!(
            matches!(case.language.as_str(), "python" | "javascript" | "shell"),
            "{}: unknown language {}",
            case.name,
            case.language
        );
        anyhow::ensure!(
            case.setup.is_some() || case.setup_error_type.is_none(),
            "{}: setup_error_type without a setup",
            case.name
        );
    }
    Ok(Corpus { sessions, cases })
}

/// `153/153 (100.0%)`.
fn figure(passed: usize, total: usize) -> String {
    format!(
        "{passed}/{total} ({:.1}%)",
        passed as f64 * 100.0 / total.max(1) as f64
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn advice_corpus_is_never_wrong() -> Result<()> {
    let corpus = load()?;
    assert!(
        corpus.cases.len() >= 150,
        "the corpus has {} cases",
        corpus.cases.len()
    );
    let server = Server::start().await?;
    let tools = server.tools().await?;
    for (id, args) in &corpus.sessions {
        let mut args = args.clone();
        args["session_id"] = json!(id);
        let created = server.call("create_session", args).await?;
        anyhow::ensure!(!created.is_error, "create_session {id}: {created:?}");
    }
    // kind -> (passed, total), and every mismatch.
    let mut by_kind: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    for case in &corpus.cases {
        let wrong = match case.run(&server, &corpus.sessions).await {
            Ok(reply) => case.mismatches(&reply, &tools),
            Err(e) => vec![format!("{e:#}")],
        };
        let entry = by_kind.entry(&case.kind).or_default();
        entry.1 += 1;
        if wrong.is_empty() {
            entry.0 += 1;
        } else {
            failures.push(format!(
                "{}/{} ({}): {}",
                case.kind,
                case.name,
                case.language,
                wrong.join("\n      ")
            ));
        }
    }
    server.stop().await?;
    let total = corpus.cases.len();
    eprintln!("advice corpus: {}", figure(total - failures.len(), total));
    for (kind, (passed, count)) in &by_kind {
        eprintln!("  {kind:<14} {}", figure(*passed, *count));
    }
    if !failures.is_empty() {
        bail!(
            "{} of {total} corpus cases got wrong advice:\n  {}",
            failures.len(),
            failures.join("\n  ")
        );
    }
    Ok(())
}

/// Guidance's fixtures (`guidance/tests/fixtures`) and the plain advice of every error class
/// in both languages: each `next_call` is checked against the input schemas the server lists,
/// the ones a validating client would use, not a copy of them.
#[tokio::test(flavor = "multi_thread")]
async fn every_next_call_guidance_records_fits_the_real_tool_schemas() -> Result<()> {
    let server = Server::start().await?;
    let tools = server.tools().await?;
    server.stop().await?;
    let mut calls = Vec::new();
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../guidance/tests/fixtures");
    let paths = files(std::path::Path::new(root));
    anyhow::ensure!(paths.len() >= 50, "guidance fixtures missing under {root}");
    for path in &paths {
        let fixture = Fixture::load(path).map_err(anyhow::Error::msg)?;
        for (number, case) in fixture.cases.iter().enumerate() {
            let answer = case.run().map_err(anyhow::Error::msg)?;
            if let Some(call) = answer.next_call() {
                let name = format!("{}#{}", path.display(), number + 1);
                calls.push((name, serde_json::to_value(call)?));
            }
        }
    }
    for language in [Language::Python, Language::JavaScript] {
        for error_type in ErrorType::ALL {
            for code in ["", "x = 1", "while True: pass"] {
                let mut facts = ErrorFacts::new(language, error_type, code, "s1");
                facts.fuel_budget = 10_000_000_000;
                facts.memory_cap = 1 << 30;
                facts.timeout_secs = 30.0;
                if let Some(call) = advise(&facts).next_call {
                    let name = format!("{language} {error_type} {code:?}");
                    calls.push((name, serde_json::to_value(call)?));
                }
            }
        }
    }
    anyhow::ensure!(
        calls.len() >= 40,
        "only {} next calls to check",
        calls.len()
    );
    let wrong: Vec<String> = calls
        .iter()
        .flat_map(|(name, call)| {
            next_call_violations(call, &tools)
                .into_iter()
                .map(move |v| format!("{name}: {v}"))
        })
        .collect();
    println!(
        "checked {} next calls against the tool schemas",
        calls.len()
    );
    anyhow::ensure!(wrong.is_empty(), "{}", wrong.join("\n"));
    Ok(())
}
