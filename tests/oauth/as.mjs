// A real OAuth 2.1 authorization server for the OAuth tests and the worked example of
// docs/authorization.md: oidc-provider (an OpenID-certified implementation) configured the way an
// MCP deployment needs it, plus what a headless test needs and a real deployment must never have.
//
//   node as.mjs [--port N] [--scopes "mcp files:read"] [--dpop-nonces]
//
// - Issuer http://127.0.0.1:PORT (`--port 0`, the default, picks a free port); prints
//   `listening on http://127.0.0.1:PORT` on stdout once it serves, one line per request on stderr.
// - Open dynamic client registration (RFC 7591); public clients (`token_endpoint_auth_method:
//   none`) are allowed and must use PKCE with S256.
// - Resource indicators (RFC 8707): an access token asked for with `resource=URL` is a JWT
//   (RFC 9068) signed with the current key, `aud` = that URL, `scope` = the granted scopes among
//   `--scopes`. Any http(s) URL is accepted as a resource.
// - The client credentials grant, for a confidential client registered with
//   `grant_types: ["client_credentials"]` (a headless host): `resource=URL` and `scope=` as above.
// - DPoP (RFC 9449), oidc-provider's `features.dPoP`: a token request with a `DPoP` proof (ES256,
//   Ed25519 or EdDSA) gets `token_type: DPoP` and a JWT bound to the proof's key (`cnf.jkt`, its
//   RFC 7638 thumbprint); one without stays a plain bearer JWT, unless the client registered with
//   `dpop_bound_access_tokens: true`. With `--dpop-nonces` every proof must carry a nonce of this
//   server (RFC 9449 §8): the token endpoint answers 400 `use_dpop_nonce` with a `DPoP-Nonce`
//   header until it does.
// - Sign-in and consent finish at once for the account `test-user`: the interaction URL grants
//   everything asked for, with no page to fill in.
// - Test-only routes (loopback only, no authentication):
//   POST /test/rotate-key          signs with a new key from now on; the old one stays published
//   POST /test/limit-consent?scope=mcp
//                                  the next consent grants at most these scopes (a user who
//                                  declines some), so a later step-up has something to ask for
import * as crypto from "node:crypto";
import * as http from "node:http";
import Provider from "oidc-provider";

const ACCOUNT = "test-user";

function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1] : fallback;
}

const port = Number(option("port", process.env.PORT ?? "0"));
const resourceScopes = option("scopes", "mcp files:read").split(/[\s,]+/).filter(Boolean);
const dpopNonces = process.argv.includes("--dpop-nonces");

// Every Provider instance this process makes (a new one per key rotation) reads and writes the
// same records, so registered clients, sessions and grants outlive a rotation.
const records = new Map();
const byGrant = new Map();

class SharedMemoryAdapter {
  constructor(model) {
    this.model = model;
  }
  key(id) {
    return `${this.model}:${id}`;
  }
  async upsert(id, payload, expiresIn) {
    const expiresAt = expiresIn ? Date.now() + expiresIn * 1000 : Infinity;
    records.set(this.key(id), { payload: structuredClone(payload), expiresAt });
    if (payload.grantId) {
      if (!byGrant.has(payload.grantId)) byGrant.set(payload.grantId, new Set());
      byGrant.get(payload.grantId).add(this.key(id));
    }
    if (payload.uid) records.set(`uid:${this.model}:${payload.uid}`, { payload: id, expiresAt });
    if (payload.userCode) records.set(`userCode:${payload.userCode}`, { payload: id, expiresAt });
  }
  lookup(key) {
    const found = records.get(key);
    if (!found) return undefined;
    if (found.expiresAt <= Date.now()) {
      records.delete(key);
      return undefined;
    }
    return found.payload;
  }
  async find(id) {
    const payload = this.lookup(this.key(id));
    return payload === undefined ? undefined : structuredClone(payload);
  }
  async findByUid(uid) {
    const id = this.lookup(`uid:${this.model}:${uid}`);
    return id === undefined ? undefined : this.find(id);
  }
  async findByUserCode(userCode) {
    const id = this.lookup(`userCode:${userCode}`);
    return id === undefined ? undefined : this.find(id);
  }
  async consume(id) {
    const found = records.get(this.key(id));
    if (found) found.payload.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id) {
    records.delete(this.key(id));
  }
  async revokeByGrantId(grantId) {
    for (const key of byGrant.get(grantId) ?? []) records.delete(key);
    byGrant.delete(grantId);
  }
}

function newSigningKey() {
  const { privateKey } = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 });
  return { ...privateKey.export({ format: "jwk" }), kid: crypto.randomUUID(), alg: "RS256", use: "sig" };
}

// Newest first: oidc-provider signs with the key `jwt.sign.kid` names and publishes all of them.
const signingKeys = [newSigningKey()];
const cookieKeys = [crypto.randomBytes(32).toString("base64url")];
// One secret for every Provider instance, so a nonce handed out before a rotation still counts.
const dpopNonceSecret = crypto.randomBytes(32);
let consentLimit = null;

function configuration() {
  // Fixed per instance: a request still running on the instance a rotation replaced keeps to the
  // keys that instance has.
  const signWith = signingKeys[0].kid;
  return {
    adapter: SharedMemoryAdapter,
    jwks: { keys: [...signingKeys] },
    cookies: { keys: cookieKeys },
    // What discovery advertises and registration accepts in a client's `scope`. oidc-provider
    // also counts these as OpenID scopes, so consent grants them on both sides (below).
    scopes: ["openid", "offline_access", ...resourceScopes],
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      clientCredentials: { enabled: true },
      // On by default in oidc-provider 9; spelled out, since the DPoP tests depend on it. Without
      // a nonce secret the provider neither asks for nor hands out nonces.
      dPoP: {
        enabled: true,
        ...(dpopNonces ? { nonceSecret: dpopNonceSecret, requireNonce: () => true } : {}),
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx, _client, oneOf) => oneOf,
        // A refresh keeps the audience the authorization was granted for.
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, resource) => {
          if (!/^https?:\/\//.test(resource)) {
            throw new Error(`not an http(s) resource: ${resource}`);
          }
          return {
            scope: resourceScopes.join(" "),
            audience: resource,
            accessTokenFormat: "jwt",
            accessTokenTTL: 600,
            jwt: { sign: { alg: "RS256", kid: signWith } },
          };
        },
      },
    },
    ttl: { AccessToken: 600, AuthorizationCode: 60, Interaction: 600, Session: 3600, Grant: 3600 },
    // Errors as JSON: nobody reads the provider's HTML pages here, and a test prints this.
    renderError: async (ctx, out) => {
      ctx.type = "json";
      ctx.body = out;
    },
  };
}

// Grants the account what the authorization request asks for (within a consent limit, if one
// was set) and returns the provider to the flow: sign-in and consent in one step.
async function finishInteraction(provider, req, res) {
  const details = await provider.interactionDetails(req, res);
  const { params, session } = details;
  const accountId = session?.accountId ?? ACCOUNT;
  const requested = String(params.scope ?? "").split(" ").filter(Boolean);
  const limit = consentLimit;
  consentLimit = null;
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId, clientId: params.client_id });
  const known = ["openid", "offline_access", ...resourceScopes];
  const wanted = requested.filter((s) => known.includes(s));
  const granted = limit ? wanted.filter((s) => limit.includes(s) || !resourceScopes.includes(s)) : wanted;
  const declined = wanted.filter((s) => !granted.includes(s));
  // Declined counts as answered: oidc-provider does not ask the same session again.
  if (granted.length) grant.addOIDCScope(granted.join(" "));
  if (declined.length) grant.rejectOIDCScope(declined.join(" "));
  const resources = params.resource === undefined ? [] : [].concat(params.resource);
  const grantedHere = granted.filter((s) => resourceScopes.includes(s));
  for (const resource of resources) {
    if (grantedHere.length) grant.addResourceScope(resource, grantedHere.join(" "));
    if (declined.length) grant.rejectResourceScope(resource, declined.join(" "));
  }
  const grantId = await grant.save();
  const result = { consent: { grantId } };
  if (details.prompt.name === "login") result.login = { accountId };
  await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
}

function json(res, status, body) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

let provider;
let handle;

const server = http.createServer((req, res) => {
  res.on("finish", () => console.error(`AS: ${req.method} ${req.url.split("?")[0]} ${res.statusCode}`));
  const url = new URL(req.url, "http://127.0.0.1");
  const route = `${req.method} ${url.pathname}`;
  if (route === "POST /test/rotate-key") {
    signingKeys.unshift(newSigningKey());
    provider = new Provider(provider.issuer, configuration());
    handle = provider.callback();
    json(res, 200, { signing: signingKeys[0].kid, published: signingKeys.map((k) => k.kid) });
  } else if (route === "POST /test/limit-consent") {
    consentLimit = (url.searchParams.get("scope") ?? "").split(/[\s,]+/).filter(Boolean);
    json(res, 200, { nextConsentGrantsAtMost: consentLimit });
  } else if (req.method === "GET" && url.pathname.startsWith("/interaction/")) {
    finishInteraction(provider, req, res).catch((e) => {
      console.error(`AS: interaction failed: ${e?.stack ?? e}`);
      json(res, 400, { error: "interaction_failed", error_description: String(e?.message ?? e) });
    });
  } else {
    handle(req, res);
  }
});

server.listen(port, "127.0.0.1", () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  provider = new Provider(issuer, configuration());
  handle = provider.callback();
  console.log(`listening on ${issuer}`);
});

for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(0));
