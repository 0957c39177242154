// Golden tests of the `ftcost` command line (cli_tests.cpp says which file has what): files read and written
// (fit-stack --run and --write, issue #15's inputs that are not regular files and outputs that are devices,
// symlinks or full), write errors on stdout, --json errors and Hugging Face ids.
#include "cli_run.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <vector>

TEST_CASE("fit-stack --run: bad run files exit 2 naming the file and the field") {
  const std::string dir = FTCOST_TEST_TMP;
  auto write = [&](const std::string& name, const std::string& text) {
    const std::string path = dir + "/" + name;
    FILE* f = fopen(path.c_str(), "w");
    REQUIRE(f != nullptr);
    fputs(text.c_str(), f);
    fclose(f);
    return path;
  };
  expect_bad("fit-stack --run " + dir + "/no-such-run.json", "--run");
  expect_bad("fit-stack --run " + write("run-garbage.json", "{not json"), "run-garbage.json");
  expect_bad("fit-stack --run " + write("run-schema.json", R"({"schema": "ftcost.run/0"})"), "schema");
  const json good = {{"schema", "ftcost.run/1"},
                     {"gpu", {{"id", "a40"}}},
                     {"model", {{"preset", "llama-2-7b"}}},
                     {"training", {{"method", "lora"}}},
                     {"steps",
                      {{{"wall_s", 1.2}, {"micro_batches", {{{"batch_size", 4}, {"seq_len", 512}}}}},
                       {{"wall_s", 1.3}, {"micro_batches", {{{"batch_size", 4}, {"seq_len", 512}}}}}}}};
  json other = good;
  other["gpu"] = {{"id", "h100-sxm5-80gb"}};
  const std::string a = write("run-a40.json", good.dump()), h = write("run-h100.json", other.dump());
  expect_bad("fit-stack --run " + a + " --run " + h, "fit one GPU's runs at a time");
  json nogpu = good;
  nogpu["gpu"] = nullptr;
  nogpu["gpu_null_reason"] = "no CUDA device (CPU run)";
  expect_bad("fit-stack --run " + write("run-cpu.json", nogpu.dump()),
             "run-cpu.json: gpu: the run names no GPU");
  json badmethod = good;
  badmethod["training"]["method"] = "dpo";
  expect_bad("fit-stack --run " + write("run-dpo.json", badmethod.dump()), "training.method");
  Run ok = run("fit-stack --run " + a + " --json");
  CHECK(ok.code == 0);
  const json j = json::parse(ok.out);
  CHECK(j["time_points"] == 2);
  CHECK(j["points"].size() == 2);
}

// Issue #15: files, output targets and stdout. tests/robust/robust.py runs many more cases of each kind.
TEST_CASE("issue #15: inputs that are not regular files are named, never read or waited on") {
  const std::string dir = std::string(FTCOST_TEST_TMP) + "/issue15";
  (void)std::system(("rm -rf " + dir + " && mkdir -p " + dir + "/folder").c_str());
  const std::string fifo = dir + "/points.csv";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // a FIFO hung forever before; `timeout` turns a regression into exit 124 instead of a stuck test
  Run r = run("fit --points " + fifo, "timeout 30 ");
  CHECK(r.code == 2);
  CHECK(r.err.find("FIFO") != std::string::npos);
  r = run("estimate --model " + fifo + " --gpu a40 --method qlora", "timeout 30 ");
  CHECK(r.code == 2);
  CHECK(r.err.find("FIFO") != std::string::npos);
  expect_bad("estimate --model " + dir + "/folder --gpu a40 --method qlora", "is a folder");
  expect_bad("fit --points /dev/zero", "character device");
  expect_bad("fit --points " + mixtral_cs_sparse_csv() + " --c3 1e308", "between 1e-9 and 1e12");
  expect_bad("fit-stack --write " + dir + "/missing.json", "no such file");
}

TEST_CASE("issue #15: outputs replace neither device nodes nor symlinks, and write errors are reported") {
  const std::string dir = std::string(FTCOST_TEST_TMP) + "/issue15-out";
  (void)std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  // As root the old rename replaced device nodes: use private ones (mknod) so /dev is never at risk.
  std::string null_dev = "/dev/null", full_dev = "/dev/full";
  if (::geteuid() == 0 && ::mknod((dir + "/null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0 &&
      ::mknod((dir + "/full").c_str(), S_IFCHR | 0666, makedev(1, 7)) == 0) {
    null_dev = dir + "/null";
    full_dev = dir + "/full";
  }
  Run r = run("validate --svg " + null_dev + " --markdown " + null_dev);
  CHECK(r.code == 0);
  struct stat st {};
  REQUIRE(::lstat(null_dev.c_str(), &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  r = run("validate --markdown " + full_dev);
  CHECK(r.code == 2);
  CHECK(r.err.find("--markdown") != std::string::npos);
  CHECK(r.err.find("No space left on device") != std::string::npos);
  REQUIRE(::lstat(full_dev.c_str(), &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  // a symlink stays a symlink; its target gets the report
  { std::ofstream(dir + "/target.md") << "old\n"; }
  REQUIRE(::symlink("target.md", (dir + "/link.md").c_str()) == 0);
  r = run("validate --markdown " + dir + "/link.md");
  CHECK(r.code == 0);
  REQUIRE(::lstat((dir + "/link.md").c_str(), &st) == 0);
  CHECK(S_ISLNK(st.st_mode));
  std::ifstream t(dir + "/target.md");
  std::stringstream text;
  text << t.rdbuf();
  CHECK(text.str().rfind("| group", 0) == 0);
}

TEST_CASE("issue #15: a write error on stdout is an error, not exit 0 with an empty file") {
  Run r = run("models --json >/dev/full");
  CHECK(r.code == 2);
  CHECK(r.err.find("cannot write to stdout: No space left on device") != std::string::npos);
  r = run("estimate --model mixtral-8x7b --gpu a40 --method qlora --json >&-");
  CHECK(r.code == 2);
  CHECK(r.err.find("cannot write to stdout") != std::string::npos);
}

TEST_CASE("issue #15: an explicit batch that does not fit prints no time or cost as a result") {
  Run r = run("estimate --model mixtral-8x7b --gpu a40 --method qlora --dataset math14k --batch 64");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("does not fit at batch 64") != std::string::npos);
  CHECK(r.out.find("cost: $") == std::string::npos);
  CHECK(r.out.find("throughput:") == std::string::npos);
}

TEST_CASE("fit-stack --write keeps the profile's key order and indent: a refit's diff shows only values") {
  const std::string dir = std::string(FTCOST_TEST_TMP) + "/fit-write-order";
  (void)std::system(("rm -rf " + dir + " && mkdir -p " + dir + "/rows").c_str());
  // torchtune-2024's own rows only (its fit frees one throughput parameter and one memory count: quick).
  (void)std::system(("cp " + kData + "/reference/stacks-torchtune.json " + dir + "/rows/").c_str());
  auto read_text = [](const std::string& path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  // The shipped profile with its top-level and memory keys in reverse order (an order no sorted writer
  // keeps).
  using ordered = nlohmann::ordered_json;
  const ordered shipped =
      ordered::parse(read_text(std::string(FTCOST_SOURCE_DIR) + "/gpu-db/stacks/torchtune-2024.json"));
  ordered reversed = ordered::object();
  std::vector<std::string> top;
  for (const auto& item : shipped.items()) top.insert(top.begin(), item.key());
  for (const auto& k : top) {
    if (k != "memory") {
      reversed[k] = shipped.at(k);
      continue;
    }
    std::vector<std::string> mk;
    for (const auto& item : shipped.at("memory").items()) mk.insert(mk.begin(), item.key());
    reversed["memory"] = ordered::object();
    for (const auto& m : mk) reversed["memory"][m] = shipped.at("memory").at(m);
  }
  const std::string before = reversed.dump(2) + "\n";
  const std::string out = dir + "/torchtune-2024.json";
  std::ofstream(out) << before;
  Run r = run("fit-stack --stack torchtune-2024 --dir " + dir + "/rows --write " + out);
  REQUIRE(r.code == 0);
  const std::string after = read_text(out);
  // The keys of the file appear in the same order as before (the refitted values may differ).
  auto keys = [](const std::string& text) {
    std::vector<std::string> k;
    const auto doc = nlohmann::ordered_json::parse(text);  // a named object: items() refers to it
    for (const auto& item : doc.items()) k.push_back(item.key());
    return k;
  };
  CHECK(keys(after) == keys(before));
  const auto mem = [](const std::string& text) {
    std::vector<std::string> k;
    const auto doc = nlohmann::ordered_json::parse(text);
    for (const auto& item : doc.at("memory").items()) k.push_back(item.key());
    return k;
  };
  CHECK(mem(after) == mem(before));
  CHECK(after.rfind("{\n  \"", 0) == 0);                                      // the file's 2-space indent
  CHECK(after.find("\"mlp_saved_intermediates\": 4,") != std::string::npos);  // a count stays whole
}

TEST_CASE("issue 36: --json errors are the API's error object on stdout, exit 2; one epoch is singular") {
  Run r = run("estimate --model qwen3-8b --gpu 4090 --method lora --json");
  CHECK(r.code == 2);
  CHECK(r.err.empty());
  const json j = json::parse(r.out);
  CHECK(j.at("error").at("code") == "unknown_id");
  CHECK(j.at("error").at("field") == "--gpu");
  CHECK(j.at("error").at("message").get<std::string>().find("did you mean \"rtx-4090\"") !=
        std::string::npos);
  expect_bad("estimate --model qwen3-8b --gpu 4090 --method lora", "did you mean \"rtx-4090\"");
  Run one = run("estimate --model qwen2.5-7b --gpu h100-sxm5-80gb --method lora --dataset math14k");
  CHECK(one.code == 0);
  CHECK(one.out.find("samples × 1 epoch\n") != std::string::npos);
}

TEST_CASE("issue 36: a preset's Hugging Face id names the preset; an unknown Hub id gets a did-you-mean") {
  for (const char* id : {"Qwen/Qwen2.5-7B", "qwen/qwen2.5-7b", "Qwen2.5-7B"}) {
    CAPTURE(id);
    Run r = run(std::string("estimate --model ") + id + " --gpu h100-sxm5-80gb --method lora --json");
    REQUIRE(r.code == 0);
    CHECK(json::parse(r.out).at("model").at("id") == "qwen2.5-7b");
  }
  for (const char* id : {"meta-llama/Llama-3.1-8B", "meta-llama/Meta-Llama-3.1-8B", "Meta-Llama-3.1-8B"}) {
    CAPTURE(id);
    Run r = run(std::string("estimate --model ") + id + " --gpu h100-sxm5-80gb --method lora --json");
    REQUIRE(r.code == 0);
    CHECK(json::parse(r.out).at("model").at("id") == "llama-3.1-8b");
  }
  expect_bad("estimate --model Qwen/Qwen2.5-8B --gpu h100-sxm5-80gb --method lora",
             "\"Qwen/Qwen2.5-8B\" is no preset's Hugging Face id (did you mean \"qwen2.5-7b\"?)");
}
