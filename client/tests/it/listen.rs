//! `subscriptions/listen` against a real Switchyard server: the acknowledgement, the granted
//! filter, events published by the server, several subscriptions at once; over a pipe and HTTP.

use futures::StreamExt;
use std::time::Duration;
use switchyard::prelude::*;
use switchyard::testing::HttpTestServer;
use switchyard::transport::http::HttpConfig;
use switchyard::transport::stdio::{StdioConfig, serve_io};
use switchyard_client::{Client, ClientBuilder, ClientError, SubscriptionFilter};

fn server() -> Server {
    Server::builder("listen-test", "1.0.0").build().expect("the server builds")
}

async fn over_stdio(server: Server, version: &str) -> Client {
    let (client_end, server_end) = tokio::io::duplex(1 << 20);
    let (server_reader, server_writer) = tokio::io::split(server_end);
    tokio::spawn(serve_io(server, server_reader, server_writer, StdioConfig::default()));
    let (reader, writer) = tokio::io::split(client_end);
    ClientBuilder::new("t", "1").protocol_versions([version]).connect_io(reader, writer).await.expect("connects")
}

async fn next(subscription: &mut switchyard_client::Subscription) -> switchyard_client::Notification {
    tokio::time::timeout(Duration::from_secs(10), subscription.next())
        .await
        .expect("an event in time")
        .expect("the stream is open")
        .expect("an event")
}

async fn events_arrive(client: &Client, server: &Server) {
    let mut tools = client.listen(SubscriptionFilter::new().tools()).await.expect("acknowledged");
    assert!(tools.granted().tools_list_changed, "{:?}", tools.granted());
    let mut updates = client.listen(SubscriptionFilter::new().resource("notes://a")).await.expect("acknowledged");
    server.publisher().tools_list_changed();
    server.publisher().resource_updated("notes://a");
    let changed = next(&mut tools).await;
    assert_eq!(changed.method, "notifications/tools/list_changed");
    let updated = next(&mut updates).await;
    assert_eq!(updated.method, "notifications/resources/updated");
    assert_eq!(updated.params.as_ref().and_then(|p| p.get("uri")), Some(&serde_json::json!("notes://a")));
    // Each subscription gets only what it asked for.
    server.publisher().tools_list_changed();
    assert_eq!(next(&mut tools).await.method, "notifications/tools/list_changed");
    assert!(
        tokio::time::timeout(Duration::from_millis(300), updates.next()).await.is_err(),
        "the resource subscription got a tool change"
    );
}

#[tokio::test]
async fn subscriptions_are_acknowledged_and_deliver_what_they_asked_for() {
    let served = server();
    let client = over_stdio(served.clone(), "2026-07-28").await;
    events_arrive(&client, &served).await;

    let served = server();
    let http = HttpTestServer::start(served.clone(), HttpConfig::default()).await.expect("a loopback port");
    let client = ClientBuilder::new("t", "1").connect_http(http.url()).await.expect("connects");
    assert_eq!(client.protocol_version(), "2026-07-28");
    events_arrive(&client, &served).await;
}

#[tokio::test]
async fn a_session_has_no_listen() {
    let client = over_stdio(server(), "2025-11-25").await;
    let err = client.listen(SubscriptionFilter::new().tools()).await.expect_err("no listen on a session");
    assert!(matches!(err, ClientError::Protocol(ref m) if m.contains("2026-07-28")), "{err}");
}
