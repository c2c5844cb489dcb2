"""A misbehaving MCP upstream over stdio, JSON-RPC written by hand (no SDK): its tools hang,
exit mid-call, or answer with garbage (and one answers well, in json.dumps's escaped form). The gateway's end-to-end test (tests/it/gateway.rs)
checks that each becomes a clear error and that the gateway keeps serving."""

import json
import sys

TOOLS = [
    {"name": name, "description": description, "inputSchema": {"type": "object", "properties": {}}}
    for name, description in [
        ("hang", "Never answers."),
        ("die", "Exits without answering."),
        ("garbage", "Answers with something that is no tool result."),
        ("escaped", "Answers text whose every non-ASCII character is escaped (json.dumps does so)."),
    ]
]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request):
    method, rid = request.get("method"), request.get("id")
    if method == "initialize":
        version = request.get("params", {}).get("protocolVersion", "2025-11-25")
        return {"protocolVersion": version, "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "bad-upstream", "version": "0.0.1"}}
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        name = request.get("params", {}).get("name")
        if name == "hang":
            return None
        if name == "die":
            sys.exit(3)
        if name == "garbage":
            # A line that is no JSON, then a result whose content is no list of blocks.
            sys.stdout.write("this is not JSON\n")
            return {"content": "not a list of content blocks", "isError": "perhaps"}
        if name == "escaped":
            return {"content": [{"type": "text", "text": "A\u00e9 \U0001F600"}]}
    raise LookupError(method)


for line in sys.stdin:
    try:
        request = json.loads(line)
    except ValueError:
        continue
    if "id" not in request or "method" not in request:
        continue  # notifications and responses
    try:
        result = answer(request)
    except LookupError:
        # server/discover among them: this upstream only speaks sessions.
        send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "method not found"}})
        continue
    if result is not None:
        send({"jsonrpc": "2.0", "id": request["id"], "result": result})
