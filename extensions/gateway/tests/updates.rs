//! `notifications/resources/updated` through the gateway: while a client of ours is
//! subscribed to a resource served from the upstream (mirrored, or through a mirrored
//! template), the gateway is subscribed to it upstream (`subscriptions/listen` on 2026-07-28,
//! `resources/subscribe` on a session), so the client hears of its changes.

use futures::StreamExt;
use serde_json::{Value, json};
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

/// A page, one of many: served through a template, never listed.
#[mcp_resource(uri = "notes://page/{n}", mime_type = "text/plain", group = "updating-upstream")]
async fn page(n: String) -> Result<String, McpError> {
    Ok(format!("page {n}"))
}

/// Which page.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Page {
    /// The page's number.
    n: u32,
}

/// Changes page `n` (publishes its update).
#[mcp_tool(group = "updating-upstream")]
async fn touch_page(ctx: RequestContext, page: Page) -> Result<String, McpError> {
    ctx.server().publisher().resource_updated(format!("notes://page/{}", page.n));
    Ok("touched".to_owned())
}

/// A gateway over the upstream, reached on `version` (prefix `u_`, URI prefix `u+`), served
/// over HTTP, and our client of it.
async fn gateway(version: &str) -> (Client, GatewayHandle, HttpTestServer, HttpTestServer) {
    let (client, handle, _, up, front) = gateway_and_upstream(version).await;
    (client, handle, up, front)
}

/// [`gateway`], and the upstream server (whose subscribers the gateway's subscriptions are).
async fn gateway_and_upstream(version: &str) -> (Client, GatewayHandle, Server, HttpTestServer, HttpTestServer) {
    let upstream = Server::builder("updating", "1").groups(["updating-upstream"]).build().expect("builds");
    let up = HttpTestServer::start(upstream.clone(), HttpConfig::default()).await.expect("binds");
    let server = Server::builder("gateway", "1").groups(["none"]).build().expect("builds");
    let client = ClientBuilder::new("gateway", "1").protocol_versions([version]);
    let handle = Gateway::new()
        .upstream(Upstream::http("u", up.url()).prefix("u_").uri_prefix("u+").client(client))
        .attach(&server)
        .await
        .expect("attaches");
    let front = HttpTestServer::start(server, HttpConfig::default()).await.expect("binds");
    let ours = ClientBuilder::new("test", "1").connect_http(front.url()).await.expect("connects");
    (ours, handle, upstream, up, front)
}

/// A 2025-11-25 session client of the gateway.
async fn session_client(front: &HttpTestServer) -> Client {
    ClientBuilder::new("test", "1").protocol_versions(["2025-11-25"]).connect_http(front.url()).await.expect("connects")
}

/// Waits (at most 20 s) until the URIs subscribed to on `server` are `expected`.
async fn until_subscribed(server: &Server, expected: &[&str]) {
    let mut subscribed = server.subscribed_resources();
    let wait = subscribed.wait_for(|uris| uris.iter().map(String::as_str).eq(expected.iter().copied()));
    if tokio::time::timeout(Duration::from_secs(20), wait).await.is_err() {
        panic!("subscribed upstream: {:?}, expected {expected:?}", *server.subscribed_resources().borrow());
    }
}

/// Calls `tool` with `arguments` through the gateway until `heard` has yielded the update of each of our URIs
/// `expected`, and of no other (the gateway subscribes upstream once it has listed the
/// resources, so early touches may be missed), at most 20 s.
async fn touch_until_heard<S>(client: &Client, (tool, arguments): (&str, Value), heard: &mut S, expected: &[&str])
where
    S: futures::Stream<Item = switchyard::jsonrpc::Notification> + Unpin,
{
    let mut uris = BTreeSet::new();
    for _ in 0..100 {
        if let Ok(result) = client.call_tool(tool, arguments.clone()).await {
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
        touch_until_heard(&client, ("u_touch", json!({})), &mut heard, &["u+notes://board"]).await;
    }
}

#[tokio::test]
async fn an_update_upstream_reaches_a_session_subscriber_of_ours() {
    let (_, _gateway, _up, front) = gateway("2025-11-25").await;
    let client = session_client(&front).await;
    let mut heard = client.notifications().boxed();
    client.subscribe_resource("u+notes://board").await.expect("subscribes");
    touch_until_heard(&client, ("u_touch", json!({})), &mut heard, &["u+notes://board"]).await;
}

/// Every mirrored resource of a session upstream is subscribed (the gateway sends the
/// `resources/subscribe`s at once): updates of both reach a listener of ours.
#[tokio::test]
async fn every_resource_of_a_session_upstream_is_followed() {
    let (client, _gateway, _up, _front) = gateway("2025-11-25").await;
    let filter = SubscriptionFilter::new().resource("u+notes://board").resource("u+notes://list");
    let subscription = client.listen(filter).await.expect("listens");
    let mut heard = subscription.filter_map(|event| async move { event.ok() }).boxed();
    touch_until_heard(&client, ("u_touch_both", json!({})), &mut heard, &["u+notes://board", "u+notes://list"]).await;
}

/// A URI of a mirrored template, which no listing names: the gateway subscribes upstream to it
/// while a client of ours listens to it, and not before or after.
#[tokio::test]
async fn an_update_through_a_mirrored_template_reaches_a_listener_of_ours() {
    for upstream_version in ["2026-07-28", "2025-11-25"] {
        let (client, _gateway, upstream, _up, _front) = gateway_and_upstream(upstream_version).await;
        until_subscribed(&upstream, &[]).await;
        let subscription =
            client.listen(SubscriptionFilter::new().resource("u+notes://page/7")).await.expect("listens");
        let mut heard = subscription.filter_map(|event| async move { event.ok() }).boxed();
        until_subscribed(&upstream, &["notes://page/7"]).await;
        touch_until_heard(&client, ("u_touch_page", json!({"n": 7})), &mut heard, &["u+notes://page/7"]).await;
        drop(heard);
        until_subscribed(&upstream, &[]).await;
    }
}

/// The same for a session subscriber of ours, on both upstream eras: `resources/unsubscribe`
/// (and the end of the session) ends the gateway's upstream subscription.
#[tokio::test]
async fn a_session_subscription_through_a_template_is_followed_until_it_ends() {
    for upstream_version in ["2026-07-28", "2025-11-25"] {
        let (_, _gateway, upstream, _up, front) = gateway_and_upstream(upstream_version).await;
        let client = session_client(&front).await;
        let mut heard = client.notifications().boxed();
        client.subscribe_resource("u+notes://page/3").await.expect("subscribes");
        client.subscribe_resource("u+notes://page/4").await.expect("subscribes");
        until_subscribed(&upstream, &["notes://page/3", "notes://page/4"]).await;
        touch_until_heard(&client, ("u_touch_page", json!({"n": 4})), &mut heard, &["u+notes://page/4"]).await;
        client.unsubscribe_resource("u+notes://page/3").await.expect("unsubscribes");
        until_subscribed(&upstream, &["notes://page/4"]).await;
        client.close().await;
        until_subscribed(&upstream, &[]).await;
    }
}
