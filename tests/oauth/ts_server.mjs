// An MCP server written with the official TypeScript SDK (tests/oauth/package.json), served over
// stdio: the client's interoperability tests (tests/it/client.rs) talk to it. Run with the
// Node.js 22 of tests/oauth/node_modules.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import express from "express";
import { randomUUID } from "node:crypto";
import { z } from "zod";

// `node ts_server.mjs` serves stdio; `node ts_server.mjs --http PORT` serves Streamable HTTP on
// 127.0.0.1:PORT/mcp with sessions, as the SDK's own example does.
function build() {
const server = new McpServer({ name: "ts-server", version: "2.7.1" }, { instructions: "Arithmetic, in TypeScript." });

server.registerTool(
  "add",
  { description: "Add two integers.", inputSchema: { a: z.number().int(), b: z.number().int() } },
  async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
);

server.registerTool(
  "fail",
  { description: "Always fails, with `reason`.", inputSchema: { reason: z.string() } },
  async ({ reason }) => ({ content: [{ type: "text", text: reason }], isError: true }),
);

server.registerTool(
  "book",
  { description: "Book a table: asks the user who is coming, and reads the client's roots.", inputSchema: {} },
  async (_args, extra) => {
    const related = { relatedRequestId: extra.requestId };
    const answer = await server.server.elicitInput({
      message: "Who is coming?",
      requestedSchema: {
        type: "object",
        properties: { name: { type: "string" }, seats: { type: "integer", default: 2 } },
        required: ["name"],
      },
    }, related);
    const roots = await server.server.listRoots(undefined, related);
    const who = answer.action === "accept" ? `${answer.content.name} x${answer.content.seats}` : answer.action;
    return { content: [{ type: "text", text: `${who}, roots: ${roots.roots.map((r) => r.uri).join(",")}` }] };
  },
);

server.registerPrompt(
  "haiku",
  { description: "A haiku about a topic.", argsSchema: { topic: z.string() } },
  ({ topic }) => ({ messages: [{ role: "user", content: { type: "text", text: `Write a haiku about ${topic}.` } }] }),
);

server.registerResource(
  "notes",
  "notes://ts",
  { mimeType: "text/plain", description: "Notes, in plain text." },
  async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "written in TypeScript" }] }),
);

return server;
}

const at = process.argv.indexOf("--http");
if (at < 0) {
  await build().connect(new StdioServerTransport());
} else {
  const sessions = {};
  const app = express();
  app.use(express.json());
  app.post("/mcp", async (req, res) => {
    const id = req.headers["mcp-session-id"];
    let transport = id ? sessions[id] : undefined;
    if (!transport) {
      if (!isInitializeRequest(req.body)) {
        res.status(400).json({ jsonrpc: "2.0", error: { code: -32000, message: "Bad Request: No valid session ID provided" }, id: null });
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => { sessions[sid] = transport; },
      });
      transport.onclose = () => { if (transport.sessionId) delete sessions[transport.sessionId]; };
      await build().connect(transport);
    }
    await transport.handleRequest(req, res, req.body);
  });
  const other = async (req, res) => {
    const transport = sessions[req.headers["mcp-session-id"]];
    if (!transport) { res.status(400).send("no such session"); return; }
    await transport.handleRequest(req, res);
  };
  app.get("/mcp", other);
  app.delete("/mcp", other);
  app.listen(Number(process.argv[at + 1]), "127.0.0.1");
}
