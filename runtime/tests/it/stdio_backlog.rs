//! The stdio transport keeps reading while every request slot is taken: responses to the
//! server's own requests and cancellations still arrive, so a full house of waiting requests or
//! subscriptions cannot deadlock the connection.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::time::Duration;
use switchyard::prelude::*;
use switchyard::transport::stdio::{StdioConfig, serve_io};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

#[derive(Deserialize, JsonSchema)]
struct NameForm {
    name: String,
}

/// Asks the client for a name.
#[mcp_tool(group = "backlog")]
async fn ask(ctx: RequestContext) -> Result<String, ToolFailure> {
    match ctx.elicit::<NameForm>("name", "Your name?").await? {
        Elicited::Accept(f) => Ok(format!("Hello, {}!", f.name)),
        _ => Ok("nobody".to_owned()),
    }
}

/// Answers at once.
#[mcp_tool(group = "backlog")]
async fn quick() -> Result<String, ToolError> {
    Ok("quick".to_owned())
}

struct Peer {
    tx: DuplexStream,
    rx: Lines<BufReader<DuplexStream>>,
}

impl Peer {
    /// A server with one request slot.
    fn start() -> Peer {
        let server = Server::builder("backlog", "1").groups(["backlog"]).build().expect("builds");
        let (client_out, server_in) = tokio::io::duplex(64 * 1024);
        let (server_out, client_in) = tokio::io::duplex(64 * 1024);
        let config = StdioConfig::default().max_in_flight(1);
        tokio::spawn(serve_io(server, server_in, server_out, config));
        Peer { tx: client_out, rx: BufReader::new(client_in).lines() }
    }

    async fn send(&mut self, msg: Value) {
        self.tx.write_all(format!("{msg}\n").as_bytes()).await.expect("write");
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.rx.next_line())
            .await
            .expect("a message within 10 s (no deadlock)")
            .expect("readable")
            .expect("a line");
        serde_json::from_str(&line).expect("JSON")
    }
}

fn modern_meta() -> Value {
    json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} })
}

#[tokio::test]
async fn a_cancellation_reaches_a_subscription_holding_the_only_slot() {
    let mut p = Peer::start();
    p.send(json!({ "jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen",
        "params": { "notifications": { "toolsListChanged": true }, "_meta": modern_meta() } }))
        .await;
    assert_eq!(p.next().await["method"], "notifications/subscriptions/acknowledged");
    // The call waits for the slot the subscription holds; the cancellation behind it is still read.
    p.send(json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": { "name": "quick", "arguments": {}, "_meta": modern_meta() } }))
        .await;
    p.send(json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": "L" } })).await;
    let r = p.next().await;
    assert_eq!(r["id"], 2, "{r}");
    assert_eq!(r["result"]["content"][0]["text"], "quick");
}

#[tokio::test]
async fn a_legacy_answer_reaches_a_request_holding_the_only_slot() {
    let mut p = Peer::start();
    p.send(json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": { "elicitation": {} },
        "clientInfo": { "name": "t", "version": "0" } } }))
        .await;
    assert_eq!(p.next().await["id"], 1);
    p.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await;
    p.send(json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "ask", "arguments": {} } }))
        .await;
    let ask = p.next().await;
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    // A second call waits for the slot; the answer to the server's request is still read.
    p.send(
        json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": { "name": "quick", "arguments": {} } }),
    )
    .await;
    p.send(
        json!({ "jsonrpc": "2.0", "id": ask["id"], "result": { "action": "accept", "content": { "name": "Ada" } } }),
    )
    .await;
    let (a, b) = (p.next().await, p.next().await);
    assert_eq!((&a["id"], &a["result"]["content"][0]["text"]), (&json!(2), &json!("Hello, Ada!")), "{a}");
    assert_eq!((&b["id"], &b["result"]["content"][0]["text"]), (&json!(3), &json!("quick")), "{b}");
}
