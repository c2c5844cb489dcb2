//! An instance started before its database (a fresh deployment, a failover under way) waits
//! for PostgreSQL and comes up once it answers, instead of exiting (a crash loop under an
//! orchestrator); one whose database never comes gives up after `--task-store-wait`.

use crate::common::*;
use serde_json::json;
use std::time::Duration;
use switchyard_client::{ClientBuilder, ToolCall};

const HOW: &str = "needs PostgreSQL: SWITCHYARD_TEST_PG=postgres://postgres@127.0.0.1:5432/test \
                   cargo test -p switchyard-tests --test it store_startup::";

/// A free loopback port, nobody listening on it yet.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("a port")
}

/// Relays connections on `port` to `to`, from when it is called.
async fn relay(port: u16, to: String) {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.expect("the reserved port");
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let to = to.clone();
            tokio::spawn(async move {
                if let Ok(mut server) = tokio::net::TcpStream::connect(&to).await {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                }
            });
        }
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(not(svc_pg), ignore = "needs PostgreSQL: set SWITCHYARD_TEST_PG=postgres://postgres@127.0.0.1:5432/test")]
async fn an_instance_started_before_its_database_waits_for_it() {
    let Some(pg) = std::env::var("SWITCHYARD_TEST_PG").ok().filter(|u| !u.is_empty()) else {
        skip(
            "store_startup::an_instance_started_before_its_database_waits_for_it",
            "SWITCHYARD_TEST_PG is not set",
            HOW,
        );
        return;
    };
    let url: url_parts::Parts = url_parts::parse(&pg);
    // The database "comes up" 2 s after the instance starts: a relay opens on its port then.
    let port = free_port();
    let late = format!("postgres://{}127.0.0.1:{port}/{}", url.userinfo, url.dbname);
    let target = format!("{}:{}", url.host, url.port);
    let opening = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(2)).await;
        relay(port, target).await;
    });
    let args = ["--tasks".to_owned(), "--task-store".to_owned(), format!("postgres:{late}")];
    let server = tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        HttpServer::start_with("fixture", &args)
    })
    .await
    .expect("the instance came up once the database did");
    opening.await.expect("the relay opened");
    let client = ClientBuilder::new("switchyard-tests", "1.0.0")
        .protocol_versions([MODERN])
        .connect_http(&server.url)
        .await
        .expect("connects");
    let call = client.call_tool_as_task("slow", json!({ "seconds": 0 })).await.expect("tools/call");
    assert!(matches!(call, ToolCall::Task(_)), "a task stored in PostgreSQL: {call:?}");
    client.close().await;
}

#[test]
fn an_instance_whose_database_never_comes_gives_up_after_the_wait() {
    let port = free_port();
    let out = std::process::Command::new(example("fixture"))
        .args(["--http", "127.0.0.1:0", "--tasks", "--task-store-wait", "1", "--task-store"])
        .arg(format!("postgres:postgres://postgres:secret@127.0.0.1:{port}/test"))
        .stdin(std::process::Stdio::null())
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("retrying"), "each attempt is logged: {stderr}");
    assert!(stderr.contains("gave up after"), "says it retried: {stderr}");
    assert!(!stderr.contains("secret"), "no password in the messages: {stderr}");
    assert!(!stderr.contains("listening on"), "{stderr}");
}

/// The parts of a `postgres://` URL this test rebuilds it from.
mod url_parts {
    pub struct Parts {
        /// `user[:password]@`, or empty.
        pub userinfo: String,
        pub host: String,
        pub port: u16,
        pub dbname: String,
    }

    pub fn parse(url: &str) -> Parts {
        let u = reqwest::Url::parse(url).expect("SWITCHYARD_TEST_PG is a URL");
        let userinfo = match (u.username(), u.password()) {
            ("", _) => String::new(),
            (user, None) => format!("{user}@"),
            (user, Some(p)) => format!("{user}:{p}@"),
        };
        Parts {
            userinfo,
            host: u.host_str().unwrap_or("127.0.0.1").to_owned(),
            port: u.port().unwrap_or(5432),
            dbname: u.path().trim_start_matches('/').to_owned(),
        }
    }
}
