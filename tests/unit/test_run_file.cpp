// The ftcost.run/1 reader of spec alone (ftcost/run_file.hpp), with no database: a good file reads into the
// typed record as the file states it; a bad field is an error that names it; the memory figures are checked
// against a GPU given by hand.
#include "ftcost/run_file.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace ftcost;

namespace {

// A LoRA run recorded by name on an A40: one warm-up step, two timed ones (one with memory figures), one
// step whose callback could not see the batch.
json good_doc() {
  const json mb = json::array({json{{"batch_size", 4}, {"seq_len", 512}, {"tokens", 1500}}});
  return json{
      {"schema", "ftcost.run/1"},
      {"recorder", {{"tool", "test"}, {"source", "trainer-callback"}, {"warmup_steps", 1}}},
      {"gpu", {{"name", "NVIDIA A40"}, {"memory_bytes", 47713189888.0}, {"count", 2}}},
      {"software", {{"transformers", "4.46.0"}, {"trl", "0.12.1"}, {"python", 3}}},
      {"model", {{"preset", "llama-2-7b"}}},
      {"training",
       {{"method", "lora"},
        {"lora_rank", 16},
        {"lora_targets", json::array({"q_proj", "v_proj"})},
        {"lora_dropout", 0.05},
        {"precision", "bf16"},
        {"optimizer", "adamw"},
        {"checkpointing", true},
        {"batch_size", 4},
        {"packing", false}}},
      {"training_raw", {{"optim", "adamw_torch_fused"}}},
      {"lacks", json::array({"memory", 7})},
      {"steps",
       json::array(
           {json{{"step", 1}, {"wall_s", 2.0}, {"warmup", true}, {"micro_batches", mb}},
            json{{"step", 2},
                 {"wall_s", 1.0},
                 {"micro_batches", mb},
                 {"max_memory_allocated_bytes", 2e10},
                 {"max_memory_reserved_bytes", 2.2e10}},
            json{{"step", 3}, {"wall_s", 1.1}, {"micro_batches", mb}},
            json{{"step", 4}, {"wall_s", 1.2}, {"micro_batches", json::array({json{{"batch_size", 4}}})}}})}};
}

Error record_error(const json& doc) {
  auto r = parse_run_record(doc.dump(), "bad.json");
  REQUIRE_FALSE(r.ok());
  return r.error();
}

GpuSpec a40() {
  GpuSpec g;
  g.id = "a40";
  g.memory_gib = 44.99;
  return g;
}

}  // namespace

TEST_CASE("run file (spec): a good file reads into the record as the file states it") {
  auto r = parse_run_record(good_doc().dump(), "good.json");
  REQUIRE(r.ok());
  const RunRecord& run = r.value();
  CHECK(run.source == "good.json");
  CHECK(run.recorder_source == "trainer-callback");
  CHECK(run.lacks == std::vector<std::string>{"memory"});  // a non-string entry is not a name
  CHECK(run.gpu.id.empty());
  CHECK(run.gpu.name == "NVIDIA A40");
  CHECK(run.gpu.memory_bytes.get<double>() == 47713189888.0);
  CHECK(run.gpu.count == 2);
  CHECK(run.model_preset == "llama-2-7b");
  CHECK(run.model_config.is_null());
  CHECK(run.software.size() == 2);  // string versions only
  CHECK(run.software.at("trl") == "0.12.1");
  const RunTraining& t = run.training;
  CHECK(t.method == "lora");
  CHECK(t.lora_rank == 16);
  CHECK(t.lora_targets == "q_proj,v_proj");
  CHECK(t.lora_dropout == 0.05);
  CHECK(t.precision == "bf16");
  CHECK(t.optimizer == "adamw");
  CHECK(t.adamw_impl == "fused");  // read off training_raw.optim
  CHECK(t.attention.empty());
  CHECK(t.checkpointing == true);
  CHECK(t.batch_size == 4);
  CHECK(t.max_length == 0);
  CHECK(t.packing == false);
  REQUIRE(run.steps.size() == 4);
  CHECK(run.steps[0].warmup);
  CHECK(run.steps[1].micro.size() == 1);
  CHECK(run.steps[1].micro[0].tokens == 1500);
  CHECK(run.steps[1].allocated_recorded);
  CHECK(run.steps[1].max_reserved_bytes == 2.2e10);
  CHECK_FALSE(run.steps[2].allocated_recorded);
  CHECK(run.steps[2].max_allocated_bytes == -1);
  CHECK(run.steps[3].micro.empty());  // no seq_len: the shape is unusable
  CHECK(run.timed_steps() == 2);
  CHECK(run.has_memory());
  CHECK(check_run_memory(run, a40()).ok());
}

TEST_CASE("run file (spec): a bad field is an error that names it") {
  const json d = good_doc();
  {
    json x = d;
    x["schema"] = "ftcost.run/2";
    CHECK(record_error(x).field == "schema");
  }
  {
    json x = d;
    x["gpu"].erase("name");
    const Error e = record_error(x);
    CHECK(e.field == "gpu");
    CHECK(e.message.find("needs id") != std::string::npos);
  }
  {
    json x = d;
    x["model"] = {{"config", {{"model_type", "llama"}}}};  // a config.json ftcost cannot read
    CHECK(record_error(x).field.rfind("model.config", 0) == 0);
  }
  {
    json x = d;
    x["training"]["attention"] = "paged";
    const Error e = record_error(x);
    CHECK(e.field == "training.attention");
    CHECK(e.message == "must be one of flash, sdpa, eager, xformers, got \"paged\"");
  }
  {
    json x = d;
    x["training"]["lora_targets"] = json::array({"q_proj", 3});
    CHECK(record_error(x).field == "training.lora_targets[1]");
  }
  {
    json x = d;
    x["training"]["method"] = "full";  // LoRA's arguments are not read for a full fine-tune
    x["training"]["lora_rank"] = 0;
    CHECK(parse_run_record(x.dump(), "full.json").ok());
  }
  {
    json x = d;
    x["steps"][2]["micro_batches"][0]["tokens"] = 1e6;
    CHECK(record_error(x).field == "steps[2].micro_batches[0].tokens");
  }
  {
    json x = d;
    x["steps"][1]["max_memory_allocated_bytes"] = "20 GB";
    CHECK(record_error(x).field == "steps[1].max_memory_allocated_bytes");
  }
  {
    json x = d;
    for (auto& s : x["steps"]) s["warmup"] = true;
    CHECK(record_error(x).field == "steps");  // nothing to fit
  }
}

TEST_CASE("run file (spec): the memory figures against a GPU") {
  json d = good_doc();
  d["steps"][1]["max_memory_allocated_bytes"] = 1e11;  // 93 GiB on a 45 GiB card, and above reserved
  auto r = parse_run_record(d.dump(), "big.json");
  REQUIRE(r.ok());  // no GPU known yet
  const Status st = check_run_memory(r.value(), a40());
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().field == "steps[1].max_memory_allocated_bytes");  // the range first, then the order
  d["steps"][1]["max_memory_allocated_bytes"] = 0;
  r = parse_run_record(d.dump(), "zero.json");
  REQUIRE(r.ok());
  CHECK(check_run_memory(r.value(), a40()).error().field == "steps[1].max_memory_allocated_bytes");
  d["steps"][1]["max_memory_allocated_bytes"] = 2.3e10;  // above reserved
  r = parse_run_record(d.dump(), "order.json");
  REQUIRE(r.ok());
  CHECK(check_run_memory(r.value(), a40()).error().field == "steps[1].max_memory_reserved_bytes");
  d["steps"][1]["max_memory_allocated_bytes"] = 2e10;
  d["gpu"]["memory_bytes"] = 1e12;
  r = parse_run_record(d.dump(), "gpu.json");
  REQUIRE(r.ok());
  CHECK(check_run_memory(r.value(), a40()).error().field == "gpu.memory_bytes");
}
