//! Against a real Switchyard server, served in-process with stdio framing over a pipe.

use serde::Deserialize;
use serde_json::json;
use switchyard::prelude::*;
use switchyard::testing::HttpTestServer;
use switchyard::transport::http::HttpConfig;
use switchyard::transport::stdio::{StdioConfig, serve_io};
use switchyard_client::{Client, ClientBuilder, ClientError};

#[derive(Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// The text to echo back.
    text: String,
}

/// Echo the text back.
#[mcp_tool]
async fn echo(args: EchoArgs) -> Result<String, ToolError> {
    Ok(args.text)
}

/// Always fails, as a tool.
#[mcp_tool]
async fn broken() -> Result<String, ToolError> {
    Err(ToolError::new("the gauge is broken"))
}

#[derive(Deserialize, schemars::JsonSchema)]
struct GreetingArgs {
    /// Who to greet.
    name: String,
}

/// A greeting.
#[mcp_prompt]
async fn greeting(args: GreetingArgs) -> Result<String, McpError> {
    Ok(format!("Say hello to {}.", args.name))
}

/// The release notes.
#[mcp_resource(uri = "notes://release", name = "release-notes", mime_type = "text/plain")]
async fn release_notes() -> Result<String, McpError> {
    Ok("0.2.0: one path per item".to_owned())
}

async fn connect(builder: ClientBuilder) -> Client {
    let server = Server::builder("client-test", "1.2.3").build().expect("the server builds");
    let (client_end, server_end) = tokio::io::duplex(1 << 20);
    let (server_reader, server_writer) = tokio::io::split(server_end);
    tokio::spawn(serve_io(server, server_reader, server_writer, StdioConfig::default()));
    let (reader, writer) = tokio::io::split(client_end);
    builder.connect_io(reader, writer).await.expect("connects")
}

/// The same server on a loopback port; the server lives as long as the returned guard.
async fn connect_http(builder: ClientBuilder) -> (Client, HttpTestServer) {
    let server = Server::builder("client-test", "1.2.3").build().expect("the server builds");
    let http = HttpTestServer::start(server, HttpConfig::default()).await.expect("a loopback port");
    let client = builder.connect_http(http.url()).await.expect("connects");
    (client, http)
}

/// Tools, prompts and resources, the same way on every revision.
async fn exercise(client: &Client) {
    assert_eq!(client.server_info().map(|s| (s.name.as_str(), s.version.as_str())), Some(("client-test", "1.2.3")));
    assert!(client.capabilities().get("tools").is_some(), "{}", client.capabilities());

    let tools = client.list_tools().await.expect("tools/list");
    let echo = tools.iter().find(|t| t.name == "echo").expect("echo is listed");
    assert_eq!(echo.description.as_deref(), Some("Echo the text back."));
    assert_eq!(echo.input_schema["properties"]["text"]["type"], "string", "{}", echo.input_schema);

    let said = client.call_tool("echo", json!({ "text": "hi" })).await.expect("tools/call");
    assert_eq!(said.content.first().and_then(|c| c.as_text()), Some("hi"));
    assert_ne!(said.is_error, Some(true));

    let failed = client.call_tool("broken", ()).await.expect("a tool error is a result");
    assert_eq!(failed.is_error, Some(true));
    assert_eq!(failed.content.first().and_then(|c| c.as_text()), Some("the gauge is broken"));

    let unknown = client.call_tool("nope", ()).await.expect_err("no such tool");
    assert_eq!(unknown.as_rpc().map(|e| e.code().0), Some(-32602), "{unknown}");
    assert!(matches!(client.call_tool("echo", [1, 2]).await, Err(ClientError::Encode(_))));

    let prompts = client.list_prompts().await.expect("prompts/list");
    assert!(prompts.iter().any(|p| p.name == "greeting"), "{prompts:?}");
    let prompt = client.get_prompt("greeting", [("name", "Ada")]).await.expect("prompts/get");
    assert!(format!("{:?}", prompt.messages).contains("Say hello to Ada."), "{prompt:?}");
    let missing = client.get_prompt("greeting", Vec::<(String, String)>::new()).await.expect_err("no name");
    assert_eq!(missing.as_rpc().map(|e| e.code().0), Some(-32602), "{missing}");

    let resources = client.list_resources().await.expect("resources/list");
    let notes = resources.iter().find(|r| r.uri == "notes://release").expect("listed");
    assert_eq!(notes.mime_type.as_deref(), Some("text/plain"));
    let read = client.read_resource("notes://release").await.expect("resources/read");
    assert!(format!("{:?}", read.contents).contains("one path per item"), "{read:?}");
    assert!(client.read_resource("notes://nothing").await.expect_err("not found").as_rpc().is_some());

    client.ping().await.expect("the server answers");
}

#[tokio::test]
async fn a_server_that_speaks_2026_07_28_is_spoken_to_statelessly() {
    let client = connect(ClientBuilder::new("test-client", "0.0.1")).await;
    assert_eq!(client.protocol_version(), "2026-07-28");
    exercise(&client).await;
    client.close().await;
    assert!(client.is_closed());
    assert!(matches!(client.list_tools().await, Err(ClientError::Closed)));
}

#[tokio::test]
async fn each_session_revision_offered_alone_is_agreed_through_initialize() {
    for version in ["2025-11-25", "2025-06-18", "2025-03-26"] {
        let client = connect(ClientBuilder::new("test-client", "0.0.1").protocol_versions([version])).await;
        assert_eq!(client.protocol_version(), version);
        exercise(&client).await;
    }
}

/// 50 calls at once on one connection, each matched to its own answer.
async fn concurrent_calls(client: &Client) {
    let calls = (0..50).map(|i| {
        let client = client.clone();
        async move {
            let text = format!("call {i}");
            let result = client.call_tool("echo", json!({ "text": text })).await.expect("tools/call");
            assert_eq!(result.content.first().and_then(|c| c.as_text()), Some(text.as_str()));
        }
    });
    futures::future::join_all(calls).await;
}

#[tokio::test]
async fn concurrent_calls_on_one_connection_each_get_their_own_answer() {
    concurrent_calls(&connect(ClientBuilder::new("test-client", "0.0.1")).await).await;
}

#[tokio::test]
async fn over_streamable_http_both_eras_work_and_a_session_is_ended() {
    let (modern, _server) = connect_http(ClientBuilder::new("test-client", "0.0.1")).await;
    assert_eq!(modern.protocol_version(), "2026-07-28");
    exercise(&modern).await;
    modern.close().await;
    for version in ["2025-11-25", "2025-06-18", "2025-03-26"] {
        let (client, _server) =
            connect_http(ClientBuilder::new("test-client", "0.0.1").protocol_versions([version])).await;
        assert_eq!(client.protocol_version(), version);
        exercise(&client).await;
        client.close().await;
    }
}

#[tokio::test]
async fn over_http_concurrent_calls_each_get_their_own_answer() {
    let (client, _server) = connect_http(ClientBuilder::new("test-client", "0.0.1")).await;
    concurrent_calls(&client).await;
}

#[tokio::test]
async fn a_wrong_path_is_an_http_error_and_a_dead_port_a_transport_error() {
    let server = Server::builder("client-test", "1.2.3").build().expect("the server builds");
    let http = HttpTestServer::start(server, HttpConfig::default()).await.expect("a loopback port");
    let wrong = http.url().replace("/mcp", "/nothing-here");
    let err = ClientBuilder::new("t", "0").connect_http(wrong).await.expect_err("404");
    assert!(matches!(err, ClientError::Http { status: 404, .. }), "{err:?}");
    let addr = http.addr();
    drop(http);
    let err = ClientBuilder::new("t", "0").connect_http(format!("http://{addr}/mcp")).await.expect_err("refused");
    assert!(matches!(err, ClientError::Transport { .. }), "{err:?}");
}
