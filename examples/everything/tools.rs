//! Tool fixtures (conformance README §2.1).

use schemars::JsonSchema;
use serde::Deserialize;
use std::time::Duration;
use switchyard::prelude::*;

/// A 1×1 transparent PNG.
pub const PNG_1X1: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0d, 0x49,
    0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00, 0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00,
    0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// A WAV file holding 8 samples of silence (8 kHz, 8-bit mono).
pub fn silent_wav() -> Vec<u8> {
    let samples = [0x80u8; 8];
    let mut w = Vec::with_capacity(44 + samples.len());
    w.extend_from_slice(b"RIFF");
    w.extend_from_slice(&(36 + samples.len() as u32).to_le_bytes());
    w.extend_from_slice(b"WAVEfmt ");
    w.extend_from_slice(&16u32.to_le_bytes()); // fmt chunk size
    w.extend_from_slice(&1u16.to_le_bytes()); // PCM
    w.extend_from_slice(&1u16.to_le_bytes()); // mono
    w.extend_from_slice(&8000u32.to_le_bytes()); // sample rate
    w.extend_from_slice(&8000u32.to_le_bytes()); // byte rate
    w.extend_from_slice(&1u16.to_le_bytes()); // block align
    w.extend_from_slice(&8u16.to_le_bytes()); // bits per sample
    w.extend_from_slice(b"data");
    w.extend_from_slice(&(samples.len() as u32).to_le_bytes());
    w.extend_from_slice(&samples);
    w
}

/// Shows the metadata a tool and its content may carry: a title, icons, `_meta`, and content
/// annotated for its audience and priority.
#[mcp_tool(
    title = "Metadata showcase",
    read_only,
    icons = [
        "https://modelcontextprotocol.io/favicon.ico",
        icon(src = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGMAAQAABQABDQottAAAAABJRU5ErkJggg==", mime_type = "image/png", sizes = ["1x1"], theme = "light")
    ],
    meta = r#"{"dev.switchyard/example": "metadata"}"#
)]
async fn test_metadata() -> CallToolResult {
    let mut meta = serde_json::Map::new();
    meta.insert("dev.switchyard/source".into(), serde_json::json!("examples/everything"));
    CallToolResult::success(vec![
        Content::text("Shown to the user first.")
            .with_annotations(switchyard::Annotations::new().audience([switchyard::Role::User]).priority(1.0)),
        Content::text("Context for the assistant.")
            .with_annotations(switchyard::Annotations::new().audience([switchyard::Role::Assistant]).priority(0.3))
            .with_meta(meta),
    ])
}

/// Returns a simple text response.
#[mcp_tool]
async fn test_simple_text() -> Result<String, ToolError> {
    Ok("This is a simple text response for testing.".to_owned())
}

/// Returns a 1x1 PNG image.
#[mcp_tool]
async fn test_image_content() -> Result<Content, ToolError> {
    Ok(Content::image(PNG_1X1, "image/png"))
}

/// Returns a short WAV audio clip.
#[mcp_tool]
async fn test_audio_content() -> Result<Content, ToolError> {
    Ok(Content::audio(&silent_wav(), "audio/wav"))
}

/// Returns an embedded text resource.
#[mcp_tool]
async fn test_embedded_resource() -> Result<Content, ToolError> {
    Ok(Content::resource(ResourceContents::text(
        "test://embedded-resource",
        Some("text/plain"),
        "This is an embedded resource content.",
    )))
}

/// Returns text, an image and an embedded resource in one result.
#[mcp_tool]
async fn test_multiple_content_types() -> Result<Vec<Content>, ToolError> {
    Ok(vec![
        Content::text("Multiple content types test:"),
        Content::image(PNG_1X1, "image/png"),
        Content::resource(ResourceContents::text(
            "test://mixed-content-resource",
            Some("application/json"),
            r#"{"test":"data","value":123}"#,
        )),
    ])
}

/// Always fails with a tool error (an `isError: true` result, not a protocol error).
#[mcp_tool]
async fn test_error_handling() -> Result<String, ToolError> {
    Err(ToolError::new("This tool intentionally returns an error for testing"))
}

/// Reports progress 0, 50 and 100 of 100, then returns.
#[mcp_tool]
async fn test_tool_with_progress(progress: Progress, cancel: CancellationToken) -> Result<String, ToolError> {
    for step in [0.0, 50.0, 100.0] {
        progress.report(step, Some(100.0), Some(&format!("step {step}"))).await;
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(50)) => {}
            _ = cancel.cancelled() => return Err(ToolError::new("cancelled")),
        }
    }
    Ok("Progress test completed".to_owned())
}

/// Sends three log messages while it runs.
#[mcp_tool]
async fn test_tool_with_logging(logger: Logger) -> Result<String, ToolError> {
    for msg in ["Tool execution started", "Tool processing data", "Tool execution completed"] {
        logger.info(msg).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok("Logging test completed".to_owned())
}

/// Logs at several levels; only what the request's logLevel allows is sent.
#[mcp_tool]
async fn test_logging_tool(logger: Logger) -> Result<String, ToolError> {
    logger.debug("debug message from test_logging_tool").await;
    logger.info("info message from test_logging_tool").await;
    logger.warning("warning message from test_logging_tool").await;
    Ok("Logged at debug, info and warning".to_owned())
}

/// Needs the client's sampling capability; without it the call fails with -32021.
#[mcp_tool]
async fn test_missing_capability(ctx: RequestContext) -> Result<String, McpError> {
    ctx.require_client_capability("sampling")?;
    Ok("The client declared sampling".to_owned())
}

/// Streams a progress notification before its result, and never a server-to-client request.
#[mcp_tool]
async fn test_streaming_elicitation(progress: Progress) -> Result<String, ToolError> {
    progress.report(1.0, Some(1.0), Some("streaming")).await;
    Ok("Streaming completed without server-to-client requests".to_owned())
}

/// Arguments of `test_header_param`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct HeaderParamArgs {
    /// A value mirrored in the `Mcp-Param-Value` HTTP header.
    #[schemars(extend("x-mcp-header" = "Value"))]
    pub value: String,
}

/// Echoes a value that clients also send in the Mcp-Param-Value header.
#[mcp_tool]
async fn test_header_param(args: HeaderParamArgs) -> Result<String, ToolError> {
    Ok(format!("value: {}", args.value))
}

/// Has a hand-written JSON Schema 2020-12 input schema, passed through unchanged.
#[mcp_tool(input_schema = r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {
    "address": {
      "$anchor": "address",
      "type": "object",
      "properties": { "street": { "type": "string" }, "city": { "type": "string" } },
      "required": ["street", "city"]
    }
  },
  "properties": {
    "name": { "type": "string" },
    "address": { "$ref": "#/$defs/address" },
    "contactMethod": { "type": "string", "enum": ["phone", "email"] },
    "phone": { "type": "string" },
    "email": { "type": "string" }
  },
  "additionalProperties": false,
  "allOf": [ { "anyOf": [ { "required": ["phone"] }, { "required": ["email"] }, { "not": { "required": ["contactMethod"] } } ] } ],
  "if": { "properties": { "contactMethod": { "const": "phone" } }, "required": ["contactMethod"] },
  "then": { "required": ["phone"] },
  "else": { "properties": { "phone": { "type": "string" } } }
}"##)]
async fn json_schema_2020_12_tool(args: serde_json::Value) -> Result<String, ToolError> {
    Ok(format!("Received: {args}"))
}

/// Ends its own SSE stream mid-call (legacy HTTP); the result arrives once the client resumes
/// the stream with `GET` and `Last-Event-ID` (SEP-1699).
#[mcp_tool]
async fn test_reconnection(ctx: RequestContext) -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.close_sse_stream().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    Ok("Reconnection test completed".to_owned())
}

/// Publishes `notifications/tools/list_changed` to listen subscriptions.
#[mcp_tool]
async fn test_trigger_tool_change(ctx: RequestContext) -> Result<String, ToolError> {
    ctx.server().publisher().tools_list_changed();
    Ok("tools list changed".to_owned())
}

/// Publishes `notifications/prompts/list_changed` to listen subscriptions.
#[mcp_tool]
async fn test_trigger_prompt_change(ctx: RequestContext) -> Result<String, ToolError> {
    ctx.server().publisher().prompts_list_changed();
    Ok("prompts list changed".to_owned())
}

/// Arguments of `number_sequence`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SequenceArgs {
    /// How many numbers, 0–255.
    pub count: u8,
}

/// Returns `[1, 2, .., count]` as structured content: an array, so the output schema's root is
/// not an object, and 2025-11-25 clients see it wrapped as `{"result": [..]}`.
#[mcp_tool]
async fn number_sequence(args: SequenceArgs) -> Result<Json<Vec<u32>>, ToolError> {
    Ok(Json((1..=u32::from(args.count)).collect()))
}

/// Arguments of `read_json_file`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadJsonArgs {
    /// A path on the server's file system.
    pub path: String,
}

/// Reads a JSON file and returns it re-serialized: `?` on `std::io::Error` and
/// `serde_json::Error` turns either failure into an `isError: true` result with its message.
#[mcp_tool]
async fn read_json_file(args: ReadJsonArgs) -> Result<Json<serde_json::Value>, ToolError> {
    let text = std::fs::read_to_string(&args.path)?;
    let value: serde_json::Value = serde_json::from_str(&text)?;
    Ok(Json(value))
}

/// Parses `text` as an integer with `anyhow` context: a tool returning `anyhow::Result<T>`,
/// whose error (with its context chain) is an `isError: true` result.
#[mcp_tool]
async fn parse_integer(args: EchoText) -> anyhow::Result<String> {
    use anyhow::Context;
    let n: i64 = args.text.trim().parse().with_context(|| format!("`{}` is not an integer", args.text))?;
    Ok(format!("{n}"))
}

/// Arguments holding one text.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct EchoText {
    /// The text.
    pub text: String,
}

/// The form `greet_by_name` asks for.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct NameAnswer {
    /// Your name.
    pub name: String,
}

/// Asks for a name with `?` in a tool returning `Result<_, ToolError>`: the input-required
/// signal (and a missing elicitation capability, `-32021`) pass through `?` as the protocol
/// outcomes they are, not as tool error text.
#[mcp_tool]
async fn greet_by_name(ctx: RequestContext) -> Result<String, ToolError> {
    match ctx.elicit::<NameAnswer>("name", "What is your name?").await? {
        Elicited::Accept(a) => Ok(format!("Hello, {}!", a.name)),
        _ => Err(ToolError::new("no name was given")),
    }
}
