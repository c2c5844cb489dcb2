//! The 2026-07-28 Streamable HTTP wire, against the `everything` example as a real process: every
//! status code the transport answers with, the header checks of
//! [server validation](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#server-validation)
//! and
//! [standard request headers](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#standard-request-headers),
//! and that the endpoint stays usable after each bad request.

use crate::common::*;
use serde_json::{Value, json};

async fn still_usable(c: &reqwest::Client, url: &str) {
    let r = send(modern(c, url, json!("after"), "tools/list", json!({}))).await;
    assert_eq!(r.status, 200, "the endpoint stays usable: {:?}", r.messages);
    assert!(r.last()["result"]["tools"].is_array());
}

#[tokio::test]
async fn a_normal_result_is_200_json_with_result_type_server_info_and_cache_hints() {
    let s = HttpServer::start("everything");
    let c = client();
    let r = send(modern(&c, &s.url, json!(1), "tools/list", json!({}))).await;
    assert_eq!(r.status, 200);
    assert!(r.content_type.starts_with("application/json"));
    let result = &r.last()["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "switchyard-everything");
    assert!(result["ttlMs"].is_u64());
    assert_eq!(result["cacheScope"], "public");
    let names: Vec<&str> =
        result["tools"].as_array().expect("tools").iter().filter_map(|t| t["name"].as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "tools/list is sorted by name");
}

#[tokio::test]
async fn discover_lists_versions_capabilities_and_cache_hints() {
    let s = HttpServer::start("everything");
    let c = client();
    let r = send(modern(&c, &s.url, json!("d"), "server/discover", json!({}))).await;
    assert_eq!(r.status, 200);
    let result = &r.last()["result"];
    assert_eq!(result["supportedVersions"][0], MODERN);
    assert!(result["capabilities"]["tools"].is_object());
    assert!(result["capabilities"]["prompts"].is_object());
    assert!(result["ttlMs"].is_u64());
    assert_eq!(r.last()["id"], "d");
}

#[tokio::test]
async fn a_notification_is_202_without_body() {
    let s = HttpServer::start("everything");
    let body = json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 1, "_meta": meta(json!({})) } });
    let r = send(
        client()
            .post(&s.url)
            .header("content-type", "application/json")
            .header("mcp-protocol-version", MODERN)
            .header("mcp-method", "notifications/cancelled")
            .body(body.to_string()),
    )
    .await;
    assert_eq!(r.status, 202);
    assert!(r.messages.is_empty());
}

#[tokio::test]
async fn missing_meta_keys_are_400_invalid_params_with_the_id() {
    let s = HttpServer::start("everything");
    let c = client();
    for (id, params) in [
        (101, json!({ "_meta": {} })),
        (102, json!({ "_meta": { "io.modelcontextprotocol/clientCapabilities": {} } })),
        (104, json!({ "_meta": { "io.modelcontextprotocol/protocolVersion": MODERN } })),
    ] {
        let r = send(modern(&c, &s.url, json!(id), "server/discover", params)).await;
        assert_eq!(r.status, 400, "id {id}");
        assert_eq!(r.error_code(), Some(-32602), "id {id}");
        assert_eq!(r.last()["id"], id);
    }
    // clientInfo is optional.
    let params = json!({ "_meta": { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} } });
    let r = send(modern(&c, &s.url, json!(105), "server/discover", params)).await;
    assert_eq!(r.status, 200);
    // A version this server does not know, on a request without `_meta` (an `initialize` of
    // a client from the future): the refusal names the version and what is supported.
    let init = json!({ "jsonrpc": "2.0", "id": 106, "method": "initialize",
        "params": { "protocolVersion": "2099-01-01", "capabilities": {}, "clientInfo": { "name": "x", "version": "0" } } });
    let rb = c
        .post(&s.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "banana")
        .body(init.to_string());
    let r = send(rb).await;
    assert_eq!((r.status, r.error_code()), (400, Some(-32602)), "{:?}", r.messages);
    let message = r.last()["error"]["message"].as_str().unwrap_or_default().to_owned();
    assert!(message.contains("\"banana\" is not a version this server supports: 2026-07-28, 2025-11-25"), "{message}");
    still_usable(&c, &s.url).await;
}

#[tokio::test]
async fn header_problems_are_400_header_mismatch() {
    let s = HttpServer::start("everything");
    let c = client();
    let body = |method: &str, params: Value| {
        let mut params = params;
        params["_meta"] = meta(json!({}));
        json!({ "jsonrpc": "2.0", "id": 7, "method": method, "params": params }).to_string()
    };
    let base = || c.post(&s.url).header("content-type", "application/json");
    let cases: Vec<(&str, reqwest::RequestBuilder)> = vec![
        ("no protocol header", base().header("mcp-method", "tools/list").body(body("tools/list", json!({})))),
        (
            "method mismatch",
            base()
                .header("mcp-protocol-version", MODERN)
                .header("mcp-method", "prompts/list")
                .body(body("tools/list", json!({}))),
        ),
        ("method missing", base().header("mcp-protocol-version", MODERN).body(body("tools/list", json!({})))),
        (
            "method value case",
            base()
                .header("mcp-protocol-version", MODERN)
                .header("mcp-method", "TOOLS/LIST")
                .body(body("tools/list", json!({}))),
        ),
        (
            "name mismatch",
            base()
                .header("mcp-protocol-version", MODERN)
                .header("mcp-method", "tools/call")
                .header("mcp-name", "wrong_tool_name")
                .body(body("tools/call", json!({ "name": "test_simple_text", "arguments": {} }))),
        ),
        (
            "name missing",
            base()
                .header("mcp-protocol-version", MODERN)
                .header("mcp-method", "tools/call")
                .body(body("tools/call", json!({ "name": "test_simple_text", "arguments": {} }))),
        ),
        (
            "bad base64 padding",
            base()
                .header("mcp-protocol-version", MODERN)
                .header("mcp-method", "tools/call")
                .header("mcp-name", "=?base64?dGVzdF9zaW1wbGVfdGV4dA?=")
                .body(body("tools/call", json!({ "name": "test_simple_text", "arguments": {} }))),
        ),
        (
            "param header missing",
            base()
                .header("mcp-protocol-version", MODERN)
                .header("mcp-method", "tools/call")
                .header("mcp-name", "test_header_param")
                .body(body("tools/call", json!({ "name": "test_header_param", "arguments": { "value": "x" } }))),
        ),
        (
            "param header mismatch",
            base()
                .header("mcp-protocol-version", MODERN)
                .header("mcp-method", "tools/call")
                .header("mcp-name", "test_header_param")
                .header("mcp-param-value", "y")
                .body(body("tools/call", json!({ "name": "test_header_param", "arguments": { "value": "x" } }))),
        ),
        (
            "header and body versions differ",
            base().header("mcp-protocol-version", MODERN).header("mcp-method", "server/discover").body(
                json!({ "jsonrpc": "2.0", "id": 7, "method": "server/discover", "params": { "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "v999.0.0",
                    "io.modelcontextprotocol/clientCapabilities": {} } } })
                .to_string(),
            ),
        ),
    ];
    for (what, rb) in cases {
        let r = send(rb).await;
        assert_eq!(r.status, 400, "{what}: {:?}", r.messages);
        assert_eq!(r.error_code(), Some(-32020), "{what}: {:?}", r.messages);
        assert_eq!(r.last()["id"], 7, "{what}");
    }
    still_usable(&c, &s.url).await;
}

#[tokio::test]
async fn accepted_header_forms() {
    let s = HttpServer::start("everything");
    let c = client();
    let call = |name_header: &str| {
        let body = json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "test_simple_text", "arguments": {}, "_meta": meta(json!({})) } });
        c.post(&s.url)
            .header("content-type", "application/json")
            .header("MCP-PROTOCOL-VERSION", MODERN)
            .header("MCP-METHOD", "tools/call")
            .header("mcp-name", name_header.to_owned())
            .body(body.to_string())
    };
    for h in ["  test_simple_text  ", "=?base64?dGVzdF9zaW1wbGVfdGV4dA==?="] {
        let r = send(call(h)).await;
        assert_eq!(r.status, 200, "{h:?}: {:?}", r.messages);
        assert_eq!(r.last()["result"]["content"][0]["type"], "text");
    }
    let body = json!({ "jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
        "name": "test_header_param", "arguments": { "value": "Hello" }, "_meta": meta(json!({})) } });
    let r = send(
        c.post(&s.url)
            .header("content-type", "application/json")
            .header("mcp-protocol-version", MODERN)
            .header("mcp-method", "tools/call")
            .header("mcp-name", "test_header_param")
            .header("Mcp-Param-Value", "=?base64?SGVsbG8=?=")
            .body(body.to_string()),
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.messages);
    assert_eq!(r.last()["result"]["content"][0]["text"], "value: Hello");
}

#[tokio::test]
async fn undeclared_capability_is_400_with_required_capabilities() {
    let s = HttpServer::start("everything");
    let c = client();
    let r = send(modern(
        &c,
        &s.url,
        json!(401),
        "tools/call",
        json!({ "name": "test_missing_capability", "arguments": {} }),
    ))
    .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.error_code(), Some(-32021));
    assert_eq!(r.last()["error"]["data"]["requiredCapabilities"], json!({ "sampling": {} }));
    let params =
        json!({ "name": "test_missing_capability", "arguments": {}, "_meta": meta(json!({ "sampling": {} })) });
    let r = send(modern(&c, &s.url, json!(402), "tools/call", params)).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.last()["result"]["resultType"], "complete");
}

#[tokio::test]
async fn unsupported_version_is_400_with_supported_and_requested() {
    let s = HttpServer::start("everything");
    let body = json!({ "jsonrpc": "2.0", "id": 301, "method": "server/discover", "params": { "_meta": {
        "io.modelcontextprotocol/protocolVersion": "v999.0.0", "io.modelcontextprotocol/clientCapabilities": {} } } });
    let r = send(
        client()
            .post(&s.url)
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "v999.0.0")
            .header("mcp-method", "server/discover")
            .body(body.to_string()),
    )
    .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.error_code(), Some(-32022));
    assert_eq!(r.last()["error"]["data"]["requested"], "v999.0.0");
    assert!(r.last()["error"]["data"]["supported"].as_array().is_some_and(|a| a.contains(&json!(MODERN))));
    // E6: the list is the one server/discover advertises.
    let discover = send(modern(&client(), &s.url, json!(302), "server/discover", json!({}))).await;
    assert_eq!(r.last()["error"]["data"]["supported"], discover.last()["result"]["supportedVersions"]);
}

#[tokio::test]
async fn foreign_host_or_origin_is_403_and_local_ones_pass() {
    let s = HttpServer::start("everything");
    let c = client();
    let r = send(modern(&c, &s.url, json!(1), "server/discover", json!({})).header("host", "evil.example.com")).await;
    assert_eq!(r.status, 403);
    let r =
        send(modern(&c, &s.url, json!(1), "server/discover", json!({})).header("origin", "http://evil.example.com"))
            .await;
    assert_eq!(r.status, 403);
    let local = format!("localhost:{}", s.port);
    let r = send(
        modern(&c, &s.url, json!(1), "server/discover", json!({}))
            .header("host", local.clone())
            .header("origin", format!("http://{local}")),
    )
    .await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn unknown_and_removed_methods_are_404_method_not_found() {
    let s = HttpServer::start("everything");
    let c = client();
    for method in
        ["unknown/method", "initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"]
    {
        let r = send(modern(&c, &s.url, json!(500), method, json!({ "uri": "test://static-text" }))).await;
        assert_eq!(r.status, 404, "{method}");
        assert_eq!(r.error_code(), Some(-32601), "{method}");
        assert_eq!(r.last()["id"], 500);
        // A method of the session-based revisions says so, rather than looking absent.
        let message = r.last()["error"]["message"].as_str().unwrap_or_default().to_owned();
        let names_the_revisions = message.contains("2025-11-25") || message.contains("session-based");
        assert_eq!(names_the_revisions, method != "unknown/method", "{method}: {message}");
    }
    still_usable(&c, &s.url).await;
}

/// Asserts the 2026-07-28 refusal of a method: 405, `Allow: POST`, no body, no session id.
fn assert_modern_405(r: &Bare, what: &str) {
    assert_eq!((r.status, r.allow.as_deref(), r.body.as_str()), (405, Some("POST"), ""), "{what}");
    assert!(!r.session_echoed, "{what}: a session id is never echoed on the modern wire");
}

#[tokio::test]
async fn get_and_delete_on_the_modern_wire_are_405_allow_post_whatever_the_session_id() {
    let c = client();
    // Both dual-era examples; a stray session id or a Last-Event-ID change nothing. (A version
    // this server does not know is a 400 there: see http_legacy.rs.)
    for example in ["everything", "fixture"] {
        let s = HttpServer::start(example);
        for method in ["GET", "DELETE"] {
            for headers in [
                &[("mcp-protocol-version", MODERN)][..],
                &[("mcp-protocol-version", MODERN), ("mcp-session-id", "anything")],
                &[("mcp-protocol-version", MODERN), ("mcp-session-id", "anything"), ("last-event-id", "s1-1")],
                &[("mcp-protocol-version", MODERN), ("accept", "text/event-stream")],
            ] {
                assert_modern_405(&bare(&c, method, &s.url, headers).await, &format!("{example} {method} {headers:?}"));
            }
        }
        still_usable(&c, &s.url).await;
    }
}

#[tokio::test]
async fn a_modern_get_or_delete_leaves_a_live_legacy_session_alone() {
    let s = HttpServer::start("everything");
    let c = client();
    let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "wire-test", "version": "0" } } });
    let r = send(c.post(&s.url).header("content-type", "application/json").body(init.to_string())).await;
    let sid = r.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).expect("a session id").to_owned();
    for method in ["DELETE", "GET"] {
        let r = bare(&c, method, &s.url, &[("mcp-protocol-version", MODERN), ("mcp-session-id", &sid)]).await;
        assert_modern_405(&r, method);
    }
    let ping = json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" }).to_string();
    let r = send(
        c.post(&s.url)
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", sid)
            .body(ping),
    )
    .await;
    assert_eq!((r.status, r.last()), (200, &json!({ "jsonrpc": "2.0", "id": 1, "result": {} })), "the session lives");
}

#[tokio::test]
async fn other_methods_are_405_with_allow_listing_the_methods_of_the_wire() {
    let s = HttpServer::start("everything");
    let c = client();
    // Without a CORS layer around the router a preflight is refused like any other OPTIONS.
    let preflight = [("origin", "http://localhost:5173"), ("access-control-request-method", "POST")];
    for method in ["PUT", "PATCH", "HEAD", "OPTIONS", "TRACE"] {
        // Not on the modern wire: the endpoint's methods across both eras.
        for headers in [&[][..], &[("mcp-session-id", "anything"), ("mcp-protocol-version", "2025-11-25")], &preflight]
        {
            let r = bare(&c, method, &s.url, headers).await;
            assert_eq!(
                (r.status, r.allow.as_deref(), r.body.as_str()),
                (405, Some("GET, POST, DELETE"), ""),
                "{method} {headers:?}"
            );
        }
        let r = bare(&c, method, &s.url, &[("mcp-protocol-version", MODERN), ("mcp-session-id", "anything")]).await;
        assert_modern_405(&r, method);
    }
    still_usable(&c, &s.url).await;
}

#[tokio::test]
async fn a_foreign_origin_is_403_before_the_method_is_looked_at() {
    let s = HttpServer::start("everything");
    let c = client();
    for method in ["GET", "DELETE", "PUT", "OPTIONS"] {
        let r =
            bare(&c, method, &s.url, &[("mcp-protocol-version", MODERN), ("origin", "http://evil.example.com")]).await;
        assert_eq!((r.status, r.allow), (403, None), "{method}");
    }
}

/// Serves an empty server in this process with `config`; returns the endpoint's URL.
async fn serve_in_process(config: switchyard::transport::http::HttpConfig) -> switchyard::testing::HttpTestServer {
    let server = switchyard::Server::builder("allow-test", "1").build().expect("builds");
    switchyard::testing::HttpTestServer::start(server, config).await.expect("a loopback port")
}

#[tokio::test]
async fn a_modern_only_server_answers_every_method_but_post_with_405_allow_post() {
    let config = switchyard::transport::http::HttpConfig::default().legacy_sessions(false);
    let http = serve_in_process(config).await;
    let url = http.url();
    let c = client();
    for method in ["GET", "DELETE", "PUT", "PATCH", "OPTIONS"] {
        for headers in [
            &[][..],
            &[("mcp-session-id", "anything")],
            &[("mcp-session-id", "anything"), ("mcp-protocol-version", "2025-11-25")],
            &[("mcp-session-id", "anything"), ("mcp-protocol-version", MODERN), ("last-event-id", "s1-1")],
            &[("mcp-protocol-version", "2099-01-01")],
        ] {
            assert_modern_405(&bare(&c, method, &url, headers).await, &format!("{method} {headers:?}"));
        }
    }
    let r = send(modern(&c, &url, json!(1), "server/discover", json!({}))).await;
    assert_eq!(r.status, 200, "POST is served: {:?}", r.messages);
}

#[tokio::test]
async fn malformed_bodies_get_json_rpc_errors() {
    let s = HttpServer::start("everything");
    let c = client();
    let post = |body: &str| {
        c.post(&s.url)
            .header("content-type", "application/json")
            .header("mcp-protocol-version", MODERN)
            .body(body.to_owned())
    };
    let r = send(post("{not json")).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.error_code(), Some(-32700));
    assert_eq!(r.last()["id"], Value::Null);
    for bad in [
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
        r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#,
    ] {
        let r = send(post(bad)).await;
        assert_eq!(r.status, 400, "{bad}");
        assert_eq!(r.error_code(), Some(-32600), "{bad}");
    }
    still_usable(&c, &s.url).await;
}

#[tokio::test]
async fn an_oversized_body_is_413_with_a_json_rpc_error() {
    let s = HttpServer::start("everything");
    let c = client();
    let big = "x".repeat(5 * 1024 * 1024);
    let params = json!({ "name": "test_simple_text", "arguments": { "pad": big } });
    let r = send(modern(&c, &s.url, json!(9), "tools/call", params)).await;
    assert_eq!(r.status, 413);
    assert_eq!(r.error_code(), Some(-32600));
    still_usable(&c, &s.url).await;
}

#[tokio::test]
async fn other_errors_are_200_with_the_error_body() {
    let s = HttpServer::start("everything");
    let c = client();
    let r = send(modern(&c, &s.url, json!(1), "tools/call", json!({ "name": "nope", "arguments": {} }))).await;
    assert_eq!((r.status, r.error_code()), (200, Some(-32602)));
    let r = send(modern(
        &c,
        &s.url,
        json!(2),
        "resources/read",
        json!({ "uri": "test://nonexistent-resource-for-conformance-testing" }),
    ))
    .await;
    assert_eq!((r.status, r.error_code()), (200, Some(-32602)));
    assert_eq!(r.last()["error"]["data"]["uri"], "test://nonexistent-resource-for-conformance-testing");
    let r = send(modern(
        &c,
        &s.url,
        json!(3),
        "prompts/get",
        json!({ "name": "test_prompt_with_arguments", "arguments": { "arg1": "a" } }),
    ))
    .await;
    assert_eq!((r.status, r.error_code()), (200, Some(-32602)));
    let r = send(modern(&c, &s.url, json!(4), "tools/call", json!({ "name": "test_error_handling", "arguments": {} })))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.last()["result"]["isError"], true);
}

#[tokio::test]
async fn progress_switches_the_reply_to_sse_with_notifications_first() {
    let s = HttpServer::start("everything");
    let c = client();
    let mut m = meta(json!({}));
    m["progressToken"] = json!("progress-test-1");
    let params = json!({ "name": "test_tool_with_progress", "arguments": {}, "_meta": m });
    let r = send(modern(&c, &s.url, json!(11), "tools/call", params)).await;
    assert_eq!(r.status, 200);
    assert!(r.content_type.starts_with("text/event-stream"), "{}", r.content_type);
    assert_eq!(r.headers.get("x-accel-buffering").and_then(|v| v.to_str().ok()), Some("no"));
    let progress: Vec<f64> = r
        .messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| {
            assert_eq!(m["params"]["progressToken"], "progress-test-1");
            m["params"]["progress"].as_f64().expect("number")
        })
        .collect();
    assert!(progress.len() >= 3 && progress.windows(2).all(|w| w[0] <= w[1]), "{progress:?}");
    assert_eq!(r.last()["id"], 11);
    assert_eq!(r.last()["result"]["resultType"], "complete");
}

#[tokio::test]
async fn logs_are_sent_only_when_the_request_opts_in() {
    let s = HttpServer::start("everything");
    let c = client();
    let r =
        send(modern(&c, &s.url, json!(1), "tools/call", json!({ "name": "test_logging_tool", "arguments": {} }))).await;
    assert!(r.messages.iter().all(|m| m["method"] != "notifications/message"), "{:?}", r.messages);
    let mut m = meta(json!({}));
    m["io.modelcontextprotocol/logLevel"] = json!("info");
    let r = send(modern(
        &c,
        &s.url,
        json!(2),
        "tools/call",
        json!({ "name": "test_logging_tool", "arguments": {}, "_meta": m }),
    ))
    .await;
    let levels: Vec<&str> = r
        .messages
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .filter_map(|m| m["params"]["level"].as_str())
        .collect();
    assert_eq!(levels, ["info", "warning"]);
    let mut m = meta(json!({}));
    m["io.modelcontextprotocol/logLevel"] = json!("loud");
    let r = send(modern(
        &c,
        &s.url,
        json!(3),
        "tools/call",
        json!({ "name": "test_logging_tool", "arguments": {}, "_meta": m }),
    ))
    .await;
    assert_eq!((r.status, r.error_code()), (400, Some(-32602)));
}

#[tokio::test]
async fn missing_arguments_mean_an_empty_object() {
    let s = HttpServer::start("everything");
    let c = client();
    let r = send(modern(&c, &s.url, json!(1), "tools/call", json!({ "name": "test_simple_text" }))).await;
    assert_eq!(r.status, 200);
    assert!(r.last()["result"].get("isError").is_none(), "{:?}", r.messages);
}

#[tokio::test]
async fn a_modern_request_ignores_a_stray_session_id() {
    let s = HttpServer::start("everything");
    let c = client();
    let r = send(modern(&c, &s.url, json!(1), "tools/list", json!({})).header("mcp-session-id", "bogus")).await;
    assert_eq!(r.status, 200, "{:?}", r.messages);
    let body = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {} });
    let r = send(
        c.post(&s.url)
            .header("content-type", "application/json")
            .header("mcp-protocol-version", MODERN)
            .header("mcp-method", "tools/list")
            .header("mcp-session-id", "bogus")
            .body(body.to_string()),
    )
    .await;
    assert_eq!((r.status, r.error_code()), (400, Some(-32602)), "{:?}", r.messages);
}

#[tokio::test]
async fn odd_host_headers_and_repeated_headers_are_refused() {
    let s = HttpServer::start("everything");
    let c = client();
    for host in ["[::1]evil.com", "localhost:99999999", "localhost:"] {
        let r = send(modern(&c, &s.url, json!(1), "server/discover", json!({})).header("host", host)).await;
        assert_eq!(r.status, 403, "{host}");
    }
    let r = send(modern(&c, &s.url, json!(1), "tools/list", json!({})).header("mcp-method", "tools/call")).await;
    assert_eq!((r.status, r.error_code()), (400, Some(-32020)));
}

#[tokio::test]
async fn http2_with_prior_knowledge_serves_results_and_streams() {
    let s = HttpServer::start("everything");
    let c = h2_client(None);
    // A plain result, on HTTP/2 (no Host header: the host check reads `:authority`).
    let resp = modern(&c, &s.url, json!(1), "tools/list", json!({})).send().await.expect("sent");
    assert_eq!(resp.version(), reqwest::Version::HTTP_2);
    assert_eq!(resp.status().as_u16(), 200);
    let body: Value = resp.json().await.expect("JSON");
    assert_eq!(body["result"]["resultType"], "complete");
    // An SSE reply on a stream of the same connection.
    let mut m = meta(json!({}));
    m["progressToken"] = json!("h2");
    let params = json!({ "name": "test_tool_with_progress", "arguments": {}, "_meta": m });
    let r = send(modern(&c, &s.url, json!(2), "tools/call", params)).await;
    assert!(r.content_type.starts_with("text/event-stream"), "{}", r.content_type);
    assert!(r.messages.iter().any(|m| m["method"] == "notifications/progress"));
    assert_eq!(r.last()["result"]["resultType"], "complete");
    // A foreign authority is refused like a foreign Host.
    let foreign = s.url.replace("127.0.0.1", "localhost.evil.example");
    let c2 = reqwest::Client::builder()
        .http2_prior_knowledge()
        .resolve("localhost.evil.example", std::net::SocketAddr::from(([127, 0, 0, 1], s.port)))
        .build()
        .expect("an h2c client");
    let r = send(modern(&c2, &foreign, json!(3), "tools/list", json!({}))).await;
    assert_eq!(r.status, 403);
}

/// HTTP/2 connections gather the frames of many streams into one write (the transport's
/// `batched_writes`): many replies finishing together on one connection must each still reach
/// their own stream, whole and in order, plain JSON and SSE alike.
#[tokio::test]
async fn many_concurrent_http2_streams_on_one_connection_each_get_their_own_reply() {
    let s = HttpServer::start("everything");
    let c = h2_client(None);
    let calls = (0..120).map(|i| {
        let (c, url) = (c.clone(), s.url.clone());
        async move {
            let req = if i % 2 == 0 {
                modern(&c, &url, json!(i), "tools/call", json!({ "name": "test_simple_text", "arguments": {} }))
            } else {
                let mut m = meta(json!({}));
                m["progressToken"] = json!(format!("p{i}"));
                let params = json!({ "name": "test_tool_with_progress", "arguments": {}, "_meta": m });
                modern(&c, &url, json!(i), "tools/call", params)
            };
            (i, send(req).await)
        }
    });
    for (i, r) in futures::future::join_all(calls).await {
        assert_eq!(r.status, 200, "request {i}: {:?}", r.messages);
        assert_eq!(r.last()["id"], json!(i), "request {i} got another stream's reply");
        assert_eq!(r.last()["result"]["resultType"], "complete", "request {i}: {:?}", r.messages);
        if i % 2 == 1 {
            let tokens: Vec<&Value> = r
                .messages
                .iter()
                .filter(|m| m["method"] == "notifications/progress")
                .map(|m| &m["params"]["progressToken"])
                .collect();
            assert!(!tokens.is_empty(), "request {i}: no progress");
            assert!(tokens.iter().all(|t| **t == json!(format!("p{i}"))), "request {i}: foreign progress {tokens:?}");
        }
    }
    still_usable(&c, &s.url).await;
}

/// An 8 MiB body on an HTTP/2 stream is refused like on HTTP/1.1 (413 with a JSON-RPC
/// error), and the connection goes on serving its other streams.
#[tokio::test]
async fn an_oversized_body_over_http2_is_413_with_a_json_rpc_error() {
    let s = HttpServer::start("everything");
    let c = h2_client(None);
    let params = json!({ "name": "test_simple_text", "arguments": { "pad": "x".repeat(8 * 1024 * 1024) } });
    let resp = modern(&c, &s.url, json!(9), "tools/call", params).send().await.expect("a reply");
    assert_eq!(resp.version(), reqwest::Version::HTTP_2);
    assert_eq!(resp.status().as_u16(), 413);
    let body: Value = resp.json().await.expect("a JSON body");
    assert_eq!(body["error"]["code"], -32600, "{body}");
    still_usable(&c, &s.url).await;
}
