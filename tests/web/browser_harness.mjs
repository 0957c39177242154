// The browser test's harness, shared by browser_test.mjs and the check modules beside it (browser_*.mjs): the
// command line, check() and the report, the static server, Chromium, and the page helpers (openPage, ui,
// clickAnchor, waitFor, setHash).
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

import { clickRect } from "./page_input.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, "../..");
const args = process.argv.slice(2);
export const opt = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : def;
};
export const siteDir = path.resolve(root, opt("--site", "build/wasm/site"));
export const cli = path.resolve(root, opt("--cli", "build/native/bin/ftcost"));
export const outDir = path.resolve(root, opt("--out", "build/web-test"));
const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";
export const SIZE_BUDGET = 3 * 1024 * 1024;
export const FIRST_FRAME_BUDGET_MS = 2000;

fs.mkdirSync(outDir, { recursive: true });
export let failures = 0;
export const report = { checks: [], measurements: {} };
export function check(ok, what, detail) {
  report.checks.push({ ok: !!ok, what, detail: detail === undefined ? null : detail });
  console.log((ok ? "ok    " : "FAIL  ") + what + (detail !== undefined && !ok ? ": " + JSON.stringify(detail) : ""));
  if (!ok) failures++;
}
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- a static server (python3 -m http.server, like `make serve`) unless a URL is given ----
async function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
    s.on("error", reject);
  });
}
export let baseUrl = process.env.FTCOST_SITE_URL || "";
// Serves the site unless FTCOST_SITE_URL names one; the server's process, or null.
export async function serveSite() {
  let server = null;
  if (!baseUrl) {
    const port = await freePort();
    server = spawn("python3", ["-m", "http.server", String(port), "--bind", "127.0.0.1", "--directory", siteDir], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    baseUrl = `http://127.0.0.1:${port}/`;
    for (let i = 0; i < 100; i++) {
      const up = await new Promise((resolve) => {
        const c = net.connect(port, "127.0.0.1", () => {
          c.end();
          resolve(true);
        });
        c.on("error", () => resolve(false));
      });
      if (up) break;
      await sleep(100);
    }
  }
  return server;
}

export let browser = null;
export async function launchBrowser() {
  browser = await chromium.launch({
    executablePath: chromiumPath,
    args: [
      "--no-sandbox",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--use-gl=angle",
      "--use-angle=swiftshader",
      "--enable-unsafe-swiftshader",
    ],
  });
}

export const consoleErrors = [];
export const pageErrors = [];
export async function openPage(hash, viewport = { width: 1440, height: 900 }) {
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1 });
  const page = await context.newPage();
  page.on("console", (m) => {
    // the Hub test's answers (404, 403, aborted) are logged by Chromium as failed loads: expected there
    if (m.type() === "error" && !(m.location() && /huggingface\.co/.test(m.location().url || ""))) consoleErrors.push(m.text());
  });
  page.on("pageerror", (e) => pageErrors.push(String(e && e.stack ? e.stack : e)));
  const t0 = Date.now();
  await page.goto(baseUrl + (hash ? "#" + hash : ""));
  await page.waitForFunction(() => window.ftcost && window.ftcost.timing && window.ftcost.timing.firstFrameMs !== null, null, {
    timeout: 60000,
  });
  // wait for the first estimate (the frame after the first one)
  await page.waitForFunction(() => {
    const u = window.ftcost.ui();
    return u && u.app && u.app.recomputes > 0;
  }, null, { timeout: 60000 });
  const timing = await page.evaluate(() => {
    const nav = performance.getEntriesByType("navigation")[0];
    return { app_js_ms: window.ftcost.timing.start, first_frame_ms: window.ftcost.timing.start + window.ftcost.timing.firstFrameMs,
             dom_interactive_ms: nav ? nav.domInteractive : null, marks: window.ftcost.timing.marks };
  });
  return { context, page, timing, wallMs: Date.now() - t0 };
}
export const ui = (page) => page.evaluate(() => window.ftcost.ui());
export async function clickAnchor(page, name) {
  const u = await ui(page);
  const a = u.app.anchors[name];
  if (!a) throw new Error(`no anchor ${name} in this frame (anchors: ${Object.keys(u.app.anchors).join(", ")})`);
  await clickRect(page, a);
}
export async function waitFor(page, pred, what, timeout = 15000) {
  const t0 = Date.now();
  let last = null;
  while (Date.now() - t0 < timeout) {
    last = await ui(page);
    if (last && pred(last)) {
      check(true, what);
      return last;
    }
    await sleep(150);
  }
  check(false, what + " (timed out)", last && last.app ? { request: last.app.request, result: last.app.result, notices: last.app.notices } : last);
  return null;
}
export async function setHash(page, hash) {
  await page.evaluate((h) => { location.hash = h; }, hash);
}
