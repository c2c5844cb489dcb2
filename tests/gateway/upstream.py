"""An upstream MCP server written with the official Python SDK (tests/oauth/requirements.txt),
served over stdio: the gateway example (examples/gateway.rs) serves its items, and the
gateway's end-to-end test (tests/it/gateway.rs) calls them through it."""

from typing import Annotated

import anyio
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from pydantic import BaseModel

server = MCPServer("py-upstream", version="1.0.0", instructions="Arithmetic and slow work, in Python.")

# How many `slow` calls were cancelled while they ran.
STATE = {"cancelled": 0}


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def slow(steps: int, delay: float, ctx: Context) -> str:
    """Works `steps` steps of `delay` seconds each, reporting progress after each."""
    try:
        for step in range(1, steps + 1):
            await anyio.sleep(delay)
            await ctx.report_progress(step, steps, f"step {step} of {steps}")
    except anyio.get_cancelled_exc_class():
        STATE["cancelled"] += 1
        raise
    return f"done after {steps} steps"


@server.tool()
def cancelled() -> int:
    """How many `slow` calls were cancelled while they ran."""
    return STATE["cancelled"]


def extra(text: str) -> str:
    """A tool `grow` adds: echoes `text`."""
    return text


@server.tool()
async def grow(ctx: Context) -> str:
    """Adds the tool `extra` and tells the client its tool list changed: on its
    `subscriptions/listen` streams on 2026-07-28, its session on earlier revisions."""
    server.add_tool(extra)
    if ctx.protocol_version == "2026-07-28":
        await ctx.notify_tools_changed()
    else:
        await ctx.session.send_tool_list_changed()
    return "grown"


class Who(BaseModel):
    name: str


def ask_who() -> Elicit[Who]:
    return Elicit("Who is asking?", Who)


@server.tool()
def hello(who: Annotated[Who, Resolve(ask_who)]) -> str:
    """Greets whoever the client says is asking: a form the gateway relays to its own client."""
    return f"Hello, {who.name}!"


@server.prompt()
def haiku(topic: str) -> str:
    """A haiku about a topic."""
    return f"Write a haiku about {topic}."


@server.resource("notes://py", mime_type="text/plain")
def notes() -> str:
    """Notes, in plain text."""
    return "written in Python"


if __name__ == "__main__":
    server.run("stdio")
