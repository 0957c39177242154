// The browser test (browser_test.mjs), 8-9: the Plan view (a front from a link, parity with `ftcost plan
// --json`, a constraint clicked, the link round trip, a config downloaded, a plan loaded) and the scaling plot.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

import { check, cli, clickAnchor, openPage, outDir, report, sleep, ui, waitFor } from "./browser_harness.mjs";

export async function planViewChecks() {
  let u;
  // ---- 8. the Plan view (#18): a front from a link, a constraint clicked, a config downloaded, a plan loaded ----
  const planJob = "v=1&model=mixtral-8x7b&gpu=a40&method=qlora&moe=sparse&dataset=math14k&lora-targets=q_proj%2Ck_proj%2Cv_proj%2Co_proj";
  const planPage = await openPage(planJob + "&plan-max-gpus=8&view=plan");
  const pp = planPage.page;
  u = await waitFor(pp, (x) => x.app.view === "plan" && x.app.plan.count > 0 && !x.app.plan.pending && x.app.panels.includes("plan_front"),
    "a link with view=plan opens the Plan view and shows a front", 60000);
  if (u) {
    check(u.app.plan.constraints["max-gpus"] === "8" && u.app.request["lora-targets"] === "q_proj,k_proj,v_proj,o_proj" && u.app.notices.length === 0,
      "the link's job and plan-max-gpus=8 are restored", { constraints: u.app.plan.constraints, request: u.app.request, notices: u.app.notices });
    report.measurements.plan_search_ms_browser = Math.round(u.app.plan.ms);
    console.log(`      plan search in the browser: ${u.app.plan.ms.toFixed(0)} ms (core: ${u.app.plan.search_ms.toFixed(0)} ms), ${u.app.plan.count} plans`);
    // the view's front is the JS API's and the CLI's for the same request (search_ms aside)
    const apiReq = { model: "mixtral-8x7b", method: "qlora", moe: "sparse", dataset: "math14k", "lora-targets": "q_proj,k_proj,v_proj,o_proj", "max-gpus": "8" };
    const apiPlan = JSON.parse(await pp.evaluate((r) => window.ftcost.plan(r), JSON.stringify(apiReq)));
    check(Array.isArray(apiPlan.front) && JSON.stringify(apiPlan.front.map((p) => p.id)) === JSON.stringify(u.app.plan.ids) && apiPlan.best === u.app.plan.best,
      "the Plan view shows window.ftcost.plan's front", { api: apiPlan.front ? apiPlan.front.map((p) => p.id) : apiPlan, view: u.app.plan.ids });
    if (fs.existsSync(cli)) {
      let nativePlan;
      try {
        nativePlan = JSON.parse(execFileSync(cli, ["plan", "--model", "mixtral-8x7b", "--method", "qlora", "--moe", "sparse", "--dataset", "math14k",
          "--lora-targets", "q_proj,k_proj,v_proj,o_proj", "--max-gpus", "8", "--json"], { encoding: "utf8" }));
      } catch (e) {
        nativePlan = { cli_failed: String(e.stderr || e.message) };
      }
      const strip = (d) => JSON.stringify({ ...d, search_ms: 0 });
      check(strip(nativePlan) === strip(apiPlan), "parity: ftcost plan ... --json == window.ftcost.plan(...) (search_ms aside)",
        { native: nativePlan.front ? nativePlan.front.length : nativePlan, wasm: apiPlan.front ? apiPlan.front.length : apiPlan });
    }
    await sleep(500);
    await pp.screenshot({ path: path.join(outDir, "plan.png") });
    // a constraint clicked on the canvas: the search reruns and the URL follows
    const bestBefore = u.app.plan.best;
    await clickAnchor(pp, "plan.minimize.time");
    u = await waitFor(pp, (x) => x.app.plan.constraints.minimize === "time" && x.app.plan.current && !x.app.plan.pending, "clicking 'minimise time' reruns the search");
    if (u) {
      const h = await pp.evaluate(() => location.hash);
      check(/plan-minimize=time/.test(h) && /plan-max-gpus=8/.test(h) && /view=plan/.test(h), "the URL hash holds the plan state", h);
      const tplan = JSON.parse(await pp.evaluate((r) => window.ftcost.plan(r), JSON.stringify({ ...apiReq, minimize: "time" })));
      check(tplan.best === u.app.plan.best && tplan.minimize === "time", "the view's best plan is the fastest one", { view: u.app.plan.best, api: tplan.best, before: bestBefore });
      // the link round-trips: a new page from this hash shows the same constraints and front
      const again = await openPage(h.slice(1));
      const u2 = await waitFor(again.page, (x) => x.app.view === "plan" && x.app.plan.count > 0 && !x.app.plan.pending, "the plan link opens again", 60000);
      if (u2) check(JSON.stringify(u2.app.plan.constraints) === JSON.stringify(u.app.plan.constraints) && JSON.stringify(u2.app.plan.ids) === JSON.stringify(u.app.plan.ids),
        "the URL round-trips the plan state (constraints and front)", { first: u.app.plan.constraints, again: u2.app.plan.constraints });
      await again.context.close();
    }
    // export: the main config file (TRL) of the best plan downloads and parses as YAML with the plan's batch
    u = await ui(pp);
    if (u.app.anchors["plan.export.0"]) {
      const dl = pp.waitForEvent("download", { timeout: 15000 });
      await clickAnchor(pp, "plan.export.0");
      const d = await dl;
      const file = path.join(outDir, "plan-export-" + d.suggestedFilename());
      await d.saveAs(file);
      let parsed = null;
      try {
        parsed = JSON.parse(execFileSync("python3", ["-c", "import json,sys,yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))", file], { encoding: "utf8" }));
      } catch (e) {
        parsed = { parse_failed: String(e.stderr || e.message) };
      }
      check(parsed && typeof parsed === "object" && parsed.per_device_train_batch_size > 0,
        `the exported config ${d.suggestedFilename()} parses as YAML (per_device_train_batch_size ${parsed && parsed.per_device_train_batch_size})`, parsed);
    } else {
      check(false, "the Plan view offers a config download", Object.keys(u.app.anchors).filter((k) => k.startsWith("plan.")));
    }
    // a plan clicked in the table opens the calculator with that plan's job, same hours and cost
    u = await ui(pp);
    const first = JSON.parse(await pp.evaluate((r) => window.ftcost.plan(r), JSON.stringify({ ...apiReq, minimize: "time" }))).front[0];
    const recomputesBefore = u.app.recomputes;
    await clickAnchor(pp, "plan.row.0");
    u = await waitFor(pp, (x) => x.app.view === "calculator" && x.app.request.gpu === first.gpu && x.app.recomputes > recomputesBefore && !x.app.result.error, "clicking a plan row loads it into the calculator");
    if (u) {
      check(Math.abs(u.app.result.time_hours - first.hours) <= 1e-9 * first.hours && Math.abs(u.app.result.cost_usd - first.cost_usd) <= 1e-6 * first.cost_usd,
        "the loaded plan's estimate has the plan's hours and cost", { plan: [first.hours, first.cost_usd], calculator: [u.app.result.time_hours, u.app.result.cost_usd], planRequest: first.request, request: u.app.request, effective: u.app.effective_request });
    }
  }
  await planPage.context.close();
}

export async function scalingChecks() {
  let u;
  // ---- 9. the scaling plot of a multi-GPU-capable job ----
  const scalePage = await openPage("v=1&model=llama-2-7b&gpu=h100-sxm5-80gb&method=full&dataset=math14k");
  u = await waitFor(scalePage.page, (x) => x.app.panels.includes("scaling") && Object.keys(x.app.scaling).length >= 2,
    "a full fine-tune on H100 shows time and cost against GPU count with efficiency");
  if (u) {
    const api = JSON.parse(await scalePage.page.evaluate(() => window.ftcost.scaling({ model: "llama-2-7b", gpu: "h100-sxm5-80gb", method: "full", dataset: "math14k" })));
    const eff = {};
    for (const p of api.points || []) if (p.fits) eff[String(p.gpus)] = p.scaling_efficiency;
    const sorted = (o) => JSON.stringify(Object.keys(o).sort().map((k) => [k, o[k]]));
    check(sorted(eff) === sorted(u.app.scaling), "the plot's efficiencies are window.ftcost.scaling's", { api: eff, view: u.app.scaling });
  }
  await scalePage.page.screenshot({ path: path.join(outDir, "scaling.png"), fullPage: true });
  await scalePage.context.close();
}
