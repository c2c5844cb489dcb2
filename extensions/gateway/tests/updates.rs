//! `notifications/resources/updated` through the gateway: it subscribes upstream to each
//! resource it mirrors (`subscriptions/listen` on 2026-07-28, `resources/subscribe` on a
//! session), so a client of ours subscribed to our URI of the resource hears of its changes.

use futures::StreamExt;
use serde_json::json;
use std::collections::BTreeSet;
use std::time::Duration;
use switchyard::prelude::*;
use switchyard::testing::HttpTestServer;
use switchyard::transport::http::HttpConfig;
use switchyard_client::{Client, ClientBuilder, SubscriptionFilter};
use switchyard_gateway::{Gateway, GatewayHandle, Upstream};

/// The board.
#[mcp_resource(uri = "notes://board", mime_type = "text/plain", group = "updating-upstream")]
async fn board() -> Result<String, McpError> {
    Ok("the board".to_owned())
}

/// The list, a second resource: a session upstream gets a `resources/subscribe` for each.
#[mcp_resource(uri = "notes://list", mime_type = "text/plain", group = "updating-upstream")]
async fn list() -> Result<String, McpError> {
    Ok("the list".to_owned())
}

/// Changes the list and the board (publishes both updates).
#[mcp_tool(group = "updating-upstream")]
async fn touch_both(ctx: RequestContext) -> Result<String, McpError> {
    ctx.server().publisher().resource_updated("notes://list");
    ctx.server().publisher().resource_updated("notes://board");
    Ok("touched".to_owned())
}

/// Changes the board (publishes its update).
#[mcp_tool(group = "updating-upstream")]
async fn touch(ctx: RequestContext) -> Result<String, McpError> {
    ctx.server().publisher().resource_updated("notes://board");
    Ok("touched".to_owned())
}

/// A gateway over the upstream, reached on `version` (prefix `u_`, URI prefix `u+`), served
/// over HTTP, and our client of it.
async fn gateway(version: &str) -> (Client, GatewayHandle, HttpTestServer, HttpTestServer) {
    let upstream = Server::builder("updating", "1").groups(["updating-upstream"]).build().expect("builds");
    let up = HttpTestServer::start(upstream, HttpConfig::default()).await.expect("binds");
    let server = Server::builder("gateway", "1").groups(["none"]).build().expect("builds");
    let client = ClientBuilder::new("gateway", "1").protocol_versions([version]);
    let handle = Gateway::new()
        .upstream(Upstream::http("u", up.url()).prefix("u_").uri_prefix("u+").client(client))
        .attach(&server)
        .await
        .expect("attaches");
    let front = HttpTestServer::start(server, HttpConfig::default()).await.expect("binds");
    let ours = ClientBuilder::new("test", "1").connect_http(front.url()).await.expect("connects");
    (ours, handle, up, front)
}

/// Calls `tool` through the gateway until `heard` has yielded the update of each of our URIs
/// `expected`, and of no other (the gateway subscribes upstream once it has listed the
/// resources, so early touches may be missed), at most 20 s.
async fn touch_until_heard<S>(client: &Client, tool: &str, heard: &mut S, expected: &[&str])
where
    S: futures::Stream<Item = switchyard::jsonrpc::Notification> + Unpin,
{
    let mut uris = BTreeSet::new();
    for _ in 0..100 {
        if let Ok(result) = client.call_tool(tool, json!({})).await {
            assert_eq!(result.content[0].as_text(), Some("touched"), "{result:?}");
        }
        let until = tokio::time::sleep(Duration::from_millis(200));
        tokio::pin!(until);
        loop {
            tokio::select! {
                () = &mut until => break,
                note = heard.next() => {
                    let note = note.expect("the notifications go on");
                    if note.method == "notifications/resources/updated" {
                        let uri = note.params.as_ref().and_then(|p| p.get("uri")).and_then(|u| u.as_str());
                        assert!(uri.is_some_and(|u| expected.contains(&u)), "{note:?}");
                        uris.extend(uri.map(str::to_owned));
                        if uris.len() == expected.len() {
                            return;
                        }
                    }
                }
            }
        }
    }
    panic!("not every notifications/resources/updated reached our client: {uris:?} of {expected:?}");
}

#[tokio::test]
async fn an_update_upstream_reaches_a_listener_of_ours() {
    for upstream_version in ["2026-07-28", "2025-11-25"] {
        let (client, _gateway, _up, _front) = gateway(upstream_version).await;
        let subscription = client.listen(SubscriptionFilter::new().resource("u+notes://board")).await.expect("listens");
        let mut heard = subscription.filter_map(|event| async move { event.ok() }).boxed();
        touch_until_heard(&client, "u_touch", &mut heard, &["u+notes://board"]).await;
    }
}

#[tokio::test]
async fn an_update_upstream_reaches_a_session_subscriber_of_ours() {
    let (_, _gateway, _up, front) = gateway("2025-11-25").await;
    let client = ClientBuilder::new("test", "1")
        .protocol_versions(["2025-11-25"])
        .connect_http(front.url())
        .await
        .expect("connects");
    let mut heard = client.notifications().boxed();
    client.subscribe_resource("u+notes://board").await.expect("subscribes");
    touch_until_heard(&client, "u_touch", &mut heard, &["u+notes://board"]).await;
}

/// Every mirrored resource of a session upstream is subscribed (the gateway sends the
/// `resources/subscribe`s at once): updates of both reach a listener of ours.
#[tokio::test]
async fn every_resource_of_a_session_upstream_is_followed() {
    let (client, _gateway, _up, _front) = gateway("2025-11-25").await;
    let filter = SubscriptionFilter::new().resource("u+notes://board").resource("u+notes://list");
    let subscription = client.listen(filter).await.expect("listens");
    let mut heard = subscription.filter_map(|event| async move { event.ok() }).boxed();
    touch_until_heard(&client, "u_touch_both", &mut heard, &["u+notes://board", "u+notes://list"]).await;
}
