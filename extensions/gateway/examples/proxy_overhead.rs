//! What the gateway hop costs: `tools/call` of an `echo` tool straight to a server, and the same
//! tool through a gateway in front of it, both over stdio, with our client.
//!
//! ```text
//! cargo run --release -p switchyard-mcp-gateway --example proxy_overhead -- [CALLS] [IN_FLIGHT]
//! ```
//!
//! Prints calls per second of each path and their ratio (defaults: 20,000 calls, 1 and 32 in
//! flight). The same binary is the upstream (`serve-echo`) and the gateway (`serve-gateway`).

use futures::StreamExt;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use switchyard::server::DynamicTool;
use switchyard::{Server, ToolError};
use switchyard_client::{Client, ClientBuilder};
use switchyard_gateway::{Gateway, Upstream};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn echo_server() -> Res<Server> {
    let echo = DynamicTool::new("echo", |_ctx, args: Value| async move {
        Ok::<_, ToolError>(args["text"].as_str().unwrap_or_default().to_owned())
    })
    .input_schema(json!({ "type": "object", "properties": { "text": { "type": "string" } }, "required": ["text"] }));
    Ok(Server::builder("echo", "1.0.0").tool(echo).build()?)
}

async fn serve(server: Server) -> Res<()> {
    switchyard::transport::stdio::serve(server).await?;
    Ok(())
}

async fn connect(role: &str) -> Res<Client> {
    let mut command = tokio::process::Command::new(std::env::current_exe()?);
    command.arg(role);
    Ok(ClientBuilder::new("proxy-overhead", "1.0.0").connect_stdio(command).await?)
}

/// Calls `tool` `calls` times, at most `in_flight` at once; returns calls per second.
async fn measure(client: &Client, tool: &str, calls: usize, in_flight: usize) -> Res<f64> {
    let one = |i: usize| {
        let client = client.clone();
        async move {
            let text = format!("hello {i}");
            let result = client.call_tool(tool, json!({ "text": text })).await?;
            let echoed = result.content.first().and_then(|c| c.as_text()).unwrap_or_default().to_owned();
            if echoed != text {
                return Err(format!("{tool} answered {echoed:?}, not {text:?}").into());
            }
            Ok::<_, Box<dyn std::error::Error>>(())
        }
    };
    // Warm-up: connections, caches, the first listing.
    for i in 0..100 {
        one(i).await?;
    }
    let started = Instant::now();
    let mut answers = futures::stream::iter(0..calls).map(one).buffer_unordered(in_flight);
    while let Some(answer) = answers.next().await {
        answer?;
    }
    Ok(calls as f64 / started.elapsed().as_secs_f64())
}

#[tokio::main]
async fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("serve-echo") => return serve(echo_server()?).await,
        Some("serve-gateway") => {
            let server = Server::builder("gateway", "1.0.0").build()?;
            let upstream = Upstream::stdio("echo", std::env::current_exe()?, ["serve-echo"])
                .prefix("up_")
                .call_timeout(Duration::from_secs(30));
            let _gateway = Gateway::new().upstream(upstream).attach(&server).await?;
            return serve(server).await;
        }
        _ => {}
    }
    let calls: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let in_flights: Vec<usize> = match args.get(1).and_then(|a| a.parse().ok()) {
        Some(c) => vec![c],
        None => vec![1, 32],
    };
    let direct = connect("serve-echo").await?;
    let gateway = connect("serve-gateway").await?;
    println!("row\tdirect calls/s\tgateway calls/s\tdirect/gateway");
    for in_flight in in_flights {
        let d = measure(&direct, "echo", calls, in_flight).await?;
        let g = measure(&gateway, "up_echo", calls, in_flight).await?;
        println!("stdio {calls} tools/call, {in_flight} in flight\t{d:.0}\t{g:.0}\t{:.2}", d / g);
    }
    direct.close().await;
    gateway.close().await;
    Ok(())
}
