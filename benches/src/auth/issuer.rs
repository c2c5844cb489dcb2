//! The authorization server of the auth rows: RFC 8414 metadata and a JWK set holding one RSA
//! key (RS256) and one EC P-256 key (ES256), each with its `kid`, served on loopback by the
//! harness, counting every request it answers; and access tokens signed with those keys.
//!
//! The keys are the runtime's fixed test keys (`runtime/tests/it/keys/`), not generated: the
//! workspace has no key-generation crate, and fixed 2048-bit RSA and P-256 keys make every run
//! verify the same signatures.

use crate::Res;
use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

const RSA_PEM: &[u8] = include_bytes!("../../../runtime/tests/it/keys/rsa-a.pem");
const EC_PEM: &[u8] = include_bytes!("../../../runtime/tests/it/keys/ec-a.pem");

/// How long the tokens live: far beyond any run, so none expires in the middle of one.
const TOKEN_LIFETIME_SECS: u64 = 365 * 24 * 3600;

/// A signing algorithm of the rows, with its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alg {
    Rs256,
    Es256,
}

impl Alg {
    fn algorithm(self) -> Algorithm {
        match self {
            Alg::Rs256 => Algorithm::RS256,
            Alg::Es256 => Algorithm::ES256,
        }
    }

    fn kid(self) -> &'static str {
        match self {
            Alg::Rs256 => "bench-rs256",
            Alg::Es256 => "bench-es256",
        }
    }

    fn key(self) -> Res<EncodingKey> {
        Ok(match self {
            Alg::Rs256 => EncodingKey::from_rsa_pem(RSA_PEM)?,
            Alg::Es256 => EncodingKey::from_ec_pem(EC_PEM)?,
        })
    }

    /// The lower-case name (`rs256`, `es256`).
    pub fn name(self) -> &'static str {
        match self {
            Alg::Rs256 => "rs256",
            Alg::Es256 => "es256",
        }
    }
}

/// Requests the issuer answered, by what they asked for.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// `GET /.well-known/oauth-authorization-server`.
    pub metadata: usize,
    /// `GET /jwks`.
    pub jwks: usize,
    /// Anything else (answered 404): e.g. OpenID discovery, which the verifier tries only when
    /// the RFC 8414 metadata fails.
    pub other: usize,
}

#[derive(Default)]
struct Counters {
    metadata: AtomicUsize,
    jwks: AtomicUsize,
    other: AtomicUsize,
}

struct Documents {
    metadata: String,
    jwks: String,
    counters: Counters,
}

/// The running issuer; stopped when dropped.
pub struct Issuer {
    /// Its issuer identifier, `http://127.0.0.1:PORT` (the tokens' `iss`).
    pub url: String,
    documents: Arc<Documents>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Issuer {
    /// Starts serving on a free loopback port, on a thread and runtime of its own: the
    /// harness's runtime is blocked while wrk runs, and a server fetches the keys when the
    /// first token reaches it, which is during a wrk run.
    pub fn start() -> Res<Issuer> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let url = format!("http://{}", listener.local_addr()?);
        let mut keys = Vec::new();
        for alg in [Alg::Rs256, Alg::Es256] {
            let mut jwk = Jwk::from_encoding_key(&alg.key()?, alg.algorithm())?;
            jwk.common.key_id = Some(alg.kid().to_owned());
            keys.push(jwk);
        }
        let documents = Arc::new(Documents {
            metadata: json!({
                "issuer": url,
                "jwks_uri": format!("{url}/jwks"),
                "response_types_supported": ["code"],
            })
            .to_string(),
            jwks: serde_json::to_string(&JwkSet { keys })?,
            counters: Counters::default(),
        });
        let app = Router::new()
            .route("/.well-known/oauth-authorization-server", get(metadata))
            .route("/jwks", get(jwks))
            .fallback(other)
            .with_state(documents.clone());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new().name("bench-issuer".to_owned()).spawn(move || {
            let served = tokio::runtime::Builder::new_current_thread().enable_all().build().and_then(|rt| {
                rt.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener)?;
                    // Not a graceful shutdown: the servers' key-fetching clients may keep idle
                    // connections open, and the rows are over when this stops.
                    tokio::select! {
                        served = axum::serve(listener, app).into_future() => served,
                        _ = stopped => Ok(()),
                    }
                })
            });
            if let Err(e) = served {
                eprintln!("error: the bench's issuer stopped: {e}");
            }
        })?;
        Ok(Issuer { url, documents, stop: Some(stop), thread: Some(thread) })
    }

    /// The requests answered so far.
    pub fn counts(&self) -> Counts {
        let c = &self.documents.counters;
        Counts {
            metadata: c.metadata.load(Ordering::SeqCst),
            jwks: c.jwks.load(Ordering::SeqCst),
            other: c.other.load(Ordering::SeqCst),
        }
    }

    /// An access token (RFC 9068 claims) for `resource`, signed with `alg`'s key under its
    /// `kid`, valid for a year.
    pub fn token(&self, alg: Alg, resource: &str) -> Res<String> {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_secs();
        let claims = json!({
            "iss": self.url,
            "aud": resource,
            "sub": "bench-client",
            "iat": now,
            "exp": now + TOKEN_LIFETIME_SECS,
            "scope": "mcp",
        });
        let mut header = Header::new(alg.algorithm());
        header.kid = Some(alg.kid().to_owned());
        Ok(jsonwebtoken::encode(&header, &claims, &alg.key()?)?)
    }
}

impl Drop for Issuer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn json_reply(body: &str) -> Response {
    ([(axum::http::header::CONTENT_TYPE, "application/json")], body.to_owned()).into_response()
}

async fn metadata(State(d): State<Arc<Documents>>) -> Response {
    d.counters.metadata.fetch_add(1, Ordering::SeqCst);
    json_reply(&d.metadata)
}

async fn jwks(State(d): State<Arc<Documents>>) -> Response {
    d.counters.jwks.fetch_add(1, Ordering::SeqCst);
    json_reply(&d.jwks)
}

async fn other(State(d): State<Arc<Documents>>) -> Response {
    d.counters.other.fetch_add(1, Ordering::SeqCst);
    axum::http::StatusCode::NOT_FOUND.into_response()
}

/// `bench issuer RESOURCE`: the issuer alone, for `benches/callgrind-http.sh`. Prints
/// `issuer URL` and `token ALG TOKEN` (rs256, es256; tokens for `RESOURCE`) on stdout, serves
/// until stdin ends, then prints `requests metadata=N jwks=N other=N`.
pub fn standalone(args: &[String]) -> Res<()> {
    use std::io::{Read, Write};
    let resource = args.first().ok_or("issuer needs the resource URL the tokens are for")?;
    let issuer = Issuer::start()?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "issuer {}", issuer.url)?;
    for alg in [Alg::Rs256, Alg::Es256] {
        writeln!(out, "token {} {}", alg.name(), issuer.token(alg, resource)?)?;
    }
    out.flush()?;
    std::io::stdin().read_to_end(&mut Vec::new())?;
    let c = issuer.counts();
    writeln!(out, "requests metadata={} jwks={} other={}", c.metadata, c.jwks, c.other)?;
    Ok(())
}
