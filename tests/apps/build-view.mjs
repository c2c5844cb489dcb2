// Bundles the example's dice view (examples/apps/view/dice.html + dice.js and the ext-apps App
// class it imports) into one self-contained page, examples/apps/view/dist/dice.html: the
// script inlined, nothing loaded from elsewhere (a host's default CSP for views allows inline
// scripts only). The server embeds that file with include_str!.
//
//   node build-view.mjs [--check]     --check: fail when the committed file differs
import * as esbuild from "esbuild";
import { readFile, writeFile, mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const viewDir = join(here, "../../examples/apps/view");
const out = join(viewDir, "dist/dice.html");

const bundle = await esbuild.build({
  entryPoints: [join(viewDir, "dice.js")],
  bundle: true,
  format: "iife",
  minify: true,
  target: "es2022",
  legalComments: "none",
  write: false,
  // The packages are found in tests/apps/node_modules, where install.sh put them.
  nodePaths: [join(here, "node_modules")],
  logLevel: "warning",
});
// Inside an inline <script>, `</script` would end the element early.
const code = bundle.outputFiles[0].text.replaceAll("</script", "<\\/script");

const page = await readFile(join(viewDir, "dice.html"), "utf8");
const tag = '<script type="module" src="dice.js"></script>';
if (!page.includes(tag)) {
  throw new Error(`dice.html must load its script with ${tag}`);
}
const html = page
  .replace(/<!--[\s\S]*?-->\n/, "<!-- Generated from view/dice.html and view/dice.js by tests/apps/build-view.sh; do not edit. -->\n")
  .replace(tag, () => `<script>${code.trimEnd()}</script>`);

if (process.argv.includes("--check")) {
  const committed = await readFile(out, "utf8").catch(() => "");
  if (committed !== html) {
    console.error(`${out} is stale: run tests/apps/build-view.sh and commit it`);
    process.exit(1);
  }
  console.error(`${out} is up to date`);
} else {
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, html);
  console.error(`wrote ${out} (${html.length} bytes)`);
}
