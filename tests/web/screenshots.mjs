// Screenshots of the calculator in the states a user meets (fits, tight, does not fit, host-bound, a dense
// QLoRA job on an RTX 4090 with a modern stack): `node tests/web/screenshots.mjs --site build/wasm/site --out DIR`.
// Not a test: it writes PNGs for people to look at (release notes, reviews).
import { createRequire } from "node:module";
import { spawn } from "node:child_process";
import net from "node:net";
import fs from "node:fs";
import path from "node:path";

const require = createRequire(import.meta.url);
const { chromium } = require("playwright-core");
const args = process.argv.slice(2);
const opt = (k, d) => (args.indexOf(k) >= 0 ? args[args.indexOf(k) + 1] : d);
const siteDir = opt("--site", "build/wasm/site");
const outDir = opt("--out", "build/screenshots");
fs.mkdirSync(outDir, { recursive: true });

const port = await new Promise((resolve) => {
  const s = net.createServer();
  s.listen(0, "127.0.0.1", () => {
    const p = s.address().port;
    s.close(() => resolve(p));
  });
});
const server = spawn("python3", ["-m", "http.server", String(port), "--bind", "127.0.0.1", "--directory", siteDir], {
  stdio: "ignore",
});
await new Promise((r) => setTimeout(r, 800));
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--use-gl=angle", "--use-angle=swiftshader",
         "--enable-unsafe-swiftshader"],
});
const shots = {
  fits: "v=1&model=llama-3.1-8b&gpu=a100-sxm4-80gb&method=lora&seq=1024&batch=4",
  tight: "v=1&model=mixtral-8x7b&gpu=a40&method=qlora&dataset=math14k&batch=4",
  "does-not-fit": "v=1&model=llama-3.1-70b&gpu=rtx-4090&method=lora&seq=2048&batch=1",
  "host-bound": "v=1&model=qwen3-30b-a3b&gpu=h100-sxm5-80gb&method=lora&dataset=math14k",
  "rtx4090-llama8b-qlora": "v=1&model=llama-3.1-8b&gpu=rtx-4090&method=qlora&stack=hf-trl-2024q4&seq=2048&grad-accum=4",
};
try {
  for (const [name, hash] of Object.entries(shots)) {
    const ctx = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
    const page = await ctx.newPage();
    await page.goto(`http://127.0.0.1:${port}/#${hash}`);
    await page.waitForFunction(() => window.ftcost && window.ftcost.ui && window.ftcost.ui() &&
                                     window.ftcost.ui().app && window.ftcost.ui().app.recomputes > 0,
                               null, { timeout: 60000 });
    await page.waitForTimeout(1500);
    const file = path.join(outDir, `${name}.png`);
    await page.screenshot({ path: file });
    console.log(file);
    await ctx.close();
  }
} finally {
  await browser.close();
  server.kill();
}
