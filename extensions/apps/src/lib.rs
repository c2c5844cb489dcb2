//! # switchyard-mcp-apps (`switchyard_apps`): the MCP Apps extension (`io.modelcontextprotocol/ui`)
//!
//! Lets a Switchyard server ship interactive HTML views that hosts render in a sandboxed iframe
//! beside a tool's result, as
//! [SEP-1865](https://github.com/modelcontextprotocol/ext-apps/blob/main/specification/2026-01-26/apps.mdx)
//! defines. A view is a resource with a `ui://` URI and MIME type [`MIME_TYPE`]; a tool is
//! linked to it with `_meta.ui.resourceUri`; in the iframe the view talks to its host over
//! `postMessage` (the official `@modelcontextprotocol/ext-apps` `App` class does it) and may
//! call the server's tools through the host.
//!
//! ```no_run
//! use switchyard::{Server, ToolError, mcp_tool};
//! use switchyard_apps::{AppView, Apps, Csp, Visibility};
//!
//! #[mcp_tool(description = "Forecast for a city")]
//! async fn forecast(args: serde_json::Value) -> Result<String, ToolError> {
//!     Ok("Sunny, 21 °C".into())
//! }
//!
//! # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let view = AppView::html("ui://weather/forecast", "Forecast", "<!doctype html>...")
//!     .csp(Csp::new().connect_domains(["https://api.example.com"]))
//!     .prefers_border(true);
//! let apps = Apps::new().view(view).link_tool("forecast", "ui://weather/forecast", Visibility::ModelAndApp);
//! let server = apps.install(Server::builder("weather", "1.0.0")).build()?;
//! switchyard::transport::stdio::serve(server).await?;
//! # Ok(()) }
//! ```
//!
//! ## On the wire
//! To a client that declares
//! `capabilities.extensions["io.modelcontextprotocol/ui"] = {"mimeTypes": ["text/html;profile=mcp-app"]}`
//! (in each 2026-07-28 request's `_meta`, or in a legacy session's `initialize`):
//! - `server/discover` lists the extension (`{"mimeTypes": [MIME_TYPE]}`);
//! - `resources/list` lists each view `{uri, name, mimeType: MIME_TYPE, _meta?: {ui: {csp?,
//!   permissions?, domain?, prefersBorder?}}}`, and `resources/read` answers
//!   `{contents: [{uri, mimeType, text, _meta?: {ui}}]}`;
//! - `tools/list` lists each linked tool with `_meta.ui = {resourceUri, visibility}`; the host
//!   hides tools whose `visibility` lacks `"model"` from the model.
//!
//! To any other client the views are not listed and carry no `_meta.ui` when read, linked tools
//! are ordinary tools without `_meta.ui`, and app-only tools are not listed at all. A tool's
//! text result is all such a client shows, so keep it meaningful without the view.
//!
//! ## Checked at build
//! [`ServerBuilder::build`](switchyard::ServerBuilder::build) fails with a
//! [`BuildError`](switchyard::BuildError) naming the tool and the view for: a view URI that is
//! not `ui://`; a CSP entry that is not an origin ([`Csp`]); a view whose file cannot be read;
//! two views with one URI; a tool linked twice; a linked tool the server does not have; a
//! linked view that is no resource of the server, or is served with another MIME type.

mod apps;
mod checks;
mod negotiate;
mod view;

pub use apps::Apps;
pub use negotiate::{EXTENSION, MIME_TYPE, Visibility, client_supports_apps};
pub use view::{AppView, Csp, Permissions};
