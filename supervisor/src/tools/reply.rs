//! How a tool answers: the structured result (`structuredContent`) with one short text block
//! for clients that only read text, and `isError` when the model should act on a failure. An
//! execution's pictures follow the text as image content blocks.

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResult, ContentBlock};
use sandbox_protocol::ErrorType;
use serde::Serialize;

use crate::report::ExecuteCodeResult;
use crate::resources::base64;

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

/// What a tool answers when it did not do what was asked, for a reason the model can act on.
#[derive(Debug, Serialize)]
struct Failed<'a> {
    success: bool,
    error_type: ErrorType,
    error_message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    session_id: Option<&'a str>,
    actionable_guidance: &'a [&'a str],
}

/// A failed result: `error_type`, the message and what to do next.
///
/// # Errors
/// As [`structured`].
pub fn failed(
    error_type: ErrorType,
    message: &str,
    session_id: Option<&str>,
    guidance: &[&str],
) -> Result<CallToolResult, McpError> {
    let failed = Failed {
        success: false,
        error_type,
        error_message: message,
        session_id,
        actionable_guidance: guidance,
    };
    structured(&failed, true, format!("ERROR {error_type}: {message}"))
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
/// result says success; the text block first, then each figure the code drew as an image.
///
/// # Errors
/// As [`structured`].
pub fn execution(result: &ExecuteCodeResult) -> Result<CallToolResult, McpError> {
    let mut reply = structured(result, !result.success, result.to_text())?;
    reply.content.extend(
        result
            .figure_data
            .iter()
            .map(|figure| ContentBlock::image(base64(&figure.data), figure.mime.clone())),
    );
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use sandbox_protocol::{Figure, Runtime};

    use super::*;
    use crate::report::FigureInfo;

    #[test]
    fn figures_follow_the_text_as_images_and_are_listed_without_bytes() {
        let mut result =
            ExecuteCodeResult::refused("s", Runtime::Python, ErrorType::Timeout, "slow".into());
        result.success = true;
        result.error_type = None;
        result.error_message = None;
        result.figure_data = vec![
            Figure {
                mime: "image/png".into(),
                data: b"\x89PNG one".to_vec(),
            },
            Figure {
                mime: "image/png".into(),
                data: b"two".to_vec(),
            },
        ];
        result.figures = vec![
            FigureInfo {
                mime: "image/png".into(),
                bytes: 8,
            },
            FigureInfo {
                mime: "image/png".into(),
                bytes: 3,
            },
        ];
        let reply = execution(&result).unwrap();
        assert_eq!(reply.is_error, Some(false));
        assert_eq!(reply.content.len(), 3);
        assert_eq!(reply.content[0].as_text().unwrap().text, result.to_text());
        let images: Vec<(&str, &str)> = reply.content[1..]
            .iter()
            .map(|c| {
                let image = c.as_image().expect("an image block");
                (image.data.as_str(), image.mime_type.as_str())
            })
            .collect();
        assert_eq!(
            images,
            [
                (base64(b"\x89PNG one").as_str(), "image/png"),
                ("dHdv", "image/png")
            ]
        );
        let structured = reply.structured_content.unwrap();
        assert_eq!(
            structured["figures"][1],
            serde_json::json!({ "mime": "image/png", "bytes": 3 })
        );
        assert!(
            !structured.to_string().contains("dHdv"),
            "no bytes in the JSON"
        );

        result.figure_data.clear();
        assert_eq!(
            execution(&result).unwrap().content.len(),
            1,
            "no figure, no image"
        );
    }
}
