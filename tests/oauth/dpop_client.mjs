// A real MCP host holding a DPoP-bound access token (RFC 9449; MCP SEP-1932): the official
// TypeScript MCP SDK's `Client` and `StreamableHTTPClientTransport`, with a `fetch` of its own
// that sends every MCP request as `Authorization: DPoP <token>` with a fresh proof. For the
// OAuth tests (tests/it/oauth_e2e.rs).
//
//   tests/oauth/dpop_client.sh --server http://127.0.0.1:3000/mcp [--tool NAME]
//
// It starts with no token and finds its way by discovery, headless (no browser, no user):
// - a tokenless POST to the server: its 401 must offer a `DPoP` challenge (`algs` with ES256) and
//   name the protected resource metadata (RFC 9728), which must list ES256 in
//   `dpop_signing_alg_values_supported` and names the authorization server; that server's
//   metadata (RFC 8414) and a registration (RFC 7591) through the SDK's own helpers: a
//   confidential client with the client credentials grant and `dpop_bound_access_tokens: true`;
// - a token for `resource=` the MCP endpoint (RFC 8707) and scope `mcp` by client credentials,
//   with a DPoP proof of an ES256 key made for this run (jose): the token must come back as
//   `token_type: DPoP`; an authorization server's `use_dpop_nonce` is answered once;
// - the SDK's client connects (a 2025-11-25 session), lists the tools and calls one: each
//   request (POST, the GET stream, the closing DELETE) carries a proof with `htm`, `htu`
//   (the URL without query and fragment), `iat`, a fresh `jti`, `ath` (the token's SHA-256) and
//   the server's latest `DPoP-Nonce` when it sent one; a 401 `use_dpop_nonce` is retried once
//   with the nonce it came with;
// - with raw fetch, what a server must refuse (the answers are recorded, the test judges them):
//   the token as `Bearer`, the last served request sent again as it was (a replayed proof), and
//   the token with a proof of another key (a stolen token).
//
// Prints one JSON line: every HTTP exchange (status, `WWW-Authenticate`, whether a proof and a
// nonce went and came), the metadata's DPoP fields, the token's header and claims (never the
// token itself), the tool's answer, and the refused requests' statuses and challenges. Exits 1
// (the reason and the summary so far on stderr) when the flow fails.
import * as crypto from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  registerClient,
} from "@modelcontextprotocol/sdk/client/auth.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT } from "jose";

const ALG = "ES256";

function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1] : fallback;
}

const serverUrl = option("server");
const toolName = option("tool", "test_simple_text");
if (!serverUrl) {
  console.error("usage: dpop_client.mjs --server http://127.0.0.1:PORT/mcp [--tool NAME]");
  process.exit(2);
}

function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`);
}

const sha256 = (text) => crypto.createHash("sha256").update(text).digest("base64url");

/// `url` as a proof's `htu` names it: without query and fragment (RFC 9449 §4.2).
function htuOf(url) {
  const u = new URL(String(url));
  u.search = "";
  u.hash = "";
  return u.href;
}

/// The challenges of a `WWW-Authenticate` value (RFC 9110 §11.6.1), several headers included:
/// fetch joins them with ", ", so a new challenge starts wherever a token follows a comma
/// without `=`. `[{ scheme, params: { name: value } }]`.
function challenges(header) {
  const out = [];
  const re = /\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)(?:\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,]*))?\s*(,|$|\s)/y;
  let at = 0;
  let current = null;
  while (header && at < header.length) {
    re.lastIndex = at;
    const m = re.exec(header);
    if (!m || m[0] === "") break;
    at = re.lastIndex;
    const [, name, value] = m;
    if (value === undefined) {
      current = { scheme: name, params: {} };
      out.push(current);
    } else if (current) {
      current.params[name.toLowerCase()] = value.startsWith('"') ? value.slice(1, -1).replace(/\\(.)/g, "$1") : value;
    }
  }
  return out;
}

/// The header and claims of a JWT, unverified: what the test looks at, not a check.
function claimsOf(jwt) {
  const header = decodeProtectedHeader(jwt);
  const claims = decodeJwt(jwt);
  return {
    typ: header.typ,
    alg: header.alg,
    kid: header.kid,
    iss: claims.iss,
    aud: claims.aud,
    sub: claims.sub,
    client_id: claims.client_id,
    scope: claims.scope,
    cnf: claims.cnf,
  };
}

const exchanges = [];
const summary = { server: serverUrl, tool: null, exchanges };

/// One line on stderr per exchange, as it happens.
function step(entry) {
  const parts = [entry.method, entry.url];
  if (entry.rpc) parts.push(`(${entry.rpc})`);
  parts.push(`-> ${entry.status}`);
  if (entry.scheme) parts.push(`[${entry.scheme}${entry.proof ? " + proof" : ""}${entry.proofNonce ? " + nonce" : ""}]`);
  if (entry.error) parts.push(`error=${entry.error}`);
  if (entry.wwwAuthenticate) parts.push(`WWW-Authenticate: ${entry.wwwAuthenticate}`);
  if (entry.dpopNonce) parts.push("(DPoP-Nonce)");
  console.error("host:", parts.join(" "));
}

function rpcOf(body) {
  if (typeof body !== "string") return undefined;
  try {
    const parsed = JSON.parse(body);
    return typeof parsed?.method === "string" ? parsed.method : undefined;
  } catch {
    return undefined;
  }
}

/// fetch, noting each exchange: `label` names the negative checks.
async function recorded(url, init = {}, label) {
  const headers = new Headers(init.headers);
  const response = await fetch(url, { ...init, headers });
  const entry = { method: init.method ?? "GET", url: String(url).split("?")[0] };
  if (label) entry.check = label;
  const rpc = rpcOf(init.body);
  if (rpc) entry.rpc = rpc;
  entry.status = response.status;
  const authorization = headers.get("authorization");
  entry.scheme = authorization ? authorization.split(" ")[0] : null;
  entry.proof = headers.has("dpop");
  if (entry.proof) entry.proofNonce = decodeJwt(headers.get("dpop")).nonce !== undefined;
  if (response.headers.has("www-authenticate")) entry.wwwAuthenticate = response.headers.get("www-authenticate");
  entry.dpopNonce = response.headers.has("dpop-nonce");
  if (!response.ok && (response.headers.get("content-type") ?? "").includes("json")) {
    const body = await response.clone().json().catch(() => null);
    if (typeof body?.error === "string") entry.error = body.error;
  }
  exchanges.push(entry);
  step(entry);
  return response;
}

const { publicKey, privateKey } = await generateKeyPair(ALG);
const publicJwk = await exportJWK(publicKey);
const thumbprint = await calculateJwkThumbprint(publicJwk);
summary.keyThumbprint = thumbprint;

/// A DPoP proof (RFC 9449 §4.2) for `method` `url`, with `ath` for `token` and `nonce` when given.
async function proof({ method, url, token, nonce, key = privateKey, jwk = publicJwk }) {
  const claims = { jti: crypto.randomUUID(), htm: method, htu: htuOf(url) };
  if (token) claims.ath = sha256(token);
  if (nonce) claims.nonce = nonce;
  return new SignJWT(claims).setProtectedHeader({ alg: ALG, typ: "dpop+jwt", jwk }).setIssuedAt().sign(key);
}

/// Whether `response` refuses with `use_dpop_nonce`: a resource server says it in
/// `WWW-Authenticate` (RFC 9449 §9), an authorization server in a JSON error body (§8).
async function asksForNonce(response) {
  if (!response.headers.has("dpop-nonce")) return false;
  const wanted = challenges(response.headers.get("www-authenticate") ?? "").some(
    (c) => c.scheme.toLowerCase() === "dpop" && c.params.error === "use_dpop_nonce",
  );
  if (wanted) return true;
  if (response.status !== 400) return false;
  const body = await response.clone().json().catch(() => null);
  return body?.error === "use_dpop_nonce";
}

const nonces = { authorizationServer: null, resourceServer: null };
summary.nonceRounds = [];

try {
  // 1. A tokenless request: the 401 names the resource metadata.
  const initialize = {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "switchyard-dpop-test", version: "1.0.0" },
    },
  };
  const first = await recorded(serverUrl, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify(initialize),
  });
  await first.body?.cancel();
  check(first.status === 401, `a tokenless request gets 401 (got ${first.status})`);
  const offered = challenges(first.headers.get("www-authenticate") ?? "");
  summary.firstChallenges = offered;
  const dpopChallenge = offered.find((c) => c.scheme.toLowerCase() === "dpop");
  check(dpopChallenge, "the 401 offers a DPoP challenge");
  check((dpopChallenge.params.algs ?? "").split(" ").includes(ALG), `the DPoP challenge's algs list ${ALG}`);
  const metadataUrl = offered.map((c) => c.params.resource_metadata).find(Boolean);
  check(metadataUrl, "the 401 names resource_metadata");

  // 2. Discovery and registration, with the SDK's helpers.
  const resourceMetadata = await discoverOAuthProtectedResourceMetadata(
    serverUrl,
    { resourceMetadataUrl: new URL(metadataUrl) },
    recorded,
  );
  summary.resourceMetadata = {
    resource: resourceMetadata.resource,
    authorization_servers: resourceMetadata.authorization_servers,
    dpop_signing_alg_values_supported: resourceMetadata.dpop_signing_alg_values_supported,
    dpop_bound_access_tokens_required: resourceMetadata.dpop_bound_access_tokens_required,
  };
  check(
    resourceMetadata.dpop_signing_alg_values_supported?.includes(ALG),
    `the resource metadata lists ${ALG} in dpop_signing_alg_values_supported`,
  );
  const issuer = resourceMetadata.authorization_servers?.[0];
  check(issuer, "the resource metadata names an authorization server");
  const asMetadata = await discoverAuthorizationServerMetadata(issuer, { fetchFn: recorded });
  check(asMetadata, `metadata of ${issuer}`);
  summary.authorizationServer = {
    issuer: asMetadata.issuer,
    token_endpoint: asMetadata.token_endpoint,
    dpop_signing_alg_values_supported: asMetadata.dpop_signing_alg_values_supported,
    grant_types_supported: asMetadata.grant_types_supported,
  };
  check(asMetadata.dpop_signing_alg_values_supported?.includes(ALG), `the authorization server takes ${ALG} proofs`);
  check(asMetadata.grant_types_supported?.includes("client_credentials"), "the client credentials grant");
  const registered = await registerClient(issuer, {
    metadata: asMetadata,
    clientMetadata: {
      client_name: "switchyard-dpop-test",
      grant_types: ["client_credentials"],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: "client_secret_basic",
      scope: "mcp",
      dpop_bound_access_tokens: true,
    },
    fetchFn: recorded,
  });
  summary.registered = registered.client_id;

  // 3. A DPoP-bound token by client credentials, for this resource.
  const basic = Buffer.from(
    `${encodeURIComponent(registered.client_id)}:${encodeURIComponent(registered.client_secret)}`,
  ).toString("base64");
  let tokenResponse;
  for (let attempt = 0; attempt < 2; attempt++) {
    const url = asMetadata.token_endpoint;
    tokenResponse = await recorded(url, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${basic}`,
        dpop: await proof({ method: "POST", url, nonce: nonces.authorizationServer }),
      },
      body: new URLSearchParams({
        grant_type: "client_credentials",
        resource: resourceMetadata.resource,
        scope: "mcp",
      }).toString(),
    });
    if (tokenResponse.headers.has("dpop-nonce")) nonces.authorizationServer = tokenResponse.headers.get("dpop-nonce");
    if (attempt === 0 && (await asksForNonce(tokenResponse))) {
      summary.nonceRounds.push({ at: "authorizationServer", url });
      continue;
    }
    break;
  }
  const tokenBody = await tokenResponse.json();
  check(tokenResponse.ok, `a token (got ${tokenResponse.status}: ${JSON.stringify(tokenBody)})`);
  summary.tokenType = tokenBody.token_type;
  check(tokenBody.token_type === "DPoP", `token_type DPoP (got ${tokenBody.token_type})`);
  const token = tokenBody.access_token;
  summary.token = claimsOf(token);
  summary.boundToThisKey = summary.token.cnf?.jkt === thumbprint;

  // 4. The SDK's client, every request with the token and a fresh proof.
  let lastAccepted = null;
  async function dpopFetch(url, init = {}) {
    const method = init.method ?? "GET";
    let response;
    for (let attempt = 0; attempt < 2; attempt++) {
      const headers = new Headers(init.headers);
      headers.set("authorization", `DPoP ${token}`);
      headers.set("dpop", await proof({ method, url, token, nonce: nonces.resourceServer }));
      response = await recorded(url, { ...init, headers });
      if (response.headers.has("dpop-nonce")) nonces.resourceServer = response.headers.get("dpop-nonce");
      if (attempt === 0 && response.status === 401 && (await asksForNonce(response))) {
        await response.body?.cancel();
        summary.nonceRounds.push({ at: "resourceServer", method, rpc: rpcOf(init.body) ?? null });
        continue;
      }
      if (response.ok && method === "POST") lastAccepted = { url: String(url), init: { ...init, headers } };
      break;
    }
    return response;
  }

  const transport = new StreamableHTTPClientTransport(new URL(serverUrl), { fetch: dpopFetch });
  const client = new Client({ name: "switchyard-dpop-test", version: "1.0.0" });
  await client.connect(transport);
  summary.protocolVersion = transport.protocolVersion ?? null;
  const tools = await client.listTools();
  summary.tools = tools.tools.map((t) => t.name);
  check(summary.tools.includes(toolName), `tools/list lists ${toolName}`);
  const result = await client.callTool({ name: toolName, arguments: {} });
  summary.tool = {
    name: toolName,
    isError: Boolean(result.isError),
    text: result.content?.find((c) => c.type === "text")?.text ?? null,
  };
  console.error(`host: ${toolName} answered ${JSON.stringify(summary.tool.text)}`);

  // 5. What must be refused, with raw fetch.
  const refused = async (label, url, init) => {
    const response = await recorded(url, init, label);
    await response.body?.cancel();
    return { status: response.status, wwwAuthenticate: response.headers.get("www-authenticate") };
  };
  check(lastAccepted, "a POST was accepted");
  const bearerHeaders = new Headers(lastAccepted.init.headers);
  bearerHeaders.set("authorization", `Bearer ${token}`);
  bearerHeaders.delete("dpop");
  summary.refused = {};
  summary.refused.bearer = await refused("bearer", lastAccepted.url, { ...lastAccepted.init, headers: bearerHeaders });
  // The very request the server served last, proof and all.
  summary.refused.replay = await refused("replay", lastAccepted.url, lastAccepted.init);
  const thief = await generateKeyPair(ALG);
  const thiefHeaders = new Headers(lastAccepted.init.headers);
  thiefHeaders.set(
    "dpop",
    await proof({
      method: "POST",
      url: lastAccepted.url,
      token,
      nonce: nonces.resourceServer,
      key: thief.privateKey,
      jwk: await exportJWK(thief.publicKey),
    }),
  );
  summary.refused.otherKey = await refused("otherKey", lastAccepted.url, { ...lastAccepted.init, headers: thiefHeaders });

  // 6. The session's end: DELETE, with a proof too.
  await transport.terminateSession();
  await client.close();
} catch (e) {
  console.error(String(e?.stack ?? e));
  console.error(JSON.stringify(summary));
  console.error(`client failed: ${e?.message ?? e}`);
  process.exit(1);
}

console.log(JSON.stringify(summary));
