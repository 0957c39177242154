// The browser test (browser_test.mjs), 3-5c: inputs on the default page. A click on the canvas, a pinned job
// (== `ftcost estimate --vs`), malformed calibrations through the file picker, a dropped config.json, a model
// by Hugging Face id (the Hub stood in by page.route), the user's own token lengths.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

import { check, cli, clickAnchor, outDir, root, sleep, ui, waitFor } from "./browser_harness.mjs";
import { dropJsonFile } from "./page_input.mjs";

export async function inputChecks(page) {
  let u;
  // ---- 3. a click on the canvas changes the result ----
  u = await ui(page);
  const before = u.app.result;
  const recomputed = u.app.recomputes;
  await clickAnchor(page, "method.lora");
  u = await waitFor(page, (x) => x.app.request.method === "lora" && x.app.recomputes > recomputed, "clicking LoRA on the canvas changes the method");
  if (u) {
    check(JSON.stringify(u.app.result) !== JSON.stringify(before), "clicking LoRA changes the estimate", { before, after: u.app.result });
    check(/method=lora/.test(await page.evaluate(() => location.hash)), "the URL hash follows the inputs");
  }
  await clickAnchor(page, "method.qlora");
  await waitFor(page, (x) => x.app.request.method === "qlora", "clicking QLoRA switches back");

  // ---- 3b. #16 item 4: pin this job, change the method, both side by side == `ftcost estimate ... --vs` ----
  {
    await waitFor(page, (x) => x.app.anchors["pin"], "the results offer 'Pin this job'");
    await clickAnchor(page, "pin");
    await waitFor(page, (x) => x.app.comparison && x.app.panels.includes("pinned"), "pinning shows the pinned panel");
    await clickAnchor(page, "method.lora");
    const v = await waitFor(page, (x) => x.app.request.method === "lora" && x.app.comparison &&
      x.app.comparison.inputs.some((d) => d.key === "method" && d.a === "qlora" && d.b === "lora"), "after a change the comparison lists method qlora -> lora");
    if (v) {
      const pinnedReq = { ...v.app.request, method: "qlora" };
      const args = ["estimate"];
      for (const [k, val] of Object.entries(pinnedReq)) args.push("--" + k, String(val));
      let cliCmp = null;
      try {
        cliCmp = JSON.parse(execFileSync(cli, [...args, "--vs", "method=lora", "--json"], { encoding: "utf8" }));
      } catch (e) {
        cliCmp = { cli_failed: String(e.stderr || e.message) };
      }
      const pick = (c) => (c && c.rows ? c.rows.map((r) => [r.metric, r.a, r.b]) : c);
      check(JSON.stringify(pick(cliCmp)) === JSON.stringify(pick(v.app.comparison)),
        "the page's comparison == ftcost estimate ... --vs method=lora --json (memory, time, cost)", { cli: pick(cliCmp), page: pick(v.app.comparison) });
      const mem = v.app.comparison.rows.find((r) => r.metric === "peak_memory_gib");
      check(mem && mem.a !== mem.b && typeof mem.difference === "number", "the comparison shows the memory difference", mem);
    }
    await page.screenshot({ path: path.join(outDir, "pinned.png") });
    await clickAnchor(page, "unpin");
    await waitFor(page, (x) => !x.app.comparison && !x.app.panels.includes("pinned"), "unpin removes the comparison");
    await clickAnchor(page, "method.qlora");
    await waitFor(page, (x) => x.app.request.method === "qlora", "back to QLoRA");
  }

  // ---- 4. malformed calibration through the file picker: error naming the field, app keeps working ----
  await clickAnchor(page, "tab.calibrations");
  await waitFor(page, (x) => x.app.view === "calibrations" && x.app.anchors["calibration.load"], "the Calibrations tab opens");
  const uploads = [
    { name: "bad-syntax.json", text: '{"meta": {"schema": "ftcost.calibration/1",', field: null },
    { name: "bad-field.json", text: '{"meta": {"schema": 42}}', field: "meta" },
  ];
  for (const up of uploads) {
    const chooser = page.waitForEvent("filechooser", { timeout: 10000 });
    await clickAnchor(page, "calibration.load");
    const fc = await chooser;
    await fc.setFiles({ name: up.name, mimeType: "application/json", buffer: Buffer.from(up.text) });
    u = await waitFor(page, (x) => x.app.calibration_error && x.app.calibration_error.includes(up.name), `malformed ${up.name} is rejected with a message`);
    if (u) {
      const msg = u.app.calibration_error;
      console.log(`      message: ${msg}`);
      if (up.field) check(msg.includes(up.field), `the message names the field (${up.field})`, msg);
      check(u.app.calibrations.length === 0, "nothing was stored", u.app.calibrations);
      check(u.app.notices.some((n) => n.level === "error" && n.text.includes(up.name)), "an error notice is shown", u.app.notices);
    }
  }
  await page.screenshot({ path: path.join(outDir, "calibration-error.png") });
  // (the page draws only when something happens: move the mouse over the canvas and count frames)
  const framesBefore = (await ui(page)).frames;
  const cbox = await page.locator("#canvas").boundingBox();
  for (let i = 0; i < 5; i++) {
    await page.mouse.move(cbox.x + 300 + 40 * i, cbox.y + 300);
    await sleep(80);
  }
  await sleep(300);
  u = await ui(page);
  check(u.frames > framesBefore, `the app keeps drawing after the bad uploads (${framesBefore} -> ${u.frames} frames)`);
  const still = JSON.parse(await page.evaluate(() => window.ftcost.estimate('{"model":"mixtral-8x7b","gpu":"a40","method":"qlora"}')));
  check(still.max_batch_size > 0, "the JS API still answers after the bad uploads");
  await clickAnchor(page, "tab.calculator");
  await waitFor(page, (x) => x.app.view === "calculator" && x.app.anchors["method.full"], "back to the calculator");
  await clickAnchor(page, "method.full");
  await waitFor(page, (x) => x.app.request.method === "full" && !x.app.result.error, "inputs still work after the bad uploads");

  // ---- 5. drag and drop a Hugging Face config.json onto the page ----
  const tinyConfig = fs.readFileSync(path.join(root, "tests/data/tiny-llama-config.json"), "utf8");
  await dropJsonFile(page, tinyConfig, "tiny-llama-config.json");
  await waitFor(page, (x) => x.app.request.model === "uploaded/tiny-llama-config.json" && !x.app.result.error,
    "a dropped config.json becomes the model");

  // ---- 5b. #16 item 6: a model by Hugging Face id, fetched in the browser (the Hub stood in by page.route) ----
  {
    const hubAnswers = [];
    let hubMode = "ok";
    await page.route("https://huggingface.co/**", async (route) => {
      hubAnswers.push(route.request().url());
      const cors = { "access-control-allow-origin": "*" };
      if (hubMode === "ok") await route.fulfill({ status: 200, headers: cors, contentType: "application/json", body: tinyConfig });
      else if (hubMode === "404") await route.fulfill({ status: 404, headers: cors, body: "Entry not found" });
      else if (hubMode === "gated") await route.fulfill({ status: 403, headers: cors, body: "Access to model is restricted" });
      else await route.abort("internetdisconnected");
    });
    const fetchId = async (id) => {
      await clickAnchor(page, "hub.id");
      await sleep(150);  // the field takes focus on the next frame
      // clear it without relying on select-all: to the end, then delete every character
      await page.keyboard.press("End");
      for (let i = 0; i < 80; ++i) await page.keyboard.press("Backspace");
      await page.keyboard.type(id, { delay: 5 });
      await sleep(200);
      await clickAnchor(page, "hub.fetch");
    };
    await fetchId("TinyLlama/TinyLlama-1.1B-Chat-v1.0");
    await waitFor(page, (x) => x.app.request.model === "uploaded/TinyLlama_TinyLlama-1.1B-Chat-v1.0.json" && !x.app.result.error,
      "a Hub id's config.json fetched in the browser becomes the model");
    check(hubAnswers.length === 1 && hubAnswers[0] === "https://huggingface.co/TinyLlama/TinyLlama-1.1B-Chat-v1.0/resolve/main/config.json",
      "exactly one request, to the Hub's resolve/main/config.json", hubAnswers);
    const hubCase = async (mode, id, re, what) => {
      hubMode = mode;
      await fetchId(id);
      await waitFor(page, (x) => x.app.notices.some((n) => n.level === "error" && re.test(n.text)), what);
    };
    await hubCase("404", "nobody/nothing", /404/, "a Hub 404 gives an error naming it");
    await hubCase("gated", "meta-llama/Llama-3.1-8B", /gated.*Paste/, "a gated model (403) says so and points to paste/upload");
    await hubCase("offline", "Qwen/Qwen3-8B", /offline/, "no network gives a clear 'offline' error");
    await page.unroute("https://huggingface.co/**");
  }

  // ---- 5c. the user's own token lengths through the picker beside the dataset: the estimate uses them; a bad
  // file is refused with its line named ----
  await waitFor(page, (x) => x.app.anchors["dataset.upload"], "the dataset picker has an upload button");
  {
    const chooser = page.waitForEvent("filechooser", { timeout: 10000 });
    await clickAnchor(page, "dataset.upload");
    const fc = await chooser;
    await fc.setFiles({ name: "my-lengths.txt", mimeType: "text/plain", buffer: Buffer.from("# tokens per sample\n120\n800\n2500\n") });
    await waitFor(page, (x) => x.app.request.dataset === "dataset/my-lengths.txt" && !x.app.result.error,
      "an uploaded length file becomes the dataset");
    const chooser2 = page.waitForEvent("filechooser", { timeout: 10000 });
    await clickAnchor(page, "dataset.upload");
    const fc2 = await chooser2;
    await fc2.setFiles({ name: "bad.csv", mimeType: "text/csv", buffer: Buffer.from("id,length\n1,12.5\n") });
    u = await waitFor(page, (x) => x.app.notices.some((n) => n.level === "error" && n.text.includes("bad.csv:2")),
      "a bad length file is refused with its line named");
    if (u) check(u.app.request.dataset === "dataset/my-lengths.txt", "the good length file stays in use", u.app.request);
  }
}
