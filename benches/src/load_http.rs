//! The bench's own HTTP client: the legacy handshakes of the HTTP rows (whose load is wrk's,
//! `load_wrk`), the listen streams of the fan-out rows, and the load of the scale-out rows:
//! `concurrency` clients, each on its own keep-alive HTTP/1.1 connection, calling `echo` back
//! to back for a fixed time; every answer is checked. One hyper client task per connection on
//! one core tops out near 50k requests/s, which is why the comparison rows use wrk.

use crate::Res;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde_json::json;
use std::time::{Duration, Instant};

/// Which wire the clients speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// 2026-07-28: stateless, `_meta` in every request, standard headers.
    Modern,
    /// 2025-11-25: `initialize` once per client, then calls on its `Mcp-Session-Id`.
    Legacy,
}

/// What one HTTP run measured.
pub struct HttpRun {
    /// Answers per second in the measured window.
    pub rps: f64,
    /// Median latency, microseconds.
    pub p50_us: f64,
    /// 99th percentile latency, microseconds.
    pub p99_us: f64,
    /// Answers counted in the window (for CPU per request).
    pub count: usize,
}

/// `host:port` and path of `http://HOST:PORT/PATH`.
pub fn split_url(url: &str) -> Res<(String, String)> {
    let rest = url.strip_prefix("http://").ok_or("URL must start with http://")?;
    let (authority, path) = rest.split_once('/').ok_or("URL without a path")?;
    Ok((authority.to_owned(), format!("/{path}")))
}

/// One client on its own keep-alive HTTP/1.1 connection.
pub struct Client {
    sender: SendRequest<Full<Bytes>>,
    authority: String,
    path: String,
    session: Option<String>,
    /// `Authorization` of every request (`Bearer TOKEN`), for a server that requires tokens.
    authorization: Option<String>,
}

impl Client {
    /// Connects to `url` (`http://HOST:PORT/PATH`).
    pub async fn connect(url: &str) -> Res<Client> {
        let (authority, path) = split_url(url)?;
        let stream = tokio::net::TcpStream::connect(&authority).await?;
        stream.set_nodelay(true)?;
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(conn);
        Ok(Client { sender, authority, path, session: None, authorization: None })
    }

    /// Sends `token` as `Authorization: Bearer TOKEN` with every request from now on.
    pub fn bearer(mut self, token: &str) -> Client {
        self.authorization = Some(format!("Bearer {token}"));
        self
    }

    /// POSTs `body` with `headers`; the answer's headers and body, or an error for a status
    /// other than 2xx.
    pub async fn post(&mut self, body: String, headers: &[(&str, &str)]) -> Res<(hyper::http::HeaderMap, Bytes)> {
        let (status, headers, bytes) = self.send(body, headers).await?;
        if !status.is_success() {
            return Err(format!("HTTP {status}: {}", String::from_utf8_lossy(&bytes)).into());
        }
        Ok((headers, bytes))
    }

    /// POSTs `body` with `headers`; the answer's status, headers and body, whatever the status.
    pub async fn send(
        &mut self,
        body: String,
        headers: &[(&str, &str)],
    ) -> Res<(hyper::StatusCode, hyper::http::HeaderMap, Bytes)> {
        let mut req = hyper::Request::post(&self.path)
            .header("host", &self.authority)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        if let Some(a) = &self.authorization {
            req = req.header("authorization", a);
        }
        self.sender.ready().await?;
        let resp = self.sender.send_request(req.body(Full::new(Bytes::from(body)))?).await?;
        let (parts, body) = resp.into_parts();
        Ok((parts.status, parts.headers, body.collect().await?.to_bytes()))
    }

    /// The legacy handshake: `initialize`, keep the session id, `notifications/initialized`;
    /// returns the session id (empty when the server sent none).
    pub async fn initialize(&mut self) -> Res<String> {
        let (headers, body) = self.post(crate::load_stdio::INITIALIZE.to_owned(), &[]).await?;
        if !contains(&body, b"\"result\"") {
            return Err(format!("initialize failed: {}", String::from_utf8_lossy(&body)).into());
        }
        self.session = headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
        let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned();
        self.post(note, &[("mcp-protocol-version", "2025-11-25")]).await?;
        Ok(self.session.clone().unwrap_or_default())
    }

    /// Calls `echo` with a text of its own and checks the answer holds it.
    pub async fn call(&mut self, wire: Wire, i: u64) -> Res<()> {
        let (body, headers, text) = call_request(wire, i);
        let (_, reply) = self.post(body, headers).await?;
        if !(contains(&reply, b"\"result\"") && contains(&reply, text.as_bytes())) {
            return Err(format!("wrong answer: {}", String::from_utf8_lossy(&reply)).into());
        }
        Ok(())
    }
}

/// The body and headers of a `tools/call` of `echo` on `wire` with request id `i`, and the
/// text the answer must echo.
pub fn call_request(wire: Wire, i: u64) -> (String, &'static [(&'static str, &'static str)], String) {
    let text = format!("hello {i}");
    let (body, headers): (String, &[(&str, &str)]) = match wire {
        Wire::Modern => (
            json!({ "jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
                "name": "echo", "arguments": { "text": text },
                "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                           "io.modelcontextprotocol/clientCapabilities": {},
                           "io.modelcontextprotocol/clientInfo": { "name": "bench", "version": "0" } } } })
            .to_string(),
            &[("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call"), ("mcp-name", "echo")],
        ),
        Wire::Legacy => (
            json!({ "jsonrpc": "2.0", "id": i, "method": "tools/call",
                    "params": { "name": "echo", "arguments": { "text": text } } })
            .to_string(),
            &[("mcp-protocol-version", "2025-11-25")],
        ),
    };
    (body, headers, text)
}

pub fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Runs `concurrency` clients against `url` for `warmup + measure`, counting answers that
/// started inside the measured window. `on_measure_start` runs when the window opens (the
/// caller snapshots server CPU there).
pub async fn run(
    url: &str,
    wire: Wire,
    concurrency: usize,
    warmup: Duration,
    measure: Duration,
    on_measure_start: impl FnOnce(),
) -> Res<HttpRun> {
    let mut clients = Vec::with_capacity(concurrency);
    for _ in 0..concurrency {
        let mut c = Client::connect(url).await?;
        if wire == Wire::Legacy {
            c.initialize().await?;
        }
        clients.push(c);
    }
    let start = Instant::now();
    let window_start = start + warmup;
    let end = window_start + measure;
    let mut tasks = tokio::task::JoinSet::new();
    for (k, mut c) in clients.into_iter().enumerate() {
        tasks.spawn(async move {
            let mut lat = Vec::new();
            let mut i = (k as u64) << 32;
            loop {
                let t = Instant::now();
                if t >= end {
                    break;
                }
                c.call(wire, i).await?;
                i += 1;
                if t >= window_start {
                    lat.push(t.elapsed().as_nanos() as u64);
                }
            }
            Res::Ok(lat)
        });
    }
    tokio::time::sleep_until(window_start.into()).await;
    on_measure_start();
    let mut all = Vec::new();
    while let Some(r) = tasks.join_next().await {
        all.extend(r??);
    }
    all.sort_unstable();
    let pct = |p: f64| -> f64 {
        if all.is_empty() {
            return f64::NAN;
        }
        let i = ((all.len() as f64 * p).ceil() as usize).clamp(1, all.len()) - 1;
        all[i] as f64 / 1000.0
    };
    Ok(HttpRun {
        rps: all.len() as f64 / measure.as_secs_f64(),
        p50_us: pct(0.50),
        p99_us: pct(0.99),
        count: all.len(),
    })
}

/// Opens one `subscriptions/listen` stream for `notifications/tools/list_changed` and returns
/// once the subscription is acknowledged, with the rest of the stream.
pub async fn listen(url: &str) -> Res<hyper::body::Incoming> {
    let mut c = Client::connect(url).await?;
    let req = listen_request(&c.path, &c.authority)?;
    c.sender.ready().await?;
    acknowledged(c.sender.send_request(req).await?).await
}

/// The `subscriptions/listen` request (tools list changes) for `uri`, with `host` as its Host
/// header (HTTP/1.1) or `None` (HTTP/2 takes the authority from `uri`).
pub fn listen_request(uri: &str, host: &str) -> Res<hyper::Request<Full<Bytes>>> {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {
        "notifications": { "toolsListChanged": true },
        "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                   "io.modelcontextprotocol/clientCapabilities": {} } } })
    .to_string();
    let mut req = hyper::Request::post(uri);
    if !host.is_empty() {
        req = req.header("host", host);
    }
    Ok(req
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen")
        .body(Full::new(Bytes::from(body)))?)
}

/// Reads a listen response up to its acknowledgement; returns the rest of the stream.
pub async fn acknowledged(resp: hyper::Response<hyper::body::Incoming>) -> Res<hyper::body::Incoming> {
    if !resp.status().is_success() {
        return Err(format!("listen: HTTP {}", resp.status()).into());
    }
    let mut body = resp.into_body();
    let mut seen = Vec::new();
    while !contains(&seen, b"notifications/subscriptions/acknowledged") {
        let frame = body.frame().await.ok_or("listen stream ended before its acknowledgement")??;
        if let Ok(data) = frame.into_data() {
            seen.extend_from_slice(&data);
        }
    }
    Ok(body)
}

/// Waits on an acknowledged listen stream for `notifications/tools/list_changed`.
pub async fn await_list_changed(mut body: hyper::body::Incoming) -> Res<hyper::body::Incoming> {
    let mut seen = Vec::new();
    while !contains(&seen, b"notifications/tools/list_changed") {
        let frame = body.frame().await.ok_or("listen stream ended before the event")??;
        if let Ok(data) = frame.into_data() {
            seen.extend_from_slice(&data);
        }
    }
    Ok(body)
}
