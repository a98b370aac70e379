//! How a tool answers: the structured result (`structuredContent`) with one short text block
//! for clients that only read text, and `isError` when the model should act on a failure.

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;

use crate::report::ExecuteCodeResult;

/// A structured result: `value` as the structured content, `text` as the only text block.
///
/// # Errors
/// An internal error when `value` does not serialise (a server bug).
pub fn structured<T: Serialize>(
    value: &T,
    is_error: bool,
    text: String,
) -> Result<CallToolResult, McpError> {
    let value =
        serde_json::to_value(value).map_err(|e| McpError::internal_error(e.to_string(), None))?;
    let mut reply = if is_error {
        CallToolResult::structured_error(value)
    } else {
        CallToolResult::structured(value)
    };
    reply.content = vec![ContentBlock::text(text)];
    Ok(reply)
}

/// A structured result whose text block is the JSON itself (for small answers).
///
/// # Errors
/// As [`structured`].
pub fn data<T: Serialize>(value: &T) -> Result<CallToolResult, McpError> {
    serde_json::to_value(value)
        .map(CallToolResult::structured)
        .map_err(|e| McpError::internal_error(e.to_string(), None))
}

/// The answer of a tool that ran (or could not run) code or a command: failed unless the
/// result says success.
///
/// # Errors
/// As [`structured`].
pub fn execution(result: &ExecuteCodeResult) -> Result<CallToolResult, McpError> {
    structured(result, !result.success, result.to_text())
}
