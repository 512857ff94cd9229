#include "search/candidate.h"

#include <utility>

namespace stratasim::search {

std::string_view ToString(Zero z) {
  switch (z) {
    case Zero::kNone:
      return "none";
    case Zero::kDistributedOptimizer:
      return "distributed_optimizer";
    case Zero::kZero1:
      return "zero1";
    case Zero::kZero2:
      return "zero2";
    case Zero::kZero3:
      return "zero3";
  }
  return "none";
}

namespace {

std::string ScheduleTag(const Candidate& c) {
  if (c.schedule == "gpipe") return "gp";
  if (c.schedule == "interleaved") return "int" + std::to_string(c.virtual_stages);
  return c.schedule;
}

std::string ZeroTag(Zero z) {
  switch (z) {
    case Zero::kNone:
      return "";
    case Zero::kDistributedOptimizer:
      return "do";
    case Zero::kZero1:
      return "z1";
    case Zero::kZero2:
      return "z2";
    case Zero::kZero3:
      return "z3";
  }
  return "";
}

}  // namespace

std::string CandidateName(const Candidate& c) {
  std::string name = "d" + std::to_string(c.data) + "-t" + std::to_string(c.tensor) + "-p" +
                     std::to_string(c.pipeline) + "-mb" + std::to_string(c.micro_batch);
  if (c.pipeline > 1) name += "-" + ScheduleTag(c);
  if (c.recompute != Recompute::kNone) name += "-" + std::string(ToString(c.recompute));
  if (c.sequence_parallel) name += "-sp";
  if (c.zero != Zero::kNone) name += "-" + ZeroTag(c.zero);
  if (c.rank_order != "tpd") name += "-" + c.rank_order;
  return name;
}

StrategySpec ToStrategySpec(const Candidate& c, const std::string& key_path) {
  StrategySpec spec;
  spec.name = CandidateName(c);
  spec.key_path = key_path;
  spec.where = SourceLocation{key_path, 0, 0};
  spec.own.micro_batch = c.micro_batch;
  spec.own.recompute = c.recompute;
  auto option = [&](const std::string& key, std::string value) {
    spec.options[key] = OptionValue{std::move(value), spec.where};
  };
  if (c.tensor * c.pipeline == 1) {
    switch (c.zero) {
      case Zero::kZero1:
        spec.kind = "zero1";
        break;
      case Zero::kZero2:
        spec.kind = "zero2";
        break;
      case Zero::kZero3:
        spec.kind = "zero3";
        break;
      default:
        spec.kind = "ddp";
    }
    return spec;
  }
  spec.kind = "3d";
  option("tensor", std::to_string(c.tensor));
  option("stages", std::to_string(c.pipeline));
  option("data", std::to_string(c.data));
  option("rank_order", c.rank_order);
  if (c.pipeline > 1) option("schedule", c.schedule);
  if (c.schedule == "interleaved") option("virtual_stages", std::to_string(c.virtual_stages));
  if (c.sequence_parallel) option("sequence_parallel", "true");
  if (c.zero == Zero::kDistributedOptimizer) option("distributed_optimizer", "true");
  return spec;
}

}  // namespace stratasim::search
