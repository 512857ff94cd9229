#include "chakra/export.h"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "chakra/format.h"
#include "core/dtype.h"
#include "core/error.h"

namespace stratasim::chakra {
namespace {

using ChakraProtoMsg::Node;
using Attrs = google::protobuf::RepeatedPtrField<ChakraProtoMsg::AttributeProto>;

[[noreturn]] void Refuse(const Task& t, const std::string& why) {
  throw Error("task " + std::to_string(t.id) + " ('" + t.name.str() + "') on rank " +
              std::to_string(t.rank) + ": " + why);
}

void SetString(Attrs* a, const char* name, std::string_view value) {
  AddAttr(a, name)->set_string_val(std::string(value));
}
void SetInt64(Attrs* a, const char* name, long long value) {
  AddAttr(a, name)->set_int64_val(value);
}
void SetInt32(Attrs* a, const char* name, int value) { AddAttr(a, name)->set_int32_val(value); }

// Chakra's sizes and counts are integers; the exact double travels beside them when a size is
// fractional or too large for an int64 (attr::kFlops, attr::kBytes).
long long Whole(double v) { return v < 9.2e18 ? std::llround(v) : 0; }
bool IsWhole(double v) { return static_cast<double>(Whole(v)) == v; }

// The sizes every kind carries: Chakra's integer, and the exact value when it differs.
void SetSizes(Attrs* a, const Task& t, const char* size_name, bool size_is_uint) {
  if (size_is_uint) {
    AddAttr(a, size_name)->set_uint64_val(static_cast<std::uint64_t>(Whole(t.bytes)));
  } else {
    SetInt64(a, size_name, Whole(t.bytes));
  }
  if (!IsWhole(t.bytes)) AddAttr(a, attr::kBytes)->set_double_val(t.bytes);
  if (t.flops != 0 || t.kind == TaskKind::kCompute) {
    SetInt64(a, "num_ops", Whole(t.flops));
    if (!IsWhole(t.flops)) AddAttr(a, attr::kFlops)->set_double_val(t.flops);
  }
}

void AddCollective(const TaskGraph& g, const Task& t, const std::map<std::vector<int>, int>& groups,
                   Node* n) {
  const Collective& c = g.collective(t.collective);
  Attrs* a = n->mutable_attr();
  n->set_type(ChakraProtoMsg::COMM_COLL_NODE);
  SetInt64(a, "comm_type", ToCommType(c.kind));
  // The collective's size, not the member task's (nccl-tests' size, as ASTRA-sim's comm_size).
  SetInt64(a, "comm_size", Whole(c.bytes));
  if (!IsWhole(c.bytes)) AddAttr(a, attr::kBytes)->set_double_val(c.bytes);
  SetString(a, "pg_name", std::to_string(groups.at(c.ranks)));
  SetString(a, attr::kCommDType, ToString(c.dtype));
  SetInt32(a, attr::kRoot, c.root);
  if (c.algorithm != "auto") SetString(a, attr::kAlgorithm, c.algorithm);
  if (c.kind == CollectiveKind::kAllToAllV) {
    auto* list = AddAttr(a, attr::kMatrix)->mutable_double_list();
    for (double b : c.matrix) list->add_values(b);
  }
  // The member task's own figures, when a planner set them (kept for the round trip).
  if (t.flops != 0) AddAttr(a, attr::kFlops)->set_double_val(t.flops);
  if (t.bytes != 0) AddAttr(a, "member_bytes")->set_double_val(t.bytes);
}

Node ToNode(const TaskGraph& g, const Task& t, TaskId stream_before,
            const std::map<std::vector<int>, int>& groups) {
  Node n;
  n.set_id(static_cast<std::uint64_t>(t.id));
  n.set_name(t.name.str());
  for (TaskId d : t.deps) {
    const Task& dep = g.task(d);
    if (dep.rank != t.rank) {
      Refuse(t, "depends on task " + std::to_string(d) + " of rank " + std::to_string(dep.rank) +
                    ", and a Chakra file holds one rank's nodes");
    }
    n.add_data_deps(static_cast<std::uint64_t>(d));
  }
  if (stream_before >= 0) n.add_ctrl_deps(static_cast<std::uint64_t>(stream_before));
  Attrs* a = n.mutable_attr();
  SetString(a, attr::kStream, g.streams()[static_cast<size_t>(t.stream)]);
  SetInt64(a, attr::kIteration, t.iteration);
  SetString(a, attr::kPhase, ToString(t.phase));
  if (!t.category.empty()) SetString(a, attr::kCategory, t.category.str());
  AddAttr(a, "is_cpu_op")->set_bool_val(t.on_host);
  SetString(a, attr::kDType, ToString(t.dtype));
  switch (t.kind) {
    case TaskKind::kCompute:
      n.set_type(ChakraProtoMsg::COMP_NODE);
      SetSizes(a, t, "tensor_size", true);
      SetString(a, attr::kOp, ToString(t.op));
      if (t.gemm.m != 0 || t.gemm.n != 0 || t.gemm.k != 0 || t.gemm.batch != 1) {
        auto* list = AddAttr(a, attr::kGemm)->mutable_double_list();
        for (double v : {t.gemm.m, t.gemm.n, t.gemm.k, t.gemm.batch}) list->add_values(v);
      }
      if (t.causal) AddAttr(a, attr::kCausal)->set_bool_val(true);
      break;
    case TaskKind::kCollective:
      AddCollective(g, t, groups, &n);
      break;
    case TaskKind::kSend:
    case TaskKind::kRecv: {
      const bool send = t.kind == TaskKind::kSend;
      n.set_type(send ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
      SetInt32(a, "comm_src", send ? t.rank : t.peer);
      SetInt32(a, "comm_dst", send ? t.peer : t.rank);
      SetInt32(a, "comm_tag", t.tag);
      SetSizes(a, t, "comm_size", false);
      break;
    }
    case TaskKind::kCopy:
      n.set_type(t.copy == CopyDirection::kHostToDevice ? ChakraProtoMsg::MEM_LOAD_NODE
                                                        : ChakraProtoMsg::MEM_STORE_NODE);
      SetSizes(a, t, "tensor_size", true);
      break;
    case TaskKind::kMemory:
      n.set_type(ChakraProtoMsg::METADATA_NODE);
      AddAttr(a, attr::kMemoryDelta)->set_double_val(t.memory_delta_bytes);
      if (t.flops != 0) AddAttr(a, attr::kFlops)->set_double_val(t.flops);
      if (t.bytes != 0) AddAttr(a, attr::kBytes)->set_double_val(t.bytes);
      break;
  }
  return n;
}

}  // namespace

ChakraFiles ExportChakra(const TaskGraph& g) {
  if (!g.fold().empty()) {
    throw Error(
        "the graph is folded (its mirror tasks stand for ranks not simulated): plan it "
        "with simulation.fold off to export it");
  }
  if (!g.rank_starts().empty()) {
    throw Error(
        "the graph's ranks have start times (a shared-cluster run), which Chakra cannot "
        "hold");
  }
  if (g.first_live() != 0) throw Error("the graph has retired tasks: export a whole graph");
  // Process groups, numbered from 1 in order of first use (ASTRA-sim reads pg_name "" and "0" as
  // every rank, so 0 is not used).
  std::map<std::vector<int>, int> groups;
  nlohmann::ordered_json comm_groups = nlohmann::ordered_json::object();
  for (const Collective& c : g.collectives()) {
    if (groups.count(c.ranks)) continue;
    const int id = static_cast<int>(groups.size()) + 1;
    groups[c.ranks] = id;
    comm_groups[std::to_string(id)] = c.ranks;
  }

  ChakraFiles out;
  out.comm_groups = comm_groups.dump(1) + "\n";
  out.ranks.resize(static_cast<size_t>(g.num_ranks()));
  for (size_t r = 0; r < out.ranks.size(); ++r) {
    ChakraProtoMsg::GlobalMetadata m;
    m.set_version(kSchemaVersion);
    auto* streams = AddAttr(m.mutable_attr(), attr::kStreams)->mutable_string_list();
    for (const std::string& s : g.streams()) streams->add_values(s);
    if (g.has_stream_priorities()) {
      auto* p = AddAttr(m.mutable_attr(), attr::kStreamPriorities)->mutable_int64_list();
      for (int v : g.stream_priorities()) p->add_values(v);
    }
    AppendDelimited(m, &out.ranks[r]);
  }
  // The task before each one on its (rank, stream): a ctrl_dep, the order a stream imposes.
  std::map<std::pair<int, int>, TaskId> last_on_stream;
  for (const Task& t : g.tasks()) {
    if (t.mirror != -1) Refuse(t, "a mirror task of a folded graph");
    TaskId& before = last_on_stream.try_emplace({t.rank, t.stream}, -1).first->second;
    AppendDelimited(ToNode(g, t, before, groups), &out.ranks[static_cast<size_t>(t.rank)]);
    before = t.id;
    ++out.nodes;
  }
  return out;
}

}  // namespace stratasim::chakra
