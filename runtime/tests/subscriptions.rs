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
    for _ in 0..200 {
        if let Some(m) = client.notifications().into_iter().find(|m| what(m)) {
            return m;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no matching message in {:?}", client.notifications());
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
