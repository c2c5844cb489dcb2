//! What a `tools/call` answers when the tool cannot take its arguments, when its input schema is
//! hand-written, when its structured output is not an object, and when it fails with `?`: the
//! same answer over stdio and HTTP, on the 2026-07-28 wire and in a 2025-11-25 session.
//!
//! Arguments a tool rejects are a tool execution error (`isError: true`, a text naming the
//! argument) the model can correct, not a protocol error: 2025-11-25 and 2026-07-28
//! server/tools "Error Handling" (SEP-1303). A missing `name`, an unknown tool and `arguments`
//! that are not an object stay `-32602`.

use crate::common::{self, *};
use serde_json::{Value, json};
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Wire {
    StdioModern,
    StdioSession,
    HttpModern,
    HttpSession,
}

const WIRES: [Wire; 4] = [Wire::StdioModern, Wire::StdioSession, Wire::HttpModern, Wire::HttpSession];
const SESSION_VERSION: &str = "2025-11-25";

enum Link {
    Stdio(Box<StdioPeer>),
    Http { _server: HttpServer, client: reqwest::Client, url: String, session: Option<String> },
}

/// One client of one example over one wire.
struct Peer {
    wire: Wire,
    link: Link,
    next_id: i64,
}

fn initialize() -> Value {
    json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": SESSION_VERSION, "capabilities": {},
        "clientInfo": { "name": "wire-test", "version": "0" } } })
}

impl Peer {
    async fn open(example: &str, wire: Wire) -> Peer {
        let link = match wire {
            Wire::StdioModern | Wire::StdioSession => Link::Stdio(Box::new(StdioPeer::start(example, &[]))),
            Wire::HttpModern | Wire::HttpSession => {
                let server = HttpServer::start(example);
                let url = server.url.clone();
                Link::Http { _server: server, client: client(), url, session: None }
            }
        };
        let mut peer = Peer { wire, link, next_id: 1 };
        if matches!(wire, Wire::StdioSession | Wire::HttpSession) {
            peer.handshake().await;
        }
        peer
    }

    async fn handshake(&mut self) {
        let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
        match &mut self.link {
            Link::Stdio(p) => {
                p.write(&[initialize()]).await;
                let r = p.next(Duration::from_secs(10)).await.expect("initialize answered");
                assert_eq!(r["result"]["protocolVersion"], SESSION_VERSION, "{r}");
                p.write(&[initialized]).await;
            }
            Link::Http { client, url, session, .. } => {
                let r = send(
                    client.post(url.as_str()).header("content-type", "application/json").body(initialize().to_string()),
                )
                .await;
                assert_eq!(r.last()["result"]["protocolVersion"], SESSION_VERSION, "{:?}", r.messages);
                let id = r.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).expect("a session id");
                *session = Some(id.to_owned());
                let r = send(session_post(client, url, session.as_deref(), &initialized)).await;
                assert_eq!(r.status, 202);
            }
        }
    }

    fn modern(&self) -> bool {
        matches!(self.wire, Wire::StdioModern | Wire::HttpModern)
    }

    /// The response to `method` with `params` (the 2026-07-28 `_meta` added on that wire).
    async fn request(&mut self, method: &str, mut params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let modern = self.modern();
        if modern && params.get("_meta").is_none() {
            params["_meta"] = meta(json!({}));
        }
        match &mut self.link {
            Link::Stdio(p) => {
                p.write(&[json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })]).await;
                loop {
                    let m = p.next(Duration::from_secs(10)).await.expect("an answer within 10 s");
                    if m["id"] == id {
                        return m;
                    }
                }
            }
            Link::Http { client, url, session, .. } => {
                let reply = if modern {
                    send(common::modern(client, url, json!(id), method, params)).await
                } else {
                    let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
                    send(session_post(client, url, session.as_deref(), &body)).await
                };
                reply.messages.iter().rev().find(|m| m["id"] == id).cloned().expect("a response")
            }
        }
    }

    async fn call(&mut self, name: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({ "name": name, "arguments": arguments })).await
    }

    /// The `Tool` object of `name` in `tools/list`.
    async fn tool(&mut self, name: &str) -> Value {
        let mut cursor: Option<String> = None;
        loop {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let r = self.request("tools/list", params).await;
            let page = &r["result"];
            if let Some(t) = page["tools"].as_array().and_then(|ts| ts.iter().find(|t| t["name"] == name)) {
                return t.clone();
            }
            match page["nextCursor"].as_str() {
                Some(c) => cursor = Some(c.to_owned()),
                None => panic!("{name} is not listed on {:?}", self.wire),
            }
        }
    }
}

fn session_post(client: &reqwest::Client, url: &str, session: Option<&str>, body: &Value) -> reqwest::RequestBuilder {
    let mut rb = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", SESSION_VERSION);
    if let Some(s) = session {
        rb = rb.header("mcp-session-id", s);
    }
    rb.body(body.to_string())
}

/// The `isError: true` text of a response, failing when it is anything else.
fn tool_error(r: &Value, wire: Wire) -> String {
    assert!(r.get("error").is_none(), "{wire:?}: a result, not a protocol error: {r}");
    assert_eq!(r["result"]["isError"], true, "{wire:?}: {r}");
    r["result"]["content"][0]["text"].as_str().expect("a text block").to_owned()
}

/// Checks a successful result's `structuredContent` against the `outputSchema` this client was
/// shown, as a client that validates output would.
fn assert_matches_output_schema(result: &Value, tool: &Value, wire: Wire) {
    let schema = &tool["outputSchema"];
    let validator = jsonschema::validator_for(schema).unwrap_or_else(|e| panic!("{wire:?}: {e}: {schema}"));
    let structured = &result["structuredContent"];
    let problems: Vec<String> = validator.iter_errors(structured).map(|e| e.to_string()).collect();
    assert!(problems.is_empty(), "{wire:?}: {structured} does not match {schema}: {problems:?}");
}

/// `tools/call echo` with `{}` and `{"text":42}`, and `slow` with `{"seconds":"soon"}`.
#[tokio::test]
async fn arguments_a_tool_rejects_are_tool_errors_naming_the_argument() {
    for wire in WIRES {
        let mut p = Peer::open("fixture", wire).await;
        let r = p.call("echo", json!({})).await;
        assert_eq!(tool_error(&r, wire), "Invalid arguments for tool `echo`: missing field `text`");
        let r = p.call("echo", json!({ "text": 42 })).await;
        assert_eq!(
            tool_error(&r, wire),
            "Invalid arguments for tool `echo`: `text`: invalid type: integer `42`, expected a string"
        );
        let r = p.call("slow", json!({ "seconds": "soon" })).await;
        assert_eq!(
            tool_error(&r, wire),
            "Invalid arguments for tool `slow`: `seconds`: invalid type: string \"soon\", expected f64"
        );
        if p.modern() {
            assert_eq!(r["result"]["resultType"], "complete", "{wire:?}: {r}");
        }
        // The connection stays usable.
        let r = p.call("echo", json!({ "text": "still here" })).await;
        assert_eq!(r["result"]["content"][0]["text"], "still here", "{wire:?}: {r}");
    }
}

/// Requests that are not a call of a known tool stay protocol errors.
#[tokio::test]
async fn malformed_calls_and_unknown_tools_stay_invalid_params() {
    for wire in WIRES {
        let mut p = Peer::open("fixture", wire).await;
        for params in [
            json!({ "name": "no_such_tool", "arguments": {} }),
            json!({ "arguments": { "text": "x" } }),
            json!({ "name": "echo", "arguments": [1] }),
            json!({ "name": "echo", "arguments": "text" }),
            json!({ "name": 7 }),
        ] {
            let r = p.request("tools/call", params.clone()).await;
            assert_eq!(r["error"]["code"], -32602, "{wire:?}: {params} → {r}");
        }
    }
}

/// The hand-written 2020-12 schema of `json_schema_2020_12_tool` is enforced, `if`/`then`,
/// `additionalProperties` and `$ref` included.
#[tokio::test]
async fn a_hand_written_input_schema_is_enforced() {
    for wire in WIRES {
        let mut p = Peer::open("everything", wire).await;
        let tool = "json_schema_2020_12_tool";
        let r = p.call(tool, json!({ "name": "Ada", "contactMethod": "phone" })).await;
        assert_eq!(
            tool_error(&r, wire),
            "Invalid arguments for tool `json_schema_2020_12_tool`: {\"name\":\"Ada\",\"contactMethod\":\"phone\"} is not \
             valid under any of the schemas listed in the 'anyOf' keyword; \"phone\" is a required property"
        );
        let r = p.call(tool, json!({ "name": 1 })).await;
        assert_eq!(
            tool_error(&r, wire),
            "Invalid arguments for tool `json_schema_2020_12_tool`: `name`: 1 is not of type \"string\""
        );
        let r = p.call(tool, json!({ "name": "Ada", "nickname": "A" })).await;
        let text = tool_error(&r, wire);
        assert!(text.contains("nickname"), "{wire:?}: {text}");
        let r = p.call(tool, json!({ "address": { "street": "Main St" } })).await;
        assert_eq!(
            tool_error(&r, wire),
            "Invalid arguments for tool `json_schema_2020_12_tool`: `address`: \"city\" is a required property"
        );
        let ok = json!({ "name": "Ada", "contactMethod": "email", "email": "ada@example.com" });
        let r = p.call(tool, ok.clone()).await;
        assert_eq!(r["result"]["isError"], Value::Null, "{wire:?}: {r}");
        assert_eq!(r["result"]["content"][0]["text"], format!("Received: {ok}"), "{wire:?}");
    }
}

/// `Json<Vec<u32>>`: any JSON value on 2026-07-28; wrapped as `{"result": ..}` in the
/// outputSchema and structuredContent a 2025-11-25 session sees, which requires an object.
#[tokio::test]
async fn a_non_object_output_is_wrapped_only_for_session_clients() {
    for wire in WIRES {
        let mut p = Peer::open("everything", wire).await;
        let tool = p.tool("number_sequence").await;
        let r = p.call("number_sequence", json!({ "count": 3 })).await;
        let result = &r["result"];
        if p.modern() {
            assert_eq!(tool["outputSchema"]["type"], "array", "{wire:?}: {tool}");
            assert_eq!(result["structuredContent"], json!([1, 2, 3]), "{wire:?}");
        } else {
            assert_eq!(tool["outputSchema"]["type"], "object", "{wire:?}: {tool}");
            assert_eq!(tool["outputSchema"]["required"], json!(["result"]), "{wire:?}: {tool}");
            assert_eq!(result["structuredContent"], json!({ "result": [1, 2, 3] }), "{wire:?}");
        }
        let mirrored = if p.modern() { "[1,2,3]" } else { r#"{"result":[1,2,3]}"# };
        assert_eq!(result["content"][0]["text"], mirrored, "{wire:?}: the text block mirrors structuredContent");
        assert_matches_output_schema(result, &tool, wire);

        // Any JSON value (`serde_json::Value`): `{}` on 2026-07-28 (outputSchema must be an
        // object), wrapped for the session.
        let tool = p.tool("read_json_file").await;
        assert!(tool["outputSchema"].is_object(), "{wire:?}: {tool}");
        let path = std::env::temp_dir().join(format!("switchyard-read-json-{}.json", std::process::id()));
        std::fs::write(&path, "\"just a string\"").expect("write");
        let r = p.call("read_json_file", json!({ "path": path })).await;
        let expected = if p.modern() { json!("just a string") } else { json!({ "result": "just a string" }) };
        assert_eq!(r["result"]["structuredContent"], expected, "{wire:?}: {r}");
        assert_matches_output_schema(&r["result"], &tool, wire);
        let _ = std::fs::remove_file(path);
    }
}

/// `?` on `std::io::Error` and `serde_json::Error` in a `Result<_, ToolError>` tool, and on an
/// `anyhow` context chain in an `anyhow::Result` tool: `isError: true` with the error's text.
#[tokio::test]
async fn question_mark_on_any_error_is_a_tool_error() {
    let path = std::env::temp_dir().join(format!("switchyard-not-json-{}.txt", std::process::id()));
    std::fs::write(&path, "{ not json").expect("write");
    for wire in WIRES {
        let mut p = Peer::open("everything", wire).await;
        let r = p.call("read_json_file", json!({ "path": "/no/such/file.json" })).await;
        assert_eq!(tool_error(&r, wire), "No such file or directory (os error 2)");
        let r = p.call("read_json_file", json!({ "path": path })).await;
        assert_eq!(tool_error(&r, wire), "key must be a string at line 1 column 3");
        let r = p.call("parse_integer", json!({ "text": "twelve" })).await;
        assert_eq!(tool_error(&r, wire), "`twelve` is not an integer: invalid digit found in string");
        let r = p.call("parse_integer", json!({ "text": " 12 " })).await;
        assert_eq!(r["result"]["content"][0]["text"], "12", "{wire:?}: {r}");
    }
    let _ = std::fs::remove_file(path);
}

/// `ctx.elicit(..).await?` in a `Result<_, ToolError>` tool: the input-required round and the
/// `-32021` of a client without the elicitation capability stay what they are on the wire.
#[tokio::test]
async fn protocol_outcomes_pass_through_question_mark_unchanged() {
    for wire in [Wire::StdioModern, Wire::HttpModern] {
        let mut p = Peer::open("everything", wire).await;
        let params = json!({ "name": "greet_by_name", "arguments": {}, "_meta": meta(json!({ "elicitation": {} })) });
        let r = p.request("tools/call", params).await;
        assert_eq!(r["result"]["resultType"], "input_required", "{wire:?}: {r}");
        assert!(r["result"]["inputRequests"]["name"].is_object(), "{wire:?}: {r}");
        let r = p.call("greet_by_name", json!({})).await;
        assert_eq!(r["error"]["code"], -32021, "{wire:?}: {r}");
        assert!(r["error"]["data"]["requiredCapabilities"].is_object(), "{wire:?}: {r}");
    }
}
