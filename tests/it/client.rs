//! The Rust client (`switchyard-mcp-client`) over a child process's stdio, a pipe and
//! Streamable HTTP, against our `everything` server and against servers we did not write: one
//! built with the official Python SDK (it speaks 2026-07-28), one with the official TypeScript
//! SDK (sessions only), and one with rmcp, the official Rust SDK (both eras). The Python and
//! TypeScript scripts sit in tests/oauth/ beside the SDK installs the OAuth tests use; the
//! reference everything-server has a file of its own (reference_server.rs).

use crate::common;
use crate::common::peers;
use futures::StreamExt;
use serde_json::json;
use std::path::PathBuf;
use std::process::Stdio;
use switchyard_client::{
    Client, ClientBuilder, ClientError, CompletionRef, ElicitAction, ElicitResult, ElicitationModes, LogLevel,
    RequestOptions, Root, SubscriptionFilter, ToolCall,
};

/// A client that answers forms with a name (the seat count left to the schema's default) and
/// lists one root.
fn builder() -> ClientBuilder {
    ClientBuilder::new("switchyard-tests", "1.0.0")
        .on_elicitation(ElicitationModes::Form, |request| async move {
            assert_eq!(request.message, "Who is coming?");
            let content = json!({ "name": "Ada" });
            Ok(ElicitResult { action: ElicitAction::Accept, content: content.as_object().cloned() })
        })
        .on_roots(|| async {
            Ok(vec![serde_json::from_value::<Root>(json!({ "uri": "file:///work" })).expect("a root")])
        })
}

/// What both foreign servers offer: `add`, `fail`, the `haiku` prompt and a notes resource.
async fn exercise_foreign(client: &Client, server: (&str, &str), language: &str) {
    let info = client.server_info().expect("serverInfo");
    assert_eq!((info.name.as_str(), info.version.as_str()), server);
    assert_eq!(client.instructions(), Some(format!("Arithmetic, in {language}.").as_str()));

    let tools = client.list_tools().await.expect("tools/list");
    let add = tools.iter().find(|t| t.name == "add").expect("add is listed");
    assert_eq!(add.description.as_deref(), Some("Add two integers."));
    assert!(add.input_schema["properties"]["a"].is_object(), "{}", add.input_schema);
    let sum = client.call_tool("add", json!({ "a": 2, "b": 3 })).await.expect("tools/call");
    assert_eq!(sum.content.first().and_then(|c| c.as_text()), Some("5"), "{sum:?}");
    assert_ne!(sum.is_error, Some(true));
    let failed = client.call_tool("fail", json!({ "reason": "on purpose" })).await.expect("a tool error is a result");
    assert_eq!(failed.is_error, Some(true), "{failed:?}");
    // The TypeScript tool returns the reason; the Python SDK hides a raised exception's text.
    assert!(!failed.content.is_empty(), "{failed:?}");

    let prompts = client.list_prompts().await.expect("prompts/list");
    assert!(prompts.iter().any(|p| p.name == "haiku"), "{prompts:?}");
    let haiku = client.get_prompt("haiku", [("topic", "rust")]).await.expect("prompts/get");
    assert!(format!("{:?}", haiku.messages).contains("Write a haiku about rust."), "{haiku:?}");

    let uri = format!("notes://{}", if language == "Python" { "py" } else { "ts" });
    let resources = client.list_resources().await.expect("resources/list");
    assert!(resources.iter().any(|r| r.uri == uri), "{resources:?}");
    let notes = client.read_resource(&uri).await.expect("resources/read");
    assert!(format!("{:?}", notes.contents).contains(&format!("written in {language}")), "{notes:?}");
    client.ping().await.expect("ping");

    // The server asks for a form and the roots mid-call: server requests on a session,
    // input_required rounds on 2026-07-28; the seat count comes from the schema's default.
    let booked = client.call_tool("book", json!({})).await.expect("tools/call with input");
    assert_eq!(booked.content.first().and_then(|c| c.as_text()), Some("Ada x2, roots: file:///work"), "{booked:?}");
}

/// The Python server's resource update: through a `subscriptions/listen` stream on
/// 2026-07-28, as a notification of the session otherwise.
async fn python_notes_update_arrive(client: &Client) {
    let updated = |note: &switchyard::jsonrpc::Notification| {
        note.method == "notifications/resources/updated"
            && note.params.as_ref().and_then(|p| p.get("uri")) == Some(&json!("notes://py"))
    };
    let within = std::time::Duration::from_secs(10);
    if client.protocol_version() == "2026-07-28" {
        let mut listen = client.listen(SubscriptionFilter::new().resource("notes://py")).await.expect("listen");
        client.call_tool("touch_notes", json!({})).await.expect("touch_notes");
        let note = tokio::time::timeout(within, listen.next()).await.expect("an update within 10 s");
        let note = note.expect("the stream goes on").expect("a notification");
        assert!(updated(&note), "{note:?}");
    } else {
        let mut notes = std::pin::pin!(client.notifications());
        client.call_tool("touch_notes", json!({})).await.expect("touch_notes");
        let found = tokio::time::timeout(within, async {
            while let Some(note) = notes.next().await {
                if updated(&note) {
                    return;
                }
            }
            panic!("the connection ended first");
        });
        found.await.expect("an update within 10 s");
    }
}

#[tokio::test]
#[cfg_attr(not(svc_python), ignore = "needs python3 (then tests/oauth/install.sh python)")]
async fn a_python_sdk_server_is_spoken_to_statelessly_and_in_a_session() {
    peers::install("python");
    let command = || {
        let mut c = tokio::process::Command::new(peers::dir().join(".venv/bin/python"));
        c.arg(peers::dir().join("py_server.py")).stderr(Stdio::null());
        c
    };
    let modern = builder().connect_stdio(command()).await.expect("connects");
    assert_eq!(modern.protocol_version(), "2026-07-28", "the Python SDK answers server/discover");
    exercise_foreign(&modern, ("py-server", "3.1.4"), "Python").await;
    python_notes_update_arrive(&modern).await;
    modern.close().await;

    let session = builder().protocol_versions(["2025-11-25"]).connect_stdio(command()).await.expect("connects");
    assert_eq!(session.protocol_version(), "2025-11-25");
    exercise_foreign(&session, ("py-server", "3.1.4"), "Python").await;
    python_notes_update_arrive(&session).await;
    session.close().await;
}

#[tokio::test]
#[cfg_attr(not(svc_npm), ignore = "needs npm (then tests/oauth/install.sh node)")]
async fn a_typescript_sdk_server_refuses_the_probe_and_gets_a_session() {
    peers::install("node");
    let mut command = tokio::process::Command::new(peers::node());
    command.arg(peers::dir().join("ts_server.mjs")).stderr(Stdio::null());
    let client = builder().connect_stdio(command).await.expect("connects");
    assert_eq!(client.protocol_version(), "2025-11-25", "server/discover is -32601 there: initialize follows");
    exercise_foreign(&client, ("ts-server", "2.7.1"), "TypeScript").await;
    client.close().await;
}

/// A foreign server started with `--http PORT`, killed when dropped, and its endpoint.
struct HttpPeer {
    _child: tokio::process::Child,
    url: String,
}

fn http_peer(program: PathBuf, script: &str, what: &str) -> HttpPeer {
    let port = common::free_port();
    let child = tokio::process::Command::new(program)
        .arg(peers::dir().join(script))
        .args(["--http", &port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("{what} starts: {e}"));
    common::wait_for_port(port, what);
    HttpPeer { _child: child, url: format!("http://127.0.0.1:{port}/mcp") }
}

#[tokio::test]
#[cfg_attr(not(svc_python), ignore = "needs python3 (then tests/oauth/install.sh python)")]
async fn a_python_sdk_server_over_http_is_spoken_to_statelessly_and_in_a_session() {
    peers::install("python");
    let peer = http_peer(peers::dir().join(".venv/bin/python"), "py_server.py", "the Python SDK server");
    let modern = builder().connect_http(&peer.url).await.expect("connects");
    assert_eq!(modern.protocol_version(), "2026-07-28");
    exercise_foreign(&modern, ("py-server", "3.1.4"), "Python").await;
    python_notes_update_arrive(&modern).await;
    modern.close().await;
    let session = builder().protocol_versions(["2025-11-25"]).connect_http(&peer.url).await.expect("connects");
    assert_eq!(session.protocol_version(), "2025-11-25");
    exercise_foreign(&session, ("py-server", "3.1.4"), "Python").await;
    python_notes_update_arrive(&session).await;
    session.close().await;
}

#[tokio::test]
#[cfg_attr(not(svc_npm), ignore = "needs npm (then tests/oauth/install.sh node)")]
async fn a_typescript_sdk_server_over_http_answers_the_probe_with_400_and_gets_a_session() {
    peers::install("node");
    let peer = http_peer(peers::node(), "ts_server.mjs", "the TypeScript SDK server");
    let client = builder().connect_http(&peer.url).await.expect("connects");
    assert_eq!(client.protocol_version(), "2025-11-25", "a 400 without a modern error means: initialize");
    exercise_foreign(&client, ("ts-server", "2.7.1"), "TypeScript").await;
    client.close().await;
}

#[tokio::test]
async fn our_everything_server_over_a_child_s_stdio_on_both_eras() {
    for versions in [vec!["2026-07-28", "2025-11-25"], vec!["2025-11-25"]] {
        let mut command = tokio::process::Command::new(common::example("everything"));
        command.arg("--stdio").stderr(Stdio::null());
        let client = builder().protocol_versions(&versions).connect_stdio(command).await.expect("connects");
        assert_eq!(client.protocol_version(), versions[0]);
        assert_eq!(client.server_info().map(|s| s.name.as_str()), Some("switchyard-everything"));
        let tools = client.list_tools().await.expect("tools/list");
        assert!(tools.len() > 10, "every page is followed: {}", tools.len());
        let text = client.call_tool("test_simple_text", ()).await.expect("tools/call");
        assert_eq!(text.content.first().and_then(|c| c.as_text()), Some("This is a simple text response for testing."));
        let unknown = client.call_tool("no_such_tool", ()).await.expect_err("unknown");
        assert!(matches!(&unknown, ClientError::Rpc { method, .. } if method == "tools/call"), "{unknown:?}");

        // Progress reaches the callback, in order.
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let options = RequestOptions::new().on_progress({
            let seen = seen.clone();
            move |p| seen.lock().expect("not poisoned").push((p.progress, p.total))
        });
        client.call_tool_with("test_tool_with_progress", (), options).await.expect("tools/call with progress");
        let seen = seen.lock().expect("not poisoned").clone();
        assert_eq!(seen, [(0.0, Some(100.0)), (50.0, Some(100.0)), (100.0, Some(100.0))], "{versions:?}");

        // Log messages once a level is asked for: logging/setLevel on a session, _meta on 2026-07-28.
        let mut notes = Box::pin(client.notifications());
        client.set_logging_level(LogLevel::Debug).await.expect("a level");
        client.call_tool("test_tool_with_logging", ()).await.expect("tools/call with logging");
        let note = tokio::time::timeout(std::time::Duration::from_secs(10), async {
            loop {
                let n = notes.next().await.expect("the connection is open");
                if n.method == "notifications/message" {
                    return n;
                }
            }
        })
        .await
        .expect("a log message");
        assert!(note.params.is_some(), "{note:?}");

        // Completion of a prompt argument.
        let reference = CompletionRef::Prompt { name: "test_prompt_with_arguments".to_owned() };
        let completed = client.complete(reference, "arg1", "par", None).await.expect("completion/complete");
        assert_eq!(completed.values, ["paris", "park", "party"], "{versions:?}");

        // A cancelled call fails at once with Cancelled.
        let stop = switchyard_client::CancellationToken::new();
        let call =
            client.call_tool_with("test_tool_with_progress", (), RequestOptions::new().cancel_with(stop.clone()));
        stop.cancel();
        let err = call.await.expect_err("cancelled");
        assert!(matches!(&err, ClientError::Cancelled { method } if method == "tools/call"), "{err:?}");
        client.close().await;
        assert!(client.is_closed());
    }
}

/// A server written with rmcp, the official Rust SDK: `echo`, `book` (asks who is coming),
/// `report` (a task that asks who it is for; 2026-07-28), the `haiku` prompt, the `notes://rs`
/// resource, and a tools list change for each `subscriptions/listen`.
mod rmcp_peer {
    use rmcp::handler::server::router::tool::ToolRouter;
    use rmcp::handler::server::tool::InputResponses;
    use rmcp::handler::server::wrapper::Parameters;
    use rmcp::model::{
        CallToolResponse, CallToolResult, CancelTaskParams, CreateTaskResult, ElicitRequestParams, ErrorData,
        GetPromptRequestParams, GetPromptResponse, GetTaskParams, GetTaskResult, InputRequest, InputRequests,
        InputRequiredResult, ListPromptsResult, ListResourcesResult, PaginatedRequestParams, ProtocolVersion,
        ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig, SubscriptionFilter,
        UpdateTaskParams,
    };
    use rmcp::service::{RequestContext, RoleServer, SubscriptionContext};
    use rmcp::task_manager::{TaskManager, TaskOptions};
    use rmcp::{ServerHandler, tool, tool_handler, tool_router};
    use serde_json::{Value, json};
    use std::sync::LazyLock;

    /// The tasks of every instance: rmcp's stateless HTTP mode makes an instance per request.
    static TASKS: LazyLock<TaskManager> = LazyLock::new(TaskManager::new);

    #[derive(Debug, Clone)]
    pub struct Peer {
        #[expect(dead_code, reason = "read by the code #[tool_handler] generates")]
        tool_router: ToolRouter<Self>,
    }

    /// Arguments of `echo`.
    #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
    pub struct EchoArgs {
        /// The text to send back.
        text: String,
    }

    /// Decodes a value the test writes as JSON into one of rmcp's types.
    fn from_json<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, ErrorData> {
        serde_json::from_value(value).map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    /// The form `book` asks for (the seat count defaults to 2).
    fn booking_form() -> Value {
        json!({
            "mode": "form",
            "message": "Who is coming?",
            "requestedSchema": {
                "type": "object",
                "properties": { "name": { "type": "string" }, "seats": { "type": "integer", "default": 2 } },
                "required": ["name"]
            }
        })
    }

    /// The answer to the booking form, as `book` reports it.
    fn booked(answer: &Value) -> Result<CallToolResponse, ErrorData> {
        let content = answer.get("content").cloned().unwrap_or_default();
        let name = content["name"].as_str().unwrap_or("nobody");
        let seats = content["seats"].as_u64().unwrap_or(2);
        let result = json!({ "content": [{ "type": "text", "text": format!("{name} x{seats}") }] });
        from_json::<CallToolResult>(result).map(CallToolResponse::Complete)
    }

    #[tool_router]
    impl Peer {
        pub fn new() -> Self {
            Peer { tool_router: Self::tool_router() }
        }

        /// Sends `text` back.
        #[tool(description = "Sends text back")]
        async fn echo(&self, Parameters(args): Parameters<EchoArgs>) -> String {
            args.text
        }

        /// Asks who is coming: an `input_required` result on 2026-07-28, an
        /// `elicitation/create` request on a session.
        #[tool(description = "Books a table")]
        async fn book(
            &self,
            context: RequestContext<RoleServer>,
            InputResponses(responses): InputResponses,
        ) -> Result<CallToolResponse, ErrorData> {
            if context.protocol_version().is_some_and(|v| v >= ProtocolVersion::V_2026_07_28) {
                if let Some(answer) = responses.as_ref().and_then(|r| r.get("who")) {
                    return booked(answer);
                }
                let requests: InputRequests =
                    from_json(json!({ "who": { "method": "elicitation/create", "params": booking_form() } }))?;
                return Ok(InputRequiredResult::from_input_requests(requests).into());
            }
            let params: ElicitRequestParams = from_json(booking_form())?;
            let answer = context
                .peer
                .create_elicitation(params)
                .await
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            booked(&serde_json::to_value(answer).map_err(|e| ErrorData::internal_error(e.to_string(), None))?)
        }

        /// A task that asks who the report is for (through `tasks/get` and `tasks/update`),
        /// then writes it.
        #[tool(description = "Writes a report, as a task")]
        async fn report(&self) -> Result<CallToolResponse, ErrorData> {
            let task = TASKS.spawn(TaskOptions::new().with_poll_interval_ms(100), |context| {
                Box::pin(async move {
                    let form: InputRequest =
                        from_json(json!({ "method": "elicitation/create", "params": booking_form() }))?;
                    let answer = context.request_input("who", form).await?;
                    let name = answer["content"]["name"].as_str().unwrap_or("nobody").to_owned();
                    Ok(from_json(json!({ "content": [{ "type": "text", "text": format!("a report for {name}") }] }))?)
                })
            });
            Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
        }
    }

    #[tool_handler]
    impl ServerHandler for Peer {
        fn get_info(&self) -> ServerConfig {
            let capabilities = ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_prompts()
                .enable_resources()
                .enable_tasks();
            ServerConfig::new(capabilities.build())
        }

        async fn get_task(
            &self,
            request: GetTaskParams,
            _context: RequestContext<RoleServer>,
        ) -> Result<GetTaskResult, ErrorData> {
            TASKS.get_task(&request.task_id).map(GetTaskResult::new)
        }

        async fn update_task(
            &self,
            request: UpdateTaskParams,
            _context: RequestContext<RoleServer>,
        ) -> Result<(), ErrorData> {
            TASKS.update_task(&request.task_id, request.input_responses)
        }

        async fn cancel_task(
            &self,
            request: CancelTaskParams,
            _context: RequestContext<RoleServer>,
        ) -> Result<(), ErrorData> {
            TASKS.cancel_task(&request.task_id)
        }

        fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
            Some(requested.clone())
        }

        /// Each `subscriptions/listen` is told once that the tools changed, then held open.
        async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
            let _ = context.sink().notify_tool_list_changed().await;
            context.cancelled().await;
            Ok(())
        }

        async fn list_prompts(
            &self,
            _request: Option<PaginatedRequestParams>,
            _context: RequestContext<RoleServer>,
        ) -> Result<ListPromptsResult, ErrorData> {
            from_json(json!({ "prompts": [{
                "name": "haiku",
                "description": "A haiku about a topic.",
                "arguments": [{ "name": "topic", "required": true }]
            }] }))
        }

        async fn get_prompt(
            &self,
            request: GetPromptRequestParams,
            _context: RequestContext<RoleServer>,
        ) -> Result<GetPromptResponse, ErrorData> {
            if request.name != "haiku" {
                return Err(ErrorData::invalid_params(format!("no prompt {}", request.name), None));
            }
            let topic = request.arguments.as_ref().and_then(|a| a.get("topic")).and_then(Value::as_str).unwrap_or("");
            let text = format!("Write a haiku about {topic}.");
            let result = json!({ "messages": [{ "role": "user", "content": { "type": "text", "text": text } }] });
            Ok(GetPromptResponse::Complete(from_json(result)?))
        }

        async fn list_resources(
            &self,
            _request: Option<PaginatedRequestParams>,
            _context: RequestContext<RoleServer>,
        ) -> Result<ListResourcesResult, ErrorData> {
            from_json(json!({ "resources": [{ "uri": "notes://rs", "name": "notes", "mimeType": "text/plain" }] }))
        }

        async fn read_resource(
            &self,
            request: ReadResourceRequestParams,
            _context: RequestContext<RoleServer>,
        ) -> Result<ReadResourceResponse, ErrorData> {
            if request.uri != "notes://rs" {
                return Err(ErrorData::resource_not_found(format!("no resource {}", request.uri), None));
            }
            let contents =
                json!({ "contents": [{ "uri": "notes://rs", "mimeType": "text/plain", "text": "written in Rust" }] });
            Ok(ReadResourceResponse::Complete(from_json(contents)?))
        }
    }
}

async fn exercise_rmcp(client: &Client) {
    let tools = client.list_tools().await.expect("tools/list");
    let echo = tools.iter().find(|t| t.name == "echo").expect("echo is listed");
    assert_eq!(echo.input_schema["properties"]["text"]["type"], "string", "{}", echo.input_schema);
    let said = client.call_tool("echo", json!({ "text": "from rust" })).await.expect("tools/call");
    assert_eq!(said.content.first().and_then(|c| c.as_text()), Some("from rust"), "{said:?}");
    let unknown = client.call_tool("no_such_tool", json!({})).await;
    assert!(unknown.is_err() || unknown.as_ref().is_ok_and(|r| r.is_error == Some(true)), "{unknown:?}");
    // The form handler answers with a name; the seat count comes from the schema's default.
    let booked = client.call_tool("book", json!({})).await.expect("tools/call with input");
    assert_eq!(booked.content.first().and_then(|c| c.as_text()), Some("Ada x2"), "{booked:?}");

    let prompts = client.list_prompts().await.expect("prompts/list");
    assert!(prompts.iter().any(|p| p.name == "haiku"), "{prompts:?}");
    let haiku = client.get_prompt("haiku", [("topic", "rust")]).await.expect("prompts/get");
    assert!(format!("{:?}", haiku.messages).contains("Write a haiku about rust."), "{haiku:?}");
    let resources = client.list_resources().await.expect("resources/list");
    assert!(resources.iter().any(|r| r.uri == "notes://rs"), "{resources:?}");
    let notes = client.read_resource("notes://rs").await.expect("resources/read");
    assert!(format!("{:?}", notes.contents).contains("written in Rust"), "{notes:?}");

    if client.protocol_version() == "2026-07-28" {
        // rmcp's tasks: the question through tasks/get and tasks/update, then the result; a
        // task cancelled while it waits for input ends cancelled.
        let ToolCall::Task(report) = client.call_tool_as_task("report", json!({})).await.expect("a task") else {
            panic!("report is made a task");
        };
        let written = report.result().await.expect("the task's result");
        assert_eq!(written.content.first().and_then(|c| c.as_text()), Some("a report for Ada"), "{written:?}");
        let ToolCall::Task(doomed) = client.call_tool_as_task("report", json!({})).await.expect("a task") else {
            panic!("report is made a task");
        };
        doomed.cancel().await.expect("tasks/cancel");
        let end = doomed.result().await;
        assert!(matches!(end, Err(ClientError::Cancelled { .. })), "{end:?}");

        let mut changes = client.listen(SubscriptionFilter::new().tools()).await.expect("subscriptions/listen");
        let within = std::time::Duration::from_secs(10);
        let note = tokio::time::timeout(within, changes.next()).await.expect("a change within 10 s");
        let note = note.expect("the stream goes on").expect("a notification");
        assert_eq!(note.method, "notifications/tools/list_changed", "{note:?}");
    }
}

/// rmcp speaks 2026-07-28 and sessions: each is agreed and used, over a pipe (as over a
/// child's stdio) and over Streamable HTTP in its session and its stateless mode.
#[tokio::test]
async fn an_rmcp_server_over_a_pipe_and_over_http_in_both_modes() {
    use rmcp::ServiceExt;
    for version in ["2026-07-28", "2025-11-25"] {
        let (client_end, server_end) = tokio::io::duplex(1 << 20);
        let (server_reader, server_writer) = tokio::io::split(server_end);
        let server = tokio::spawn(rmcp_peer::Peer::new().serve((server_reader, server_writer)));
        let (reader, writer) = tokio::io::split(client_end);
        let client = builder().protocol_versions([version]).connect_io(reader, writer).await.expect("connects");
        assert_eq!(client.protocol_version(), version);
        exercise_rmcp(&client).await;
        client.close().await;
        server.abort();
    }
    for (legacy, version) in [(true, "2025-11-25"), (true, "2026-07-28"), (false, "2026-07-28")] {
        let mut config = rmcp::transport::StreamableHttpServerConfig::default();
        config.legacy_session_mode = legacy;
        let sessions = rmcp::transport::streamable_http_server::session::local::LocalSessionManager::default();
        let service = rmcp::transport::StreamableHttpService::new(
            || Ok(rmcp_peer::Peer::new()),
            std::sync::Arc::new(sessions),
            config,
        );
        let app = axum::Router::new().nest_service("/mcp", service);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("binds");
        let url = format!("http://{}/mcp", listener.local_addr().expect("an address"));
        let serving = tokio::spawn(async move { axum::serve(listener, app).await });
        let client = builder()
            .protocol_versions([version])
            .connect_http(&url)
            .await
            .unwrap_or_else(|e| panic!("legacy mode {legacy}, {version}: {e}"));
        assert_eq!(client.protocol_version(), version);
        exercise_rmcp(&client).await;
        client.close().await;
        serving.abort();
    }
}

/// Tasks against `everything` (memory task store) over a child's stdio: a call made a task is
/// followed to its result; a task that asks for input is answered through the form handler and
/// `tasks/update`; a failed task is the server's error; a cancelled one is `Cancelled`.
#[tokio::test]
async fn tasks_are_followed_answered_and_cancelled() {
    use switchyard_client::ToolCall;
    let mut command = tokio::process::Command::new(common::example("everything"));
    command.arg("--stdio").stderr(Stdio::null());
    let client = ClientBuilder::new("switchyard-tests", "1.0.0")
        .on_elicitation(ElicitationModes::Form, |_| async {
            let content = json!({ "confirm": true });
            Ok(ElicitResult { action: ElicitAction::Accept, content: content.as_object().cloned() })
        })
        .protocol_versions(["2026-07-28"])
        .connect_stdio(command)
        .await
        .expect("connects");
    let task = |call: ToolCall| match call {
        ToolCall::Task(task) => task,
        other => panic!("a task: {other:?}"),
    };

    let slow = task(
        client.call_tool_as_task("slow_compute", json!({ "seconds": 0.3, "label": "pi" })).await.expect("tools/call"),
    );
    assert!(!slow.id().is_empty());
    let done = slow.result().await.expect("completed");
    assert_eq!(done.content.first().and_then(|c| c.as_text()), Some("computed pi for 0.3 s"), "{done:?}");

    let confirm =
        task(client.call_tool_as_task("confirm_delete", json!({ "filename": "a.txt" })).await.expect("tools/call"));
    let deleted = confirm.result().await.expect("answered through tasks/update");
    assert_eq!(deleted.content.first().and_then(|c| c.as_text()), Some("Deleted a.txt"), "{deleted:?}");

    let failed = task(client.call_tool_as_task("protocol_error_job", json!({})).await.expect("tools/call"));
    let err = failed.result().await.expect_err("failed");
    assert_eq!(err.as_rpc().map(|e| e.code().0), Some(-32603), "{err:?}");

    let long = task(client.call_tool_as_task("slow_compute", json!({ "seconds": 600 })).await.expect("tools/call"));
    long.cancel().await.expect("tasks/cancel");
    let err = long.result().await.expect_err("cancelled");
    assert!(matches!(err, ClientError::Cancelled { .. }), "{err:?}");
    client.close().await;
}
