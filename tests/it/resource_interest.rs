//! `Server::subscribed_resources`: which resource URIs clients of the server are subscribed to,
//! over legacy sessions (`resources/subscribe`) and 2026-07-28 listen streams, released when a
//! subscription or its session ends.

use std::time::Duration;
use switchyard::server::DynamicResource;
use switchyard::testing::HttpTestServer;
use switchyard::transport::http::HttpConfig;
use switchyard::{ReadResourceResult, ResourceContents, Server};
use switchyard_client::{Client, ClientBuilder, SubscriptionFilter};

/// Waits (at most 10 s) until the server's subscribed URIs are `expected`.
async fn until_subscribed(server: &Server, expected: &[&str]) {
    let mut subscribed = server.subscribed_resources();
    let wait = subscribed.wait_for(|uris| uris.iter().map(String::as_str).eq(expected.iter().copied()));
    if tokio::time::timeout(Duration::from_secs(10), wait).await.is_err() {
        panic!("subscribed: {:?}, expected {expected:?}", *server.subscribed_resources().borrow());
    }
}

async fn serve() -> (Server, HttpTestServer) {
    let board = DynamicResource::new("notes://board", "board", |_ctx, req| async move {
        Ok(ReadResourceResult::new(vec![ResourceContents::text(req.uri, Some("text/plain"), "the board")]))
    });
    let server = Server::builder("interest", "1").groups(["none"]).resource(board).build().expect("builds");
    let http = HttpTestServer::start(server.clone(), HttpConfig::default()).await.expect("binds");
    (server, http)
}

async fn session(url: &str) -> Client {
    ClientBuilder::new("test", "1").protocol_versions(["2025-11-25"]).connect_http(url).await.expect("connects")
}

#[tokio::test]
async fn session_subscriptions_count_until_unsubscribed_or_the_session_ends() {
    let (server, http) = serve().await;
    until_subscribed(&server, &[]).await;
    let first = session(&http.url()).await;
    let second = session(&http.url()).await;
    first.subscribe_resource("notes://board").await.expect("subscribes");
    first.subscribe_resource("notes://board").await.expect("subscribes again");
    // Any URI a client names counts, served or not (a template's, one not listed yet).
    first.subscribe_resource("notes://elsewhere").await.expect("subscribes");
    second.subscribe_resource("notes://board").await.expect("subscribes");
    until_subscribed(&server, &["notes://board", "notes://elsewhere"]).await;
    first.unsubscribe_resource("notes://elsewhere").await.expect("unsubscribes");
    until_subscribed(&server, &["notes://board"]).await;
    first.close().await;
    // The second session still holds the board.
    tokio::time::sleep(Duration::from_millis(100)).await;
    until_subscribed(&server, &["notes://board"]).await;
    second.close().await;
    until_subscribed(&server, &[]).await;
}

#[tokio::test]
async fn a_listen_stream_counts_its_resources_while_it_is_open() {
    let (server, http) = serve().await;
    let client = ClientBuilder::new("test", "1").connect_http(http.url()).await.expect("connects");
    let filter = SubscriptionFilter::new().resource("notes://board").resource("notes://other");
    let subscription = client.listen(filter).await.expect("listens");
    until_subscribed(&server, &["notes://board", "notes://other"]).await;
    let tools_only = client.listen(SubscriptionFilter::new().tools()).await.expect("listens");
    drop(subscription);
    until_subscribed(&server, &[]).await;
    drop(tools_only);
}
