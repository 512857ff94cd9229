#include "strategies/planners/oases_strategy.h"

#include <cstdio>
#include <limits>
#include <optional>

#include "core/error.h"
#include "core/units.h"
#include "strategies/planners/oases_profile.h"

namespace stratasim::planners {
namespace {

std::string Ms(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", seconds * 1e3);
  return buf;
}

std::string List(const std::vector<int>& v) {
  std::string text;
  for (int x : v) text += (text.empty() ? "" : ",") + std::to_string(x);
  return text;
}

}  // namespace

OasesChoice ChooseOasesDegrees(const Scenario& s, bool recompute, const milp::Options& options) {
  const int gpus = s.cluster.NumGpus();
  const int m = s.training.micro_batch;
  const std::vector<int> candidates = OasesCandidateDegrees(s, gpus);
  const double limit = OasesMemoryLimitBytes(s, gpus);
  std::optional<OasesChoice> best;
  std::vector<std::string> skipped;
  double least_needed = std::numeric_limits<double>::infinity();
  std::string least_text;
  int problems = 0;
  double solve_seconds = 0;
  for (int T : candidates) {
    const std::string at = "largest degree " + std::to_string(T);
    if (m < 2 || m % 2 != 0) {
      skipped.push_back(at + ": its groups' " + std::to_string(m) +
                        " samples (micro_batch) do not split into two equal sub-batches");
      continue;
    }
    const int per_pass = m * (gpus / T);  // samples of one micro-batch over all replicas
    if (s.training.global_batch % per_pass != 0) {
      skipped.push_back(at + ": global_batch " + std::to_string(s.training.global_batch) +
                        " is not a multiple of " + std::to_string(per_pass));
      continue;
    }
    OasesProfileRequest r;
    r.gpus = gpus;
    r.recompute = recompute;
    for (int t : candidates) {
      // Degree t's groups take m t / T samples: whole, even, at least 2.
      if (t > T || T % t != 0 || (m * t) % T != 0) continue;
      const int samples = m * t / T;
      if (samples < 2 || samples % 2 != 0) continue;
      r.degrees.push_back(t);
      r.group_samples.push_back(samples);
    }
    const OasesProfile p = BuildOasesProfile(s, r);
    OasesPlan plan;
    try {
      ++problems;
      plan = PlanOases(p, limit, T, options);
    } catch (const OasesNoPlan& e) {
      solve_seconds += e.solve_seconds;
      if (e.needed_bytes < least_needed) least_needed = e.needed_bytes, least_text = e.what();
      skipped.push_back(at + ": needs " + FormatBytes(e.needed_bytes) + " per GPU");
      continue;
    }
    solve_seconds += plan.solve_seconds;
    const int micro_batches = s.training.global_batch / per_pass;
    const double predicted = plan.objective_s * micro_batches;
    if (!best || predicted < best->predicted_iteration_s) {
      OasesChoice c;
      c.shape.sublayer_tensor = plan.degrees;
      c.shape.recompute = recompute;
      c.plan = plan;
      c.largest = T;
      c.micro_batches = micro_batches;
      c.predicted_iteration_s = predicted;
      c.names = p.names;
      best = c;
    }
    skipped.push_back(at + " (degrees " + List(r.degrees) + "): " + Ms(predicted) +
                      " predicted per iteration");
  }
  if (!best) {
    if (!least_text.empty()) {
      char fraction[16];
      std::snprintf(fraction, sizeof fraction, "%.2f", kOasesMemoryFraction);
      throw Error(least_text + " (" + fraction + " of the GPU's memory; the least over every " +
                  "largest degree of " + List(candidates) + " on " + std::to_string(gpus) +
                  " GPUs)");
    }
    std::string why;
    for (const std::string& w : skipped) why += (why.empty() ? "" : "; ") + w;
    throw Error("oases planner: no largest tensor degree applies on " + std::to_string(gpus) +
                " GPUs: " + why);
  }
  OasesChoice c = *best;
  c.problems = problems;
  c.solve_seconds = solve_seconds;
  std::string searched;
  for (const std::string& w : skipped) searched += (searched.empty() ? "" : "; ") + w;
  c.notes.push_back("Oases ILP (" + c.plan.solver + ", " + milp::ToString(c.plan.status) +
                    "): " + OasesDegreesText(c.names, c.plan.degrees));
  c.notes.push_back("Oases ILP objective " + Ms(c.plan.objective_s) +
                    " per micro-batch (forward + backward of the sub-layers, its own model), " +
                    "micro-batches per replica " + std::to_string(c.micro_batches) + ": " +
                    Ms(c.predicted_iteration_s) + " predicted; memory " +
                    FormatBytes(c.plan.memory_bytes) + " of " + FormatBytes(limit) +
                    " per GPU; searched: " + searched);
  return c;
}

Plan PlanOasesWithIlp(const Scenario& s, bool recompute, double sm_interference,
                      const OptionReader& opt) {
  OasesChoice c;
  try {
    c = ChooseOasesDegrees(s, recompute);
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& e) {
    throw opt.Fail("planner", e.what());
  }
  c.shape.sm_interference = sm_interference;
  Plan plan = LowerOases(s, c.shape);
  plan.notes.insert(plan.notes.begin(), c.notes.begin(), c.notes.end());
  SolverFigures& f = plan.solver.emplace();
  f.planner = "oases ILP";
  f.solver = c.plan.solver;
  f.status = milp::ToString(c.plan.status);
  f.problems = c.problems;
  f.variables = c.plan.variables;
  f.rows = c.plan.rows;
  f.objective_s = c.plan.objective_s;
  f.predicted_iteration_s = c.predicted_iteration_s;
  f.solve_s = c.solve_seconds;
  return plan;
}

}  // namespace stratasim::planners
