// An MCP server written with the official TypeScript SDK (tests/oauth/package.json), served over
// stdio: the client's interoperability tests (tests/it/client.rs) talk to it. Run with the
// Node.js 22 of tests/oauth/node_modules.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

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

await server.connect(new StdioServerTransport());
