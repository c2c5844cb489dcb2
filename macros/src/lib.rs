//! Attribute macros of Switchyard. Use them through the `switchyard` crate.
use proc_macro::TokenStream;

/// Registers an async function as an MCP tool.
#[proc_macro_attribute]
pub fn mcp_tool(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}
/// Registers an async function as an MCP prompt.
#[proc_macro_attribute]
pub fn mcp_prompt(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}
/// Registers an async function as an MCP resource or resource template.
#[proc_macro_attribute]
pub fn mcp_resource(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}
/// Registers an async function as a `completion/complete` handler.
#[proc_macro_attribute]
pub fn mcp_completion(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}
