"""An MCP server written with the official Python SDK (tests/oauth/requirements.txt), served over
stdio: the client's interoperability tests (tests/it/client.rs) talk to it."""

from mcp.server.mcpserver import MCPServer

server = MCPServer("py-server", version="3.1.4", instructions="Arithmetic, in Python.")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def fail(reason: str) -> str:
    """Always fails, with `reason`."""
    raise ValueError(reason)


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
