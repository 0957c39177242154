// The browser test (browser_test.mjs), 10: issue 36's checks (`--only links`): every plan constraint, the
// user's own lengths in every path and in links, the pinned job in the link, the searchable model dropdown.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

import { check, cli, clickAnchor, openPage, outDir, report, setHash, sleep, ui, waitFor } from "./browser_harness.mjs";
import { clickRect } from "./page_input.mjs";

// ---- issue 36: the calculator's broken paths (plan constraints, the user's own lengths everywhere, links that
// carry the lengths and the pinned job, the plan table and job line, the searchable dropdown) ----
// 2,000 token lengths of a chat-like data set (log-normal, median ~350), the same on every run.
function ownLengths(n = 2000) {
  let x = 12345;
  const rnd = () => ((x = (x * 1103515245 + 12345) % 2147483648) + 0.5) / 2147483648;
  const out = [];
  for (let i = 0; i < n; i++) {
    const z = Math.sqrt(-2 * Math.log(rnd())) * Math.cos(2 * Math.PI * rnd());
    out.push(Math.max(8, Math.min(6000, Math.round(350 * Math.exp(0.7 * z)))));
  }
  return out;
}
const sameNumbers = (a, b) => a && b && !a.error && !b.error && a.max_batch_size === b.max_batch_size &&
  a.time_hours === b.time_hours && a.cost_usd === b.cost_usd && a.throughput_queries_per_s === b.throughput_queries_per_s;
const pick = (r) => (r ? { max_batch_size: r.max_batch_size, time_hours: r.time_hours, cost_usd: r.cost_usd, error: r.error } : r);

async function uploadLengths(page, name, text) {
  const chooser = page.waitForEvent("filechooser", { timeout: 10000 });
  await clickAnchor(page, "dataset.upload");
  const fc = await chooser;
  await fc.setFiles({ name, mimeType: "text/plain", buffer: Buffer.from(text) });
}

// ---- issue 36, in links: every plan constraint, the job line and the axes of the Plan view ----
async function planLinkChecks() {
  const planJob = "v=1&model=mixtral-8x7b&gpu=a40&method=qlora&moe=sparse&dataset=math14k&lora-targets=q_proj%2Ck_proj%2Cv_proj%2Co_proj";
  // -- 36 item 3.1: every plan constraint computes a plan (as a link; the methods also clicked) --
  const pg = await openPage(planJob + "&view=plan");
  const p = pg.page;
  let u = await waitFor(p, (x) => x.app.view === "plan" && x.app.plan.count > 0 && x.app.plan.current && !x.app.plan.pending, "i36: the plan job computes a plan", 60000);
  const cases = [
    { c: "methods=lora,qlora", ok: (e) => ["lora", "qlora"].includes(e.method) },
    { c: "methods=full", ok: (e) => e.method === "full" },
    { c: "stacks=hf-trl-2026,unsloth-2024q4", ok: (e) => ["hf-trl-2026", "unsloth-2024q4"].includes(e.stack) },
    { c: "gpu-types=a100-sxm4-80gb,h100-sxm5-80gb", ok: (e) => ["a100-sxm4-80gb", "h100-sxm5-80gb"].includes(e.gpu) },
    { c: "max-gpus=2", ok: (e) => e.gpus_per_node * e.nodes <= 2 },
    { c: "budget=50", ok: (e) => e.cost_usd <= 50 },
    { c: "spot=on", ok: () => true },
  ];
  for (const k of cases) {
    await setHash(p, planJob + "&plan-" + k.c + "&view=plan");
    u = await waitFor(p, (x) => x.app.view === "plan" && x.app.plan.current && !x.app.plan.pending && x.app.plan.constraints[k.c.split("=")[0]] === k.c.split("=")[1] &&
      (x.app.plan.count > 0 || x.app.plan.error), `i36: plan-${k.c}: the search answers`, 60000);
    if (!u) continue;
    check(!u.app.plan.error && u.app.plan.count > 0, `i36: plan-${k.c}: a plan is computed`, u.app.plan.error);
    const api = JSON.parse(await p.evaluate((r) => window.ftcost.plan(r), JSON.stringify(u.app.plan.request)));
    check(Array.isArray(api.front) && JSON.stringify(api.front.map((e) => e.id)) === JSON.stringify(u.app.plan.ids) && api.front.every(k.ok),
      `i36: plan-${k.c}: the view's front is window.ftcost.plan's for its request, and every plan keeps the constraint`,
      { request: u.app.plan.request, api: api.error || (api.front || []).map((e) => [e.method, e.stack, e.gpu, e.gpus_per_node * e.nodes, e.cost_usd]) });
    if (k.c === "spot=on")
      check(api.constraints && api.constraints.spot === true && u.app.plan.request.spot === "on", "i36: plan-spot=on: spot offers are searched", { constraints: api.constraints, request: u.app.plan.request });
  }
  // a link from before the rename (plan-gpus=): read as gpu-types
  await setHash(p, planJob + "&plan-gpus=a100-sxm4-80gb&view=plan");
  u = await waitFor(p, (x) => x.app.plan.constraints["gpu-types"] === "a100-sxm4-80gb" && x.app.plan.current && !x.app.plan.pending, "i36: an old plan-gpus= link is read as gpu-types", 60000);
  if (u) check(!u.app.plan.error && u.app.plan.count > 0 && !u.app.notices.some((n) => n.level !== "info"), "i36: ... and computes a plan with no warning", { error: u.app.plan.error, notices: u.app.notices });
  // a methods box ticked on the canvas (the bug: "--method: is required")
  await setHash(p, planJob + "&view=plan");
  await waitFor(p, (x) => x.app.plan.current && !x.app.plan.pending && x.app.anchors["plan.methods.lora"], "i36: the methods boxes are shown");
  await clickAnchor(p, "plan.methods.lora");
  u = await waitFor(p, (x) => x.app.plan.constraints.methods === "lora" && x.app.plan.current && !x.app.plan.pending, "i36: ticking LoRA reruns the search", 60000);
  if (u) check(!u.app.plan.error && u.app.plan.count > 0 && u.app.plan.request.method === "lora",
    "i36: ticking a method box computes a plan (the job's method goes along)", { error: u.app.plan.error, request: u.app.plan.request });
  await p.screenshot({ path: path.join(outDir, "plan-methods.png") });

  // -- 36 items 3.2e/3.3/3.4: the ckpt column, the job line, the axes --
  await setHash(p, "v=1&model=llama-3.3-70b&gpu=h100-sxm5-80gb&method=lora&seq=2048&queries=50000&view=plan");
  u = await waitFor(p, (x) => x.app.plan.current && !x.app.plan.pending && x.app.plan.count > 0 && x.app.cards["plan.columns"], "i36: a fixed-length job's plan", 60000);
  if (u) {
    const cols = u.app.cards["plan.columns"];
    check(cols.includes("ckpt") && ["on", "off"].includes((u.app.cards["plan.row0.ckpt"] || [])[0]), "i36: the plan table has a ckpt column (on/off)", { cols, row0: u.app.cards["plan.row0.ckpt"] });
    check(/llama-3\.3-70b, lora, 2,048 tokens x 50,000 samples, 1 epoch/.test((u.app.cards["plan.job"] || [])[0]), "i36: the Plan sidebar names the job's data (2,048 tokens x 50,000 samples)", u.app.cards["plan.job"]);
    check((u.app.cards["plan.axes"] || []).every((l) => /log scale/.test(l)), "i36: the plan's axes are log and say so", u.app.cards["plan.axes"]);
    await p.screenshot({ path: path.join(outDir, "plan-fixed-job.png") });
  }
  await setHash(p, planJob + "&view=plan");
  u = await waitFor(p, (x) => x.app.plan.current && !x.app.plan.pending && x.app.cards["plan.job"], "i36: the data set job's plan");
  if (u) check(/mixtral-8x7b, qlora, MATH14K.* x 14,000 samples/i.test(u.app.cards["plan.job"][0]) || /x [\d,]+ samples/.test(u.app.cards["plan.job"][0]),
    "i36: a data set job's line names the data set and its sample count", u.app.cards["plan.job"]);
  await pg.context.close();
}

// ---- issue 36, in links: the user's own lengths (JS API, plan, config, the link's data=) and the pinned job ----
async function ownLengthsLinkChecks() {
  // -- 36 item 1.2: the user's own lengths in every path (JS API, plan, config) --
  const lengths = ownLengths();
  const lengthsText = lengths.join("\n") + "\n";
  const job = { model: "llama-3.1-8b", gpu: "a100-sxm4-80gb", method: "lora" };
  const own = await openPage("v=1&model=llama-3.1-8b&gpu=a100-sxm4-80gb&method=lora");
  const op = own.page;
  await uploadLengths(op, "lengths.txt", lengthsText);
  let u = await waitFor(op, (x) => x.app.request.dataset === "dataset/lengths.txt" && !x.app.result.error && x.app.recomputes > 1, "i36: 2,000 own lengths become the dataset");
  const ownResult = u ? u.app.result : null;
  const ownHash = await op.evaluate(() => location.hash.slice(1));
  if (u) {
    const req = JSON.stringify({ ...job, dataset: "dataset/lengths.txt" });
    const est = JSON.parse(await op.evaluate((r) => window.ftcost.estimate(r), req));
    check(sameNumbers(est, ownResult), "i36: window.ftcost.estimate({dataset: \"dataset/lengths.txt\"}) reads the page's file (== the calculator's numbers)", { api: pick(est), page: pick(ownResult) });
    const file = path.join(outDir, "lengths.txt");
    fs.writeFileSync(file, lengthsText);
    if (fs.existsSync(cli)) {
      const nat = JSON.parse(execFileSync(cli, ["estimate", "--model", job.model, "--gpu", job.gpu, "--method", job.method, "--dataset", file, "--json"], { encoding: "utf8" }));
      check(sameNumbers(nat, ownResult), "i36: ... == ftcost estimate --dataset lengths.txt (the raw list)", { cli: pick(nat), page: pick(ownResult) });
    }
    const answers = await op.evaluate((r) => {
      const j = JSON.parse(r);
      return {
        compare: window.ftcost.compare({ ...j, gpu: undefined }),
        scaling: window.ftcost.scaling(r),
        plan: window.ftcost.plan({ ...j, gpu: undefined, "max-gpus": 8 }),
      };
    }, req);
    const cmp = JSON.parse(answers.compare), sc = JSON.parse(answers.scaling), pl = JSON.parse(answers.plan);
    check(!cmp.error && cmp.rows.length > 10, "i36: window.ftcost.compare reads the page's lengths", cmp.error);
    check(!sc.error && sc.points.length > 1, "i36: window.ftcost.scaling reads the page's lengths", sc.error);
    check(!pl.error && pl.front.length > 0, "i36: window.ftcost.plan reads the page's lengths", pl.error);
    if (!pl.error && pl.front.length) {
      const cfg = JSON.parse(await op.evaluate((r) => window.ftcost.planConfig(r, "trl"), JSON.stringify(pl.front[0].request)));
      check(!cfg.error && cfg.files.length > 0 && new RegExp("max_length: " + Math.max(...lengths)).test(cfg.files[0].text),
        `i36: window.ftcost.planConfig writes the config for the page's lengths (max_length ${Math.max(...lengths)})`, cfg.error || cfg.files[0].text.slice(0, 400));
    }
    // the Plan tab with the own lengths: a plan and its config
    await clickAnchor(op, "tab.plan");
    u = await waitFor(op, (x) => x.app.view === "plan" && x.app.plan.current && !x.app.plan.pending && (x.app.plan.count > 0 || x.app.plan.error), "i36: the Plan tab searches with the own lengths", 60000);
    if (u) {
      check(!u.app.plan.error && u.app.plan.count > 0 && !u.app.plan.config_error, "i36: the Plan tab computes a plan and its config for the own lengths", { error: u.app.plan.error, config: u.app.plan.config_error });
      check(/lengths\.txt x 2,000 samples/.test((u.app.cards["plan.job"] || [])[0]), "i36: the Plan sidebar names the own data and its 2,000 samples", u.app.cards["plan.job"]);
    }
    await op.screenshot({ path: path.join(outDir, "plan-own-lengths.png") });
    await clickAnchor(op, "tab.calculator");
    await waitFor(op, (x) => x.app.view === "calculator", "i36: back to the calculator");
  }
  // -- 36 item 6.1: the link carries the lengths; a fresh browser gets the same numbers --
  const data = (ownHash.match(/&data=([A-Za-z0-9_-]+)/) || [])[1] || "";
  report.measurements.link_data_chars_2000_lengths = data.length;
  report.measurements.link_chars_with_own_lengths = ownHash.length;
  console.log(`      a link with 2,000 own lengths: ${ownHash.length} characters (data= ${data.length})`);
  check(data.length > 0 && ownHash.length <= 8192, `i36: the link embeds the lengths (data= ${data.length} characters)`, ownHash.slice(0, 200));
  const recv = await openPage(ownHash);
  u = await waitFor(recv.page, (x) => x.app.request.dataset === "dataset/lengths.txt" && x.app.result && x.app.result.max_batch_size, "i36: the link with own lengths opens in a fresh browser context");
  if (u) {
    check(sameNumbers(u.app.result, ownResult), "i36: the recipient sees the sender's numbers", { recipient: pick(u.app.result), sender: pick(ownResult) });
    check(!u.app.notices.some((n) => n.level !== "info"), "i36: with no warning", u.app.notices);
    const h = await recv.page.evaluate(() => location.hash.slice(1));
    check(h === ownHash, "i36: the recipient's URL is the link", { h: h.slice(0, 200), ownHash: ownHash.slice(0, 200) });
    const stored = await recv.page.evaluate(() => localStorage.getItem("ftcost.dataset_file"));
    check(!stored, "i36: the link's lengths are not stored in the recipient's browser", stored);
  }
  await recv.page.screenshot({ path: path.join(outDir, "link-own-lengths.png") });
  await recv.context.close();
  // a link that names the file without carrying it: every other setting kept, waiting for the file
  const bare = ownHash.replace(/&data=[A-Za-z0-9_-]+/, "") + "&epochs=2";
  const wait = await openPage(bare);
  u = await waitFor(wait.page, (x) => x.app.notices.some((n) => /Waiting for lengths\.txt: upload it to complete/.test(n.text)), "i36: a link naming a missing length file says it waits for it");
  if (u) {
    check(u.app.request.model === "llama-3.1-8b" && u.app.request.gpu === "a100-sxm4-80gb" && u.app.request.epochs === "2" && u.app.request.dataset === "dataset/lengths.txt",
      "i36: ... and keeps every other setting", u.app.request);
    const h = await wait.page.evaluate(() => location.hash.slice(1));
    check(h.includes("model=llama-3.1-8b") && h.includes("dataset=dataset/lengths.txt") && h.includes("epochs=2"), "i36: ... and does not overwrite the link", h);
    check(u.app.panels.includes("waiting_dataset") && u.app.anchors["dataset.waiting_upload"], "i36: ... and the results say what they wait for, with a button to load it", u.app.panels);
    await wait.page.screenshot({ path: path.join(outDir, "link-waiting-lengths.png") });
    const chooser = wait.page.waitForEvent("filechooser", { timeout: 10000 });
    await clickAnchor(wait.page, "dataset.waiting_upload");
    await (await chooser).setFiles({ name: "lengths.txt", mimeType: "text/plain", buffer: Buffer.from(lengthsText) });
    u = await waitFor(wait.page, (x) => !x.app.result.error && x.app.result.max_batch_size && !x.app.notices.some((n) => /Waiting/.test(n.text)), "i36: loading the file completes the link");
    if (u) check(u.app.request.epochs === "2" && u.app.result.max_batch_size === ownResult.max_batch_size, "i36: ... with the link's settings", { request: u.app.request, result: pick(u.app.result) });
  }
  await wait.context.close();
  // a broken data= is named, the page waits for the file
  const broken = await openPage(ownHash.replace(/&data=([A-Za-z0-9_-]{10})/, "&data=AAAAAAAAAA"));
  u = await waitFor(broken.page, (x) => x.app.notices.some((n) => /data/.test(n.text) && n.level === "warning") && x.app.notices.some((n) => /Waiting for lengths\.txt/.test(n.text)),
    "i36: a damaged data= is named and the page waits for the file");
  await broken.context.close();

  // -- 36 item 6.2: the pinned job is in the link --
  await clickAnchor(op, "pin");
  await waitFor(op, (x) => x.app.comparison && x.app.panels.includes("pinned"), "i36: pin the own-lengths job");
  await clickAnchor(op, "method.qlora");
  u = await waitFor(op, (x) => x.app.request.method === "qlora" && x.app.comparison && x.app.comparison.inputs.some((d) => d.key === "method"), "i36: change the method after pinning");
  const pinHash = await op.evaluate(() => location.hash.slice(1));
  check(/&pin=method%3Dlora(&|$)/.test(pinHash), "i36: the link holds the pinned job (pin=method%3Dlora)", pinHash.slice(0, 300));
  const pinRecv = await openPage(pinHash);
  u = await waitFor(pinRecv.page, (x) => x.app.comparison && x.app.panels.includes("pinned"), "i36: a link with pin= opens with the comparison");
  if (u) {
    const d = u.app.comparison.inputs.find((x) => x.key === "method");
    const orig = (await ui(op)).app.comparison;
    check(d && d.a === "lora" && d.b === "qlora" && JSON.stringify(orig.rows) === JSON.stringify(u.app.comparison.rows),
      "i36: the recipient's comparison is the sender's (A lora, B qlora, every row)", { inputs: u.app.comparison.inputs });
    await pinRecv.page.screenshot({ path: path.join(outDir, "link-pinned.png") });
  }
  await pinRecv.context.close();
  await clickAnchor(op, "unpin");
  await waitFor(op, (x) => !x.app.comparison, "i36: unpin");
  const unpinned = await op.evaluate(() => location.hash.slice(1));
  check(!/&pin=/.test(unpinned), "i36: unpinning takes pin= out of the link", unpinned.slice(0, 200));
  // a reload keeps the pin
  await clickAnchor(op, "pin");
  await waitFor(op, (x) => x.app.comparison, "i36: pin again");
  await op.reload();
  await op.waitForFunction(() => {
    const u = window.ftcost && window.ftcost.ui ? window.ftcost.ui() : null;
    return u && u.app && u.app.recomputes > 0;
  }, null, { timeout: 60000 });
  await waitFor(op, (x) => x.app.comparison && x.app.panels.includes("pinned"), "i36: a reload keeps the pinned job");
  await own.context.close();
}

// ---- issue 36: the searchable model dropdown ----
async function dropdownChecks() {
  // -- 36 items 1.7/1.8: the searchable dropdown --
  const dd = await openPage("v=1&model=mixtral-8x7b&gpu=a40&method=qlora");
  const dp = dd.page;
  // Opens the model list, waits until its search field has the keyboard, types, presses Enter. Under a loaded
  // SwiftShader a frame can take longer than the click, and ImGui 1.86 misses a press and release that land in
  // one frame: then the list does not open and the click is tried once more (the list's own behaviour is what
  // is checked). Enter is held over a frame for the same reason.
  const pickModel = async (query, model) => {
    for (let attempt = 0; attempt < 2; attempt++) {
      await clickRect(dp, (await ui(dp)).app.anchors["input.model"], { settleMs: 150, holdMs: 300 });
      // the list opens on the next frame and its search field takes the keyboard on the one after
      for (let i = 0; i < 30 && !(await ui(dp)).app.text_input; i++) await sleep(100);
      if (!(await ui(dp)).app.text_input) {
        console.log(`      (attempt ${attempt + 1}: the list did not open; clicking again)`);
        continue;
      }
      await dp.keyboard.type(query, { delay: 30 });
      await sleep(300);
      await dp.screenshot({ path: path.join(outDir, "dropdown-search.png") });
      // held over a frame, like the click (a key pressed and released within one frame is lost too)
      await dp.keyboard.down("Enter");
      await sleep(300);
      await dp.keyboard.up("Enter");
      for (let i = 0; i < 20 && (await ui(dp)).app.request.model !== model; i++) await sleep(150);
      if ((await ui(dp)).app.request.model === model) return;
      console.log(`      (attempt ${attempt + 1}: typed "${query}" and pressed Enter; the model is ${(await ui(dp)).app.request.model})`);
      await dp.keyboard.press("Escape");
      await sleep(300);
    }
  };
  await pickModel("qwen3 30b", "qwen3-30b-a3b");
  await waitFor(dp, (x) => x.app.request.model === "qwen3-30b-a3b", "i36: Enter picks the first match of the dropdown's search");
  await pickModel("llama 3.1 8b", "llama-3.1-8b");  // typed over the old query: it was selected when the list opened
  await waitFor(dp, (x) => x.app.request.model === "llama-3.1-8b", "i36: the old query is selected when the list opens (typing replaces it)");
  await dd.context.close();
}

export async function linkChecks() {
  await planLinkChecks();
  await ownLengthsLinkChecks();
  await dropdownChecks();
}
