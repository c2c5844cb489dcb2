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
    server.run("stdio")
