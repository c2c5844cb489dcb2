//! The protocol a connection speaks, agreed once when it opens: MCP 2026-07-28 when the server
//! answers `server/discover` with it, else the newest session revision `initialize` gets.
//! See [versioning](https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning)
//! and [lifecycle](https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle).

use crate::error::ClientError;
use crate::model::Implementation;
use crate::peer::Peer;
use serde_json::{Map, Value, json};
use std::time::Duration;
use switchyard::ErrorCode;
use switchyard::protocol::{
    LEGACY_VERSIONS, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION, META_SERVER_INFO,
    MODERN_VERSION,
};

/// What was agreed with the server.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    /// The protocol revision, e.g. `2026-07-28` or `2025-11-25`.
    pub(crate) version: String,
    /// Whether requests carry the 2026-07-28 `_meta` (stateless) rather than riding a session.
    pub(crate) modern: bool,
    pub(crate) server_info: Option<Implementation>,
    pub(crate) capabilities: Value,
    pub(crate) instructions: Option<String>,
    /// `{name, version}` of this client.
    pub(crate) client_info: Value,
    /// The `ClientCapabilities` this client declares (its input handlers).
    pub(crate) client_capabilities: Value,
}

impl Session {
    /// `params` as they go out. On 2026-07-28 (where every request has params) the `_meta`
    /// keys are added: the protocol version and client info replace the caller's, the rest of
    /// the caller's `_meta` stays.
    ///
    /// Errors: [`ClientError::Encode`] for params that are neither an object nor `null`, or a
    /// `_meta` that is no object.
    pub(crate) fn stamp(&self, params: Value) -> Result<Value, ClientError> {
        self.stamp_declaring(params, None)
    }

    /// [`stamp`](Self::stamp), declaring `capabilities` (when given, on 2026-07-28) in place of
    /// the client's own and of any the params carry: those of one request's input handler.
    pub(crate) fn stamp_declaring(&self, params: Value, capabilities: Option<Value>) -> Result<Value, ClientError> {
        let mut object = match params {
            Value::Object(object) => object,
            Value::Null => Map::new(),
            other => return Err(ClientError::Encode(format!("params must be a JSON object, not {other}"))),
        };
        if let Some(meta) = object.get("_meta").filter(|m| !m.is_object()) {
            return Err(ClientError::Encode(format!("params._meta must be a JSON object, not {meta}")));
        }
        if !self.modern {
            return Ok(if object.is_empty() { Value::Null } else { Value::Object(object) });
        }
        let meta = object.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
        if let Some(meta) = meta.as_object_mut() {
            // Inserted first, so the client's own are not copied only to be replaced.
            if let Some(capabilities) = capabilities {
                meta.insert(META_CLIENT_CAPABILITIES.to_owned(), capabilities);
            }
            modern_meta(meta, &self.client_info, &self.client_capabilities);
        }
        Ok(Value::Object(object))
    }
}

fn modern_meta(meta: &mut Map<String, Value>, client_info: &Value, capabilities: &Value) {
    meta.insert(META_PROTOCOL_VERSION.to_owned(), Value::from(MODERN_VERSION));
    // What the input handlers can answer; a caller's own declaration for one request stays.
    meta.entry(META_CLIENT_CAPABILITIES.to_owned()).or_insert_with(|| capabilities.clone());
    meta.insert(META_CLIENT_INFO.to_owned(), client_info.clone());
}

/// Which revisions the client offers, newest first.
pub(crate) struct Offer<'a> {
    pub(crate) versions: &'a [String],
    pub(crate) client_info: Value,
    pub(crate) capabilities: Value,
    pub(crate) probe_timeout: Duration,
    pub(crate) timeout: Duration,
}

/// Agrees on a revision with the server behind `peer`.
///
/// Errors: [`ClientError::Protocol`] when the server accepts none of the offered revisions or
/// answers the handshake with something that is not its result; transport errors as they come.
pub(crate) async fn negotiate(peer: &Peer, offer: Offer<'_>) -> Result<Session, ClientError> {
    let mut probe_timed_out = false;
    if offer.versions.iter().any(|v| v == MODERN_VERSION) {
        let mut meta = Map::new();
        modern_meta(&mut meta, &offer.client_info, &offer.capabilities);
        let params = json!({ "_meta": meta });
        let discover = |params| async { value(peer.request("server/discover", params, offer.probe_timeout).await) };
        let mut probe = discover(params.clone()).await;
        // A server (or a proxy in front of it) that refuses the version yet lists it among
        // those it supports gets one more try; a list without it falls through to initialize.
        if let Err(ClientError::Rpc { error, .. }) = &probe
            && error.code() == ErrorCode::UNSUPPORTED_VERSION
            && error.data().and_then(|d| d.get("supported")).is_some_and(|s| lists_modern(Some(s)))
        {
            probe = discover(params).await;
        }
        match probe {
            Ok(result) if speaks_modern(&result) => {
                return Ok(modern_session(result, offer.client_info, offer.capabilities));
            }
            Ok(_) => {
                tracing::debug!(target: "switchyard_client", "server/discover lists no 2026-07-28; trying initialize")
            }
            // A session-era server does not know the method, refuses a request before
            // `initialize` (over HTTP: a 4xx without a modern error), or never answers it: each
            // means "use initialize".
            Err(ClientError::Rpc { .. }) => {}
            Err(ClientError::Timeout { .. }) => probe_timed_out = true,
            Err(ClientError::Http { status: 400..=499, .. }) => {}
            Err(other) => return Err(other),
        }
    }
    let Some(requested) = offer.versions.iter().find(|v| LEGACY_VERSIONS.contains(&v.as_str())) else {
        return Err(ClientError::Protocol(format!(
            "the server does not speak {MODERN_VERSION}, and no session revision was offered"
        )));
    };
    let params = json!({
        "protocolVersion": requested,
        "capabilities": offer.capabilities,
        "clientInfo": offer.client_info,
    });
    let result = value(peer.request("initialize", params, offer.timeout).await)?;
    let version = result.get("protocolVersion").and_then(Value::as_str).unwrap_or_default().to_owned();
    // The probe went unanswered (a slow start), yet the server says it speaks 2026-07-28: ask
    // again, with the handshake's whole timeout.
    if probe_timed_out && version == MODERN_VERSION {
        let mut meta = Map::new();
        modern_meta(&mut meta, &offer.client_info, &offer.capabilities);
        let discovered = value(peer.request("server/discover", json!({ "_meta": meta }), offer.timeout).await)?;
        if speaks_modern(&discovered) {
            return Ok(modern_session(discovered, offer.client_info, offer.capabilities));
        }
    }
    // Offered, and a session revision this crate speaks (2026-07-28 is never agreed through
    // `initialize`).
    if !offer.versions.contains(&version) || !LEGACY_VERSIONS.contains(&version.as_str()) {
        return Err(ClientError::Protocol(format!(
            "initialize: the server chose protocol version {version:?}, which this client did not offer ({})",
            offer.versions.join(", ")
        )));
    }
    peer.notify("notifications/initialized", json!({}), offer.timeout).await?;
    Ok(Session {
        version,
        modern: false,
        server_info: result.get("serverInfo").and_then(|v| serde_json::from_value(v.clone()).ok()),
        capabilities: result.get("capabilities").cloned().unwrap_or_else(|| json!({})),
        instructions: result.get("instructions").and_then(Value::as_str).map(str::to_owned),
        client_info: offer.client_info,
        client_capabilities: offer.capabilities,
    })
}

/// A handshake's result as a [`Value`]: read once per connection, field by field.
fn value(result: Result<Box<serde_json::value::RawValue>, ClientError>) -> Result<Value, ClientError> {
    result.and_then(|text| crate::decode::value_of("the handshake", &text))
}

fn speaks_modern(discovered: &Value) -> bool {
    lists_modern(discovered.get("supportedVersions"))
}

fn lists_modern(versions: Option<&Value>) -> bool {
    versions.and_then(Value::as_array).is_some_and(|versions| versions.iter().any(|v| v == MODERN_VERSION))
}

fn modern_session(discovered: Value, client_info: Value, client_capabilities: Value) -> Session {
    let server_info = discovered
        .get("_meta")
        .and_then(|meta| meta.get(META_SERVER_INFO))
        .and_then(|v| serde_json::from_value(v.clone()).ok());
    Session {
        version: MODERN_VERSION.to_owned(),
        modern: true,
        server_info,
        capabilities: discovered.get("capabilities").cloned().unwrap_or_else(|| json!({})),
        instructions: discovered.get("instructions").and_then(Value::as_str).map(str::to_owned),
        client_info,
        client_capabilities,
    }
}
