#include "search/rank.h"

#include <algorithm>
#include <utility>

namespace stratasim::search {

SearchOutcome RankPlans(const Scenario& s, const SearchSpec& spec) {
  SearchOutcome out;
  const std::vector<Candidate> all = Enumerate(s, spec);
  out.enumerated = static_cast<long long>(all.size());
  Estimator estimate(s);  // caches profiles and collective times over the candidates
  for (const Candidate& c : all) {
    if (std::optional<PruneReason> why = Prune(s, spec, c)) {
      ++out.pruned[*why];
      continue;
    }
    RankedPlan r;
    r.plan = c;
    r.name = CandidateName(c);
    r.estimate = estimate(c);
    r.estimate.peak_memory_bytes = EstimateMemory(s, c).peak_bytes;
    out.ranked.push_back(std::move(r));
  }
  std::sort(out.ranked.begin(), out.ranked.end(), [](const RankedPlan& a, const RankedPlan& b) {
    if (a.estimate.iteration_s != b.estimate.iteration_s) {
      return a.estimate.iteration_s < b.estimate.iteration_s;
    }
    return a.name < b.name;
  });
  for (size_t i = 0; i < out.ranked.size(); ++i) out.ranked[i].analytic_rank = int(i) + 1;
  return out;
}

std::string DescribePruned(const std::map<PruneReason, long long>& pruned) {
  std::vector<std::pair<long long, std::string>> parts;
  for (const auto& [reason, count] : pruned) {
    if (count > 0) parts.emplace_back(count, std::string(Label(reason)));
  }
  if (parts.empty()) return "pruned: none";
  std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::string text = "pruned: ";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(parts[i].first) + " " + parts[i].second;
  }
  return text;
}

Scenario ScenarioOfPlans(const Scenario& s, const std::vector<const RankedPlan*>& plans) {
  Scenario out = s;
  out.strategies.clear();
  for (size_t i = 0; i < plans.size(); ++i) {
    out.strategies.push_back(
        ToStrategySpec(plans[i]->plan, "search.plans[" + std::to_string(i) + "]"));
  }
  return out;
}

}  // namespace stratasim::search
