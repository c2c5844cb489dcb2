//! Typed views of the built-in methods that take typed and alternate-result filters:
//! `tools/call`, `prompts/get` and `resources/read`. Name the marker types in
//! `#[mcp_filter(rpc = switchyard::methods::ToolsCall)]`.

use super::RpcMethod;
use crate::jsonrpc::ToolArguments;
use crate::model::{CallToolResult, GetPromptResult, ReadResourceResult};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The params of `tools/call` (without `_meta`): `{"name":..,"arguments"?:{..}}`. A filter
/// that changes `name` swaps the tool that runs (the new tool is resolved, and authorized,
/// again before its body runs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallToolParams {
    /// The tool to call.
    pub name: String,
    /// Its arguments: an object, `{}` when absent or `null`; kept as the JSON text they came
    /// in until read as a map ([`ToolArguments`]).
    #[serde(default)]
    pub arguments: ToolArguments,
}

/// The params of `prompts/get` (without `_meta`): `{"name":..,"arguments"?:{..}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetPromptParams {
    /// The prompt to render.
    pub name: String,
    /// Its arguments (string values); `{}` when absent.
    #[serde(default, deserialize_with = "object_or_null")]
    pub arguments: Map<String, Value>,
}

/// The params of `resources/read` (without `_meta`): `{"uri":..}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadResourceParams {
    /// The URI to read.
    pub uri: String,
}

fn object_or_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Map<String, Value>, D::Error> {
    Ok(Option::<Map<String, Value>>::deserialize(d)?.unwrap_or_default())
}

/// Marker types of the built-in typed methods.
pub mod methods {
    use super::*;

    /// `tools/call`: [`CallToolParams`] → [`CallToolResult`].
    #[derive(Debug)]
    pub enum ToolsCall {}
    impl RpcMethod for ToolsCall {
        type Params = CallToolParams;
        type Result = CallToolResult;
        const METHOD: &'static str = "tools/call";
    }

    /// `prompts/get`: [`GetPromptParams`] → [`GetPromptResult`].
    #[derive(Debug)]
    pub enum PromptsGet {}
    impl RpcMethod for PromptsGet {
        type Params = GetPromptParams;
        type Result = GetPromptResult;
        const METHOD: &'static str = "prompts/get";
    }

    /// `resources/read`: [`ReadResourceParams`] → [`ReadResourceResult`].
    #[derive(Debug)]
    pub enum ResourcesRead {}
    impl RpcMethod for ResourcesRead {
        type Params = ReadResourceParams;
        type Result = ReadResourceResult;
        const METHOD: &'static str = "resources/read";
    }
}
