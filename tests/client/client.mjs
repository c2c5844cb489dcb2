// Drives an MCP server over stdio with the official TypeScript SDK client and checks the answers.
//
//   node client.mjs SERVER_COMMAND [ARGS...]
//
// Prints one JSON line with what it saw; exits 1 (with the reason on stderr) when a check fails.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error("usage: node client.mjs SERVER_COMMAND [ARGS...]");
  process.exit(2);
}

function check(cond, what) {
  if (!cond) {
    throw new Error(`check failed: ${what}`);
  }
}

const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
const client = new Client({ name: "switchyard-real-client-test", version: "1.0.0" });
try {
  await client.connect(transport);
  const server = client.getServerVersion();
  const tools = await client.listTools();
  const names = tools.tools.map((t) => t.name);
  check(names.includes("test_simple_text"), "tools/list lists test_simple_text");
  check(tools.tools.every((t) => t.description && t.inputSchema?.type === "object"), "every tool has a description and an object schema");

  const call = await client.callTool({ name: "test_simple_text", arguments: {} });
  check(call.content?.[0]?.type === "text" && call.content[0].text.length > 0, "tools/call returns text");

  const failing = await client.callTool({ name: "test_error_handling", arguments: {} });
  check(failing.isError === true, "a tool error is an isError result");

  const resource = await client.readResource({ uri: "test://static-text" });
  check(resource.contents?.[0]?.text?.length > 0, "resources/read returns text");

  const templated = await client.readResource({ uri: "test://template/42/data" });
  check(templated.contents?.[0]?.text?.includes("42"), "a template resource binds its variable");

  const prompt = await client.getPrompt({
    name: "test_prompt_with_arguments",
    arguments: { arg1: "alpha", arg2: "beta" },
  });
  const promptText = JSON.stringify(prompt.messages);
  check(promptText.includes("alpha") && promptText.includes("beta"), "prompts/get renders its arguments");

  let unknownTool = null;
  try {
    await client.callTool({ name: "no_such_tool", arguments: {} });
  } catch (e) {
    unknownTool = e.code;
  }
  check(unknownTool === -32602, `an unknown tool is -32602 (got ${unknownTool})`);

  console.log(JSON.stringify({
    server,
    protocolVersion: transport.protocolVersion ?? null,
    tools: names.length,
    called: call.content[0].text,
    resource: resource.contents[0].uri,
    promptMessages: prompt.messages.length,
  }));
  await client.close();
} catch (e) {
  console.error(String(e?.stack ?? e));
  try { await client.close(); } catch {}
  process.exit(1);
}
