//! rmcp (the official Rust SDK): the same `echo` tool with its `#[tool]` macros.

use crate::Res;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use std::sync::Arc;

/// The rmcp server object; the macros route `tools/call` through `tool_router`.
#[derive(Debug, Clone)]
pub struct Echo {
    #[expect(dead_code, reason = "read by the code #[tool_handler] generates")]
    tool_router: ToolRouter<Self>,
}

/// Arguments of `echo`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct EchoArgs {
    /// The text to send back.
    text: String,
}

#[tool_router]
impl Echo {
    fn new() -> Self {
        Echo { tool_router: Self::tool_router() }
    }

    /// Sends `text` back.
    #[tool(description = "Sends text back")]
    async fn echo(&self, Parameters(args): Parameters<EchoArgs>) -> String {
        args.text
    }
}

#[tool_handler]
impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// Serves on stdin/stdout: rmcp's default `stdio()` transport, or `stdio_pipes()` (its faster
/// non-blocking pipe transport) when `pipes`.
pub async fn stdio(pipes: bool) -> Res<()> {
    let service = if pipes {
        Echo::new().serve(rmcp::transport::stdio_pipes()).await?
    } else {
        Echo::new().serve(rmcp::transport::stdio()).await?
    };
    service.waiting().await?;
    Ok(())
}

/// Serves Streamable HTTP at `addr`/mcp: stateless with JSON replies, or legacy sessions
/// (rmcp's default) when `legacy`.
pub async fn http(addr: String, legacy: bool) -> Res<()> {
    let mut config = StreamableHttpServerConfig::default();
    config.legacy_session_mode = legacy;
    config.json_response = !legacy;
    let service = StreamableHttpService::new(|| Ok(Echo::new()), Arc::new(LocalSessionManager::default()), config);
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    eprintln!("listening on http://{}/mcp", listener.local_addr()?);
    // TCP_NODELAY as the other two servers have it: rmcp's SSE replies are several writes,
    // and without it each answer waits ~40 ms for a delayed ACK.
    use axum::serve::ListenerExt;
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app).await?;
    Ok(())
}
