//! A server on a loopback HTTP port for tests that need the real Streamable HTTP transport
//! (headers, status codes, SSE), in process.

use crate::server::Server;
use crate::transport::http::{HttpConfig, serve};
use std::net::SocketAddr;

/// `server` served over Streamable HTTP with `config` on `127.0.0.1` at a port the system
/// picks, through [`transport::http::serve`](crate::transport::http::serve) as a real server
/// is; stopped when dropped.
///
/// ```
/// # use switchyard::{Server, testing::HttpTestServer, transport::http::HttpConfig};
/// # #[tokio::main] async fn main() {
/// let server = Server::builder("t", "0").groups(["none"]).build().expect("builds");
/// let http = HttpTestServer::start(server, HttpConfig::default()).await.expect("a loopback port");
/// assert!(http.url().starts_with("http://127.0.0.1:") && http.url().ends_with("/mcp"));
/// # }
/// ```
#[derive(Debug)]
pub struct HttpTestServer {
    addr: SocketAddr,
    path: String,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl HttpTestServer {
    /// Binds `127.0.0.1:0` and starts serving.
    ///
    /// Errors: the `std::io::Error` of binding the loopback port.
    pub async fn start(server: Server, config: HttpConfig) -> std::io::Result<HttpTestServer> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let path = config.path.clone();
        let task = tokio::spawn(serve(listener, server, config));
        Ok(HttpTestServer { addr, path, task })
    }

    /// The MCP endpoint, e.g. `http://127.0.0.1:40123/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.addr, self.path)
    }

    /// The bound address, for tests that speak raw TCP.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for HttpTestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}
