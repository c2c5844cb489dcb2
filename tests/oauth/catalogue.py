"""The official Python SDK's client reading a server's whole catalogue, for the metadata tests.

    tests/oauth/catalogue.sh --server http://127.0.0.1:3000/mcp [--wire stateless|session] [--tool NAME]

Lists tools, prompts, resources and resource templates (every page), calls one tool, and prints
one JSON line: what the SDK made of each answer, dumped from its typed models with the wire's
field names. A field of the wrong shape (an icon without `src`, annotations whose `priority` is
not a number, ...) fails the SDK's own validation, so the script exits 1 with the reason on
stderr; a field the SDK keeps shows in the dump, so the test sees it arrived.
"""

import argparse
import asyncio
import json
import sys
import traceback

from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client


def dump(model) -> dict:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def every_page(fetch, field: str) -> list:
    items, cursor = [], None
    while True:
        page = await fetch(cursor=cursor) if cursor else await fetch()
        items.extend(dump(item) for item in getattr(page, field))
        cursor = page.next_cursor
        if not cursor:
            return items


async def run(args: argparse.Namespace) -> dict:
    # "auto" asks `server/discover` first, so `serverInfo` comes typed from its answer.
    mode = "auto" if args.wire == "stateless" else "legacy"
    async with Client(streamable_http_client(args.server), mode=mode) as client:
        info = client.server_info
        return {
            "protocolVersion": client.protocol_version,
            "serverInfo": dump(info) if info is not None else None,
            "tools": await every_page(client.list_tools, "tools"),
            "prompts": await every_page(client.list_prompts, "prompts"),
            "resources": await every_page(client.list_resources, "resources"),
            "resourceTemplates": await every_page(client.list_resource_templates, "resource_templates"),
            "call": dump(await client.call_tool(args.tool, {})),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", required=True, help="the MCP endpoint, e.g. http://127.0.0.1:3000/mcp")
    parser.add_argument("--wire", choices=["stateless", "session"], default="stateless",
                        help="stateless: server/discover, then MCP 2026-07-28 requests; session: a 2025-11-25 initialize session")
    parser.add_argument("--tool", default="test_simple_text", help="the tool to call (no arguments)")
    args = parser.parse_args()
    try:
        summary = asyncio.run(asyncio.wait_for(run(args), timeout=60))
    except Exception as e:  # noqa: BLE001 - the reason is the output
        traceback.print_exception(e)
        print(f"catalogue failed: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
