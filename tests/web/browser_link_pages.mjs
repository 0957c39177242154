// The browser test (browser_test.mjs), 6-6e: pages opened from links. A shared URL, invalid links, a view-only
// link, a context-window warning (== the CLI's), a calibration that travels with the link, and small things
// ("1 sample", no card cut off, one time unit, the Eq. (1) curve explained).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

import { browser, check, cli, openPage, outDir, report, root, ui, waitFor } from "./browser_harness.mjs";
import { dropJsonFile } from "./page_input.mjs";

export async function linkPageChecks() {
  let u;
  // ---- 6. a shared URL restores its state; an invalid one gives a message and the defaults ----
  const link = "v=1&model=olmoe-1b-7b&gpu=l40s&method=lora&lora-rank=32&dataset=cs15k&batch=max&epochs=3";
  const shared = await openPage(link);
  report.measurements.warm_first_frame_ms = Math.round(shared.timing.first_frame_ms);
  report.measurements.warm_marks_ms = shared.timing.marks;
  console.log("second page (browser already running), marks: " + JSON.stringify(shared.timing.marks));
  u = await ui(shared.page);
  const r = u.app.request;
  check(r.model === "olmoe-1b-7b" && r.gpu === "l40s" && r.method === "lora" && r["lora-rank"] === "32" && r.epochs === "3" && !u.app.result.error,
    "a shared URL restores its inputs", r);
  const direct = JSON.parse(await shared.page.evaluate((req) => window.ftcost.estimate(req), JSON.stringify(r)));
  check(direct.max_batch_size === u.app.result.max_batch_size && direct.throughput_queries_per_s === u.app.result.throughput_queries_per_s,
    "the restored page shows the estimate for those inputs");
  await shared.context.close();

  const invalid = await openPage("v=7&model=gpt-5&batch=lots");
  u = await ui(invalid.page);
  check(u.app.notices.some((n) => /another version/.test(n.text)) && !u.app.result.error && u.app.request.model === "mixtral-8x7b",
    "an invalid URL gives a visible message and the defaults", u.app.notices);
  await invalid.page.screenshot({ path: path.join(outDir, "invalid-link.png") });
  await invalid.context.close();

  const broken = await openPage("v=1&model=mixtral-8x7b&gpu=a40&method=qlora&batch=-5");
  u = await ui(broken.page);
  check(u.app.notices.some((n) => /could not be fully restored/.test(n.text)) && !u.app.result.error,
    "a link with an invalid value gives a message and the defaults", u.app.notices);
  await broken.context.close();

  // ---- 6b. #16 item 1: a link with only a view is not broken ----
  const viewOnly = await openPage("view=paper");
  u = await ui(viewOnly.page);
  check(u.app.view === "paper" && u.app.notices.length === 0 && u.app.request.model === "mixtral-8x7b",
    "a link with only view=paper opens the paper view with no complaint", { view: u.app.view, notices: u.app.notices });
  await viewOnly.context.close();

  // ---- 6c. #16 item 3: a sequence beyond the model's context window warns, in the page and the CLI ----
  const longLink = "v=1&model=tinyllama-1.1b&gpu=h100-sxm5-80gb&method=lora&seq=4096";
  const longPage = await openPage(longLink);
  u = await ui(longPage.page);
  const ctxWarn = (u.app.result.warnings || []).find((w) => /context window/.test(w));
  check(ctxWarn && /4096 tokens/.test(ctxWarn) && /2048 tokens/.test(ctxWarn), "the page warns that 4096 tokens exceed TinyLlama's 2048-token window", u.app.result.warnings);
  let cliWarn = "";
  try {
    cliWarn = execFileSync(cli, ["estimate", "--model", "tinyllama-1.1b", "--gpu", "h100-sxm5-80gb", "--method", "lora", "--seq", "4096"], { encoding: "utf8" });
  } catch (e) {
    cliWarn = String(e.stderr || e.message);
  }
  check(ctxWarn && cliWarn.includes(ctxWarn), "the CLI prints the same context-window warning", cliWarn.split("\n").filter((l) => /context/.test(l)));
  await longPage.context.close();

  // ---- 6d. #16 item 8: a calibration travels with the link. A dropped calibration file is used (the badge, the
  // spec-sheet figure beside it, == ftcost estimate --calibration FILE); its link opened in a fresh browser context
  // (empty storage) reproduces the calibrated numbers; a link with only its fingerprint says the file is missing
  // and shows the spec-sheet numbers (== ftcost estimate without it); "Calibrate your GPU" opens the docs ----
  {
    const calJob = "v=1&model=llama-3.1-8b&gpu=h100-sxm5-80gb&method=lora&seq=1024";
    const calFile = path.join(root, "tests/data/calibration/h100-sxm-synthetic.json");
    const cliJson = (extra) => {
      try {
        return JSON.parse(execFileSync(cli, ["estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm5-80gb", "--method", "lora",
          "--seq", "1024", ...extra, "--json"], { encoding: "utf8" }));
      } catch (e) {
        return { cli_failed: String(e.stderr || e.message) };
      }
    };
    const cliCal = cliJson(["--calibration", calFile]);
    const cliSpec = cliJson([]);
    const sender = await openPage(calJob);
    const sp = sender.page;
    const calText = fs.readFileSync(calFile, "utf8");
    await dropJsonFile(sp, calText, "h100-sxm-synthetic.json");
    u = await waitFor(sp, (x) => x.app.calibrations.some((c) => c.in_use) && x.app.effective_request.calibration && !x.app.result.error &&
      x.app.cards.c_tp, "a dropped calibration is used for its GPU");
    let sharedHash = "";
    let fp = "";
    if (u) {
      const tp = u.app.result.throughput_queries_per_s;
      check(tp === cliCal.throughput_queries_per_s, `calibrated throughput ${tp} == ftcost estimate --calibration FILE --json`, { page: tp, cli: cliCal.throughput_queries_per_s });
      const lines = u.app.cards.c_tp.join(" | ");
      check(lines.includes("badge: calibrated, synthetic") && u.app.cards.c_time.join("|").includes("badge: calibrated") &&
        u.app.cards["badge.step_time"], "the throughput, time and step-time numbers carry the calibrated badge (flagged synthetic)", u.app.cards);
      check(lines.includes(`spec sheet ${Number(cliSpec.throughput_queries_per_s.toPrecision(3))}`) || lines.includes("spec sheet "),
        "the throughput card shows the spec-sheet figure beside the calibrated one", lines);
      const c = u.app.calibrations.find((x) => x.in_use);
      fp = c.fingerprint;
      check(/^synthetic \(/.test(c.flags), "the synthetic fixture is flagged from its own fields", c.flags);
      sharedHash = (await sp.evaluate(() => location.hash)).slice(1);
      check(/&cal=[A-Za-z0-9_-]+/.test(sharedHash) && sharedHash.length <= 8192, `the link embeds the calibration (${sharedHash.length} characters)`, sharedHash.slice(0, 120));
      report.measurements.calibrated_link_chars = sharedHash.length;
    }
    // the docs link in the page header
    const docHref = await sp.evaluate(() => { const a = document.getElementById("calibrator-link"); return a && !a.hidden ? a.href : null; });
    check(docHref && /calibrate\.html$/.test(docHref), "the 'Calibrate your GPU' link is shown and points to calibrate.html", docHref);
    await sender.context.close();
    if (docHref) {
      const dctx = await browser.newContext();
      const dp = await dctx.newPage();
      await dp.goto(docHref);
      await dp.waitForFunction(() => document.getElementById("doc").textContent.length > 1000, null, { timeout: 15000 }).catch(() => {});
      const doc = await dp.evaluate(() => document.getElementById("doc").textContent);
      check(/ftcost-calibrate/.test(doc) && /--quick/.test(doc), "calibrate.html shows docs/calibrate.md", doc.slice(0, 200));
      await dctx.close();
    }
    if (sharedHash) {
      const recv = await openPage(sharedHash);
      u = await waitFor(recv.page, (x) => !x.app.result.error && x.app.calibrations.length === 1 && x.app.cards.c_tp,
        "the calibrated link opens in a fresh browser context");
      if (u) {
        check(u.app.result.throughput_queries_per_s === cliCal.throughput_queries_per_s && u.app.result.cost_usd === cliCal.cost_usd,
          "the link reproduces the calibrated numbers (throughput, cost)", { page: [u.app.result.throughput_queries_per_s, u.app.result.cost_usd], cli: [cliCal.throughput_queries_per_s, cliCal.cost_usd] });
        check(u.app.calibrations[0].from_link && u.app.calibrations[0].fingerprint === fp && u.app.cards.c_tp.join("|").includes("badge: calibrated"),
          "the recipient sees the link's calibration, badge included", u.app.calibrations);
        const stored = await recv.page.evaluate(() => localStorage.getItem("ftcost.calibrations"));
        check(!stored, "the link's calibration is not stored in the recipient's browser", stored);
      }
      await recv.page.screenshot({ path: path.join(outDir, "calibrated-link.png") });
      await recv.context.close();
      const fpHash = sharedHash.replace(/&cal=[A-Za-z0-9_-]+/, "&cal-id=" + fp);
      const lacking = await openPage(fpHash);
      u = await waitFor(lacking.page, (x) => !x.app.result.error && x.app.notices.some((n) => n.text.includes("made with calibration " + fp.slice(0, 8))),
        "a link with only the fingerprint, calibration absent: a message naming it");
      if (u) {
        const n = u.app.notices.find((m) => m.text.includes("made with calibration"));
        check(n.level === "warning" && /for h100-sxm5-80gb/.test(n.text) && /load that file/.test(n.text) && /showing spec-sheet numbers/.test(n.text),
          "the message names the calibration and GPU, says to load the file and that spec-sheet numbers are shown", n);
        check(!u.app.effective_request.calibration && u.app.result.throughput_queries_per_s === cliSpec.throughput_queries_per_s,
          "... and the numbers are the spec-sheet ones (== ftcost estimate without --calibration)", { page: u.app.result.throughput_queries_per_s, cli: cliSpec.throughput_queries_per_s });
        const h = await lacking.page.evaluate(() => location.hash);
        check(h.includes("&cal-id=" + fp), "the link keeps the fingerprint", h);
      }
      await lacking.page.screenshot({ path: path.join(outDir, "calibration-missing.png") });
      await lacking.context.close();
    }
  }

  // ---- 6e. #16 item 10: small things. A batch of one says "1 sample"; no card line is cut off (the cards grow to
  // their wrapped text: the RTX 4090 "does not fit" card with its "(24.0 GiB)"); the GPU table's Time column has
  // one unit (minutes next to days before); the Eq. (1) curve on the axis says why ----
  {
    // a tall window, so that the GPU table (below the plots) is drawn too
    const one = await openPage("v=1&model=llama-3.1-8b&gpu=rtx-4090&method=lora&seq=10240", { width: 1440, height: 2600 });
    u = await waitFor(one.page, (x) => x.app.cards.c_batch && !x.app.result.error, "a job whose maximum batch is 1 shows its cards");
    if (u) {
      check(u.app.result.max_batch_size === 1 && u.app.cards.c_batch[1] === "1" && u.app.cards.c_batch[2] === "sample",
        "max batch 1 reads \"1 sample\", not \"1 samples\"", u.app.cards.c_batch);
      const times = u.app.cards["compare.time"] || [];
      const unit = (times[0] || "").match(/\((min|h)\)/);
      check(unit && times.length > 3 && times.slice(1).every((t) => !/min|day/.test(t)),
        "the GPU table's Time column has one unit, named in its header", times.slice(0, 8));
    }
    await one.context.close();
    const oom = await openPage("v=1&model=llama-3.1-70b&gpu=rtx-4090&method=lora&seq=2048&batch=1");
    u = await waitFor(oom.page, (x) => x.app.cards.c_mem && x.app.cards.c_batch, "the does-not-fit job shows its cards");
    if (u) {
      const clipped = Object.entries(u.app.cards).filter(([k, v]) => k.startsWith("c_") && v.includes("clipped"));
      check(clipped.length === 0 && u.app.cards.c_mem.some((l) => l.includes("(24.0 GiB)")),
        "no card line is cut off (the memory card shows \"(24.0 GiB)\" whole)", { clipped, c_mem: u.app.cards.c_mem });
    }
    await oom.page.screenshot({ path: path.join(outDir, "cards-does-not-fit.png") });
    await oom.context.close();
    const paperView = await openPage("v=1&view=paper");
    u = await waitFor(paperView.page, (x) => x.app.panels.includes("paper_eq1") && x.app.cards["eq1.on_axis"], "the paper view draws Eq. (1)");
    if (u) check(/^24(\.0)? GB: only 0\.650? GB above the model's 23\.4 GB, so Eq\. \(1\) gives at most batch \d+ and 0 from \d+ tokens on/.test(u.app.cards["eq1.on_axis"][0] || ""),
      "the Eq. (1) curve at 24 GB on the axis is explained in the plot", u.app.cards["eq1.on_axis"]);
    await paperView.context.close();
  }
}
