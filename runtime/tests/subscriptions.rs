//! Extension subscription fields (C16, C17): grant processors and routed extension events.

use serde_json::{Value, json};
use std::time::Duration;
use switchyard::prelude::*;
use switchyard::subscriptions::Event;
use switchyard::testing::TestClient;

/// Grants only the ids that start with `ok`.
#[subscription_field("acmeIds", extension = "acme/ext", group = "c16")]
async fn grant_ids(requested: Vec<String>) -> Result<Vec<String>, McpError> {
    Ok(requested.into_iter().filter(|id| id.starts_with("ok")).collect())
}

/// Something to make a listen subscription worth opening.
#[mcp_tool(group = "c16")]
async fn noop() -> Result<String, ToolError> {
    Ok(String::new())
}

fn listen_line(id: i64, caps: Value) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
        "notifications": { "acmeIds": ["ok-1", "no-2"], "unknownKey": true },
        "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": caps } } })
    .to_string()
}

async fn wait_for(client: &TestClient, what: impl Fn(&Value) -> bool) -> Value {
    client
        .wait_for_notification(what, Duration::from_secs(2))
        .await
        .unwrap_or_else(|| panic!("no matching message in {:?}", client.notifications()))
}

#[tokio::test]
async fn c16_c17_grant_processors_and_routed_extension_events() {
    let server = Server::builder("c16", "1").groups(["c16"]).build().expect("builds");
    let client = TestClient::modern(server.clone());
    // Without the extension the key is refused with -32021.
    let r = client.send_and_wait(json!(1), listen_line(1, json!({}))).await;
    assert_eq!(r.error_code(), Some(-32021));
    assert_eq!(r.error()["data"]["requiredCapabilities"], json!({ "extensions": { "acme/ext": {} } }));
    // With it, the processor decides the grant; unclaimed keys are dropped.
    client.send_line(&listen_line(2, json!({ "extensions": { "acme/ext": {} } }))).await;
    let ack = wait_for(&client, |m| m["method"] == "notifications/subscriptions/acknowledged").await;
    assert_eq!(ack["params"]["notifications"], json!({ "acmeIds": ["ok-1"] }));
    let publisher = server.publisher();
    for item in ["no-2", "ok-1"] {
        publisher.publish(Event::Extension {
            key: "acmeIds".into(),
            item: json!(item),
            method: "notifications/acme".into(),
            params: json!({ "id": item }),
        });
    }
    let delivered = wait_for(&client, |m| m["method"] == "notifications/acme").await;
    assert_eq!(delivered["params"]["id"], "ok-1");
    assert_eq!(delivered["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 2);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let acme: Vec<Value> = client.notifications().into_iter().filter(|m| m["method"] == "notifications/acme").collect();
    assert_eq!(acme.len(), 1, "only the granted id is delivered: {acme:?}");
}

/// Extension events whose params cannot be encoded once for every subscriber take the slower
/// path with the same result; params that are not an object cannot carry the subscription id
/// and are skipped, and the subscription goes on.
#[tokio::test]
async fn odd_extension_params_are_tagged_or_skipped_and_the_subscription_goes_on() {
    let server = Server::builder("c17-odd", "1").groups(["c16"]).build().expect("builds");
    let client = TestClient::modern(server.clone());
    client.send_line(&listen_line(5, json!({ "extensions": { "acme/ext": {} } }))).await;
    wait_for(&client, |m| m["method"] == "notifications/subscriptions/acknowledged").await;
    let publisher = server.publisher();
    let event = |params: Value| Event::Extension {
        key: "acmeIds".into(),
        item: json!("ok-1"),
        method: "notifications/acme".into(),
        params,
    };
    publisher.publish(event(json!(["not", "an", "object"])));
    publisher.publish(event(json!({ "n": 1, "_meta": { "publisher": "own" } })));
    publisher.publish(event(Value::Null));
    publisher.publish(event(json!({ "n": 3 })));
    let last = wait_for(&client, |m| m["method"] == "notifications/acme" && m["params"]["n"] == 3).await;
    assert_eq!(last["params"]["_meta"], json!({ "io.modelcontextprotocol/subscriptionId": 5 }));
    let acme: Vec<Value> = client.notifications().into_iter().filter(|m| m["method"] == "notifications/acme").collect();
    assert_eq!(acme.len(), 3, "the array params are skipped, the others delivered in order: {acme:?}");
    assert_eq!(acme[0]["params"], json!({ "n": 1, "_meta": { "io.modelcontextprotocol/subscriptionId": 5 } }));
    assert_eq!(acme[1]["params"], json!({ "_meta": { "io.modelcontextprotocol/subscriptionId": 5 } }));
}

async fn serve(server: Server, config: switchyard::transport::http::HttpConfig) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, switchyard::transport::http::router(server, config)).await });
    url
}

async fn open_listen(url: &str, id: i64) -> reqwest::Response {
    let body = json!({ "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
        "notifications": { "toolsListChanged": true },
        "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } } });
    reqwest::Client::new()
        .post(url)
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen")
        .body(body.to_string())
        .send()
        .await
        .expect("sent")
}

/// Reads the body until `needle` appears (or 5 s pass); returns what was read.
async fn read_until(resp: &mut reqwest::Response, needle: &str) -> String {
    let mut text = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !text.contains(needle) {
        match tokio::time::timeout_at(deadline, resp.chunk()).await {
            Ok(Ok(Some(c))) => text.push_str(&String::from_utf8_lossy(&c)),
            _ => break,
        }
    }
    text
}

#[tokio::test]
async fn c19_listen_streams_carry_keep_alive_comments_at_the_configured_interval() {
    let server = Server::builder("c19", "1").groups(["c16"]).build().expect("builds");
    let config =
        switchyard::transport::http::HttpConfig { keep_alive: Duration::from_millis(50), ..Default::default() };
    let url = serve(server, config).await;
    let mut resp = open_listen(&url, 1).await;
    let text = read_until(&mut resp, ": keep-alive").await;
    assert!(text.contains("notifications/subscriptions/acknowledged"), "{text}");
    assert!(text.contains(": keep-alive"), "{text}");
}

#[tokio::test]
async fn c20_a_subscriber_that_does_not_read_never_blocks_the_others() {
    let server = Server::builder("c20", "1").groups(["c16"]).build().expect("builds");
    let url = serve(server.clone(), Default::default()).await;
    let mut stalled = open_listen(&url, 1).await;
    read_until(&mut stalled, "acknowledged").await;
    let mut reader = open_listen(&url, 2).await;
    read_until(&mut reader, "acknowledged").await;
    // The stalled stream is never read again; the other still gets every event promptly.
    for _ in 0..200 {
        server.publisher().tools_list_changed();
    }
    let mut seen = 0;
    let mut text = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while seen < 1 {
        match tokio::time::timeout_at(deadline, reader.chunk()).await {
            Ok(Ok(Some(c))) => text.push_str(&String::from_utf8_lossy(&c)),
            _ => break,
        }
        seen = text.matches("notifications/tools/list_changed").count();
    }
    assert!(seen >= 1, "the reading subscriber got nothing: {text}");
    drop(stalled);
}
