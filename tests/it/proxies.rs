//! The `everything` example behind a real nginx (docs/scaling.md, "Trusted proxies" and
//! "Proxy timeouts"): per-client legacy session quotas that see each client only with
//! `--trusted-proxies`, and a long silent call that outlives nginx's `proxy_read_timeout` only
//! because its reply turns into SSE with keep-alive comments (`--sse-after`). The SSE switch
//! itself is also checked without a proxy. Behind HAProxy in TCP mode, the PROXY protocol
//! (`--proxy-protocol`) gives each client its own quota too, and is read only from trusted peers.
//!
//! The nginx tests need the `nginx` binary (`SWITCHYARD_NGINX`, else `nginx` on PATH or
//! /usr/sbin/nginx), the PROXY protocol test `haproxy` (`SWITCHYARD_HAPROXY`); without them they
//! are reported ignored (tests/build.rs); under CI (`CI` set) they run and fail.

use crate::common::haproxy::Haproxy;
use crate::common::*;
use serde_json::{Value, json};
use std::net::IpAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const HOW: &str = "apt-get install nginx (or set SWITCHYARD_NGINX) and run \
                   cargo test -p switchyard-tests --test it proxies::";

/// nginx in front of one server on `backend_port`, killed when dropped.
struct Nginx {
    child: Child,
    url: String,
    dir: PathBuf,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Nginx {
    /// Starts nginx with the configuration of docs/scaling.md ("A tested nginx configuration"),
    /// `read_timeout` as its `proxy_read_timeout`.
    fn start(nginx: &PathBuf, backend_port: u16, read_timeout: &str) -> Nginx {
        let port = free_port();
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("switchyard-nginx-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temp dir");
        let d = dir.display();
        // In the foreground, one process, everything it writes in `dir`.
        let config = format!(
            "daemon off;\nmaster_process off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
             events {{ worker_connections 256; }}\n\
             http {{\n\
             access_log off;\n\
             client_body_temp_path {d}/body;\nproxy_temp_path {d}/proxy;\nfastcgi_temp_path {d}/fastcgi;\n\
             uwsgi_temp_path {d}/uwsgi;\nscgi_temp_path {d}/scgi;\n\
             upstream mcp {{\n    server 127.0.0.1:{backend_port};\n    keepalive 16;\n}}\n\
             server {{\n    listen 127.0.0.1:{port};\n\
             location /mcp {{\n\
             proxy_pass http://mcp;\n\
             proxy_http_version 1.1;\n\
             proxy_set_header Connection \"\";\n\
             proxy_set_header Host $http_host;\n\
             proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;\n\
             proxy_buffering off;\n\
             proxy_read_timeout {read_timeout};\n\
             }}\n}}\n}}\n"
        );
        let cfg = dir.join("nginx.conf");
        std::fs::write(&cfg, config).expect("config written");
        let child = Command::new(nginx)
            .arg("-p")
            .arg(&dir)
            .arg("-c")
            .arg(&cfg)
            .arg("-e")
            .arg(dir.join("error.log"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx starts");
        wait_for_port(port, "nginx");
        Nginx { child, url: format!("http://127.0.0.1:{port}/mcp"), dir }
    }
}

fn nginx(test: &str) -> Option<PathBuf> {
    let found = service_binary("SWITCHYARD_NGINX", "nginx");
    if found.is_none() {
        skip(&format!("proxies::{test}"), "no nginx binary", HOW);
    }
    found
}

/// A client whose connections come from `from` (a loopback address such as 127.0.0.2: the
/// proxy sees each client at an address of its own).
fn client_from(from: &str) -> reqwest::Client {
    let ip: IpAddr = from.parse().expect("an address");
    reqwest::Client::builder().local_address(ip).timeout(Duration::from_secs(30)).build().expect("client")
}

/// `initialize` of a legacy session through `url`, with `X-Forwarded-For: spoof` when given;
/// the session id.
async fn open_session(c: &reqwest::Client, url: &str, spoof: Option<&str>) -> String {
    let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "proxy-test", "version": "0" } } });
    let mut rb = c.post(url).header("content-type", "application/json").body(init.to_string());
    if let Some(s) = spoof {
        rb = rb.header("x-forwarded-for", s);
    }
    let r = send(rb).await;
    assert_eq!(r.status, 200, "{:?}", r.messages);
    let id = r.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).expect("a session id").to_owned();
    let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    assert_eq!(send(in_session(c, url, &id, "application/json, text/event-stream", &initialized)).await.status, 202);
    id
}

/// A request in legacy session `id`.
fn in_session(c: &reqwest::Client, url: &str, id: &str, accept: &str, body: &Value) -> reqwest::RequestBuilder {
    c.post(url)
        .header("content-type", "application/json")
        .header("accept", accept)
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", id)
        .body(body.to_string())
}

/// The status of a `ping` in session `id`: 200 while it lives, 404 once it was closed.
async fn ping(c: &reqwest::Client, url: &str, id: &str) -> u16 {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" });
    send(in_session(c, url, id, "application/json, text/event-stream", &body)).await.status
}

/// Two clients at 127.0.0.2 and 127.0.0.3, two sessions each, through nginx to a server that
/// lets one client hold two; the second client claims the first one's address in its own
/// `X-Forwarded-For`. Whether the first client's sessions are still open after that.
async fn first_client_keeps_its_sessions(nginx: &PathBuf, flags: &[&str]) -> bool {
    let mut args = vec!["--http-sessions-per-client", "2"];
    args.extend_from_slice(flags);
    let server = HttpServer::start_with("everything", &args);
    let proxy = Nginx::start(nginx, server.port, "30s");
    first_client_keeps_its_sessions_at(&proxy.url).await
}

/// [`first_client_keeps_its_sessions`] through a proxy at `url` that is already running.
async fn first_client_keeps_its_sessions_at(url: &str) -> bool {
    let (a, b) = (client_from("127.0.0.2"), client_from("127.0.0.3"));
    let a_sessions = [open_session(&a, url, None).await, open_session(&a, url, None).await];
    for s in &a_sessions {
        assert_eq!(ping(&a, url, s).await, 200);
    }
    for _ in 0..2 {
        open_session(&b, url, Some("127.0.0.2")).await;
    }
    let mut kept = Vec::new();
    for s in &a_sessions {
        kept.push(ping(&a, url, s).await);
    }
    match kept.as_slice() {
        [200, 200] => true,
        [404, 404] => false,
        other => panic!("the first client's sessions answered {other:?}"),
    }
}

#[tokio::test]
#[cfg_attr(not(svc_nginx), ignore = "needs nginx (apt-get install nginx, or SWITCHYARD_NGINX)")]
async fn clients_behind_nginx_get_their_own_session_quota_only_with_trusted_proxies() {
    let test = "clients_behind_nginx_get_their_own_session_quota_only_with_trusted_proxies";
    let Some(nginx) = nginx(test) else { return };
    // nginx's address is trusted: each client counts by the address nginx saw, and the
    // address the second client wrote into its own header is never read.
    assert!(
        first_client_keeps_its_sessions(&nginx, &["--trusted-proxies", "127.0.0.1/32"]).await,
        "with --trusted-proxies the second client's sessions must not close the first one's"
    );
    // Without the setting both clients are nginx's address: the second one's sessions close
    // the first one's (the least recently used of the shared quota).
    assert!(
        !first_client_keeps_its_sessions(&nginx, &[]).await,
        "without --trusted-proxies both clients share one quota"
    );
}

/// A silent `slow_compute` of `seconds` on the 2026-07-28 wire, accepting `accept`.
fn slow_call(c: &reqwest::Client, url: &str, seconds: u64, accept: &str) -> reqwest::RequestBuilder {
    let params = json!({ "name": "slow_compute", "arguments": { "seconds": seconds }, "_meta": meta(json!({})) });
    let body = json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params });
    // Not `modern`: reqwest appends a second `Accept` rather than replacing its.
    c.post(url)
        .header("content-type", "application/json")
        .header("accept", accept)
        .header("mcp-protocol-version", MODERN)
        .header("mcp-method", "tools/call")
        .header("mcp-name", "slow_compute")
        .body(body.to_string())
}

/// Status, content type and raw body of a reply.
async fn raw(rb: reqwest::RequestBuilder) -> (u16, String, String) {
    let resp = rb.send().await.expect("request sent");
    let status = resp.status().as_u16();
    let ct = resp.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    (status, ct, resp.text().await.expect("a body"))
}

/// The JSON-RPC messages of an SSE body, in order.
fn events(body: &str) -> Vec<Value> {
    body.lines().filter_map(|l| l.strip_prefix("data:")).filter_map(|d| serde_json::from_str(d.trim()).ok()).collect()
}

/// Checks that `body` is an SSE stream with a keep-alive comment before its only JSON-RPC
/// message, the result of `slow_compute` for `seconds` with id `id`.
fn assert_kept_alive_then_answered(body: &str, id: i64, seconds: u64) {
    let comment = body.find(": keep-alive").unwrap_or_else(|| panic!("no keep-alive comment: {body:?}"));
    let result = body.find("\"result\"").unwrap_or_else(|| panic!("no result: {body:?}"));
    assert!(comment < result, "a keep-alive comment comes before the result: {body:?}");
    let messages = events(body);
    assert_eq!(messages.len(), 1, "{body:?}");
    assert_eq!(messages[0]["id"], id);
    let text = format!("computed result for {seconds} s");
    assert_eq!(messages[0]["result"]["content"][0]["text"], text, "{body:?}");
}

#[tokio::test]
async fn a_silent_call_turns_into_sse_with_keep_alives_when_the_client_reads_sse() {
    let server = HttpServer::start_with("everything", &["--sse-after", "1", "--sse-keep-alive", "1"]);
    let c = client();
    let both = "application/json, text/event-stream";
    let (status, ct, body) = raw(slow_call(&c, &server.url, 3, both)).await;
    assert_eq!((status, ct.as_str()), (200, "text/event-stream"), "{body}");
    assert_kept_alive_then_answered(&body, 7, 3);

    // A call that answers at once keeps its JSON body.
    let (status, ct, body) = raw(slow_call(&c, &server.url, 0, both)).await;
    assert_eq!((status, ct.as_str()), (200, "application/json"), "{body}");
    let answer: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(answer["result"]["content"][0]["text"], "computed result for 0 s");

    // A client that reads only JSON waits for its JSON body.
    let (status, ct, body) = raw(slow_call(&c, &server.url, 3, "application/json")).await;
    assert_eq!((status, ct.as_str()), (200, "application/json"), "{body}");
    let answer: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(answer["result"]["content"][0]["text"], "computed result for 3 s");

    // A legacy session's request turns too (its stream resumable, as any SSE reply there).
    let session = open_session(&c, &server.url, None).await;
    let call = json!({ "jsonrpc": "2.0", "id": 9, "method": "tools/call",
                       "params": { "name": "slow_compute", "arguments": { "seconds": 3 } } });
    let (status, ct, body) = raw(in_session(&c, &server.url, &session, both, &call)).await;
    assert_eq!((status, ct.as_str()), (200, "text/event-stream"), "{body}");
    assert_kept_alive_then_answered(&body, 9, 3);
    let (status, ct, body) = raw(in_session(&c, &server.url, &session, "application/json", &call)).await;
    assert_eq!((status, ct.as_str()), (200, "application/json"), "{body}");

    // `--sse-after 0`: never.
    let off = HttpServer::start_with("everything", &["--sse-after", "0", "--sse-keep-alive", "1"]);
    let (status, ct, body) = raw(slow_call(&c, &off.url, 2, both)).await;
    assert_eq!((status, ct.as_str()), (200, "application/json"), "{body}");
}

#[tokio::test]
#[cfg_attr(not(svc_nginx), ignore = "needs nginx (apt-get install nginx, or SWITCHYARD_NGINX)")]
async fn a_long_silent_call_outlives_nginx_s_read_timeout_only_with_sse_after() {
    let test = "a_long_silent_call_outlives_nginx_s_read_timeout_only_with_sse_after";
    let Some(nginx) = nginx(test) else { return };
    let both = "application/json, text/event-stream";
    let c = client();

    let server = HttpServer::start_with("everything", &["--sse-after", "1", "--sse-keep-alive", "1"]);
    let proxy = Nginx::start(&nginx, server.port, "2s");
    let (status, ct, body) = raw(slow_call(&c, &proxy.url, 5, both)).await;
    assert_eq!((status, ct.as_str()), (200, "text/event-stream"), "{body}");
    assert_kept_alive_then_answered(&body, 7, 5);
    drop((proxy, server));

    // Silent for 5 s, nginx gives up after 2 s.
    let server = HttpServer::start_with("everything", &["--sse-after", "0"]);
    let proxy = Nginx::start(&nginx, server.port, "2s");
    let (status, _, body) = raw(slow_call(&c, &proxy.url, 5, both)).await;
    assert_eq!(status, 504, "{body}");
}

/// HAProxy in TCP mode in front of one server, with two frontends: one sends PROXY protocol
/// version 1 (`send-proxy`), the other version 2 (`send-proxy-v2`).
struct ProxyProtocolBalancer {
    _haproxy: Haproxy,
    v1: u16,
    v2: u16,
}

impl ProxyProtocolBalancer {
    fn start(haproxy: &std::path::Path, backend_port: u16) -> ProxyProtocolBalancer {
        let (v1, v2) = (free_port(), free_port());
        let config = format!(
            "global\n    maxconn 200\n\n\
             defaults\n    mode tcp\n    timeout connect 2s\n    timeout client 60s\n    timeout server 60s\n\n\
             frontend v1\n    bind 127.0.0.1:{v1}\n    default_backend v1\n\
             backend v1\n    server s1 127.0.0.1:{backend_port} send-proxy\n\n\
             frontend v2\n    bind 127.0.0.1:{v2}\n    default_backend v2\n\
             backend v2\n    server s1 127.0.0.1:{backend_port} send-proxy-v2\n"
        );
        ProxyProtocolBalancer { _haproxy: Haproxy::start(haproxy, &config, &[v1, v2]), v1, v2 }
    }
}

/// Sends `bytes` on a fresh connection to `port` from `from` and reads until the server
/// closes it (or 10 s pass): what came back.
async fn exchange(from: &str, port: u16, bytes: &[u8]) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
    socket.bind(format!("{from}:0").parse().expect("an address")).expect("bind");
    let mut tcp = socket.connect(format!("127.0.0.1:{port}").parse().expect("an address")).await.expect("connect");
    tcp.write_all(bytes).await.expect("write");
    let mut got = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), tcp.read_to_end(&mut got)).await;
    String::from_utf8_lossy(&got).into_owned()
}

#[tokio::test]
#[cfg_attr(not(svc_haproxy), ignore = "needs haproxy (apt-get install haproxy, or SWITCHYARD_HAPROXY)")]
async fn clients_behind_a_proxy_protocol_balancer_get_their_own_session_quota() {
    let test = "clients_behind_a_proxy_protocol_balancer_get_their_own_session_quota";
    let Some(haproxy) = service_binary("SWITCHYARD_HAPROXY", "haproxy") else {
        return skip(&format!("proxies::{test}"), "no haproxy binary", HOW);
    };
    let flags = ["--http-sessions-per-client", "2", "--trusted-proxies", "127.0.0.1/32", "--proxy-protocol"];
    let server = HttpServer::start_with("everything", &flags);
    let balancer = ProxyProtocolBalancer::start(&haproxy, server.port);
    // HAProxy connects from 127.0.0.1 for every client; the header names 127.0.0.2 and
    // 127.0.0.3, so each has a quota of its own, in both versions of the protocol.
    for port in [balancer.v1, balancer.v2] {
        let url = format!("http://127.0.0.1:{port}/mcp");
        assert!(first_client_keeps_its_sessions_at(&url).await, "through port {port}: the clients share a quota");
    }

    let request = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                   Accept: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}";
    // A trusted peer that sends no header is closed without an answer: the server must not
    // guess, or the balancer's address would stand in for every client unnoticed.
    assert_eq!(exchange("127.0.0.1", server.port, request.as_bytes()).await, "", "no header from a trusted peer");
    // A trusted peer's malformed header likewise.
    let bad = format!("PROXY TCP4 127.0.0.9\r\n{request}");
    assert_eq!(exchange("127.0.0.1", server.port, bad.as_bytes()).await, "", "a malformed header");
    // An untrusted peer's header is not read: it is a malformed HTTP request (400), so a
    // client cannot name its own address.
    let spoof = format!("PROXY TCP4 127.0.0.9 127.0.0.1 4000 80\r\n{request}");
    let answer = exchange("127.0.0.2", server.port, spoof.as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 400"), "an untrusted peer's header: {answer:?}");
    // The server still serves after all of that.
    let url = format!("http://127.0.0.1:{}/mcp", balancer.v2);
    open_session(&client_from("127.0.0.4"), &url, None).await;
}
