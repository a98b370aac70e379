//! The outermost layer of the MCP service: every request of every client runs under it.
//!
//! - A panic inside a handler (a tool, a resource, a listing) becomes an error answer with
//!   `data.error_type = "system_error"` and the request id, logged once by the panic hook with
//!   that id: a client is never left waiting for an answer that will not come, and the server
//!   keeps serving.
//! - Every answer passes through the one [`Redactor`]: no host path reaches a client in a tool
//!   result or an error.
//! - Tool arguments are checked against the tool's own input schema before the tool runs: a
//!   number of the wrong type or outside its `minimum`/`maximum` gets a JSON-RPC "invalid
//!   params" error with `data.error_type = "invalid_argument"` and the argument's name (rmcp
//!   would otherwise answer a type error with an untyped tool error). Every "invalid params"
//!   error carries `data.error_type`.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;
use rmcp::model::JsonObject;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, RequestId, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use sandbox_protocol::ErrorType;
use serde_json::{Value, json};
use tracing::Instrument;

use crate::redact::Redactor;
use crate::server::SandboxServer;
use crate::tools::args::invalid_argument;

tokio::task_local! {
    /// The request a task is handling, for the panic hook's log line.
    static HANDLING: RequestId;
}

/// Routes panics inside request handlers to one log line with the request id; other panics go
/// to the hook that was installed before.
pub fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let in_handler = HANDLING.try_with(|id| {
            let payload = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(no message)".into());
            let location = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_default();
            tracing::error!(request_id = %id, %location, panic = %payload, "a request handler panicked; answered with system_error");
        });
        if in_handler.is_err() {
            previous(info);
        }
    }));
}

/// The MCP service: a handler ([`SandboxServer`]) behind the guard. It implements the handler
/// methods the server implements, each guarded; the rest keep rmcp's defaults, as the server
/// does.
#[derive(Clone)]
pub struct Guarded<S = SandboxServer> {
    inner: S,
    redactor: Arc<Redactor>,
}

impl<S: ServerHandler> Guarded<S> {
    pub fn new(inner: S, redactor: Arc<Redactor>) -> Self {
        Self { inner, redactor }
    }

    /// Runs a handler: a panic becomes a `system_error` answer; every error is finished.
    async fn run<T>(
        &self,
        id: RequestId,
        handler: impl Future<Output = Result<T, McpError>>,
    ) -> Result<T, McpError> {
        let handled = HANDLING.scope(id.clone(), handler);
        match AssertUnwindSafe(handled).catch_unwind().await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(error)) => Err(self.finish_error(error)),
            Err(_) => Err(panicked(&id)),
        }
    }

    /// A tool call: its arguments checked against the tool's schema, the tool run, its answer
    /// finished.
    async fn call_tool_checked(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let empty = JsonObject::new();
        let arguments = request.arguments.clone().unwrap_or_default();
        if let Some(tool) = self.inner.get_tool(&request.name) {
            check_arguments(
                &tool.input_schema,
                request.arguments.as_ref().unwrap_or(&empty),
            )
            .map_err(|e| self.finish_error(e))?;
        }
        let answer = self
            .run(context.id.clone(), self.inner.call_tool(request, context))
            .await?;
        Ok(match answer {
            CallToolResponse::Complete(result) => {
                if let Some(error) = undecodable_arguments(&result, &arguments) {
                    return Err(self.finish_error(error));
                }
                CallToolResponse::Complete(self.finish_result(result))
            }
            other => other,
        })
    }

    fn finish_error(&self, mut error: McpError) -> McpError {
        if let Some(clean) = self.redactor.redact(&error.message) {
            error.message = clean.into();
        }
        if error.code == ErrorCode::INVALID_PARAMS {
            let data = error.data.get_or_insert_with(|| json!({}));
            if let Some(map) = data.as_object_mut() {
                map.entry("error_type")
                    .or_insert(json!(ErrorType::InvalidArgument));
            }
        }
        if let Some(data) = error.data.as_mut() {
            self.redactor.redact_value(data);
        }
        error
    }

    fn finish_result(&self, mut result: CallToolResult) -> CallToolResult {
        if let Some(value) = result.structured_content.as_mut() {
            self.redactor.redact_value(value);
        }
        for block in &mut result.content {
            if let ContentBlock::Text(text) = block {
                self.redactor.redact_in_place(&mut text.text);
            }
        }
        result
    }
}

/// The span of one tool call: the tool, the request, and (recorded when known) the session and
/// the execution, so that every log line of the call carries them. The session id is taken from
/// the arguments only when it is a valid one: nothing else a client sends is logged.
fn tool_call_span(request: &CallToolRequestParams, known: bool, id: &RequestId) -> tracing::Span {
    let span = tracing::info_span!(
        "tool_call",
        tool = tracing::field::Empty,
        request_id = %id,
        session_id = tracing::field::Empty,
        execution_id = tracing::field::Empty,
    );
    // An unknown tool's name is the client's text: not logged.
    span.record("tool", if known { &*request.name } else { "unknown" });
    let named = request
        .arguments
        .as_ref()
        .and_then(|arguments| arguments.get("session_id"))
        .and_then(Value::as_str)
        .filter(|id| crate::owner::valid_session_id(id));
    if let Some(session_id) = named {
        span.record("session_id", session_id);
    }
    span
}

/// Checks the arguments whose schema is a plain type (numbers, strings, booleans) against it:
/// the JSON type, and `minimum`/`maximum` for numbers. Other schemas (enums, references) are
/// left to the tool's own deserialisation.
///
/// # Errors
/// An `invalid_argument` error naming the first argument that does not fit.
pub fn check_arguments(schema: &JsonObject, arguments: &JsonObject) -> Result<(), McpError> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        if arguments.get(name).is_none_or(Value::is_null) {
            return Err(invalid_argument(name, format!("{name} is required")));
        }
    }
    for (name, value) in arguments {
        let Some(property) = properties.get(name).and_then(Value::as_object) else {
            continue;
        };
        let types: Vec<&str> = match property.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => continue,
        };
        // An explicit null for an optional argument means "not given" (the schemas list no
        // `null` type, see tools::schema, but models send it anyway).
        let is_required = required.is_some_and(|r| r.iter().any(|n| n == name.as_str()));
        if value.is_null() && (types.contains(&"null") || !is_required) {
            continue;
        }
        let bound = |key: &str| property.get(key).and_then(Value::as_f64);
        let (minimum, maximum) = (bound("minimum"), bound("maximum"));
        let shown = crate::packages::names::quote(&value.to_string());
        let range = match (minimum, maximum) {
            (Some(lo), Some(hi)) => format!(" from {lo} to {hi}"),
            (Some(lo), None) => format!(" of at least {lo}"),
            (None, Some(hi)) => format!(" of at most {hi}"),
            (None, None) => String::new(),
        };
        let fits = if types.contains(&"integer") {
            value
                .as_u64()
                .map(|v| v as f64)
                .or(value.as_i64().map(|v| v as f64))
        } else if types.contains(&"number") {
            value.as_f64()
        } else {
            let ok = match types.first().copied() {
                Some("string") => value.is_string(),
                Some("boolean") => value.is_boolean(),
                Some("array") => value.is_array(),
                Some("object") => value.is_object(),
                _ => true,
            };
            if !ok {
                return Err(invalid_argument(
                    name,
                    format!("{name} must be a {}, got {shown}", types.join(" or ")),
                ));
            }
            continue;
        };
        let kind = if types.contains(&"integer") {
            "an integer"
        } else {
            "a number"
        };
        let in_range = fits
            .is_some_and(|v| minimum.is_none_or(|lo| v >= lo) && maximum.is_none_or(|hi| v <= hi));
        if !in_range {
            return Err(invalid_argument(
                name,
                format!("{name} must be {kind}{range}, got {shown}"),
            ));
        }
    }
    Ok(())
}

/// rmcp answers arguments that do not deserialise (an unknown `language`, a wrong type inside
/// an enum) with an untyped tool error "failed to deserialize parameters: ...". That is an
/// `invalid_argument` like every other bad argument: the argument is named when serde's message
/// tells which (a missing field, or an unknown variant one argument holds).
fn undecodable_arguments(result: &CallToolResult, arguments: &JsonObject) -> Option<McpError> {
    if result.is_error != Some(true) || result.structured_content.is_some() {
        return None;
    }
    let text = result.content.iter().find_map(|block| match block {
        ContentBlock::Text(text) => Some(text.text.as_str()),
        _ => None,
    })?;
    let reason = text.strip_prefix("failed to deserialize parameters: ")?;
    let quoted = |marker: &str| {
        let rest = reason.split_once(marker)?.1;
        rest.split_once('`').map(|(name, _)| name.to_owned())
    };
    let argument = quoted("missing field `").or_else(|| {
        let variant = quoted("unknown variant `")?;
        arguments
            .iter()
            .find(|(_, v)| v.as_str() == Some(variant.as_str()))
            .map(|(k, _)| k.clone())
    });
    let message = match &argument {
        Some(name) => format!("{name}: {reason}"),
        None => reason.to_owned(),
    };
    Some(McpError::invalid_params(
        message,
        Some(match argument {
            Some(name) => json!({ "error_type": ErrorType::InvalidArgument, "argument": name }),
            None => json!({ "error_type": ErrorType::InvalidArgument }),
        }),
    ))
}

/// The answer to a request whose handler panicked.
fn panicked(id: &RequestId) -> McpError {
    McpError::internal_error(
        format!(
            "system_error: the server failed while handling request {id}; the failure was logged and the server keeps running: retry, or call another tool"
        ),
        Some(json!({ "error_type": ErrorType::SystemError, "request_id": id })),
    )
}

impl<S: ServerHandler> ServerHandler for Guarded<S> {
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let known = self.inner.get_tool(&request.name).is_some();
        let span = tool_call_span(&request, known, &context.id);
        let started = std::time::Instant::now();
        let answer = self
            .call_tool_checked(request, context)
            .instrument(span.clone())
            .await;
        let outcome = match &answer {
            Ok(CallToolResponse::Complete(result)) => match result.structured_content.as_ref() {
                Some(Value::Object(fields)) => fields
                    .get("error_type")
                    .and_then(Value::as_str)
                    .unwrap_or("success")
                    .to_owned(),
                _ if result.is_error == Some(true) => "tool_error".to_owned(),
                _ => "success".to_owned(),
            },
            Ok(_) => "pending".to_owned(),
            Err(error) => error
                .data
                .as_ref()
                .and_then(|data| data.get("error_type"))
                .and_then(Value::as_str)
                .unwrap_or("protocol_error")
                .to_owned(),
        };
        span.in_scope(|| {
            tracing::info!(
                %outcome,
                ms = started.elapsed().as_secs_f64() * 1000.0,
                "tool call"
            );
        });
        answer
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        self.run(context.id.clone(), self.inner.list_tools(request, context))
            .await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner.get_tool(name)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.run(
            context.id.clone(),
            self.inner.list_resources(request, context),
        )
        .await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        self.run(
            context.id.clone(),
            self.inner.list_resource_templates(request, context),
        )
        .await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        // File contents are the guest's own data and pass unchanged; errors are finished.
        self.run(
            context.id.clone(),
            self.inner.read_resource(request, context),
        )
        .await
    }

    fn get_info(&self) -> ServerConfig {
        self.inner.get_info()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::ServiceExt;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

    #[test]
    fn undecodable_arguments_become_invalid_arguments() {
        let args = object(json!({"language": "ruby", "code": "1"}));
        let untyped = |text: &str| CallToolResult::error(vec![ContentBlock::text(text)]);
        let error = undecodable_arguments(
            &untyped("failed to deserialize parameters: unknown variant `ruby`, expected `python` or `javascript`"),
            &args,
        )
        .unwrap();
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(error.data.as_ref().unwrap()["argument"], "language");
        let error = undecodable_arguments(
            &untyped("failed to deserialize parameters: missing field `code`"),
            &object(json!({})),
        )
        .unwrap();
        assert_eq!(error.data.as_ref().unwrap()["argument"], "code");
        assert!(undecodable_arguments(&untyped("NameError: x"), &args).is_none());
    }

    /// A handler whose tool `boom` panics (an out-of-bounds index).
    struct Panicky;

    impl ServerHandler for Panicky {
        async fn call_tool(
            &self,
            request: CallToolRequestParams,
            _context: RequestContext<RoleServer>,
        ) -> Result<CallToolResponse, McpError> {
            if request.name == "boom" {
                let values: Vec<u64> = Vec::new();
                let _ = values[usize::from(request.name.len() > 1)];
            }
            Ok(CallToolResponse::Complete(CallToolResult::success(vec![
                ContentBlock::text("fine at /srv/secret-state/x"),
            ])))
        }

        fn get_info(&self) -> ServerConfig {
            ServerConfig::new(
                rmcp::model::ServerCapabilities::builder()
                    .enable_tools()
                    .build(),
            )
        }
    }

    /// A panicking tool answers with system_error and the request id; the connection keeps
    /// serving; answers are redacted.
    #[tokio::test]
    async fn a_panicking_handler_answers_and_the_server_keeps_serving() {
        let (client, server) = tokio::io::duplex(1 << 16);
        let redactor = Redactor::for_tests(&[("/srv/secret-state", "<state>")]);
        let running = tokio::spawn(async move {
            let (read, write) = tokio::io::split(server);
            let service = Guarded::new(Panicky, Arc::new(redactor))
                .serve((read, write))
                .await?;
            anyhow::Ok(service.waiting().await?)
        });
        let (read, mut write) = tokio::io::split(client);
        let mut lines = tokio::io::BufReader::new(read).lines();
        let mut send = async |message: Value| {
            let mut line = message.to_string();
            line.push('\n');
            write.write_all(line.as_bytes()).await.unwrap();
        };
        send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}}),
        )
        .await;
        let init: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(init["id"], 1);
        send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "boom", "arguments": {}}}))
        .await;
        let answer = tokio::time::timeout(std::time::Duration::from_secs(5), lines.next_line())
            .await
            .expect("a panicking handler is answered, not left hanging")
            .unwrap()
            .unwrap();
        let answer: Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(answer["id"], 7);
        assert_eq!(answer["error"]["data"]["error_type"], "system_error");
        assert_eq!(answer["error"]["data"]["request_id"], 7);
        send(json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
            "params": {"name": "fine", "arguments": {}}}))
        .await;
        let answer: Value =
            serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(answer["id"], 8);
        assert_eq!(answer["result"]["content"][0]["text"], "fine at <state>/x");
        drop(write);
        drop(lines);
        let stopped = tokio::time::timeout(std::time::Duration::from_secs(5), running).await;
        assert!(
            stopped.is_ok(),
            "the server stops when its client goes away"
        );
    }

    fn object(value: Value) -> JsonObject {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn arguments_are_checked_against_their_schema() {
        let schema = object(json!({
            "required": ["code"],
            "properties": {
                "ttl_seconds": {"type": ["integer", "null"], "minimum": 1, "maximum": 2592000},
                "timeout": {"type": ["number", "null"], "minimum": 0.001, "maximum": 300},
                "code": {"type": "string"},
                "flavor": {"anyOf": [{"$ref": "#/$defs/Flavor"}, {"type": "null"}]},
            }
        }));
        for ok in [
            json!({"ttl_seconds": 1, "timeout": 2.5, "code": "x"}),
            json!({"code": "", "ttl_seconds": null, "timeout": 300, "flavor": "small", "unknown": 1}),
        ] {
            assert!(
                check_arguments(&schema, &object(ok.clone())).is_ok(),
                "{ok}"
            );
        }
        for (bad, argument) in [
            (json!({"ttl_seconds": 0}), "ttl_seconds"),
            (json!({"ttl_seconds": -1}), "ttl_seconds"),
            (
                json!({"ttl_seconds": 10_000_000_000_000_u64}),
                "ttl_seconds",
            ),
            (json!({"ttl_seconds": u64::MAX}), "ttl_seconds"),
            (json!({"ttl_seconds": 1e30}), "ttl_seconds"),
            (json!({"ttl_seconds": 1.5}), "ttl_seconds"),
            (json!({"ttl_seconds": "30"}), "ttl_seconds"),
            (json!({"timeout": 0}), "timeout"),
            (json!({"timeout": 301}), "timeout"),
            (json!({"timeout": "30"}), "timeout"),
            (json!({"code": 7}), "code"),
            (json!({"code": null, "timeout": 1}), "code"),
        ] {
            let mut args = object(bad.clone());
            args.entry("code").or_insert(json!("x"));
            let err = check_arguments(&schema, &args).unwrap_err();
            assert_eq!(err.code, ErrorCode::INVALID_PARAMS, "{bad}");
            let data = err.data.unwrap();
            assert_eq!(data["error_type"], "invalid_argument", "{bad}");
            assert_eq!(data["argument"], argument, "{bad}");
            assert!(err.message.contains(argument), "{}", err.message);
        }
    }
}
