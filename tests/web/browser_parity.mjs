// The browser test (browser_test.mjs), 2: native/wasm parity. window.ftcost.estimate and .compare give what
// `ftcost estimate --json` and `ftcost compare --json` print; bad requests come back as JSON errors.
import { execFileSync } from "node:child_process";
import fs from "node:fs";

import { check, cli } from "./browser_harness.mjs";

export async function parityChecks(page) {
  // ---- 2. native/wasm parity ----
  const configs = [
    { model: "mixtral-8x7b", gpu: "a40", method: "qlora", moe: "sparse", dataset: "math14k", batch: "max" },
    { model: "llama-3.1-8b", gpu: "h100-sxm5-80gb", method: "lora", "lora-rank": "64", seq: "2048", batch: "8", queries: "50000", epochs: "3" },
    { model: "qwen3-30b-a3b", gpu: "l40s", method: "qlora", dataset: "cs15k", padding: "max-length", "max-length": "512", optimizer: "adamw-8bit", provider: "runpod" },
  ];
  if (!fs.existsSync(cli)) {
    check(false, `native CLI ${cli} exists (build the native preset first)`);
  } else {
    for (const cfg of configs) {
      const flags = [];
      for (const [k, v] of Object.entries(cfg)) flags.push("--" + k, String(v));
      let native;
      try {
        native = JSON.parse(execFileSync(cli, ["estimate", ...flags, "--json"], { encoding: "utf8" }));
      } catch (e) {
        native = { cli_failed: String(e.stderr || e.message) };
      }
      const wasmText = await page.evaluate((req) => window.ftcost.estimate(req), JSON.stringify(cfg));
      const wasm = JSON.parse(wasmText);
      const same = JSON.stringify(native) === JSON.stringify(wasm);
      let detail;
      if (!same) {
        const diffs = [];
        const walk = (a, b, p) => {
          if (typeof a === "object" && a && typeof b === "object" && b) {
            for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) walk(a[k], b[k], p + "." + k);
          } else if (a !== b) diffs.push({ path: p, native: a, wasm: b });
        };
        walk(native, wasm, "");
        detail = diffs.slice(0, 10);
      }
      check(same && !wasm.error, `parity: ftcost estimate ${flags.join(" ")} --json == window.ftcost.estimate(...)`, detail);
    }
    // the comparison over every GPU: the same JSON as `ftcost compare --json` (the CLI indents; compared parsed)
    const cmp = { model: "mixtral-8x7b", method: "qlora", dataset: "math14k", "lora-targets": "w1,w2,w3,gate", spot: "on" };
    let nativeCmp;
    try {
      nativeCmp = JSON.parse(execFileSync(cli, ["compare", "--model", "mixtral-8x7b", "--method", "qlora", "--dataset", "math14k",
                                                "--lora-targets", "w1,w2,w3,gate", "--spot", "on", "--json"], { encoding: "utf8" }));
    } catch (e) {
      nativeCmp = { cli_failed: String(e.stderr || e.message) };
    }
    const wasmCmp = JSON.parse(await page.evaluate((req) => window.ftcost.compare(req), JSON.stringify(cmp)));
    check(JSON.stringify(nativeCmp) === JSON.stringify(wasmCmp) && Array.isArray(wasmCmp.rows) && wasmCmp.rows.length > 20,
          "parity: ftcost compare ... --spot on --json == window.ftcost.compare(...)",
          { native_rows: nativeCmp.rows ? nativeCmp.rows.length : nativeCmp, wasm_rows: wasmCmp.rows ? wasmCmp.rows.length : wasmCmp });
    // errors come back as JSON, never as exceptions
    const bad = await page.evaluate(() => [
      window.ftcost.estimate('{"model": "mixtral-8x7b", "gpu": "a40", "method": "qlora", "batch": -1}'),
      window.ftcost.estimate("not json at all"),
      window.ftcost.estimate({ model: "no-such-model", gpu: "a40", method: "full" }),
      window.ftcost.estimate(undefined),
      window.ftcost.compare({ model: "mixtral-8x7b", method: "qlora", gpu: "a40" }),
      window.ftcost.compare({ model: "mixtral-8x7b", method: "qlora", offers: "maybe" }),
    ]);
    check(bad.every((t) => JSON.parse(t).error && JSON.parse(t).error.message), "invalid requests return {error: {...}} JSON", bad);
    const cliBad = (() => {
      try {
        execFileSync(cli, ["estimate", "--model", "mixtral-8x7b", "--gpu", "a40", "--method", "qlora", "--batch", "-1", "--json"], { encoding: "utf8", stdio: "pipe" });
        return null;
      } catch (e) {
        return e.status;
      }
    })();
    check(cliBad === 2, "the CLI rejects the same bad batch with exit code 2", cliBad);
  }
}
