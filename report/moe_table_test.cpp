#include "report/moe_table.h"

#include <gtest/gtest.h>

namespace stratasim {
namespace {

StrategyResult Moe(const std::string& name, const std::string& kind, int top_k, double mean_s) {
  StrategyResult r;
  r.name = name;
  r.kind = kind;
  MoeSummary m;
  m.top_k = top_k;
  m.mean_s = m.p50_s = m.p95_s = m.min_s = m.max_s = mean_s;
  m.tokens_per_s = 1000 / mean_s;
  m.is_baseline = kind == "deepspeed-moe";
  m.load_balance_ratio = m.is_baseline ? 1 : 2.5;
  m.peak_memory_bytes = 1024.0 * 1024 * 1024;
  r.moe = m;
  return r;
}

TEST(MoeTableTest, SpeedupsPairWithTheBaselineOfTheSameTopK) {
  std::vector<StrategyResult> s = {
      Moe("ds1", "deepspeed-moe", 1, 0.2), Moe("pp1", "pro-prophet", 1, 0.1),
      Moe("pp2", "pro-prophet", 2, 0.1), Moe("ds2", "deepspeed-moe", 2, 0.3)};
  StrategyResult failed = Moe("x", "deepspeed-moe", 1, 0.05);
  failed.ok = false;
  s.insert(s.begin(), failed);  // a failed baseline is never the reference
  SetMoeSpeedups(s);
  EXPECT_EQ(s[1].moe->baseline, "ds1");
  EXPECT_DOUBLE_EQ(s[1].moe->speedup, 1);
  EXPECT_DOUBLE_EQ(s[2].moe->speedup, 2);
  EXPECT_EQ(s[3].moe->baseline, "ds2");
  EXPECT_DOUBLE_EQ(s[3].moe->speedup, 3);
}

TEST(MoeTableTest, TheBaselineIsWhatThePlannerDeclaresNotAKindName) {
  std::vector<StrategyResult> s = {Moe("ds", "deepspeed-moe", 1, 0.2), Moe("ep", "my-ep", 1, 0.4),
                                   Moe("pp", "pro-prophet", 1, 0.1)};
  s[0].moe->is_baseline = false;
  s[1].moe->is_baseline = true;
  SetMoeSpeedups(s);
  EXPECT_EQ(s[0].moe->baseline, "ep");
  EXPECT_DOUBLE_EQ(s[0].moe->speedup, 2);
  EXPECT_DOUBLE_EQ(s[2].moe->speedup, 4);
  RunResults r;
  r.strategies = s;
  EXPECT_EQ(FormatMoeTable(r).substr(0, 69),
            "MoE (per measured iteration; speed-up over my-ep of the same top-k)\n\n");
}

TEST(MoeTableTest, WithoutABaselineTheTableSaysSo) {
  RunResults r;
  r.strategies = {Moe("pp1", "pro-prophet", 1, 0.1), Moe("ds2", "deepspeed-moe", 2, 0.3)};
  SetMoeSpeedups(r.strategies);
  EXPECT_EQ(r.strategies[0].moe->speedup, 0);
  EXPECT_EQ(r.strategies[0].moe->baseline, "");
  const std::string t = FormatMoeTable(r);
  EXPECT_EQ(t.substr(0, t.find('\n')),
            "MoE (per measured iteration; speed-up over deepspeed-moe of the same top-k)");
  r.strategies.pop_back();
  const std::string alone = FormatMoeTable(r);
  EXPECT_EQ(alone.substr(0, alone.find('\n')),
            "MoE (per measured iteration; no expert-parallel baseline to compute a speed-up over)");
}

TEST(MoeTableTest, Format) {
  RunResults r;
  r.strategies = {Moe("ds1", "deepspeed-moe", 1, 0.2), Moe("pp1", "pro-prophet", 1, 0.1)};
  StrategyResult dense;
  dense.name = "ddp";
  r.strategies.push_back(dense);  // no MoE figures: not in this table
  SetMoeSpeedups(r.strategies);
  const std::string t = FormatMoeTable(r);
  EXPECT_EQ(
      t,
      "MoE (per measured iteration; speed-up over deepspeed-moe of the same top-k)\n\n"
      "strategy  top-k  iter mean (ms)     p50     p95     min     max  tokens/s  speed-up"
      "  load-balance ratio  exposed a2a (ms)  placement (ms)  placement exposed (ms)  "
      "mem/GPU (GiB)\n"
      "--------  -----  --------------  ------  ------  ------  ------  --------  --------"
      "  ------------------  ----------------  --------------  ----------------------  "
      "-------------\n"
      "ds1           1          200.00  200.00  200.00  200.00  200.00      5000     1.00x"
      "                1.00              0.00            0.00                    0.00           "
      "1.00\n"
      "pp1           1          100.00  100.00  100.00  100.00  100.00     10000     2.00x"
      "                2.50              0.00            0.00                    0.00           "
      "1.00\n");
  RunResults none;
  none.strategies.push_back(dense);
  EXPECT_EQ(FormatMoeTable(none), "");
}

TEST(MoeTableTest, PlacementLinesForStrategiesThatReplicate) {
  RunResults r;
  r.strategies = {Moe("ds1", "deepspeed-moe", 1, 0.2), Moe("pp1", "pro-prophet", 1, 0.1)};
  MoeSummary& m = *r.strategies[1].moe;
  m.replicas = 4;
  m.placement_changes = 1.5;
  m.placement_kept_fraction = 0.875;
  m.transfer_bytes_saved = -12.5e6;
  SetMoeSpeedups(r.strategies);
  const std::string t = FormatMoeTable(r);
  EXPECT_EQ(t.substr(t.find("\nExpert placements")),
            "\nExpert placements (per measured iteration; kept: (iteration, layer) placements "
            "left in GPU memory unchanged; saved: bytes moved less than re-sending every copy)\n\n"
            "strategy  copies created + dropped  placements kept  bytes saved (MB)\n"
            "--------  ------------------------  ---------------  ----------------\n"
            "pp1                            1.5              88%            -12.50\n");
  // Nothing replicated: no placement lines.
  m.replicas = 0;
  m.placement_changes = 0;
  EXPECT_EQ(FormatMoeTable(r).find("Expert placements"), std::string::npos);
}

}  // namespace
}  // namespace stratasim
