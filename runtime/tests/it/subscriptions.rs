//! Extension subscription fields (C16, C17): grant processors and routed extension events.

use serde_json::{Value, json};
use std::time::Duration;
use switchyard::CancellationToken;
use switchyard::context::{Origin, Outbound, OutboundReceiver, outbound_channel};
use switchyard::jsonrpc::{Message, ResultObject, parse_message};
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

/// A listen request with any id, asking for tool-list changes and the `ok-1` acme events.
fn listen_with_id(id: &Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
        "notifications": { "toolsListChanged": true, "acmeIds": ["ok-1"] },
        "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                   "io.modelcontextprotocol/clientCapabilities": { "extensions": { "acme/ext": {} } } } } })
}

fn acme(params: Value) -> Event {
    Event::Extension { key: "acmeIds".into(), item: json!("ok-1"), method: "notifications/acme".into(), params }
}

fn tag(id: &Value) -> Value {
    json!({ "io.modelcontextprotocol/subscriptionId": id })
}

/// Ids of every shape the wire allows, each needing care when written into the shared text.
fn odd_ids() -> [Value; 4] {
    [json!(-7), json!(i64::MAX), json!("s\"\\/\n\t\u{1}\u{e9}\u{2028}\u{1F600}"), json!("")]
}

/// Several subscribers with ids of every shape share one encoding per event on stdio; each
/// gets every event in publication order (C21), tagged with its own id and written as the
/// publisher built it: two events equal as `Value`s but for their key order (or the sign of a
/// zero) each keep their own.
#[tokio::test]
async fn c21_every_id_shape_gets_its_own_tag_and_each_event_as_written_on_stdio() {
    let server = Server::builder("c21-ids", "1").groups(["c16"]).build().expect("builds");
    let client = TestClient::modern(server.clone());
    let ids = odd_ids();
    for id in &ids {
        client.send_line(&listen_with_id(id).to_string()).await;
    }
    let acks = |m: &Value| m["method"] == "notifications/subscriptions/acknowledged";
    for id in &ids {
        wait_for(&client, |m| acks(m) && m["params"]["_meta"] == tag(id)).await;
    }
    let publisher = server.publisher();
    publisher.tools_list_changed();
    publisher.publish(acme(json!({ "a": 1, "b": 2 })));
    publisher.publish(acme(json!({ "b": 2, "a": 1 })));
    publisher.publish(acme(json!({ "z": 0.0 })));
    publisher.publish(acme(json!({ "z": -0.0 })));
    publisher.publish(acme(json!({})));
    for id in &ids {
        let mine = |m: &Value| m["params"]["_meta"] == tag(id) && !acks(m);
        wait_for(&client, |m| {
            mine(m) && m["params"].as_object().is_some_and(|p| p.len() == 1 && m["method"] == "notifications/acme")
        })
        .await;
        let got: Vec<Value> = client.notifications().into_iter().filter(|m| mine(m)).collect();
        let methods: Vec<&str> = got.iter().map(|m| m["method"].as_str().unwrap_or("?")).collect();
        assert_eq!(methods[0], "notifications/tools/list_changed", "{id}: {got:?}");
        assert_eq!(methods[1..], ["notifications/acme"; 5], "{id}: {got:?}");
        let keys: Vec<Vec<&str>> = got
            .iter()
            .map(|m| m["params"].as_object().map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default())
            .collect();
        assert_eq!(
            keys,
            [
                vec!["_meta"],
                vec!["a", "b", "_meta"],
                vec!["b", "a", "_meta"],
                vec!["z", "_meta"],
                vec!["z", "_meta"],
                vec!["_meta"]
            ],
            "{id}: each event keeps its own key order"
        );
        let sign = |m: &Value| m["params"]["z"].as_f64().map(f64::is_sign_negative);
        assert_eq!((sign(&got[3]), sign(&got[4])), (Some(false), Some(true)), "{id}: {got:?}");
        assert!(got.iter().all(|m| m["jsonrpc"] == "2.0"), "{got:?}");
    }
}

/// Opens a listen subscription over a custom transport: `Server::notifier` over an outbound
/// queue holding one message, so every send past one unread message waits.
fn custom_listen(
    server: &Server,
    id: &Value,
    cancel: &CancellationToken,
) -> (tokio::task::JoinHandle<Result<ResultObject, McpError>>, OutboundReceiver) {
    let (tx, rx) = outbound_channel(1);
    let Ok(Message::Request(req)) = parse_message(listen_with_id(id).to_string().as_bytes()) else {
        panic!("a listen request")
    };
    let work = server.handle_request(req, None, Origin::new(cancel.clone(), server.notifier(tx, cancel.clone())));
    (tokio::spawn(work), rx)
}

/// A custom transport that names no connection is held to the per-caller limit only: every
/// anonymous request counts as the same caller, an authenticated one as its principal; with a
/// connection named, the per-connection limit applies too.
#[tokio::test]
async fn custom_transports_without_a_connection_count_by_caller_only() {
    use switchyard::auth::Principal;
    use switchyard::context::Connection;
    use switchyard::subscriptions::ListenLimits;
    let limits = ListenLimits::default().per_connection(1).per_principal(2);
    let server = Server::builder("limits-custom", "1").groups(["c16"]).listen_limits(limits).build().expect("builds");
    let cancel = CancellationToken::new();
    let open = |id: i64, origin: fn(Origin) -> Origin| {
        let (tx, rx) = outbound_channel(8);
        let Ok(Message::Request(req)) = parse_message(listen_with_id(&json!(id)).to_string().as_bytes()) else {
            panic!("a listen request")
        };
        let origin = origin(Origin::new(cancel.clone(), server.notifier(tx, cancel.clone())));
        (tokio::spawn(server.handle_request(req, None, origin)), rx)
    };
    let anonymous = |o: Origin| o;
    let alice = |o: Origin| o.principal(Some(std::sync::Arc::new(Principal::new("alice", ["user"]))));
    let mut held = Vec::new();
    for id in [1, 2] {
        let (work, mut rx) = open(id, anonymous);
        assert_eq!(
            next_outbound(&mut rx).await.expect("the ack")["method"],
            "notifications/subscriptions/acknowledged"
        );
        held.push((work, rx));
    }
    let (third, _rx) = open(3, anonymous);
    let refused = ended(third).await.expect_err("a third anonymous one is over the caller limit");
    assert_eq!(refused.data(), Some(&json!({ "reason": "listenLimit", "limit": 2, "scope": "principal" })));
    // Another caller has its own allowance, and no connection limit applies without a connection.
    let (fourth, mut rx) = open(4, alice);
    assert_eq!(next_outbound(&mut rx).await.expect("the ack")["method"], "notifications/subscriptions/acknowledged");
    held.push((fourth, rx));
    // A named connection is held to its own limit (1): its first succeeds, its second is refused.
    let on_connection = |o: Origin| {
        static CONNECTION: std::sync::OnceLock<Connection> = std::sync::OnceLock::new();
        let c = CONNECTION.get_or_init(|| Connection::new(None)).clone();
        o.principal(Some(std::sync::Arc::new(Principal::new("bob", ["user"])))).connection(Some(c))
    };
    let (fifth, mut rx) = open(5, on_connection);
    assert_eq!(next_outbound(&mut rx).await.expect("the ack")["method"], "notifications/subscriptions/acknowledged");
    held.push((fifth, rx));
    let (sixth, _rx) = open(6, on_connection);
    let refused = ended(sixth).await.expect_err("over the connection limit");
    assert_eq!(refused.data(), Some(&json!({ "reason": "listenLimit", "limit": 1, "scope": "connection" })));
    server.shutdown();
    for (work, _rx) in held {
        assert!(ended(work).await.is_ok(), "shutdown ends each with its result");
    }
}

/// The next message on a custom transport's channel (5 s: a liveness bound).
async fn next_outbound(rx: &mut OutboundReceiver) -> Option<Value> {
    match tokio::time::timeout(Duration::from_secs(5), rx.recv()).await.expect("a message or the end") {
        Some(Outbound::Message(m)) => Some(m.into_value()),
        Some(_) => panic!("a listen subscription does not close its stream"),
        None => None,
    }
}

async fn ended(work: tokio::task::JoinHandle<Result<ResultObject, McpError>>) -> Result<Value, McpError> {
    let outcome = tokio::time::timeout(Duration::from_secs(5), work).await.expect("the subscription ends");
    outcome.expect("no panic").map(ResultObject::into_value)
}

/// A custom transport gets complete `Value`s, in publication order, also when the
/// subscription had to wait for room in its channel; shutdown ends it with its result.
#[tokio::test]
async fn c21_c12_custom_transports_get_whole_values_in_order_and_the_result_on_shutdown() {
    let server = Server::builder("c21-custom", "1").groups(["c16"]).build().expect("builds");
    for id in odd_ids() {
        let cancel = CancellationToken::new();
        let (work, mut rx) = custom_listen(&server, &id, &cancel);
        let ack = next_outbound(&mut rx).await.expect("the ack");
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        assert_eq!(
            ack["params"],
            json!({ "notifications": { "toolsListChanged": true, "acmeIds": ["ok-1"] }, "_meta": tag(&id) })
        );
        // Nothing is read while publishing: the subscription waits for room after the first.
        let publisher = server.publisher();
        publisher.tools_list_changed();
        for n in 1..=5 {
            publisher.publish(acme(json!({ "n": n })));
        }
        let mut want = vec![
            json!({ "jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": { "_meta": tag(&id) } }),
        ];
        want.extend((1..=5).map(
            |n| json!({ "jsonrpc": "2.0", "method": "notifications/acme", "params": { "n": n, "_meta": tag(&id) } }),
        ));
        for w in want {
            assert_eq!(next_outbound(&mut rx).await, Some(w), "{id}");
        }
        cancel.cancel();
        assert!(ended(work).await.is_err(), "a client cancel ends it without a result");
        publisher.tools_list_changed();
        assert_eq!(next_outbound(&mut rx).await, None, "nothing after the cancel");
    }
    let id = json!("last \"one\"");
    let (work, mut rx) = custom_listen(&server, &id, &CancellationToken::new());
    next_outbound(&mut rx).await.expect("the ack");
    server.shutdown();
    let result = ended(work).await.expect("shutdown ends it with its result");
    assert_eq!(result["_meta"]["io.modelcontextprotocol/subscriptionId"], id, "{result}");
}

/// A subscriber that falls more than the hub's capacity behind is ended with its result
/// (its id, whatever its shape) rather than skipping events; what it got before is in order.
#[tokio::test]
async fn c21_a_lagging_subscription_ends_with_its_result_after_an_in_order_prefix() {
    let server = Server::builder("c21-lag", "1")
        .groups(["c16"])
        .delivery_hub(switchyard::subscriptions::InProcessHub::new(2))
        .build()
        .expect("builds");
    for id in odd_ids() {
        let (work, mut rx) = custom_listen(&server, &id, &CancellationToken::new());
        next_outbound(&mut rx).await.expect("the ack");
        for n in 1..=20 {
            server.publisher().publish(acme(json!({ "n": n })));
        }
        let mut got = Vec::new();
        while let Some(m) = next_outbound(&mut rx).await {
            got.push(m);
        }
        let result = ended(work).await.expect("a lagging subscription ends with its result");
        assert_eq!(result["_meta"]["io.modelcontextprotocol/subscriptionId"], id, "{result}");
        assert!(got.len() < 20, "it lagged: {got:?}");
        for (i, m) in got.iter().enumerate() {
            assert_eq!(m["params"], json!({ "n": i + 1, "_meta": tag(&id) }), "an in-order prefix: {got:?}");
        }
    }
}

async fn serve(server: Server, config: switchyard::transport::http::HttpConfig) -> switchyard::testing::HttpTestServer {
    switchyard::testing::HttpTestServer::start(server, config).await.expect("a loopback port")
}

async fn open_listen(url: &str, id: i64) -> reqwest::Response {
    let body = json!({ "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
        "notifications": { "toolsListChanged": true },
        "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } } });
    reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
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

/// On HTTP the encoded event goes into the SSE frame as it is: for every id shape the frame's
/// data is byte for byte the serialized `Value` the listen loop built before.
#[tokio::test]
async fn every_id_shape_is_framed_on_http_exactly_as_the_value_was() {
    let server = Server::builder("c21-http", "1").groups(["c16"]).build().expect("builds");
    let http = serve(server.clone(), Default::default()).await;
    let url = http.url();
    let params = json!({ "b": 2, "a": [1.5, -0.0, u64::MAX], "s": "\u{2028}\"x\"\\\u{1F600}" });
    for id in odd_ids() {
        let mut resp = reqwest::Client::new()
            .post(&url)
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "subscriptions/listen")
            .body(listen_with_id(&id).to_string())
            .send()
            .await
            .expect("sent");
        read_until(&mut resp, "acknowledged").await;
        server.publisher().publish(acme(params.clone()));
        let mut tagged = params.clone();
        tagged["_meta"] = tag(&id);
        let want = json!({ "jsonrpc": "2.0", "method": "notifications/acme", "params": tagged });
        let frame = format!("data: {}\n\n", serde_json::to_string(&want).expect("serializes"));
        let text = read_until(&mut resp, &frame).await;
        assert!(text.contains(&frame), "{id}: want {frame:?} in {text:?}");
    }
}

#[tokio::test]
async fn c19_listen_streams_carry_keep_alive_comments_at_the_configured_interval() {
    let server = Server::builder("c19", "1").groups(["c16"]).build().expect("builds");
    let config = switchyard::transport::http::HttpConfig::default().keep_alive(Duration::from_millis(50));
    let http = serve(server, config).await;
    let url = http.url();
    let mut resp = open_listen(&url, 1).await;
    let text = read_until(&mut resp, ": keep-alive").await;
    assert!(text.contains("notifications/subscriptions/acknowledged"), "{text}");
    assert!(text.contains(": keep-alive"), "{text}");
}

#[tokio::test]
async fn c20_a_subscriber_that_does_not_read_never_blocks_the_others() {
    let server = Server::builder("c20", "1").groups(["c16"]).build().expect("builds");
    let http = serve(server.clone(), Default::default()).await;
    let url = http.url();
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
