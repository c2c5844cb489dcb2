// Plays an MCP Apps host against a server, end to end, with the official SDKs: a TypeScript
// MCP SDK client (Streamable HTTP, declaring the io.modelcontextprotocol/ui extension), the
// ext-apps AppBridge between that client and the view, and the view itself (the server's `ui://`
// resource) in a sandboxed iframe of headless Chromium driven by puppeteer-core.
//
//   node host.mjs --server URL --protocol 2025-11-25|2026-07-28 --screenshot PATH
//
// `--protocol 2025-11-25`: the v1 SDK (@modelcontextprotocol/sdk, which speaks the session
// revisions) with ext-apps 1.x; `2026-07-28`: the v2 client (@modelcontextprotocol/client,
// pinned to that revision) with ext-apps 2.x (installed as `ext-apps-v2`). The view is the same
// page either way: its own App class talks to whichever bridge over postMessage.
//
// What it does, as a host would: lists the tools, reads the view linked to `roll_dice`, calls
// the tool as the model would and shows the view with that call's input and result; then
// clicks the view's Roll button, whose `tools/call` the bridge forwards to the server. Prints
// one JSON line with what it saw (the Rust test compares it); exits 1 with the reason on
// stderr when something fails.
import puppeteer from "puppeteer-core";
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";

const EXTENSION = "io.modelcontextprotocol/ui";
const TOOL = "roll_dice";
const LIMIT_MS = 60_000;

function arg(name) {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
}

function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`);
}

function chromiumPath() {
  if (process.env.SWITCHYARD_CHROMIUM) return process.env.SWITCHYARD_CHROMIUM;
  return execFileSync("sh", ["-c", "command -v chromium"], { encoding: "utf8" }).trim();
}

// The spec's restrictive default policy for views, with the origins the view declared
// (`_meta.ui.csp`) added to their directives: what a host MUST enforce, and no more.
function contentSecurityPolicy(csp = {}) {
  const with_ = (base, extra) => [base, ...(extra ?? [])].join(" ");
  const resources = csp.resourceDomains;
  return [
    "default-src 'none'",
    `script-src ${with_("'self' 'unsafe-inline'", resources)}`,
    `style-src ${with_("'self' 'unsafe-inline'", resources)}`,
    `img-src ${with_("'self' data:", resources)}`,
    `font-src ${with_("'self'", resources)}`,
    `media-src ${with_("'self' data:", resources)}`,
    `connect-src ${csp.connectDomains?.length ? csp.connectDomains.join(" ") : "'none'"}`,
    `frame-src ${csp.frameDomains?.length ? csp.frameDomains.join(" ") : "'none'"}`,
    `base-uri ${csp.baseUriDomains?.length ? csp.baseUriDomains.join(" ") : "'self'"}`,
  ].join("; ");
}

function withCsp(html, policy) {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy.replaceAll('"', "&quot;")}">`;
  return /<head[^>]*>/i.test(html) ? html.replace(/<head[^>]*>/i, (head) => head + meta) : meta + html;
}

// The host page: one sandboxed iframe (scripts only: an opaque origin, no access to the host)
// and the two ends of the postMessage channel, wired to the bridge in Node.
const HOST_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>MCP Apps test host</title></head>
<body style="margin:0;padding:16px;font-family:sans-serif;background:#eef1f5">
<div style="margin-bottom:8px;color:#445">switchyard MCP Apps test host: <code>roll_dice</code> → <code>ui://</code> view</div>
<iframe id="view" sandbox="allow-scripts" style="width:560px;height:300px;border:1px solid #99a;border-radius:8px;background:#fff"></iframe>
<script>
  const frame = document.getElementById("view");
  window.addEventListener("message", (event) => {
    if (event.source === frame.contentWindow) window.__viewToHost(event.data);
  });
  window.__hostToView = (message) => frame.contentWindow.postMessage(message, "*");
  window.__load = (html) => { frame.srcdoc = html; };
</script></body></html>`;

async function main() {
  const server = arg("--server");
  const protocol = arg("--protocol");
  const screenshot = arg("--screenshot");
  check(
    server && screenshot && ["2025-11-25", "2026-07-28"].includes(protocol),
    "usage: node host.mjs --server URL --protocol 2025-11-25|2026-07-28 --screenshot PATH",
  );
  const modern = protocol === "2026-07-28";
  const { Client, StreamableHTTPClientTransport } = modern
    ? await import("@modelcontextprotocol/client")
    : {
        ...(await import("@modelcontextprotocol/sdk/client/index.js")),
        ...(await import("@modelcontextprotocol/sdk/client/streamableHttp.js")),
      };
  const { AppBridge, getToolUiResourceUri, RESOURCE_MIME_TYPE } = modern
    ? await import("ext-apps-v2/app-bridge")
    : await import("@modelcontextprotocol/ext-apps/app-bridge");
  // The v2 client negotiates the session handshake unless told otherwise.
  const era = modern ? { versionNegotiation: { mode: { pin: protocol } } } : {};
  const negotiated = (client, http) => (modern ? client.getNegotiatedProtocolVersion() : http.protocolVersion);

  // A client that renders no views sees the tool without UI metadata.
  const plain = new Client({ name: "switchyard-apps-plain-client", version: "1.0.0" }, { ...era });
  await plain.connect(new StreamableHTTPClientTransport(new URL(server)));
  const plainTool = (await plain.listTools()).tools.find((t) => t.name === TOOL);
  await plain.close();

  const client = new Client(
    { name: "switchyard-apps-test-host", version: "1.0.0" },
    { ...era, capabilities: { extensions: { [EXTENSION]: { mimeTypes: [RESOURCE_MIME_TYPE] } } } },
  );
  const http = new StreamableHTTPClientTransport(new URL(server));
  await client.connect(http);
  const tools = (await client.listTools()).tools;
  const tool = tools.find((t) => t.name === TOOL);
  check(tool, `tools/list lists ${TOOL}`);
  const viewUri = getToolUiResourceUri(tool);
  check(viewUri, `${TOOL} carries _meta.ui.resourceUri`);
  const visibility = tool._meta?.ui?.visibility ?? ["model", "app"];

  const read = await client.readResource({ uri: viewUri });
  const view = read.contents?.[0];
  check(view?.mimeType === RESOURCE_MIME_TYPE, `the view is ${RESOURCE_MIME_TYPE}`);
  check(typeof view.text === "string" && view.text.length > 0, "the view has HTML text");

  // The model's call: its input and result go to the view once it is initialized.
  const args = { count: 2, sides: 6 };
  const modelCall = await client.callTool({ name: TOOL, arguments: args });

  const browser = await puppeteer.launch({
    executablePath: chromiumPath(),
    headless: true,
    // Root in a container: Chromium's own sandbox needs user namespaces it may not have.
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
  const viewLog = [];
  const appCalls = [];
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 600, height: 360 });
    page.on("console", (m) => viewLog.push(`${m.type()}: ${m.text()}`));
    page.on("pageerror", (e) => viewLog.push(`pageerror: ${e.message}`));

    const transport = {
      async start() {},
      async send(message) {
        await page.evaluate((m) => window.__hostToView(m), message);
      },
      async close() {
        this.onclose?.();
      },
    };
    await page.exposeFunction("__viewToHost", (message) => transport.onmessage?.(message));
    await page.setContent(HOST_PAGE);

    const bridge = new AppBridge(
      client,
      { name: "switchyard-apps-test-host", version: "1.0.0" },
      { serverTools: {}, serverResources: {}, logging: {} },
      { hostContext: { theme: "light", displayMode: "inline", platform: "web" } },
    );
    const initialized = new Promise((resolve) => {
      bridge.oninitialized = () => {
        bridge.sendToolInput({ arguments: args });
        bridge.sendToolResult(modelCall);
        resolve();
      };
    });
    await bridge.connect(transport);
    // After connect, which installs its own forwarder: a host MUST refuse calls from a view to
    // tools whose visibility lacks "app", and records what it forwards.
    bridge.oncalltool = async (params) => {
      const target = tools.find((t) => t.name === params.name);
      const who = target?._meta?.ui?.visibility ?? ["model", "app"];
      if (!target || !who.includes("app")) throw new Error(`${params.name} is not callable from the view`);
      const result = await client.callTool(params);
      appCalls.push({ params, result });
      return result;
    };

    await page.evaluate((html) => window.__load(html), withCsp(view.text, contentSecurityPolicy(view._meta?.ui?.csp)));
    await initialized;
    const frame = await (await page.$("#view")).contentFrame();
    const shown = async (rolls) => {
      await frame.waitForFunction((n) => document.getElementById("total")?.dataset.rolls === n, { timeout: 15_000 }, String(rolls));
      return frame.evaluate(() => ({
        total: document.getElementById("total").textContent,
        dice: [...document.querySelectorAll("#dice .die")].map((d) => d.textContent),
        status: document.getElementById("status").textContent,
      }));
    };
    const afterModelCall = await shown(1);
    await frame.waitForSelector("#roll:not([disabled])", { timeout: 15_000 });
    await frame.click("#roll");
    const afterClick = await shown(2);

    mkdirSync(dirname(screenshot), { recursive: true });
    await page.screenshot({ path: screenshot });
    console.log(
      JSON.stringify({
        protocolVersion: negotiated(client, http) ?? null,
        serverExtensions: client.getServerCapabilities()?.extensions ?? null,
        tool: { resourceUri: viewUri, visibility },
        plainToolMeta: plainTool?._meta ?? null,
        viewMeta: view._meta ?? null,
        modelCall: { structured: modelCall.structuredContent, text: modelCall.content?.[0]?.text },
        afterModelCall,
        appCall: appCalls[0]
          ? { arguments: appCalls[0].params.arguments, structured: appCalls[0].result.structuredContent, text: appCalls[0].result.content?.[0]?.text }
          : null,
        afterClick,
        screenshot,
      }),
    );
    await bridge.close().catch(() => {});
  } catch (error) {
    console.error(`view console:\n  ${viewLog.join("\n  ")}`);
    throw error;
  } finally {
    await browser.close();
    await client.close();
  }
}

const timer = setTimeout(() => {
  console.error(`host.mjs: no result within ${LIMIT_MS / 1000} s`);
  process.exit(1);
}, LIMIT_MS);
main().then(
  () => {
    clearTimeout(timer);
    process.exit(0);
  },
  (error) => {
    console.error(`host.mjs: ${error?.stack ?? error}`);
    process.exit(1);
  },
);
