//! `Host` and `Origin` allow-lists as a deployment meets them (`docs/security.md`, "Hosts and
//! origins"): a server behind a real HAProxy that passes the public name through, configured
//! from the command line and the environment, and a server bound to a non-loopback address.
//!
//! The proxy tests need the `haproxy` binary (`SWITCHYARD_HAPROXY`, else `haproxy` on PATH or
//! /usr/sbin/haproxy); without it they are reported ignored (tests/build.rs); under CI (`CI` set)
//! they run and fail.

use crate::common::haproxy::Haproxy;
use crate::common::*;
use serde_json::json;
use std::path::PathBuf;
use std::process::{Command, Stdio};

const HOW: &str = "apt-get install haproxy (or set SWITCHYARD_HAPROXY) and run \
                   cargo test -p switchyard-tests --test it hosts::";
const PUBLIC: &str = "mcp.example.com";

/// HAProxy in front of one server on `backend_port`.
struct Proxy {
    _haproxy: Haproxy,
    url: String,
}

impl Proxy {
    fn start(haproxy: &std::path::Path, backend_port: u16) -> Proxy {
        let port = free_port();
        let config = format!(
            "defaults\n    mode http\n    timeout connect 2s\n    timeout client 30s\n    timeout server 30s\n\n\
             frontend public\n    bind 127.0.0.1:{port}\n    default_backend mcp\n\n\
             backend mcp\n    server s1 127.0.0.1:{backend_port}\n"
        );
        Proxy { _haproxy: Haproxy::start(haproxy, &config, &[port]), url: format!("http://127.0.0.1:{port}/mcp") }
    }
}

fn haproxy(test: &str) -> Option<PathBuf> {
    let found = service_binary("SWITCHYARD_HAPROXY", "haproxy");
    if found.is_none() {
        skip(&format!("hosts::{test}"), "no haproxy binary", HOW);
    }
    found
}

/// A stateless `tools/call` of the quickstart's `greet` sent to `url` with `Host: host` and,
/// when given, `Origin: origin`.
async fn greet(url: &str, host: &str, origin: Option<&str>) -> Reply {
    let mut rb =
        modern(&client(), url, json!(1), "tools/call", json!({ "name": "greet", "arguments": { "name": "Ada" } }))
            .header("host", host);
    if let Some(o) = origin {
        rb = rb.header("origin", o);
    }
    send(rb).await
}

fn message(r: &Reply) -> String {
    r.last()["error"]["message"].as_str().unwrap_or_default().to_owned()
}

fn greeted(r: &Reply) -> bool {
    r.status == 200 && r.last()["result"]["content"][0]["text"] == "Hello, Ada!"
}

#[tokio::test]
#[cfg_attr(not(svc_haproxy), ignore = "needs haproxy (apt-get install haproxy, or SWITCHYARD_HAPROXY)")]
async fn behind_a_proxy_the_public_name_is_refused_until_it_is_allowed() {
    let Some(haproxy) = haproxy("behind_a_proxy_the_public_name_is_refused_until_it_is_allowed") else { return };
    // The default on a loopback bind: the public name the proxy passes on is refused, and the
    // refusal says which setting admits it.
    let server = HttpServer::start("quickstart");
    let proxy = Proxy::start(&haproxy, server.port);
    let refused = greet(&proxy.url, PUBLIC, None).await;
    assert_eq!(refused.status, 403, "{:?}", refused.messages);
    assert_eq!(refused.error_code(), Some(-32600));
    assert!(message(&refused).contains("--allowed-hosts"), "{}", message(&refused));
    drop(proxy);
    drop(server);

    let server = HttpServer::start_with("quickstart", &["--allowed-hosts", &format!("{PUBLIC},*.example.net")]);
    let proxy = Proxy::start(&haproxy, server.port);
    let served = greet(&proxy.url, PUBLIC, None).await;
    assert!(greeted(&served), "{} {:?}", served.status, served.messages);
    assert!(greeted(&greet(&proxy.url, &format!("{PUBLIC}:443"), None).await), "any port of a named host");
    assert!(greeted(&greet(&proxy.url, "api.example.net", None).await), "a subdomain of a wildcard entry");
    let other = greet(&proxy.url, "evil.example.org", None).await;
    assert_eq!(other.status, 403, "a host not on the list");
    assert!(message(&other).contains(PUBLIC), "the refusal lists what is allowed: {}", message(&other));
    // Only the named hosts now: the listed ones replace the localhost names.
    assert_eq!(greet(&proxy.url, "localhost", None).await.status, 403);
    // A page of the public name may call it; another site may not.
    assert!(greeted(&greet(&proxy.url, PUBLIC, Some(&format!("https://{PUBLIC}"))).await));
    let cross = greet(&proxy.url, PUBLIC, Some("https://evil.example.org")).await;
    assert_eq!(cross.status, 403);
    assert!(message(&cross).contains("--allowed-origins"), "{}", message(&cross));
}

#[tokio::test]
#[cfg_attr(not(svc_haproxy), ignore = "needs haproxy (apt-get install haproxy, or SWITCHYARD_HAPROXY)")]
async fn the_environment_sets_hosts_and_origins_as_the_flags_do() {
    let Some(haproxy) = haproxy("the_environment_sets_hosts_and_origins_as_the_flags_do") else { return };
    let server = HttpServer::start_with_env(
        "quickstart",
        &[],
        &[("SWITCHYARD_ALLOWED_HOSTS", PUBLIC), ("SWITCHYARD_ALLOWED_ORIGINS", "https://app.example.com")],
    );
    let proxy = Proxy::start(&haproxy, server.port);
    assert!(greeted(&greet(&proxy.url, PUBLIC, None).await));
    assert!(greeted(&greet(&proxy.url, PUBLIC, Some("https://app.example.com")).await));
    assert_eq!(greet(&proxy.url, PUBLIC, Some("https://app.example.com:8443")).await.status, 403);
    assert_eq!(greet(&proxy.url, "other.example.com", None).await.status, 403);
}

#[tokio::test]
async fn a_server_on_a_non_loopback_address_takes_any_host_but_no_foreign_page() {
    let server = HttpServer::start_on("quickstart", "0.0.0.0:0", &[], &[]);
    assert!(greeted(&greet(&server.url, PUBLIC, None).await), "a public name reaches a server bound to 0.0.0.0");
    // Browsers send Origin with every POST, so a rebound page is still refused.
    let page = greet(&server.url, PUBLIC, Some(&format!("http://{PUBLIC}"))).await;
    assert_eq!(page.status, 403);
    assert!(message(&page).contains("--allowed-origins"), "{}", message(&page));
    let listed =
        HttpServer::start_on("quickstart", "0.0.0.0:0", &["--allowed-origins", "https://app.example.com"], &[]);
    assert!(greeted(&greet(&listed.url, PUBLIC, Some("https://app.example.com")).await));
    // `--allowed-hosts` narrows it again.
    let named = HttpServer::start_on("quickstart", "0.0.0.0:0", &["--allowed-hosts", PUBLIC], &[]);
    assert!(greeted(&greet(&named.url, PUBLIC, None).await));
    assert_eq!(greet(&named.url, "evil.example.org", None).await.status, 403);
}

#[tokio::test]
async fn a_bad_allow_list_entry_stops_the_server_before_it_listens() {
    for (flag, value) in [("--allowed-hosts", "https://mcp.example.com"), ("--allowed-origins", "app.example.com")] {
        let out = Command::new(example("quickstart"))
            .args(["--http", "127.0.0.1:0", flag, value])
            .stdin(Stdio::null())
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(value) && stderr.contains("write"), "names the entry and the right form: {stderr}");
        assert!(!stderr.contains("listening on"), "{stderr}");
    }
}
