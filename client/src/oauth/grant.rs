//! Token requests for the grants the `oauth2` crate does not model, where an assertion stands
//! in for the user: the JWT bearer grant
//! ([RFC 7523 §2.1](https://www.rfc-editor.org/rfc/rfc7523#section-2.1)) and token exchange
//! ([RFC 8693](https://www.rfc-editor.org/rfc/rfc8693)). The request is the plain form POST of
//! RFC 6749 §4.5; the answer decodes into the `oauth2` crate's token response.

use super::bounded::Bounded;
use super::{AuthFailure, fail};
use base64::Engine;
use oauth2::AsyncHttpClient;
use oauth2::basic::BasicTokenResponse;
use oauth2::url::form_urlencoded;
use serde_json::Value;

/// `grant_type` of the JWT bearer grant.
pub(crate) const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// `grant_type` of token exchange.
pub(crate) const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The token type of an OpenID Connect ID token (RFC 8693 §3).
pub(crate) const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";
/// The token type of an identity assertion authorization grant (ID-JAG, SEP-990).
pub(crate) const ID_JAG_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// How the client authenticates at the token endpoint.
pub(crate) enum ClientAuth<'a> {
    /// `client_secret_basic`: the id and secret, each form-encoded, in `Authorization: Basic`.
    Basic { id: &'a str, secret: &'a str },
    /// `client_secret_post`: both in the body.
    Post { id: &'a str, secret: &'a str },
    /// A public client: its id in the body.
    Public { id: &'a str },
    /// No client identification at all (the assertion identifies the workload).
    Anonymous,
}

/// Why a token request failed.
pub(crate) enum GrantError {
    /// The server answered with an OAuth error (`invalid_grant`, `invalid_scope`, ...).
    Refused(AuthFailure),
    /// The request did not get an answer, or the answer made no sense.
    Failed(AuthFailure),
}

impl From<GrantError> for AuthFailure {
    fn from(error: GrantError) -> Self {
        match error {
            GrantError::Refused(e) | GrantError::Failed(e) => e,
        }
    }
}

/// What came back: the token response, and the `issued_token_type` of a token exchange.
pub(crate) struct Issued {
    pub(crate) token: BasicTokenResponse,
    pub(crate) issued_token_type: Option<String>,
}

/// POSTs `params` (with the client's authentication) to the token endpoint `endpoint` and
/// decodes the token response.
///
/// Errors: [`GrantError::Refused`] for an OAuth error answer (its `error` and
/// `error_description` in the message); [`GrantError::Failed`] when the endpoint cannot be
/// reached, is no URL, or answers with something other than a token response.
pub(crate) async fn request(
    http: &Bounded,
    endpoint: &str,
    auth: ClientAuth<'_>,
    params: &[(&str, &str)],
) -> Result<Issued, GrantError> {
    let mut request = http::Request::builder()
        .method(http::Method::POST)
        .uri(endpoint)
        .header(http::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(http::header::ACCEPT, "application/json");
    let mut params = params.to_vec();
    match auth {
        ClientAuth::Basic { id, secret } => {
            // RFC 6749 §2.3.1: each part form-encoded before the two are joined.
            let encode = |s: &str| form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            let pair = format!("{}:{}", encode(id), encode(secret));
            let value = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair));
            request = request.header(http::header::AUTHORIZATION, value);
        }
        ClientAuth::Post { id, secret } => params.extend([("client_id", id), ("client_secret", secret)]),
        ClientAuth::Public { id } => params.push(("client_id", id)),
        ClientAuth::Anonymous => {}
    }
    let request = request
        .body(encode_form(&params))
        .map_err(|e| GrantError::Failed(AuthFailure::with_source(format!("the token endpoint {endpoint:?}"), e)))?;
    let answer = http.call(request).await.map_err(|e| {
        GrantError::Failed(AuthFailure::with_source(format!("the token request to {endpoint} failed"), e))
    })?;
    let body: Value = serde_json::from_slice(answer.body()).map_err(|e| {
        GrantError::Failed(fail(format!("{endpoint} answered HTTP {} with no JSON: {e}", answer.status())))
    })?;
    if !answer.status().is_success() {
        let text = |key: &str| body.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        let error =
            Some(text("error")).filter(|e| !e.is_empty()).unwrap_or_else(|| format!("HTTP {}", answer.status()));
        let description = text("error_description");
        return Err(GrantError::Refused(fail(format!("{endpoint} refused the token request: {error} {description}"))));
    }
    let issued_token_type = body.get("issued_token_type").and_then(Value::as_str).map(str::to_owned);
    let token = serde_json::from_value(body)
        .map_err(|e| GrantError::Failed(fail(format!("{endpoint} answered with no token response: {e}"))))?;
    Ok(Issued { token, issued_token_type })
}

/// `application/x-www-form-urlencoded` of `params`.
fn encode_form(params: &[(&str, &str)]) -> Vec<u8> {
    let mut form = form_urlencoded::Serializer::new(String::new());
    for (name, value) in params {
        form.append_pair(name, value);
    }
    form.finish().into_bytes()
}
