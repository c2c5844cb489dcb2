"""An MCP server written with the official Python SDK (tests/oauth/requirements.txt), served over
stdio: the client's interoperability tests (tests/it/client.rs) talk to it."""

from typing import Annotated

from mcp.server.mcpserver import Context, Elicit, ListRoots, MCPServer, Resolve
from mcp_types import ListRootsResult
from pydantic import BaseModel

server = MCPServer("py-server", version="3.1.4", instructions="Arithmetic, in Python.")


class Booking(BaseModel):
    name: str
    seats: int = 2


def ask_booking() -> Elicit[Booking]:
    return Elicit("Who is coming?", Booking)


def ask_roots() -> ListRoots:
    return ListRoots()


@server.tool()
def book(
    booking: Annotated[Booking, Resolve(ask_booking)],
    roots: Annotated[ListRootsResult, Resolve(ask_roots)],
) -> str:
    """Book a table: asks the user who is coming, and reads the client's roots."""
    return f"{booking.name} x{booking.seats}, roots: {','.join(str(r.uri) for r in roots.roots)}"


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def fail(reason: str) -> str:
    """Always fails, with `reason`."""
    raise ValueError(reason)


@server.tool()
async def touch_notes(ctx: Context) -> str:
    """Tells whoever follows notes://py that it changed: `subscriptions/listen` streams on
    2026-07-28, the caller's session on earlier revisions."""
    if ctx.protocol_version == "2026-07-28":
        await ctx.notify_resource_updated("notes://py")
    else:
        await ctx.session.send_resource_updated("notes://py")
    return "touched"


@server.prompt()
def haiku(topic: str) -> str:
    """A haiku about a topic."""
    return f"Write a haiku about {topic}."


@server.resource("notes://py", mime_type="text/plain")
def notes() -> str:
    """Notes, in plain text."""
    return "written in Python"


if __name__ == "__main__":
    import sys

    # `py_server.py` serves stdio; `py_server.py --http PORT` serves Streamable HTTP on
    # 127.0.0.1:PORT/mcp.
    if "--http" in sys.argv:
        port = int(sys.argv[sys.argv.index("--http") + 1])
        server.run("streamable-http", host="127.0.0.1", port=port)
    else:
        server.run("stdio")
