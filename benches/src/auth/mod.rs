//! Authorization rows (`--only auth`, run only when named): what validating an OAuth bearer
//! token costs per request, as ratios measured in one run (issue #29). The same `ours-http`
//! role three times per cell: without authorization, and twice with the runtime's
//! `--auth-issuer URL --auth-resource URL` (a `JwksVerifier` behind `BearerAuth`), loaded by
//! wrk with an RS256 and an ES256 access token. The servers take turns as in the comparison
//! rows (`turns`).
//!
//! The issuer is the harness's own ([`issuer`]), and it counts what it is asked: each
//! protected instance must fetch the metadata and the key set exactly once for the whole run
//! (the first token it sees), so validation on the hot path neither fetches nor waits for a
//! fetch. More is a failure of the run, printed in the table and returned after it.

mod issuer;

pub use issuer::standalone as issuer_standalone;

use crate::load_http::{self, Client, Wire};
use crate::table::{Columns, Table};
use crate::turns::{self, Served};
use crate::{Plan, Res, load_wrk, proc};
use issuer::{Alg, Issuer};

/// Columns of the auth rows; the ratios compare each protected server with the unprotected one.
const COLUMNS: Columns = Columns { names: ["UNPROTECTED", "RS256", "ES256"], ratios: [(1, 0), (2, 0)] };

/// The protected servers' canonical resource URI (`--auth-resource`): the audience the tokens
/// carry. Nothing connects to it, so it is a name under the reserved `.invalid` domain.
const RESOURCE: &str = "https://mcp.bench.invalid/mcp";

/// What the auth rows leave besides their table lines.
pub struct AuthOutcome {
    /// Why the measurement cannot count (the rules of the comparison rows); empty when valid.
    pub invalid: Vec<String>,
    /// Set when a protected server fetched from the issuer more than once: validation then
    /// is not free of I/O, whatever the figures say.
    pub failure: Option<String>,
}

/// The auth rows, stateless and legacy session, at 1 and 32 connections.
pub async fn rows(plan: &Plan, table: &mut Table) -> Res<AuthOutcome> {
    table.section(COLUMNS);
    let issuer = Issuer::start()?;
    eprintln!("auth: issuer at {}", issuer.url);
    let tokens = [None, Some(issuer.token(Alg::Rs256, RESOURCE)?), Some(issuer.token(Alg::Es256, RESOURCE)?)];
    let auth_flags = ["--auth-issuer", issuer.url.as_str(), "--auth-resource", RESOURCE];
    let mut protected_instances = 0;
    let mut invalid = Vec::new();
    for (wire, wire_name) in [(Wire::Modern, "stateless"), (Wire::Legacy, "legacy session")] {
        for conc in [1, 32] {
            let name = format!("auth http {wire_name} c{conc}");
            let mut servers = Vec::new();
            for (column, token) in COLUMNS.names.iter().zip(&tokens) {
                eprintln!("{name}: starting {column}");
                let token = token.as_deref();
                let flags: &[&str] = if token.is_some() { &auth_flags } else { &[] };
                let server = proc::spawn_http_with("ours-http", flags, &[])?;
                let url = server.url.clone().ok_or("no URL")?;
                if let Some(token) = token {
                    protected_instances += 1;
                    guarded(&url, token).await.map_err(|e| format!("{name} {column}: {e}"))?;
                }
                let args =
                    load_wrk::script_args(&url, wire, conc, token).await.map_err(|e| format!("{column}: {e}"))?;
                let label = format!("ours-http-{}", column.to_lowercase());
                servers.push(Served::warmed(&label, server, args, conc, plan)?);
            }
            let cell = turns::take_turns(plan, &name, conc, servers, 0, "the unprotected server")?;
            invalid.extend(cell.invalid(COLUMNS));
            cell.push_into(table, COLUMNS);
        }
    }
    load_wrk::remove_script();
    let counts = issuer.counts();
    let seen = format!(
        "auth: the issuer answered {} metadata, {} key set and {} other requests over the whole run, for {} \
         protected server instances",
        counts.metadata, counts.jwks, counts.other, protected_instances
    );
    eprintln!("{seen}");
    table.note(seen);
    // Each instance starts without keys and must fetch them once to accept any token, so
    // anything but exactly one of each per instance means a fetch that was not the first.
    let expected = protected_instances;
    let failure = (counts.metadata != expected || counts.jwks != expected || counts.other != 0).then(|| {
        let why = if counts.metadata > expected || counts.jwks > expected || counts.other > 0 {
            "token validation fetched after a server's first token, on the hot path"
        } else {
            "a protected server accepted tokens without fetching its issuer's keys"
        };
        format!(
            "auth: expected exactly {expected} metadata and {expected} key set requests (one each per \
             protected instance) and nothing else: {why}"
        )
    });
    if let Some(why) = &failure {
        table.note(format!("FAILED: {why}"));
    }
    for why in &invalid {
        table.note(format!("INVALID: {why}"));
    }
    Ok(AuthOutcome { invalid, failure })
}

/// Shows that the server at `url` requires a valid token before it is measured: a call
/// without one and a call whose token's signature was altered are both refused with 401, and
/// the call with `token` is answered.
async fn guarded(url: &str, token: &str) -> Res<()> {
    let (body, headers, _) = load_http::call_request(Wire::Modern, 0);
    for (what, client) in [
        ("without a token", Client::connect(url).await?),
        ("with a forged signature", Client::connect(url).await?.bearer(&forged(token))),
    ] {
        let mut client = client;
        let (status, _, reply) = client.send(body.clone(), headers).await?;
        if status != hyper::StatusCode::UNAUTHORIZED {
            return Err(
                format!("a call {what} was answered {status}, not 401: {}", String::from_utf8_lossy(&reply)).into()
            );
        }
    }
    Client::connect(url).await?.bearer(token).call(Wire::Modern, 1).await
}

/// `token` with one character in the middle of its signature changed.
fn forged(token: &str) -> String {
    let mut chars: Vec<char> = token.chars().collect();
    let signature = token.rfind('.').map_or(0, |dot| dot + 1);
    let middle = signature + (chars.len() - signature) / 2;
    if let Some(c) = chars.get_mut(middle) {
        *c = if *c == 'A' { 'B' } else { 'A' };
    }
    chars.into_iter().collect()
}
