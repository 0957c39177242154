// Screenshots of the calculator in the states a user meets (state-fits, state-tight, state-oom, state-host-bound),
// a calibration in use (calibrated), a dense
// QLoRA job on an RTX 4090 with a modern stack, the Plan view, the scaling plot): `node tests/web/screenshots.mjs --site build/wasm/site --out DIR`.
// Not a test: it writes PNGs for people to look at (release notes, reviews).
import { createRequire } from "node:module";
import { spawn } from "node:child_process";
import net from "node:net";
import fs from "node:fs";
import path from "node:path";

import { clickRect, dropJsonFile } from "./page_input.mjs";

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
// Lets the page settle `ms`, then saves its screenshot as <outDir>/<name>.png and prints the path.
async function shoot(page, name, ms) {
  await page.waitForTimeout(ms);
  const file = path.join(outDir, `${name}.png`);
  await page.screenshot({ path: file });
  console.log(file);
}
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--use-gl=angle", "--use-angle=swiftshader",
         "--enable-unsafe-swiftshader"],
});
// the four memory/speed states of issue #16 (state-*.png), then other views
const shots = {
  "state-fits": "v=1&model=llama-3.1-8b&gpu=a100-sxm4-80gb&method=lora&seq=1024&batch=4",
  "state-tight": "v=1&model=mixtral-8x7b&gpu=a40&method=qlora&dataset=math14k&batch=max",
  "state-oom": "v=1&model=llama-3.1-70b&gpu=rtx-4090&method=lora&seq=2048&batch=1",
  "state-host-bound": "v=1&model=qwen3-30b-a3b&gpu=h100-sxm5-80gb&method=lora&dataset=math14k&stack=hf-transformers-2024",
  "rtx4090-llama8b-qlora": "v=1&model=llama-3.1-8b&gpu=rtx-4090&method=qlora&stack=hf-trl-2024q4&seq=2048&grad-accum=4",
  "paged-optimizer": "v=1&model=llama-3.2-3b&gpu=rtx-4090&method=full&seq=2048&batch=4&optimizer=paged-adamw",
  // issue 36: a multi-GPU job (every card per GPU) and a peak that is not the sum of its components
  "multi-gpu-zero3": "v=1&model=llama-3.1-8b&gpu=h100-sxm5-80gb&method=full&gpus=8&parallel=zero3&dataset=math14k",
  "qwen3-unsloth-peak": "v=1&model=qwen3-30b-a3b&gpu=h100-sxm5-80gb&method=lora&dataset=math14k&stack=unsloth-2024q4",
};
try {
  for (const [name, hash] of Object.entries(shots)) {
    const ctx = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
    const page = await ctx.newPage();
    await page.goto(`http://127.0.0.1:${port}/#${hash}`);
    await page.waitForFunction(() => window.ftcost && window.ftcost.ui && window.ftcost.ui() &&
                                     window.ftcost.ui().app && window.ftcost.ui().app.recomputes > 0,
                               null, { timeout: 60000 });
    await shoot(page, name, 1500);
    await ctx.close();
  }
  // a calibration dropped on the page (the synthetic H100 fixture): the [calibrated] badges, spec-only vs
  // calibrated side by side, and the synthetic flag
  {
    const ctx = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
    const page = await ctx.newPage();
    await page.goto(`http://127.0.0.1:${port}/#v=1&model=llama-3.1-8b&gpu=h100-sxm5-80gb&method=lora&seq=1024`);
    await page.waitForFunction(() => window.ftcost && window.ftcost.ui && window.ftcost.ui() &&
                                     window.ftcost.ui().app && window.ftcost.ui().app.recomputes > 0,
                               null, { timeout: 60000 });
    const here = path.dirname(new URL(import.meta.url).pathname);
    const text = fs.readFileSync(path.join(here, "../data/calibration/h100-sxm-synthetic.json"), "utf8");
    await dropJsonFile(page, text, "h100-sxm-synthetic.json");
    await page.waitForFunction(() => window.ftcost.ui().app.calibrations.length > 0, null, { timeout: 20000 });
    await shoot(page, "calibrated", 1500);
    await ctx.close();
  }
  // issue #13's user: Llama-3.1-8B QLoRA on an RTX 4090 with their own token lengths (a length file uploaded
  // through the dataset picker), today's default stack: the stack picker, fits or not, the longest context,
  // the batch and grad-accum, time and cost
  {
    const ctx = await browser.newContext({ viewport: { width: 1440, height: 1500 } });
    const page = await ctx.newPage();
    await page.goto(`http://127.0.0.1:${port}/#v=1&model=llama-3.1-8b&gpu=rtx-4090&method=qlora&grad-accum=8&epochs=3`);
    await page.waitForFunction(() => window.ftcost && window.ftcost.ui && window.ftcost.ui() &&
                                     window.ftcost.ui().app && window.ftcost.ui().app.anchors["dataset.upload"],
                               null, { timeout: 60000 });
    // 2,000 chat samples: a deterministic long-tailed spread of lengths (median ~600 tokens, a few near 4k)
    const lengths = ["# tokens per sample (example own data)"];
    let x = 12345;
    for (let i = 0; i < 2000; i++) {
      x = (x * 1103515245 + 12345) % 2147483648;
      const u = (x + 1) / 2147483649;
      lengths.push(String(Math.round(Math.min(4096, 60 + 540 * Math.exp(1.1 * Math.sqrt(-2 * Math.log(u)) * Math.cos(6.283 * ((i * 0.618) % 1)))))));
    }
    const a = (await page.evaluate(() => window.ftcost.ui())).app.anchors["dataset.upload"];
    const chooser = page.waitForEvent("filechooser", { timeout: 10000 });
    await clickRect(page, a);
    await (await chooser).setFiles({ name: "my-chat-lengths.txt", mimeType: "text/plain",
                                     buffer: Buffer.from(lengths.join("\n") + "\n") });
    await page.waitForFunction(() => window.ftcost.ui().app.request.dataset === "dataset/my-chat-lengths.txt",
                               null, { timeout: 20000 });
    const box = await page.locator("#canvas").boundingBox();
    await page.mouse.move(box.x + 5, box.y + 5);
    await shoot(page, "own-data-rtx4090-llama8b-qlora", 1500);
    await ctx.close();
  }
  // a recorded run loaded on the Calibrations page (measured vs predicted), and a multi-GPU job
  {
    const ctx = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
    const page = await ctx.newPage();
    await page.goto(`http://127.0.0.1:${port}/#v=1&view=calibrations`);
    await page.waitForFunction(() => window.ftcost && window.ftcost.ui && window.ftcost.ui() &&
                                     window.ftcost.ui().app && window.ftcost.ui().app.anchors["run.load"],
                               null, { timeout: 60000 });
    const step = (s, b, l) => ({ wall_s: s, micro_batches: [{ batch_size: b, seq_len: l }] });
    const run = { schema: "ftcost.run/1", gpu: { id: "a40" }, model: { preset: "llama-2-7b" },
                  training: { method: "lora" },
                  steps: [step(1.21, 4, 512), step(1.19, 4, 512), step(1.2, 4, 512), step(2.31, 8, 512),
                          step(2.35, 8, 512), step(2.33, 8, 512), step(0.66, 2, 512), step(0.64, 2, 512)] };
    const runFile = path.join(outDir, "example-run.json");
    fs.writeFileSync(runFile, JSON.stringify(run));
    const a = (await page.evaluate(() => window.ftcost.ui())).app.anchors["run.load"];
    const chooser = page.waitForEvent("filechooser", { timeout: 10000 });
    await clickRect(page, a);
    await (await chooser).setFiles(runFile);
    await shoot(page, "run-loaded", 2500);
    await page.goto(`http://127.0.0.1:${port}/#v=1&model=llama-3.1-70b&gpu=h100-sxm5-80gb&method=lora&dataset=math14k&node=dgx-h100`);
    await shoot(page, "multi-gpu", 4000);
    await ctx.close();
  }
  // the Plan view (the paper's job: Mixtral-8x7B QLoRA on MATH, up to 8 GPUs) and the scaling plot of a full
  // fine-tune on H100s
  {
    const ctx = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
    const page = await ctx.newPage();
    await page.goto(`http://127.0.0.1:${port}/#v=1&model=mixtral-8x7b&gpu=a40&method=qlora&moe=sparse&dataset=math14k` +
                    `&lora-targets=q_proj%2Ck_proj%2Cv_proj%2Co_proj&plan-max-gpus=8&view=plan`);
    await page.waitForFunction(() => window.ftcost && window.ftcost.ui && window.ftcost.ui() && window.ftcost.ui().app &&
                                     window.ftcost.ui().app.plan.count > 0 && !window.ftcost.ui().app.plan.pending,
                               null, { timeout: 60000 });
    // hover the best plan's point so that its read-out shows
    const u = await page.evaluate(() => window.ftcost.ui());
    const a = u.app.anchors["plan.plot"];
    const box = await page.locator("#canvas").boundingBox();
    if (a) await page.mouse.move(box.x + a[0] + (a[2] - a[0]) * 0.3, box.y + a[1] + (a[3] - a[1]) * 0.5);
    await shoot(page, "plan", 1200);
    await page.goto(`http://127.0.0.1:${port}/#v=1&model=llama-2-7b&gpu=h100-sxm5-80gb&method=full&dataset=math14k`);
    await page.waitForTimeout(3000);
    // the scaling plot is under the memory and step-time panels: scroll the results column to it
    await page.mouse.move(box.x + 900, box.y + 600);
    await page.mouse.wheel(0, 900);
    await shoot(page, "scaling", 1200);
    await ctx.close();
  }
} finally {
  await browser.close();
  server.kill();
}
