// The browser test (browser_test.mjs), 11: issue 42's checks (`--only objective`), a GRPO job end to end.
import { execFileSync } from "node:child_process";
import path from "node:path";

import { check, cli, clickAnchor, openPage, outDir, setHash, ui, waitFor } from "./browser_harness.mjs";

// ---- issue 42: a GRPO job end to end — from a link, a canvas click, its round split drawn, the CLI's JSON ----
export async function objectiveChecks() {
  const job = { model: "tinyllama-1.1b", gpu: "h100-sxm5-80gb", method: "lora", seq: "256", objective: "grpo", generation: "vllm-colocate" };
  const link = "v=1&" + Object.entries(job).map(([k, v]) => `${k}=${v}`).join("&");
  const og = await openPage(link, { width: 1440, height: 2400 });
  const p = og.page;
  let u = await waitFor(p, (x) => x.app.request.objective === "grpo" && x.app.panels.includes("objective") && x.app.result.objective &&
    x.app.result.objective.grpo && x.app.result.objective.grpo.vllm, "i42: a GRPO link draws the objective panel with vLLM's share");
  if (u) {
    const g = u.app.result.objective.grpo;
    check(g.round_s > 0 && g.round_split_s.generation > 0 && g.round_split_s.training > 0 && g.vllm.kv_cache_gib > 0,
      "i42: the round is split into generation and training, and vLLM's KV cache is sized", g);
    const flags = Object.entries(job).flatMap(([k, v]) => ["--" + k, v]);
    const nat = JSON.parse(execFileSync(cli, ["estimate", ...flags, "--json"], { encoding: "utf8" }));
    const api = JSON.parse(await p.evaluate((r) => window.ftcost.estimate(r), JSON.stringify(job)));
    check(JSON.stringify(api.objective) === JSON.stringify(nat.objective) && api.throughput_queries_per_s === nat.throughput_queries_per_s &&
      api.cost_usd === nat.cost_usd, "i42: window.ftcost.estimate and `ftcost estimate --json` agree on the GRPO job", { api: api.objective, cli: nat.objective });
    check(u.app.result.time_hours === nat.time_hours && u.app.result.throughput_queries_per_s === nat.throughput_queries_per_s,
      "i42: the calculator shows the CLI's GRPO time and throughput", { ui: [u.app.result.time_hours, u.app.result.throughput_queries_per_s], cli: [nat.time_hours, nat.throughput_queries_per_s] });
    // a real click on the canvas (QLoRA) re-estimates the GRPO job: vLLM now holds the 4-bit checkpoint
    const before = g.vllm.weights_gib;
    await clickAnchor(p, "method.qlora");
    u = await waitFor(p, (x) => x.app.request.method === "qlora" && x.app.request.objective === "grpo" && x.app.result.objective &&
      x.app.result.objective.grpo && x.app.result.objective.grpo.vllm && x.app.result.objective.grpo.vllm.weights_gib < before,
      "i42: QLoRA clicked on the canvas: the GRPO job is re-estimated (vLLM's weights are the 4-bit checkpoint)");
    check(/objective=grpo/.test(await p.evaluate(() => location.hash)), "i42: the link carries the objective");
    // the cards count what the CLI counts: a GRPO sample is a prompt (`ftcost estimate` prints prompts/s)
    check(/prompts\/s/.test(u.app.cards.c_tp.join(" | ")) && /prompts/.test(u.app.cards.c_time.join(" | ")) &&
      !/(samples|queries)\/s/.test(u.app.cards.c_tp.join(" | ")), "i42: the throughput and time cards count prompts, as the CLI does", u.app.cards.c_tp);
    // a bad value is refused with the field named, and the page keeps answering
    await setHash(p, link + "&batch=6");
    // (a link that gives no estimate is named in a notice and the defaults are shown: the calculator's rule for links)
    await waitFor(p, (x) => x.app.notices.some((n) => /--batch: 6 .*num-generations 8/.test(n.text)),
      "i42: a link whose batch is not whole groups of generations is refused with a notice naming --batch");
    await setHash(p, link.replace("objective=grpo", "objective=dpo").replace("&generation=vllm-colocate", ""));
    await waitFor(p, (x) => x.app.result.objective && x.app.result.objective.name === "dpo" && x.app.panels.includes("objective") &&
      x.app.result.objective.reference === "adapters_disabled", "i42: a DPO link shows its reference (the adapters disabled)");
    u = await ui(p);
    check(u && /pairs\/s/.test(u.app.cards.c_tp.join(" | ")), "i42: a DPO job's throughput card counts preference pairs", u && u.app.cards.c_tp);
  }
  await p.screenshot({ path: path.join(outDir, "grpo.png"), fullPage: true });
  await og.context.close();
}
