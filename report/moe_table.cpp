#include "report/moe_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "report/aligned_columns.h"

namespace stratasim {
namespace {

// States SetMoeSpeedups' rule with the kinds of the baselines in this run.
std::string SpeedupRule(const RunResults& r) {
  std::vector<std::string> kinds;
  for (const StrategyResult& s : r.strategies) {
    if (s.ok && s.moe && s.moe->is_baseline &&
        std::find(kinds.begin(), kinds.end(), s.kind) == kinds.end()) {
      kinds.push_back(s.kind);
    }
  }
  if (kinds.empty()) return "no expert-parallel baseline to compute a speed-up over";
  std::string names;
  for (const std::string& k : kinds) names += (names.empty() ? "" : " or ") + k;
  return "speed-up over " + names + " of the same top-k";
}

// Under the table, for the strategies that replicate experts: how their placements changed
// between iterations (persistent placements, strategies/moe/persistent_placement.h).
std::string PersistentPlacementLines(const RunResults& r) {
  std::vector<std::vector<std::string>> rows = {
      {"strategy", "copies created + dropped", "placements kept", "bytes saved (MB)"}};
  for (const StrategyResult& s : r.strategies) {
    if (!s.ok || !s.moe || (s.moe->replicas <= 0 && s.moe->placement_changes <= 0)) continue;
    const MoeSummary& m = *s.moe;
    rows.push_back({s.name, Num("%.1f", m.placement_changes),
                    Num("%.0f%%", 100 * m.placement_kept_fraction),
                    Num("%.2f", m.transfer_bytes_saved / 1e6)});
  }
  if (rows.size() == 1) return "";
  return "\nExpert placements (per measured iteration; kept: (iteration, layer) placements left "
         "in GPU memory unchanged; saved: bytes moved less than re-sending every copy)\n\n" +
         AlignedColumns(rows, 1);
}

}  // namespace

void SetMoeSpeedups(std::vector<StrategyResult>& strategies) {
  for (StrategyResult& s : strategies) {
    if (!s.ok || !s.moe) continue;
    for (const StrategyResult& b : strategies) {
      if (b.ok && b.moe && b.moe->is_baseline && b.moe->top_k == s.moe->top_k) {
        s.moe->baseline = b.name;
        s.moe->speedup = s.moe->mean_s > 0 ? b.moe->mean_s / s.moe->mean_s : 0;
        break;
      }
    }
  }
}

std::string FormatMoeTable(const RunResults& r) {
  std::vector<std::vector<std::string>> rows = {
      {"strategy", "top-k", "iter mean (ms)", "p50", "p95", "min", "max", "tokens/s", "speed-up",
       "load-balance ratio", "exposed a2a (ms)", "placement (ms)", "placement exposed (ms)",
       "mem/GPU (GiB)"}};
  for (const StrategyResult& s : r.strategies) {
    if (!s.ok || !s.moe) continue;
    const MoeSummary& m = *s.moe;
    rows.push_back(
        {s.name, std::to_string(m.top_k), Num("%.2f", m.mean_s * 1e3), Num("%.2f", m.p50_s * 1e3),
         Num("%.2f", m.p95_s * 1e3), Num("%.2f", m.min_s * 1e3), Num("%.2f", m.max_s * 1e3),
         Num("%.0f", m.tokens_per_s), m.speedup > 0 ? Num("%.2fx", m.speedup) : std::string("-"),
         std::isfinite(m.load_balance_ratio) ? Num("%.2f", m.load_balance_ratio)
                                             : std::string("inf"),
         Num("%.2f", m.exposed_a2a_s * 1e3), Num("%.2f", m.placement_s * 1e3),
         Num("%.2f", m.placement_exposed_s * 1e3),
         Num("%.2f", m.peak_memory_bytes / (1024.0 * 1024 * 1024))});
  }
  if (rows.size() == 1) return "";
  std::string out = "MoE (per measured iteration; " + SpeedupRule(r) + ")\n\n";
  out += AlignedColumns(rows, 1);
  out += PersistentPlacementLines(r);
  return out;
}

}  // namespace stratasim
