// Start-up and recompute timings of built calculator sites, side by side in one headless Chromium session
// (Debian's /usr/bin/chromium, WebGL2 through SwiftShader, as tests/web/browser_test.mjs runs it).
//
//   node tools/web_timing.mjs [--loads 5] [--typing] LABEL=SITE_DIR [LABEL=SITE_DIR ...]
//
// For each round, each site is loaded cold (a new browser context: no HTTP or compiled-code cache) in turn,
// and its start-up marks (window.ftcost.timing.marks, ms after navigation start) are kept; the medians over
// the rounds are printed. Then, per site, the heaviest preset job of issue 36 (Qwen3-30B-A3B LoRA on an H100,
// unsloth-2024q4, math14k) is loaded from a link and recomputed by switching the LoRA rank through the URL
// hash: the page's own compute_ms and the longest main-thread task (PerformanceObserver "longtask") per
// change. --typing also types "128" into the LoRA rank field and reports the longest task and the time until
// the estimate shows rank 128. Needs playwright-core (tests/web: npm ci).
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { clickRect } from "../tests/web/page_input.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(path.join(root, "tests/web/package.json"));
const { chromium } = require("playwright-core");

const args = process.argv.slice(2);
let loads = 5;
let typing = false;
const sites = [];
for (let i = 0; i < args.length; ++i) {
  if (args[i] === "--loads") loads = Number(args[++i]);
  else if (args[i] === "--typing") typing = true;
  else {
    const [label, dir] = args[i].split("=");
    sites.push({ label, dir: path.resolve(dir) });
  }
}
if (sites.length === 0) {
  console.error("usage: node tools/web_timing.mjs [--loads 5] [--typing] LABEL=SITE_DIR ...");
  process.exit(2);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
}
const servers = [];
for (const s of sites) {
  const port = await freePort();
  servers.push(spawn("python3", ["-m", "http.server", String(port), "--bind", "127.0.0.1", "--directory", s.dir], { stdio: "ignore" }));
  s.url = `http://127.0.0.1:${port}/`;
}
await sleep(1000);

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--use-gl=angle", "--use-angle=swiftshader", "--enable-unsafe-swiftshader"],
});

async function open(url) {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  await page.addInitScript(() => {
    window.__longtasks = [];
    try {
      new PerformanceObserver((l) => {
        for (const e of l.getEntries()) window.__longtasks.push({ start: e.startTime, ms: e.duration });
      }).observe({ type: "longtask", buffered: true });
    } catch (e) {
      /* no longtask support */
    }
  });
  await page.goto(url);
  await page.waitForFunction(() => window.ftcost && window.ftcost.timing && window.ftcost.timing.firstFrameMs !== null, null, { timeout: 120000 });
  await page.waitForFunction(() => {
    const u = window.ftcost.ui();
    return u && u.app && u.app.recomputes > 0;
  }, null, { timeout: 120000 });
  return { context, page };
}
const ui = (page) => page.evaluate(() => window.ftcost.ui());
async function settle(page, pred, timeout = 60000) {
  const t0 = Date.now();
  while (Date.now() - t0 < timeout) {
    const u = await ui(page);
    if (u && pred(u)) return u;
    await sleep(50);
  }
  return null;
}

// ---- start-up: cold loads, sites interleaved ----
const marks = Object.fromEntries(sites.map((s) => [s.label, []]));
for (let r = 0; r < loads; ++r) {
  for (const s of sites) {
    const { context, page } = await open(s.url);
    await sleep(300);
    const m = await page.evaluate(() => window.ftcost.timing.marks);
    marks[s.label].push(m);
    await context.close();
  }
}
console.log(`start-up marks, ms after navigation start, median of ${loads} cold loads (sites interleaved):`);
const names = [...new Set(Object.values(marks).flat().flatMap((m) => Object.keys(m)))];
names.sort((a, b) => median(marks[sites[0].label].map((m) => m[a] ?? 0)) - median(marks[sites[0].label].map((m) => m[b] ?? 0)));
console.log(["mark".padEnd(22), ...sites.map((s) => s.label.padStart(12))].join(""));
for (const n of names)
  console.log([n.padEnd(22), ...sites.map((s) => String(median(marks[s.label].map((m) => m[n] ?? NaN))).padStart(12))].join(""));

// ---- recompute of the heavy MoE job ----
const job = { model: "qwen3-30b-a3b", gpu: "h100-sxm5-80gb", method: "lora", stack: "unsloth-2024q4", dataset: "math14k" };
for (const s of sites) {
  const { context, page } = await open(s.url);
  await sleep(500);
  // the page's own link for the job: set it through the hash the page writes
  let u = await ui(page);
  const base = u.app.hash.split("&").filter((kv) => !/^(model|gpu|method|stack|dataset|lora-rank|seq)=/.test(kv));
  const hash = (rank) => [...base, ...Object.entries({ ...job, "lora-rank": String(rank) }).map(([k, v]) => `${k}=${v}`)].join("&");
  // the core alone through the page's JavaScript API (no drawing): median of 5 calls each
  const api = await page.evaluate((job) => {
    const med = (f, n) => {
      const t = [];
      for (let i = 0; i < n; ++i) {
        const t0 = performance.now();
        f();
        t.push(performance.now() - t0);
      }
      t.sort((a, b) => a - b);
      return t[(n - 1) >> 1];
    };
    const j = JSON.stringify(job);
    const dense = JSON.stringify({ model: "llama-3.1-8b", gpu: "h100-sxm5-80gb", method: "lora", dataset: "math14k" });
    const cmp = JSON.stringify({ model: job.model, method: job.method, stack: job.stack, dataset: job.dataset });
    return { estimate: med(() => window.ftcost.estimate(j), 7), dense: med(() => window.ftcost.estimate(dense), 7),
             scaling: med(() => window.ftcost.scaling(j), 5), compare: med(() => window.ftcost.compare(cmp), 5) };
  }, job);
  console.log(`${s.label}: window.ftcost API, median ms: Qwen3 estimate ${api.estimate.toFixed(1)}, dense Llama-3.1-8B estimate ` +
              `${api.dense.toFixed(1)}, Qwen3 scaling ${api.scaling.toFixed(1)}, Qwen3 compare ${api.compare.toFixed(1)}`);
  const rows = [];
  const ranks = [16, 32, 64, 8, 16, 32, 64, 8, 16];
  for (const rank of ranks) {
    const before = (await ui(page)).app.recomputes;
    await page.evaluate(() => (window.__longtasks = []));
    const t0 = Date.now();
    await page.evaluate((h) => (location.hash = h), hash(rank));
    u = await settle(page, (x) => x.app.recomputes > before && x.app.request["lora-rank"] === String(rank));
    await sleep(300);
    const tasks = await page.evaluate(() => window.__longtasks);
    rows.push({ rank, compute_ms: u ? u.app.compute_ms : null, frame_ms: u && u.app.compute_frame_ms !== undefined ? u.app.compute_frame_ms : null, longest_task_ms: Math.round(Math.max(0, ...tasks.map((t) => t.ms))),
                settled_ms: Date.now() - t0, batch: u ? u.app.result.batch_size : null });
  }
  console.log(`${s.label}: Qwen3-30B-A3B LoRA, h100-sxm5-80gb, unsloth-2024q4, math14k; the LoRA rank changed through the link:`);
  for (const r of rows.slice(1))
    console.log(`  rank ${String(r.rank).padStart(3)}: compute_ms ${r.compute_ms === null ? "-" : r.compute_ms.toFixed(1)}` +
                (r.frame_ms === null ? "" : ` (longest part in one frame ${r.frame_ms.toFixed(1)})`) + `, longest main-thread task ${r.longest_task_ms} ms, settled after ${r.settled_ms} ms (batch ${r.batch})`);
  console.log(`  median compute_ms ${median(rows.slice(1).map((r) => r.compute_ms)).toFixed(1)}` +
              (rows[1].frame_ms === null ? "" : `, median longest part in one frame ${median(rows.slice(1).map((r) => r.frame_ms)).toFixed(1)}`) +
              `, median longest task ${median(rows.slice(1).map((r) => r.longest_task_ms))} ms`);
  if (typing) {
    u = await ui(page);
    const a = u.app.anchors["input.lora-rank"];
    if (a) {
      await clickRect(page, a, { settleMs: 150, holdMs: 150 });
      await sleep(300);
      await page.keyboard.press("End");
      for (let i = 0; i < 6; ++i) await page.keyboard.press("Backspace");
      await sleep(300);
      await page.evaluate(() => (window.__longtasks = []));
      const t0 = Date.now();
      await page.keyboard.type("128", { delay: 120 });
      const typed = Date.now() - t0;
      u = await settle(page, (x) => x.app.request["lora-rank"] === "128", 20000);
      if (!u) console.log("  typing: rank 128 not applied; field shows " + JSON.stringify((await ui(page)).app.fields["lora-rank"]));
      const done = Date.now() - t0;
      await sleep(300);
      const tasks = await page.evaluate(() => window.__longtasks);
      console.log(`  typing "128" into LoRA rank (120 ms between keys, ${typed} ms): estimate for rank 128 after ${done} ms; ` +
                  `longest main-thread task ${Math.round(Math.max(0, ...tasks.map((t) => t.ms)))} ms; ${tasks.length} tasks over 50 ms; ` +
                  `recomputes ${u ? u.app.recomputes : "?"}`);
    } else {
      console.log("  (no input.lora-rank anchor: typing not measured)");
    }
  }
  await context.close();
}
await browser.close();
for (const s of servers) s.kill();
