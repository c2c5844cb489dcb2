//! Input handlers against a real Switchyard server: the same tools ask for a form, a model's
//! answer and the roots; the client answers as server→client requests on a session and as
//! `input_required` rounds on 2026-07-28. Also the `Mcp-Param-*` headers of a tool whose
//! schema marks an argument with `x-mcp-header` (the server refuses a call without them).

use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use switchyard::input::InputRequest;
use switchyard::prelude::*;
use switchyard::testing::HttpTestServer;
use switchyard::transport::http::HttpConfig;
use switchyard::transport::stdio::{StdioConfig, serve_io};
use switchyard_client::{
    Client, ClientBuilder, ClientError, CreateMessageResult, ElicitAction, ElicitResult, ElicitationModes, Root,
};

#[derive(Deserialize, schemars::JsonSchema)]
struct Signup {
    /// The user's name.
    name: String,
    /// How many seats.
    #[schemars(extend("default" = 2))]
    seats: u32,
}

/// Asks the user for a name and a seat count (the count defaults to 2).
#[mcp_tool]
async fn sign_up(ctx: RequestContext) -> Result<String, McpError> {
    Ok(match ctx.elicit::<Signup>("signup", "Who is coming?").await? {
        Elicited::Accept(s) => format!("{} with {} seats", s.name, s.seats),
        Elicited::Decline => "declined".to_owned(),
        Elicited::Cancel => "cancelled".to_owned(),
    })
}

/// Asks a model, then lists the roots, in two rounds.
#[mcp_tool]
async fn sample_and_roots(ctx: RequestContext) -> Result<String, McpError> {
    let answer = ctx.input("model", InputRequest::sample_text("Capital of France?", 20)).await?.into_sampling()?;
    let roots = ctx.input("roots", InputRequest::list_roots()).await?.into_roots()?;
    let uris: Vec<_> = roots.roots.iter().map(|r| r.uri.as_str()).collect();
    Ok(format!("{} / {}", answer.text().unwrap_or("?"), uris.join(",")))
}

#[derive(Deserialize, schemars::JsonSchema)]
struct RoutedArgs {
    /// Mirrored in `Mcp-Param-Region`.
    #[schemars(extend("x-mcp-header" = "Region"))]
    region: String,
}

/// Echoes a region that load balancers read from a header.
#[mcp_tool]
async fn routed(args: RoutedArgs) -> Result<String, ToolError> {
    Ok(format!("routed to {}", args.region))
}

fn answering(builder: ClientBuilder, forms: Arc<AtomicUsize>) -> ClientBuilder {
    builder
        .on_elicitation(ElicitationModes::Form, move |request| {
            let forms = forms.clone();
            async move {
                forms.fetch_add(1, Ordering::Relaxed);
                assert_eq!(request.message, "Who is coming?");
                // `seats` is left out: the schema's default fills it.
                Ok(ElicitResult {
                    action: ElicitAction::Accept,
                    content: Some(serde_json::Map::from_iter([("name".into(), json!("Ada"))])),
                })
            }
        })
        .on_sampling(|request| async move {
            let asked = request.messages.first().and_then(|m| m["content"]["text"].as_str()).unwrap_or_default();
            assert_eq!(asked, "Capital of France?");
            Ok(serde_json::from_value::<CreateMessageResult>(
                json!({"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "test-model"}),
            )
            .expect("a CreateMessageResult"))
        })
        .on_roots(|| async {
            Ok(vec![serde_json::from_value::<Root>(json!({"uri": "file:///work", "name": "work"})).expect("a Root")])
        })
}

fn server() -> Server {
    Server::builder("input-test", "1.0.0").build().expect("the server builds")
}

async fn over_stdio(builder: ClientBuilder) -> Client {
    let (client_end, server_end) = tokio::io::duplex(1 << 20);
    let (server_reader, server_writer) = tokio::io::split(server_end);
    tokio::spawn(serve_io(server(), server_reader, server_writer, StdioConfig::default()));
    let (reader, writer) = tokio::io::split(client_end);
    builder.connect_io(reader, writer).await.expect("connects")
}

async fn over_http(builder: ClientBuilder) -> (Client, HttpTestServer) {
    let http = HttpTestServer::start(server(), HttpConfig::default()).await.expect("a loopback port");
    let client = builder.connect_http(http.url()).await.expect("connects");
    (client, http)
}

async fn answers_every_kind(client: &Client, forms: &AtomicUsize) {
    let before = forms.load(Ordering::Relaxed);
    let signed = client.call_tool("sign_up", ()).await.expect("tools/call");
    assert_eq!(signed.content.first().and_then(|c| c.as_text()), Some("Ada with 2 seats"), "{signed:?}");
    assert_eq!(forms.load(Ordering::Relaxed), before + 1, "the form handler ran once");
    let both = client.call_tool("sample_and_roots", ()).await.expect("tools/call");
    assert_eq!(both.content.first().and_then(|c| c.as_text()), Some("Paris / file:///work"), "{both:?}");
}

#[tokio::test]
async fn handlers_answer_server_requests_on_a_session_and_rounds_on_2026_07_28() {
    for versions in [&["2026-07-28"][..], &["2025-11-25"], &["2025-06-18"]] {
        let forms = Arc::new(AtomicUsize::new(0));
        let builder = answering(ClientBuilder::new("t", "1").protocol_versions(versions), forms.clone());
        let client = over_stdio(builder.clone()).await;
        assert_eq!(client.protocol_version(), versions[0]);
        answers_every_kind(&client, &forms).await;
        let (client, _server) = over_http(builder).await;
        assert_eq!(client.protocol_version(), versions[0]);
        answers_every_kind(&client, &forms).await;
    }
}

#[tokio::test]
async fn without_handlers_nothing_is_declared_and_the_server_cannot_ask() {
    for version in ["2026-07-28", "2025-11-25"] {
        let client = over_stdio(ClientBuilder::new("t", "1").protocol_versions([version])).await;
        let refused = client.call_tool("sign_up", ()).await;
        // The server sees no `elicitation` capability: a -32021 on 2026-07-28, a failed call
        // on a session; either way the call does not hang.
        match refused {
            Err(ClientError::Rpc { error, .. }) => assert_eq!(error.code().0, -32021, "{error:?}"),
            Ok(result) => assert_eq!(result.is_error, Some(true), "{version}: {result:?}"),
            Err(other) => panic!("{version}: {other}"),
        }
    }
}

#[tokio::test]
async fn rounds_stop_at_the_limit() {
    let forms = Arc::new(AtomicUsize::new(0));
    let builder = answering(ClientBuilder::new("t", "1").protocol_versions(["2026-07-28"]), forms).max_input_rounds(1);
    let client = over_stdio(builder).await;
    let err = client.call_tool("sample_and_roots", ()).await.expect_err("two rounds, one allowed");
    assert!(matches!(err, ClientError::Protocol(ref m) if m.contains("after 1 rounds")), "{err}");
}

#[tokio::test]
async fn annotated_arguments_travel_in_mcp_param_headers_and_a_refusal_relists() {
    let (client, _server) = over_http(ClientBuilder::new("t", "1").protocol_versions(["2026-07-28"])).await;
    // Not listed yet: the call goes out without the header, the server refuses it with
    // -32020, and the client lists the tools and sends it again.
    let first = client.call_tool("routed", json!({ "region": "eu-west" })).await.expect("retried after listing");
    assert_eq!(first.content.first().and_then(|c| c.as_text()), Some("routed to eu-west"));
    // Listed now: a value a header cannot carry as it is goes base64-encoded.
    let second = client.call_tool("routed", json!({ "region": " überall " })).await.expect("tools/call");
    assert_eq!(second.content.first().and_then(|c| c.as_text()), Some("routed to  überall "));
}

#[tokio::test]
async fn a_request_s_own_input_handler_answers_its_rounds_and_declares_its_capabilities() {
    use switchyard_client::RequestOptions;
    // No client-wide handlers: only the request's own declares and answers.
    let client = over_stdio(ClientBuilder::new("t", "1").protocol_versions(["2026-07-28"])).await;
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = asked.clone();
    let options =
        RequestOptions::new().on_input(json!({ "elicitation": { "form": {} } }), move |key, method, params| {
            seen.lock().expect("lock").push((key, method, params["message"].clone()));
            async { Ok(json!({ "action": "accept", "content": { "name": "Bo", "seats": 3 } })) }
        });
    let signed = client.call_tool_with("sign_up", (), options).await.expect("tools/call");
    assert_eq!(signed.content.first().and_then(|c| c.as_text()), Some("Bo with 3 seats"), "{signed:?}");
    assert_eq!(
        *asked.lock().expect("lock"),
        [("signup".to_owned(), "elicitation/create".to_owned(), json!("Who is coming?"))]
    );

    // The handler's error fails the request with that error, unchanged.
    let options = RequestOptions::new().on_input(json!({ "elicitation": { "form": {} } }), |_, _, _| async {
        Err(McpError::invalid_params("no forms here"))
    });
    let refused = client.call_tool_with("sign_up", (), options).await.expect_err("refused");
    assert!(
        matches!(&refused, ClientError::Rpc { method, error } if method == "elicitation/create" && error.message() == "no forms here"),
        "{refused:?}"
    );
}

#[tokio::test]
async fn a_call_as_a_task_relists_after_a_header_refusal_too() {
    let (client, _server) = over_http(ClientBuilder::new("t", "1").protocol_versions(["2026-07-28"])).await;
    // Not listed yet: refused with -32020 for the missing `Mcp-Param-Region`, then listed and
    // sent again. The server has no Tasks extension, so it answers at once.
    let answer = client.call_tool_as_task("routed", json!({ "region": "eu-west" })).await.expect("retried");
    let switchyard_client::ToolCall::Completed(result) = answer else { panic!("answered at once: {answer:?}") };
    assert_eq!(result.content.first().and_then(|c| c.as_text()), Some("routed to eu-west"));
}
