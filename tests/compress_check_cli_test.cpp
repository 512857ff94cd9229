// `stratasim compress-check` end to end: the table, the files and their fields, determinism of
// everything but the measured times, the scenario's compressing strategies, --npy, and the
// errors of bad options.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli_runner.h"
#include "tests/scenario_text.h"

namespace {

namespace fs = std::filesystem;

using stratasim::testing::RunCli;
using stratasim::testing::Slurp;
using Result = stratasim::testing::CliResult;

// Eight A100s, a small GPT whose 4,000-token embedding is sparse, dense DDP and S2Reducer.
std::string Scenario(const std::string& strategies) {
  return "name: tiny-sparse\n" + stratasim::testing::TwoA100Servers(4) +
         R"(model:
  kind: gpt
  layers: 2
  hidden: 64
  heads: 4
  sequence: 128
  vocabulary: 4000
  sparse_embedding: true
training:
  global_batch: 16
  micro_batch: 1
  seed: 5
strategies:
)" + strategies;
}

const char kStrategies[] = R"(  - {name: ddp, kind: ddp}
  - {name: s2-wide, kind: s2reducer, options: {sketch_rows: 3, sketch_columns: 20000}}
)";

fs::path Write(const fs::path& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir / name, std::ios::binary) << text;
  return dir / name;
}

// The JSON without each compressor's "measured" times.
nlohmann::json WithoutMeasured(nlohmann::json j) {
  for (auto& c : j["compressors"]) c.erase("measured");
  return j;
}

// The CSV without its measured_* columns (the last two).
std::string CsvWithoutMeasured(const std::string& csv) {
  std::stringstream in(csv);
  std::string line, out;
  while (std::getline(in, line)) {
    for (int i = 0; i < 2; ++i) line = line.substr(0, line.rfind(','));
    out += line + "\n";
  }
  return out;
}

TEST(CompressCheckCli, ChecksDenseAndTheScenariosCompressorsOnItsEmbedding) {
  const fs::path d = stratasim::testing::TempDir("compress-check", "strategies");
  const fs::path scenario = Write(d, "s.yaml", Scenario(kStrategies));
  const Result r = RunCli("compress-check " + scenario.string() + " --trials 3 --cols 16 --out " +
                          (d / "out").string() + " --calibration-out " + (d / "cal.yaml").string());
  // Dense runs; s2reducer runs once its kernels are built, else it is reported and the exit
  // status is 1, with dense's results written all the same.
  ASSERT_TRUE(r.status == 0 || r.status == 1) << r.output;
  EXPECT_NE(r.output.find("compress-check tiny-sparse: embedding gradient 4000 x 16, 256 tokens "
                          "per worker (zipf 1); 8 workers, 3 trials, seed 5\n"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("rel. error"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("* measured wall time"), std::string::npos) << r.output;
  const nlohmann::json j = nlohmann::json::parse(Slurp(d / "out" / "compress_check.json"));
  EXPECT_EQ(j["scenario"], "tiny-sparse");
  EXPECT_EQ(j["trials"], 3);
  EXPECT_EQ(j["tensor"]["source"], "embedding");
  EXPECT_EQ(j["tensor"]["rows"], 4000);
  EXPECT_EQ(j["tensor"]["cols"], 16);
  EXPECT_EQ(j["tensor"]["workers"], 8);                // min(8 GPUs, 8)
  EXPECT_EQ(j["tensor"]["tokens_per_worker"], 256.0);  // 16 / 8 samples x 128 tokens
  ASSERT_EQ(j["compressors"].size(), 2u);              // dense, then the strategy that compresses
  const nlohmann::json& dense = j["compressors"][0];
  EXPECT_EQ(dense["name"], "dense");
  ASSERT_EQ(dense["ok"], true);
  EXPECT_LT(dense["relative_error"].get<double>(), 1e-6);
  EXPECT_EQ(dense["recovered_row_fraction"], 1.0);
  EXPECT_EQ(dense["bytes_per_worker"], 4000.0 * 16 * 4);
  const nlohmann::json& s2 = j["compressors"][1];
  EXPECT_EQ(s2["name"], "s2-wide");
  EXPECT_EQ(s2["method"], "s2reducer");
  EXPECT_EQ(s2["strategy"], "s2-wide");
  EXPECT_EQ(s2["options"]["sketch_rows"], 3);
  EXPECT_EQ(s2["options"]["sketch_columns"], 20000);
  EXPECT_EQ(s2["options"]["seed"], 5);
  if (s2["ok"] == true) {
    // 4rc + n/8 bytes per worker (core/compression.h).
    EXPECT_EQ(s2["bytes_per_worker"], 4.0 * 3 * 20000 + 4000 / 8);
    EXPECT_EQ(r.status, 0);
  } else {
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.output.find("s2-wide: failed: " + s2["error"].get<std::string>()),
              std::string::npos)
        << r.output;
  }
  // The calibration file: per-element times of what ran, for the scenario's GPU kind.
  const std::string cal = Slurp(d / "cal.yaml");
  EXPECT_NE(cal.find("format: stratasim-calibration"), std::string::npos) << cal;
  EXPECT_NE(cal.find("  - gpu: A100-SXM4-80GB\n"), std::string::npos) << cal;
  EXPECT_NE(cal.find("CPU-reference times"), std::string::npos) << cal;
  EXPECT_NE(cal.find("- {method: dense, encode: \""), std::string::npos) << cal;
  fs::remove_all(d);
}

TEST(CompressCheckCli, EverythingButTheMeasuredTimesIsByteIdentical) {
  const fs::path d = stratasim::testing::TempDir("compress-check", "determinism");
  const fs::path scenario = Write(d, "s.yaml", Scenario(kStrategies));
  const std::string args = "compress-check " + scenario.string() +
                           " --methods dense,s2reducer,topk,qsgd --trials 2 --cols 8 --out ";
  const Result a = RunCli(args + (d / "a").string());
  const Result b = RunCli(args + (d / "b").string());
  ASSERT_EQ(a.status, b.status) << a.output << b.output;
  const std::string ja = Slurp(d / "a" / "compress_check.json");
  const std::string jb = Slurp(d / "b" / "compress_check.json");
  ASSERT_FALSE(ja.empty());
  // Byte-identical once the measured times are taken out: the rest is written in a fixed order
  // with the full precision of each double.
  EXPECT_EQ(WithoutMeasured(nlohmann::ordered_json::parse(ja)).dump(2),
            WithoutMeasured(nlohmann::ordered_json::parse(jb)).dump(2));
  EXPECT_EQ(CsvWithoutMeasured(Slurp(d / "a" / "compress_check.csv")),
            CsvWithoutMeasured(Slurp(d / "b" / "compress_check.csv")));
  const nlohmann::json j = nlohmann::json::parse(ja);
  ASSERT_EQ(j["compressors"].size(), 4u);
  EXPECT_EQ(j["compressors"][0]["name"], "dense");
  EXPECT_EQ(j["compressors"][3]["name"], "qsgd");
  // Another seed, other tensors.
  const fs::path other = Write(d, "t.yaml", Scenario(kStrategies));
  {
    std::string text = Slurp(other);
    text.replace(text.find("seed: 5"), 7, "seed: 6");
    Write(d, "t.yaml", text);
  }
  ASSERT_EQ(RunCli("compress-check " + other.string() + " --methods dense --cols 8 --out " +
                   (d / "c").string())
                .status,
            0);
  const nlohmann::json jc = nlohmann::json::parse(Slurp(d / "c" / "compress_check.json"));
  EXPECT_NE(jc["tensor"]["exact_sum_norm"], j["tensor"]["exact_sum_norm"]);
  fs::remove_all(d);
}

TEST(CompressCheckCli, DenseTensorsAndNpyArrays) {
  const fs::path d = stratasim::testing::TempDir("compress-check", "tensors");
  const fs::path scenario = Write(d, "s.yaml", Scenario(kStrategies));
  const Result dense = RunCli("compress-check " + scenario.string() +
                              " --methods dense --tensor dense --elements 1000 --density 0.5 "
                              "--distribution laplace --workers 2 --out " +
                              (d / "dense").string());
  ASSERT_EQ(dense.status, 0) << dense.output;
  const nlohmann::json jd = nlohmann::json::parse(Slurp(d / "dense" / "compress_check.json"));
  EXPECT_EQ(jd["tensor"]["source"], "dense");
  EXPECT_EQ(jd["tensor"]["distribution"], "laplace");
  EXPECT_EQ(jd["tensor"]["rows"], 1000);
  EXPECT_EQ(jd["tensor"]["cols"], 1);
  EXPECT_EQ(jd["tensor"]["workers"], 2);
  // A 2 x 3 float32 array, shared by 3 workers with noise.
  std::string npy = std::string("\x93NUMPY\x01\x00", 8);
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  npy += static_cast<char>(header.size());
  npy += '\0';
  npy += header;
  const float values[6] = {1, 0, -2, 0, 0, 0};
  npy.append(reinterpret_cast<const char*>(values), sizeof values);
  const fs::path file = Write(d, "g.npy", npy);
  const Result r = RunCli("compress-check " + scenario.string() + " --methods dense --npy " +
                          file.string() + " --workers 3 --out " + (d / "npy").string());
  ASSERT_EQ(r.status, 0) << r.output;
  const nlohmann::json jn = nlohmann::json::parse(Slurp(d / "npy" / "compress_check.json"));
  EXPECT_EQ(jn["tensor"]["source"], "npy");
  EXPECT_EQ(jn["tensor"]["rows"], 2);
  EXPECT_EQ(jn["tensor"]["cols"], 3);
  EXPECT_EQ(jn["tensor"]["nonzero_rows_per_worker"], (std::vector<int>{1, 1, 1}));
  fs::remove_all(d);
}

TEST(CompressCheckCli, BadOptionsExitTwoWithTheRule) {
  const fs::path d = stratasim::testing::TempDir("compress-check", "bad");
  const fs::path scenario = Write(d, "s.yaml", Scenario(kStrategies));
  const std::string cmd = "compress-check " + scenario.string() + " --out " + (d / "o").string();
  const struct {
    std::string args;
    std::string message;
  } cases[] = {
      {" --trials 0", "stratasim compress-check: --trials 0: must be in [1, 1000]\n"},
      {" --workers 0", "stratasim compress-check: --workers 0: must be in [1, 64]\n"},
      {" --npy " + (d / "missing.npy").string(),
       "stratasim: error: " + (d / "missing.npy").string() +
           ": <document>: cannot read file (No such file or directory)\n"},
      {" --methods dense,sketchy",
       "stratasim compress-check: --methods dense,sketchy: unknown method 'sketchy' (known: "
       "dense coo omnireduce s2reducer casq topk qsgd terngrad fp16 fp8 int8, or all)\n"},
      {" --density 0.5",
       "stratasim compress-check: --density applies to a generated dense tensor "
       "(--tensor dense), not the embedding tensor\n"},
      {" --max-elements 1000",
       "stratasim compress-check: the gradient is 4000 x 64 = 256000 elements per worker, more "
       "than --max-elements 1000 (it would take about 12.70 MiB for 8 workers): shrink it with "
       "--cols 1 (the same rows, so the same sparsity) or --rows, or raise --max-elements\n"},
  };
  for (const auto& c : cases) {
    const Result r = RunCli(cmd + c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.output;
    EXPECT_EQ(r.output, c.message) << c.args;
  }
  // A compressing strategy's bad option is the scenario's error, located at the option.
  const fs::path bad = Write(
      d, "b.yaml", Scenario("  - {name: s2, kind: s2reducer, options: {sketch_columns: 0}}\n"));
  const Result r = RunCli("compress-check " + bad.string() + " --out " + (d / "o").string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find(bad.string() + ":"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("sketch_columns"), std::string::npos) << r.output;
  fs::remove_all(d);
}

}  // namespace
