"""A real MCP host signing in to a protected MCP server: the official Python SDK's OAuth client
(`OAuthClientProvider`) with its Streamable HTTP client, for the OAuth tests and the worked
example of docs/authorization.md.

    tests/oauth/client.sh --server http://127.0.0.1:3000/mcp [--wire stateless|session] [--tool NAME]

It starts with no token and lets the SDK do everything a host does: take the 401, read the
protected resource metadata, discover the authorization server, register, authorize with PKCE and
`resource=`, exchange the code, and retry; and on a 403 `insufficient_scope`, authorize again for
more (step-up). The "browser" is headless: it follows the authorization URL's redirects (the test
authorization server signs in and consents at once) until the loopback redirect URI, whose code
and state go back to the SDK, as a native app's loopback listener would hand them over.

Prints one JSON line: every HTTP exchange the SDK made, the browser's hops, the tokens it got
(header and claims, never the token itself) and the tool's answer. Exits 1 (the reason and the
exchanges so far on stderr) when the flow fails.
"""

import argparse
import asyncio
import base64
import json
import sys
import traceback
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp.client import Client
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from mcp.shared.exceptions import MCPError

# Nothing listens here: the browser stops at the redirect to it and reads code and state off the
# URL (a loopback redirect URI, as RFC 8252 has native apps use).
REDIRECT_URI = "http://127.0.0.1:9/callback"
MAX_HOPS = 10


def claims_of(jwt: str) -> dict:
    """Header and payload of a JWT, unverified: what the test looks at, not a check."""

    def part(segment: str) -> dict:
        return json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))

    header, payload = (part(s) for s in jwt.split(".")[:2])
    return {
        "alg": header.get("alg"),
        "kid": header.get("kid"),
        "iss": payload.get("iss"),
        "aud": payload.get("aud"),
        "sub": payload.get("sub"),
        "scope": payload.get("scope"),
        "cnf": payload.get("cnf"),
    }


def rpc_method(request: httpx2.Request) -> str | None:
    """The JSON-RPC method of an MCP POST (the 2025-11-25 wire has no `Mcp-Method` header)."""
    if request.method != "POST" or not request.headers.get("content-type", "").startswith("application/json"):
        return None
    try:
        body = json.loads(request.content)
    except (ValueError, httpx2.RequestNotRead):
        return None
    return body.get("method") if isinstance(body, dict) else None


def step(entry: dict) -> None:
    """One line on stderr per HTTP exchange, as it happens: what a host sees, for a person."""
    parts = [entry.get("method", ""), entry["url"]]
    if "rpc" in entry:
        parts.append(f"({entry['rpc']})")
    if "status" in entry:
        parts.append(f"-> {entry['status']}")
    if entry.get("bearer"):
        parts.append("[Bearer]")
    if "wwwAuthenticate" in entry:
        parts.append(f"WWW-Authenticate: {entry['wwwAuthenticate']}")
    if isinstance(entry.get("browser"), dict):
        parts.append("browser opens " + " ".join(f"{k}={v}" for k, v in entry["browser"].items()))
    elif isinstance(entry.get("browser"), str):
        parts.append(entry["browser"])
    print("host:", " ".join(p for p in parts if p), file=sys.stderr, flush=True)


class MemoryStorage(TokenStorage):
    """Keeps the registration and tokens for this run only, noting each token the SDK stores."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None
        self.issued: list[dict] = []

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens
        issued = {**claims_of(tokens.access_token), "grantedScope": tokens.scope}
        self.issued.append(issued)
        print(f"host: got an access token: {json.dumps(issued)}", file=sys.stderr, flush=True)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class HeadlessBrowser:
    """Opens the authorization URL and follows redirects until the redirect URI.

    A fresh cookie jar per authorization: no session is remembered between two sign-ins, so a
    step-up is asked of the authorization server anew.
    """

    def __init__(self) -> None:
        self.hops: list[dict] = []
        self.result: AuthorizationCodeResult | None = None

    async def open(self, url: str) -> None:
        query = parse_qs(urlsplit(url).query)
        asked = {name: query[name][0] for name in ("scope", "resource", "code_challenge_method", "prompt") if name in query}
        self.hops.append({"authorize": url.split("?")[0], **asked})
        step({"method": "GET", "url": url.split("?")[0], "browser": asked})
        async with httpx2.AsyncClient(follow_redirects=False, timeout=20) as browser:
            for _ in range(MAX_HOPS):
                response = await browser.get(url)
                self.hops.append({"url": url.split("?")[0], "status": response.status_code})
                step({"method": "GET", "url": url.split("?")[0], "status": response.status_code, "browser": True})
                location = response.headers.get("location")
                if response.status_code not in (302, 303) or not location:
                    raise RuntimeError(f"authorization stopped at {url}: {response.status_code} {response.text[:500]}")
                url = str(response.url.join(location))
                if url.startswith(REDIRECT_URI):
                    query = parse_qs(urlsplit(url).query)
                    if "error" in query:
                        raise RuntimeError(f"authorization refused: {query}")
                    first = lambda name: query.get(name, [None])[0]  # noqa: E731
                    self.result = AuthorizationCodeResult(code=first("code"), state=first("state"), iss=first("iss"))
                    self.hops.append({"url": REDIRECT_URI, "code": True})
                    step({"url": REDIRECT_URI, "browser": "code and state handed to the SDK"})
                    return
        raise RuntimeError(f"more than {MAX_HOPS} redirects from the authorization URL")

    async def callback(self) -> AuthorizationCodeResult:
        if self.result is None:
            raise RuntimeError("no authorization code came back")
        result, self.result = self.result, None
        return result


async def run(args: argparse.Namespace) -> dict:
    storage = MemoryStorage()
    browser = HeadlessBrowser()
    exchanges: list[dict] = []

    async def seen(response: httpx2.Response) -> None:
        request = response.request
        entry = {"method": request.method, "url": str(request.url).split("?")[0]}
        rpc = rpc_method(request)
        if rpc:
            entry["rpc"] = rpc
        entry["status"] = response.status_code
        if "www-authenticate" in response.headers:
            entry["wwwAuthenticate"] = response.headers["www-authenticate"]
        entry["bearer"] = request.headers.get("authorization", "").startswith("Bearer ")
        exchanges.append(entry)
        step(entry)

    auth = OAuthClientProvider(
        server_url=args.server,
        client_metadata=OAuthClientMetadata(
            client_name="switchyard-oauth-test",
            redirect_uris=[REDIRECT_URI],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=browser.open,
        callback_handler=browser.callback,
    )
    # The SDK's own defaults for an MCP client (a long read timeout for streams), plus the hook.
    http = httpx2.AsyncClient(auth=auth, timeout=httpx2.Timeout(30, read=300), event_hooks={"response": [seen]})
    mode = "2026-07-28" if args.wire == "stateless" else "legacy"
    summary: dict = {"wire": args.wire, "exchanges": exchanges, "browser": browser.hops, "tokens": storage.issued}
    try:
        async with http, Client(streamable_http_client(args.server, http_client=http), mode=mode) as client:
            summary["protocolVersion"] = client.protocol_version
            try:
                result = await client.call_tool(args.tool, {})
            except MCPError:
                # The SDK steps up on a 403 only when it answers a request's first try; a 403 that
                # answers the retry after a sign-in comes back as this error. Calling again sends
                # the token once more, and the SDK's own step-up takes the 403 from there.
                last = exchanges[-1] if exchanges else {}
                if last.get("status") != 403 or 'error="insufficient_scope"' not in last.get("wwwAuthenticate", ""):
                    raise
                summary["calledAgainAfter403"] = True
                result = await client.call_tool(args.tool, {})
            summary["tool"] = {
                "name": args.tool,
                "isError": bool(result.is_error),
                "text": next((c.text for c in result.content if getattr(c, "type", None) == "text"), None),
            }
            print(f"host: {args.tool} answered {json.dumps(summary['tool']['text'])}", file=sys.stderr, flush=True)
    except BaseException:
        print(json.dumps(summary), file=sys.stderr)
        raise
    summary["registered"] = storage.client.client_id if storage.client else None
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", required=True, help="the MCP endpoint, e.g. http://127.0.0.1:3000/mcp")
    parser.add_argument("--wire", choices=["stateless", "session"], default="stateless",
                        help="stateless: MCP 2026-07-28 requests; session: a 2025-11-25 initialize session")
    parser.add_argument("--tool", default="test_simple_text", help="the tool to call (no arguments)")
    args = parser.parse_args()
    try:
        summary = asyncio.run(asyncio.wait_for(run(args), timeout=60))
    except Exception as e:  # noqa: BLE001 - the reason is the output
        traceback.print_exception(e)
        print(f"client failed: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
