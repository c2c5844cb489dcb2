//! One client's sign-in state for one MCP server: the authorization server it is bound to, the
//! client id it got there, the scopes asked for so far and the tokens, and the flow that
//! renews them when the server answers `401` or `403 insufficient_scope`.

use super::bounded::Bounded;
use super::challenge::Challenge;
use super::discovery::{self, ServerMetadata, origin, read_limited};
use super::dpop::{self, DpopKey};
use super::grant::{self, ClientAuth, GrantError};
use super::{AuthFailure, IdentityProvider, MachineCredential, OAuthConfig, TokenSource, fail};
use crate::error::ClientError;
use oauth2::basic::BasicClient;
use oauth2::url::Url;
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, PkceCodeChallenge, RedirectUrl,
    RefreshToken, Scope, TokenResponse, TokenUrl,
};
use serde_json::{Value, json};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

/// A token this close to its expiry is refreshed before it is used.
const EXPIRY_MARGIN: Duration = Duration::from_secs(30);
/// The longest lifetime a token is believed to have.
const MAX_TOKEN_LIFETIME: Duration = Duration::from_secs(365 * 24 * 3600);
/// The largest registration answer read: 64 KiB.
const MAX_REGISTRATION_BYTES: usize = 64 * 1024;

/// The access token requests carry, and the generation it belongs to (a request that failed
/// with generation `n` does not renew a token another request already renewed).
#[derive(Clone, Default)]
struct Current {
    access: Option<String>,
    expires_at: Option<Instant>,
    generation: u64,
    /// The key the token is bound to (a `DPoP` token type); `None` for a bearer token.
    bound_to: Option<Arc<DpopKey>>,
}

/// What a request to the MCP server carries: its `Authorization` header value
/// (`Bearer <token>` or `DPoP <token>`) and, for a bound token, the `DPoP` proof header.
pub(crate) struct Credentials {
    pub(crate) authorization: String,
    pub(crate) proof: Option<String>,
}

/// Where the tokens come from.
#[derive(Default)]
struct Grant {
    /// The authorization server the client id and tokens belong to.
    issuer: Option<String>,
    client: Option<Registered>,
    refresh: Option<RefreshToken>,
    /// The scopes asked for so far (the union grows with each step-up).
    scopes: Vec<String>,
    /// The `resource` sent with each request to the authorization server (RFC 8707).
    resource: Option<String>,
    endpoints: Option<Endpoints>,
    /// The key token requests prove possession of, when the tokens are DPoP-bound.
    dpop: Option<Arc<DpopKey>>,
    /// Whether a token that is not bound (`token_type` other than `DPoP`) is refused: DPoP
    /// forced on, or required by the MCP server.
    dpop_required: bool,
    /// A workload assertion the authorization server refused, and why: not sent again.
    refused: Option<(String, String)>,
}

#[derive(Clone)]
struct Registered {
    id: String,
    secret: Option<String>,
    /// The `token_endpoint_auth_method` the registration gave.
    method: Option<String>,
}

#[derive(Clone)]
struct Endpoints {
    authorize: String,
    token: String,
    auth_methods: Option<Vec<String>>,
}

/// The sign-in state of one connection.
pub(crate) struct OAuthSession {
    config: OAuthConfig,
    server: Url,
    http: reqwest::Client,
    current: RwLock<Current>,
    grant: tokio::sync::Mutex<Grant>,
    /// The connection's DPoP key, generated when first needed.
    dpop_key: std::sync::Mutex<Option<Arc<DpopKey>>>,
}

impl OAuthSession {
    /// Sign-in for the MCP server at `server`.
    ///
    /// Errors: `server` is no URL, or the HTTP client for the authorization server cannot be
    /// built.
    pub(crate) fn new(config: OAuthConfig, server: &str) -> Result<Self, ClientError> {
        let server = Url::parse(server).map_err(|e| ClientError::Auth {
            message: format!("the server URL {server:?} is no URL: {e}"),
            source: None,
        })?;
        // Redirects are not followed: a metadata or token endpoint that redirects elsewhere
        // would move the client's secrets to a host nobody chose.
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(30))
            .build()
            .map_err(|e| ClientError::transport("setting up the HTTP client for sign-in", e))?;
        Ok(OAuthSession {
            config,
            server,
            http,
            current: RwLock::new(Current::default()),
            grant: tokio::sync::Mutex::new(Grant::default()),
            dpop_key: std::sync::Mutex::new(None),
        })
    }

    /// What a request with `method` to the MCP server carries (the token refreshed first when
    /// it is about to expire and can be), and the token's generation.
    pub(crate) async fn credentials(&self, method: &str) -> (Option<Credentials>, u64) {
        let (current, generation) = self.token().await;
        let Some(access) = current.access else { return (None, generation) };
        let Some(key) = current.bound_to else {
            return (Some(Credentials { authorization: format!("Bearer {access}"), proof: None }), generation);
        };
        let proof = key
            .proof(method, &self.server, Some(&access))
            .inspect_err(|e| tracing::warn!(target: "switchyard_client", error = %e.message, "no DPoP proof"))
            .ok();
        (Some(Credentials { authorization: format!("DPoP {access}"), proof }), generation)
    }

    /// Takes the `DPoP-Nonce` of an answer from the MCP server when the token is bound to a
    /// key; returns whether the nonce is one the client has not sent yet.
    pub(crate) fn remember_nonce(&self, headers: &http::HeaderMap) -> bool {
        let bound_to = self.current.read().unwrap_or_else(|p| p.into_inner()).bound_to.clone();
        match (bound_to, dpop::nonce_header(headers)) {
            (Some(key), Some(nonce)) => key.remember_nonce(&self.server, nonce),
            _ => false,
        }
    }

    /// Whether the current token is DPoP-bound.
    pub(crate) fn holds_bound_token(&self) -> bool {
        self.current.read().unwrap_or_else(|p| p.into_inner()).bound_to.is_some()
    }

    /// The connection's DPoP key (generated on first use).
    fn dpop_key(&self) -> Result<Arc<DpopKey>, AuthFailure> {
        let mut slot = self.dpop_key.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(key) = slot.as_ref() {
            return Ok(key.clone());
        }
        let key = Arc::new(DpopKey::generate()?);
        *slot = Some(key.clone());
        Ok(key)
    }

    /// The client id (and secret) the configuration names, if any.
    fn configured_client(&self) -> Option<Registered> {
        let (id, secret) = self.config.pre_registered.clone()?;
        Some(Registered { id, secret, method: None })
    }

    /// The HTTP client of this grant's token requests (with its DPoP key, if any).
    fn token_http(&self, grant: &Grant) -> Bounded {
        Bounded { http: self.http.clone(), dpop: grant.dpop.clone() }
    }

    /// The token to send now (refreshed first when it is about to expire and can be), and its
    /// generation.
    async fn token(&self) -> (Current, u64) {
        let current = self.current.read().unwrap_or_else(|p| p.into_inner()).clone();
        let expiring = current.expires_at.is_some_and(|at| at <= Instant::now() + EXPIRY_MARGIN);
        if current.access.is_some() && expiring {
            let mut grant = self.grant.lock().await;
            if self.generation() == current.generation
                && grant.refresh.is_some()
                && let Err(e) = self.refresh(&mut grant).await
            {
                tracing::debug!(target: "switchyard_client", error = %e.message, "refreshing the token failed");
            }
            let current = self.current.read().unwrap_or_else(|p| p.into_inner()).clone();
            let generation = current.generation;
            return (current, generation);
        }
        let generation = current.generation;
        (current, generation)
    }

    fn generation(&self) -> u64 {
        self.current.read().unwrap_or_else(|p| p.into_inner()).generation
    }

    /// Gets a new token after the server refused the one of `generation` with `status` and
    /// `challenge`: nothing when another request already renewed it; a refresh for a plain
    /// `401` when a refresh token is held; else discovery and the authorization code flow, for
    /// the union of the scopes held and those the challenge names.
    ///
    /// Errors: [`ClientError::Auth`] for every way signing in can fail (metadata for another
    /// resource or issuer, no way to get a client id, the user gave up, a redirect with the
    /// wrong `state` or `iss`, a refused token request).
    pub(crate) async fn renew(&self, status: u16, challenge: &Challenge, generation: u64) -> Result<(), ClientError> {
        let mut grant = self.grant.lock().await;
        let step_up = status == 403;
        let challenged = challenge.scope.as_deref().unwrap_or_default().split_whitespace();
        let covered = challenged.clone().all(|s| grant.scopes.iter().any(|held| held == s));
        // Another request renewed the token meanwhile: use that one, unless this is a step-up
        // for scopes the new token was not asked for.
        if self.generation() != generation && (!step_up || covered) {
            return Ok(());
        }
        if !step_up && challenge.scope.is_none() && grant.refresh.is_some() && self.refresh(&mut grant).await.is_ok() {
            return Ok(());
        }
        self.authorize(&mut grant, challenge, step_up).await.map_err(ClientError::from)
    }

    async fn authorize(&self, grant: &mut Grant, challenge: &Challenge, step_up: bool) -> Result<(), AuthFailure> {
        // Read again on every sign-in: the resource may have moved to another authorization
        // server since the last one.
        let resource =
            discovery::resource_metadata(&self.http, &self.server, challenge.resource_metadata.as_deref()).await?;
        let issuer = match &resource {
            Some(r) => r
                .authorization_servers
                .first()
                .cloned()
                .ok_or_else(|| fail("the protected resource metadata names no authorization server"))?,
            // A 2025-03-26 server: the authorization server is the MCP server's origin.
            None => origin(&self.server),
        };
        if grant.issuer.as_deref() != Some(issuer.as_str()) {
            // A client id and tokens of another authorization server are never shown to this one.
            *grant = Grant { issuer: Some(issuer.clone()), ..Grant::default() };
        }
        grant.resource = resource.as_ref().map(|r| r.resource.clone());
        let metadata = discovery::server_metadata(&self.http, &issuer).await?;
        let endpoints = match &metadata {
            Some(m) => Endpoints {
                authorize: m.authorization_endpoint.clone(),
                token: m.token_endpoint.clone(),
                auth_methods: m.token_endpoint_auth_methods_supported.clone(),
            },
            // The 2025-03-26 defaults, for a server that published no resource metadata and
            // is its own authorization server; an authorization server a resource names must
            // publish metadata (PKCE support cannot be checked otherwise).
            None if resource.is_none() => Endpoints {
                authorize: format!("{issuer}/authorize"),
                token: format!("{issuer}/token"),
                auth_methods: None,
            },
            None => return Err(fail(format!("the authorization server {issuer} publishes no metadata"))),
        };
        let scopes = self.scopes(grant, challenge, step_up, resource.as_ref(), metadata.as_ref());
        grant.dpop = self.dpop_for(challenge, resource.as_ref(), metadata.as_ref(), &issuer)?;
        grant.dpop_required = grant.dpop.is_some()
            && (self.config.dpop == Some(true)
                || resource.as_ref().is_some_and(|r| r.dpop_bound_access_tokens_required));
        match &self.config.machine {
            Some(MachineCredential::WorkloadIdentity(source)) => {
                return self.workload_identity(grant, source.as_ref(), &issuer, endpoints, scopes).await;
            }
            Some(MachineCredential::Enterprise(idp)) => {
                return self.enterprise(grant, idp, &issuer, endpoints, scopes).await;
            }
            Some(machine) => return self.client_credentials(grant, machine, &issuer, endpoints, scopes).await,
            None => {}
        }
        if let Some(m) = &metadata {
            discovery::check_code_flow(m)?;
        }
        let client = match grant.client.clone() {
            Some(client) => client,
            None => self.client_id(&issuer, metadata.as_ref(), &scopes).await?,
        };
        grant.client = Some(client.clone());
        grant.endpoints = Some(endpoints.clone());

        let oauth = oauth_client(&client, &endpoints)?.set_redirect_uri(
            RedirectUrl::new(self.config.redirect_uri.clone())
                .map_err(|e| fail(format!("the redirect URI {:?} is no URL: {e}", self.config.redirect_uri)))?,
        );
        let (challenge_code, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = oauth
            .authorize_url(CsrfToken::new_random)
            .set_pkce_challenge(challenge_code)
            .add_scopes(scopes.iter().cloned().map(Scope::new));
        if let Some(resource) = &grant.resource {
            request = request.add_extra_param("resource", resource.clone());
        }
        if scopes.iter().any(|s| s == "offline_access") {
            request = request.add_extra_param("prompt", "consent");
        }
        let (url, state) = request.url();
        let redirect = self.config.authorizer.authorize(url.to_string()).await.map_err(fail)?;
        let code = read_redirect(&redirect, state.secret(), metadata.as_ref())?;

        let mut exchange = oauth.exchange_code(AuthorizationCode::new(code)).set_pkce_verifier(verifier);
        if let Some(resource) = &grant.resource {
            exchange = exchange.add_extra_param("resource", resource.clone());
        }
        let token = exchange
            .request_async(&self.token_http(grant))
            .await
            .map_err(|e| AuthFailure::with_source(format!("the token request to {} failed", endpoints.token), e))?;
        grant.scopes = scopes;
        self.publish(grant, &token, false)
    }

    /// The key to bind tokens to, if any: DPoP as configured, or (by default) when the
    /// resource asks for it and the authorization server supports it.
    ///
    /// Errors: DPoP is required (by the configuration or the resource's metadata) and the
    /// authorization server does not support `ES256` proofs.
    fn dpop_for(
        &self,
        challenge: &Challenge,
        resource: Option<&discovery::ResourceMetadata>,
        metadata: Option<&ServerMetadata>,
        issuer: &str,
    ) -> Result<Option<Arc<DpopKey>>, AuthFailure> {
        let required = self.config.dpop == Some(true) || resource.is_some_and(|r| r.dpop_bound_access_tokens_required);
        let wanted = self.config.dpop.unwrap_or(required || challenge.dpop);
        if !wanted {
            return Ok(None);
        }
        if dpop::supported(metadata.and_then(|m| m.dpop_signing_alg_values_supported.as_deref())) {
            return self.dpop_key().map(Some);
        }
        // A server that offers DPoP beside bearer tokens still takes a bearer token.
        if required { Err(dpop::unsupported(issuer)) } else { Ok(None) }
    }

    /// Gets a token with the client credentials grant (no user): the client secret, or a JWT
    /// signed with the client's key, at the token endpoint.
    async fn client_credentials(
        &self,
        grant: &mut Grant,
        machine: &MachineCredential,
        issuer: &str,
        endpoints: Endpoints,
        scopes: Vec<String>,
    ) -> Result<(), AuthFailure> {
        let (id, secret) =
            self.config.pre_registered.clone().ok_or_else(|| fail("client credentials need a client id"))?;
        let client = Registered { id: id.clone(), secret, method: None };
        let oauth = oauth_client(&client, &endpoints)?;
        let mut request = oauth.exchange_client_credentials().add_scopes(scopes.iter().cloned().map(Scope::new));
        if let Some(resource) = &grant.resource {
            request = request.add_extra_param("resource", resource.clone());
        }
        if let MachineCredential::PrivateKeyJwt { pem, algorithm } = machine {
            request = request
                .add_extra_param("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
                .add_extra_param("client_assertion", client_assertion(&id, issuer, pem, algorithm)?);
        }
        let token = request
            .request_async(&self.token_http(grant))
            .await
            .map_err(|e| AuthFailure::with_source(format!("the token request to {} failed", endpoints.token), e))?;
        grant.client = Some(client);
        grant.endpoints = Some(endpoints);
        grant.scopes = scopes;
        self.publish(grant, &token, false)
    }

    /// Gets a token with the JWT bearer grant, the workload's identity token the assertion.
    /// An assertion the server refused is not sent again: the refusal is repeated instead.
    async fn workload_identity(
        &self,
        grant: &mut Grant,
        source: &dyn TokenSource,
        issuer: &str,
        endpoints: Endpoints,
        scopes: Vec<String>,
    ) -> Result<(), AuthFailure> {
        let assertion = source
            .token(issuer.to_owned())
            .await
            .map_err(|e| fail(format!("the workload identity token could not be read: {e}")))?;
        if let Some((refused, why)) = &grant.refused
            && *refused == assertion
        {
            return Err(fail(format!("{why} (the same workload identity token is not sent again)")));
        }
        let client = self.configured_client();
        let scope = scopes.join(" ");
        let mut params = vec![("grant_type", grant::JWT_BEARER), ("assertion", assertion.as_str())];
        push_common(&mut params, &scope, grant.resource.as_deref());
        let auth = client_auth(client.as_ref(), endpoints.auth_methods.as_deref());
        let issued = match grant::request(&self.token_http(grant), &endpoints.token, auth, &params).await {
            Ok(issued) => issued,
            Err(GrantError::Refused(why)) => {
                grant.refused = Some((assertion.clone(), why.message.clone()));
                return Err(why);
            }
            Err(GrantError::Failed(why)) => return Err(why),
        };
        grant.refused = None;
        grant.client = client;
        grant.endpoints = Some(endpoints);
        grant.scopes = scopes;
        self.publish(grant, &issued.token, false)
    }

    /// Enterprise-managed authorization (SEP-990): the user's ID token exchanged at the
    /// identity provider for an ID-JAG whose audience is `issuer`, then the ID-JAG presented to
    /// `issuer` in the JWT bearer grant.
    async fn enterprise(
        &self,
        grant: &mut Grant,
        idp: &IdentityProvider,
        issuer: &str,
        endpoints: Endpoints,
        scopes: Vec<String>,
    ) -> Result<(), AuthFailure> {
        let id_token = idp
            .id_token
            .token(idp.token_endpoint.clone())
            .await
            .map_err(|e| fail(format!("the user's ID token could not be read: {e}")))?;
        let resource = grant.resource.clone().unwrap_or_else(|| self.server.to_string());
        let scope = scopes.join(" ");
        let mut params = vec![
            ("grant_type", grant::TOKEN_EXCHANGE),
            ("requested_token_type", grant::ID_JAG_TYPE),
            ("audience", issuer),
            ("subject_token", id_token.as_str()),
            ("subject_token_type", grant::ID_TOKEN_TYPE),
        ];
        push_common(&mut params, &scope, Some(&resource));
        let at_idp = Registered { id: idp.client_id.clone(), secret: idp.client_secret.clone(), method: None };
        let exchanged =
            grant::request(&Bounded::plain(&self.http), &idp.token_endpoint, client_auth(Some(&at_idp), None), &params)
                .await?;
        // RFC 8693 §2.2.1: `issued_token_type` is required; anything but an ID-JAG is no grant.
        if exchanged.issued_token_type.as_deref() != Some(grant::ID_JAG_TYPE) {
            return Err(fail(format!(
                "the identity provider {} issued {}, not an identity assertion grant",
                idp.token_endpoint,
                exchanged.issued_token_type.as_deref().unwrap_or("a token of no stated type")
            )));
        }
        let jag = exchanged.token.access_token().secret().clone();
        let client = self.configured_client();
        let mut params = vec![("grant_type", grant::JWT_BEARER), ("assertion", jag.as_str())];
        push_common(&mut params, &scope, grant.resource.as_deref());
        let auth = client_auth(client.as_ref(), endpoints.auth_methods.as_deref());
        let issued = grant::request(&self.token_http(grant), &endpoints.token, auth, &params).await?;
        grant.client = client;
        grant.endpoints = Some(endpoints);
        grant.scopes = scopes;
        self.publish(grant, &issued.token, false)
    }

    /// The scopes to ask for: those asked before (or the configured ones, or the challenge's,
    /// or the resource's `scopes_supported`), with the challenge's added, and `offline_access`
    /// when the authorization server offers it.
    fn scopes(
        &self,
        grant: &Grant,
        challenge: &Challenge,
        step_up: bool,
        resource: Option<&discovery::ResourceMetadata>,
        metadata: Option<&ServerMetadata>,
    ) -> Vec<String> {
        let challenged: Vec<String> =
            challenge.scope.as_deref().unwrap_or_default().split_whitespace().map(str::to_owned).collect();
        let mut scopes = if !grant.scopes.is_empty() && (step_up || !challenged.is_empty()) {
            grant.scopes.clone()
        } else if let Some(configured) = &self.config.scopes {
            configured.clone()
        } else if challenged.is_empty() {
            resource.map(|r| r.scopes_supported.clone()).unwrap_or_default()
        } else {
            Vec::new()
        };
        for scope in challenged {
            if !scopes.contains(&scope) {
                scopes.push(scope);
            }
        }
        let offline = metadata.is_some_and(|m| m.scopes_supported.iter().any(|s| s == "offline_access"));
        if offline && !scopes.is_empty() && !scopes.iter().any(|s| s == "offline_access") {
            scopes.push("offline_access".to_owned());
        }
        scopes
    }

    /// A client id at `issuer`: the pre-registered one, the client ID metadata document URL
    /// where the server accepts those, else one from dynamic registration.
    async fn client_id(
        &self,
        issuer: &str,
        metadata: Option<&ServerMetadata>,
        scopes: &[String],
    ) -> Result<Registered, AuthFailure> {
        if let Some((id, secret)) = &self.config.pre_registered {
            return Ok(Registered { id: id.clone(), secret: secret.clone(), method: None });
        }
        if let (Some(url), true) =
            (&self.config.client_metadata_url, metadata.is_some_and(|m| m.client_id_metadata_document_supported))
        {
            return Ok(Registered { id: url.clone(), secret: None, method: Some("none".to_owned()) });
        }
        let endpoint = match metadata {
            Some(m) => m.registration_endpoint.clone().ok_or_else(|| {
                fail(format!(
                    "{issuer} offers no dynamic registration; configure a pre-registered client id or a client metadata URL"
                ))
            })?,
            None => format!("{issuer}/register"),
        };
        let mut body = json!({
            "client_name": self.config.client_name,
            "redirect_uris": [self.config.redirect_uri],
            "application_type": self.config.application_type,
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
        });
        if !scopes.is_empty() {
            body["scope"] = Value::from(scopes.join(" "));
        }
        let response = self
            .http
            .post(&endpoint)
            .json(&body)
            .send()
            .await
            .map_err(|e| AuthFailure::with_source(format!("registering at {endpoint}"), e))?;
        let status = response.status();
        let answer = read_limited(response, MAX_REGISTRATION_BYTES).await?;
        if !status.is_success() {
            let shown = String::from_utf8_lossy(&answer[..answer.len().min(300)]).into_owned();
            return Err(fail(format!("registering at {endpoint}: HTTP {status}: {shown}")));
        }
        let answer: Value = serde_json::from_slice(&answer)
            .map_err(|e| fail(format!("registering at {endpoint}: the answer is no JSON: {e}")))?;
        let text = |key: &str| answer.get(key).and_then(Value::as_str).map(str::to_owned);
        let id = text("client_id").ok_or_else(|| fail(format!("registering at {endpoint}: no client_id")))?;
        Ok(Registered { id, secret: text("client_secret"), method: text("token_endpoint_auth_method") })
    }

    /// Exchanges the refresh token for a new access token.
    async fn refresh(&self, grant: &mut Grant) -> Result<(), AuthFailure> {
        let (Some(refresh), Some(client), Some(endpoints)) = (&grant.refresh, &grant.client, &grant.endpoints) else {
            return Err(fail("nothing to refresh"));
        };
        let oauth = oauth_client(client, endpoints)?;
        let mut request = oauth.exchange_refresh_token(refresh);
        if let Some(resource) = &grant.resource {
            request = request.add_extra_param("resource", resource.clone());
        }
        let token = request.request_async(&self.token_http(grant)).await;
        match token {
            Ok(token) => self.publish(grant, &token, true),
            Err(e) => {
                // The authorization server refused the refresh token: it is spent. A network
                // failure leaves it for the next try.
                if matches!(e, oauth2::RequestTokenError::ServerResponse(_)) {
                    grant.refresh = None;
                }
                Err(AuthFailure::with_source("refreshing the access token", e))
            }
        }
    }

    /// Makes `token` the one requests carry (bound to the grant's key when its type is
    /// `DPoP`), and keeps its refresh token (an answer to a refresh without one keeps the old
    /// one).
    ///
    /// Errors: a token that is not bound where a bound one is required (the authorization
    /// server ignored the proof); it is not used.
    fn publish(
        &self,
        grant: &mut Grant,
        token: &oauth2::basic::BasicTokenResponse,
        refreshing: bool,
    ) -> Result<(), AuthFailure> {
        let bound = token.token_type().as_ref().eq_ignore_ascii_case("dpop");
        if grant.dpop_required && !bound {
            // Its refresh token would only bring another unbound token (and one kept from
            // before may be spent by rotation): the next sign-in starts afresh.
            grant.refresh = None;
            let issuer = grant.issuer.as_deref().unwrap_or("the authorization server");
            return Err(fail(format!(
                "{issuer} answered a {:?} token where a DPoP-bound one is required (RFC 9449 §5)",
                token.token_type().as_ref()
            )));
        }
        match token.refresh_token() {
            Some(refresh) => grant.refresh = Some(refresh.clone()),
            None if !refreshing => grant.refresh = None,
            None => {}
        }
        let mut current = self.current.write().unwrap_or_else(|p| p.into_inner());
        current.access = Some(token.access_token().secret().clone());
        current.bound_to = grant.dpop.clone().filter(|_| bound);
        // A lifetime beyond a year (or one that overflows the clock) is taken as a year.
        current.expires_at = token.expires_in().map(|d| Instant::now() + d.min(MAX_TOKEN_LIFETIME));
        current.generation += 1;
        Ok(())
    }
}

/// `scope` (when not empty) and `resource` (RFC 8707, when known) of a token request.
fn push_common<'a>(params: &mut Vec<(&'static str, &'a str)>, scope: &'a str, resource: Option<&'a str>) {
    if !scope.is_empty() {
        params.push(("scope", scope));
    }
    if let Some(resource) = resource {
        params.push(("resource", resource));
    }
}

/// The token endpoint authentication of an extension grant, chosen as for the `oauth2`
/// crate's grants ([`auth_method`]); no client at all when none is configured.
fn client_auth<'a>(client: Option<&'a Registered>, supported: Option<&[String]>) -> ClientAuth<'a> {
    let Some(client) = client else { return ClientAuth::Anonymous };
    match (auth_method(client, supported), client.secret.as_deref()) {
        (Method::Basic(_), Some(secret)) => ClientAuth::Basic { id: &client.id, secret },
        (Method::Post(_), Some(secret)) => ClientAuth::Post { id: &client.id, secret },
        _ => ClientAuth::Public { id: &client.id },
    }
}

/// A `private_key_jwt` client assertion (RFC 7523 §3): `iss` and `sub` the client id, `aud`
/// the authorization server's issuer, a random `jti`, valid for five minutes.
fn client_assertion(client_id: &str, issuer: &str, pem: &str, algorithm: &str) -> Result<String, AuthFailure> {
    use jsonwebtoken::{Algorithm, EncodingKey, Header};
    let algorithm: Algorithm =
        algorithm.parse().map_err(|e| AuthFailure::with_source(format!("the signing algorithm {algorithm:?}"), e))?;
    let key = match algorithm {
        Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(pem.as_bytes()),
        Algorithm::EdDSA => EncodingKey::from_ed_pem(pem.as_bytes()),
        Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => {
            return Err(fail("private_key_jwt needs an asymmetric algorithm"));
        }
        _ => EncodingKey::from_rsa_pem(pem.as_bytes()),
    }
    .map_err(|e| AuthFailure::with_source("the client's private key", e))?;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let claims = serde_json::json!({
        "iss": client_id,
        "sub": client_id,
        "aud": issuer,
        "iat": now,
        "exp": now + 300,
        "jti": CsrfToken::new_random().secret(),
    });
    jsonwebtoken::encode(&Header::new(algorithm), &claims, &key)
        .map_err(|e| AuthFailure::with_source("signing the client assertion", e))
}

/// An `oauth2` client with its authorization and token endpoints set.
type OAuthClient = oauth2::Client<
    oauth2::basic::BasicErrorResponse,
    oauth2::basic::BasicTokenResponse,
    oauth2::basic::BasicTokenIntrospectionResponse,
    oauth2::StandardRevocableToken,
    oauth2::basic::BasicRevocationErrorResponse,
    oauth2::EndpointSet,
    oauth2::EndpointNotSet,
    oauth2::EndpointNotSet,
    oauth2::EndpointNotSet,
    oauth2::EndpointSet,
>;

/// The `oauth2` client for `client` at `endpoints`, authenticating at the token endpoint as
/// the registration and the server's metadata agree (`client_secret_basic`,
/// `client_secret_post`, or `none`: the client id in the body).
fn oauth_client(client: &Registered, endpoints: &Endpoints) -> Result<OAuthClient, AuthFailure> {
    let authorize =
        AuthUrl::new(endpoints.authorize.clone()).map_err(|e| fail(format!("the authorization endpoint: {e}")))?;
    let token = TokenUrl::new(endpoints.token.clone()).map_err(|e| fail(format!("the token endpoint: {e}")))?;
    let mut oauth = BasicClient::new(ClientId::new(client.id.clone())).set_auth_uri(authorize).set_token_uri(token);
    match auth_method(client, endpoints.auth_methods.as_deref()) {
        Method::Basic(secret) => {
            oauth = oauth.set_client_secret(ClientSecret::new(secret)).set_auth_type(AuthType::BasicAuth);
        }
        Method::Post(secret) => {
            oauth = oauth.set_client_secret(ClientSecret::new(secret)).set_auth_type(AuthType::RequestBody);
        }
        Method::None => oauth = oauth.set_auth_type(AuthType::RequestBody),
    }
    Ok(oauth)
}

enum Method {
    Basic(String),
    Post(String),
    None,
}

/// The token endpoint authentication: the registration's method when the server lists it (or
/// lists none), else the strongest the server lists that the client can do.
fn auth_method(client: &Registered, supported: Option<&[String]>) -> Method {
    let listed = |m: &str| supported.is_none_or(|s| s.iter().any(|x| x == m));
    let with_secret = |m: &str| -> Option<Method> {
        let secret = client.secret.clone();
        match m {
            "client_secret_basic" => secret.map(Method::Basic),
            "client_secret_post" => secret.map(Method::Post),
            "none" => Some(Method::None),
            _ => None,
        }
    };
    if let Some(registered) = client.method.as_deref().filter(|m| listed(m))
        && let Some(method) = with_secret(registered)
    {
        return method;
    }
    for candidate in ["client_secret_basic", "client_secret_post", "none"] {
        if supported.is_some_and(|s| s.iter().any(|x| x == candidate))
            && let Some(method) = with_secret(candidate)
        {
            return method;
        }
    }
    match &client.secret {
        Some(secret) if supported.is_none() => Method::Basic(secret.clone()),
        Some(secret) => Method::Post(secret.clone()),
        None => Method::None,
    }
}

/// The `code` of the authorization server's redirect, after checking its `state` and its
/// `iss` ([RFC 9207](https://www.rfc-editor.org/rfc/rfc9207): exactly the issuer, and present
/// when the server says it sends it).
fn read_redirect(redirect: &str, state: &str, metadata: Option<&ServerMetadata>) -> Result<String, AuthFailure> {
    let url = Url::parse(redirect).map_err(|e| fail(format!("the redirect {redirect:?} is no URL: {e}")))?;
    let param = |name: &str| url.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned());
    if let Some(error) = param("error") {
        let description = param("error_description").unwrap_or_default();
        return Err(fail(format!("the authorization server refused: {error} {description}")));
    }
    if param("state").as_deref() != Some(state) {
        return Err(fail("the redirect's state is not the one sent; the sign-in is not this client's"));
    }
    if let Some(metadata) = metadata {
        match param("iss") {
            Some(iss) if iss != metadata.issuer => {
                return Err(fail(format!(
                    "the redirect comes from issuer {iss:?}, not {:?} (a mix-up attack?)",
                    metadata.issuer
                )));
            }
            None if metadata.authorization_response_iss_parameter_supported => {
                return Err(fail("the redirect lacks the iss parameter its authorization server promises"));
            }
            _ => {}
        }
    }
    param("code").ok_or_else(|| fail("the redirect carries no authorization code"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(secret: Option<&str>, method: Option<&str>) -> Registered {
        Registered { id: "c".into(), secret: secret.map(str::to_owned), method: method.map(str::to_owned) }
    }

    #[test]
    fn the_token_endpoint_auth_method_follows_registration_and_metadata() {
        let list = |m: &[&str]| m.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let basic = list(&["client_secret_basic"]);
        assert!(matches!(auth_method(&client(Some("s"), Some("client_secret_post")), Some(&basic)), Method::Basic(_)));
        let post = list(&["client_secret_post"]);
        assert!(matches!(auth_method(&client(Some("s"), Some("client_secret_post")), Some(&post)), Method::Post(_)));
        let none = list(&["none"]);
        assert!(matches!(auth_method(&client(Some("s"), None), Some(&none)), Method::None));
        assert!(matches!(auth_method(&client(Some("s"), None), None), Method::Basic(_)));
        assert!(matches!(auth_method(&client(None, None), Some(&basic)), Method::None));
    }

    #[test]
    fn redirects_with_a_wrong_state_or_issuer_are_refused() {
        let metadata: ServerMetadata = serde_json::from_value(json!({
            "issuer": "https://as.example.com", "authorization_endpoint": "https://as.example.com/a",
            "token_endpoint": "https://as.example.com/t", "authorization_response_iss_parameter_supported": true
        }))
        .expect("metadata");
        let ok = "http://127.0.0.1/cb?code=c1&state=s&iss=https%3A%2F%2Fas.example.com";
        assert_eq!(read_redirect(ok, "s", Some(&metadata)).expect("accepted"), "c1");
        for bad in [
            "http://127.0.0.1/cb?code=c1&state=other&iss=https%3A%2F%2Fas.example.com",
            "http://127.0.0.1/cb?code=c1&state=s",
            "http://127.0.0.1/cb?code=c1&state=s&iss=https%3A%2F%2Fas.example.com%2F",
            "http://127.0.0.1/cb?error=access_denied&state=s",
            "not a url",
        ] {
            assert!(read_redirect(bad, "s", Some(&metadata)).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_bearer_token_where_a_bound_one_is_required_is_refused_and_not_used() {
        let config = OAuthConfig::client_credentials("c", "s").dpop(true);
        let session = OAuthSession::new(config, "https://mcp.example.com/mcp").expect("a session");
        let key = Arc::new(DpopKey::generate().expect("a key"));
        let mut grant = Grant { dpop: Some(key), dpop_required: true, ..Grant::default() };
        let token = |kind: &str| -> oauth2::basic::BasicTokenResponse {
            serde_json::from_value(json!({ "access_token": "t", "token_type": kind })).expect("a token response")
        };
        grant.refresh = Some(oauth2::RefreshToken::new("r".into()));
        let refused = session.publish(&mut grant, &token("Bearer"), true);
        assert!(refused.is_err_and(|e| e.message.contains("DPoP-bound")));
        assert!(grant.refresh.is_none(), "the refresh token is dropped with the refused token");
        assert!(session.current.read().expect("not poisoned").access.is_none(), "the bearer token is not used");
        session.publish(&mut grant, &token("DPoP"), false).expect("a bound token is taken");
        assert!(session.holds_bound_token());
        // Where binding is only preferred, a bearer answer is taken as it is.
        grant.dpop_required = false;
        session.publish(&mut grant, &token("Bearer"), false).expect("taken");
        assert!(!session.holds_bound_token());
    }
}
