// JSON form of a TaskGraph, so a plan can be inspected and replayed (`stratasim run
// --write-graphs`, `stratasim replay`).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <type_traits>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "core/json_enums.h"
#include "core/limits.h"
#include "core/task_graph.h"

namespace stratasim {
namespace {

using Json = nlohmann::ordered_json;
constexpr TaskKind kTaskKinds[] = {TaskKind::kCompute, TaskKind::kCollective, TaskKind::kSend,
                                   TaskKind::kRecv,    TaskKind::kCopy,       TaskKind::kMemory};
constexpr Phase kPhases[] = {Phase::kForward,   Phase::kBackward,      Phase::kRecompute,
                             Phase::kOptimizer, Phase::kCommunication, Phase::kOther};
constexpr CopyDirection kCopyDirections[] = {CopyDirection::kHostToDevice,
                                             CopyDirection::kDeviceToHost};

template <typename T>
struct IsIntVector : std::false_type {};
template <typename U>
struct IsIntVector<std::vector<U>> : std::is_integral<U> {};

// An integer of type T, or an Error: nlohmann would convert 1e20 or 2^40 to an int with
// undefined or implementation-defined results.
template <typename T>
T Integer(const Json& v, const std::string& where) {
  if (!v.is_number_integer()) throw Error(where + ": must be an integer");
  if (v.is_number_unsigned()
          ? v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<T>::max())
          : (v.get<std::int64_t>() < std::numeric_limits<T>::min() ||
             v.get<std::int64_t>() > std::numeric_limits<T>::max())) {
    throw Error(where + ": out of range");
  }
  return static_cast<T>(v.get<std::int64_t>());
}

// Reads a required field, turning nlohmann's type errors into Errors with the JSON path.
template <typename T>
T Get(const Json& j, const char* key, const std::string& path) {
  if (!j.is_object() || !j.contains(key)) throw Error(path + "." + key + ": missing");
  const Json& v = j.at(key);
  const std::string where = path + "." + key;
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return Integer<T>(v, where);
  } else if constexpr (IsIntVector<T>::value) {
    if (!v.is_array()) throw Error(where + ": must be a list");
    T out;
    out.reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      out.push_back(Integer<typename T::value_type>(v[i], where + "[" + std::to_string(i) + "]"));
    }
    return out;
  } else {
    try {
      return v.get<T>();
    } catch (const nlohmann::json::exception& e) {
      throw Error(where + ": " + e.what());
    }
  }
}

// A required list field, by reference (a copy of a deep value recurses).
const Json& List(const Json& j, const char* key, const std::string& path) {
  if (!j.is_object() || !j.contains(key)) throw Error(path + "." + key + ": missing");
  const Json& v = j.at(key);
  if (!v.is_array()) throw Error(path + "." + key + ": must be a list");
  return v;
}

// The deepest nesting of arrays and objects in `text`, outside strings. nlohmann parses deep
// input iteratively but copies and destroys it recursively: 100,000 levels overflow the stack.
int NestingDepth(const std::string& text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

// A task graph nests 4 levels (the file, tasks, a task, its gemm or deps).
constexpr int kMaxNesting = 16;

DType DTypeFrom(const std::string& s, const std::string& where) {
  auto d = ParseDType(s);
  if (!d) throw Error(where + ": \"" + s + "\" is not a dtype");
  return *d;
}

}  // namespace

std::string TaskGraphToJson(const TaskGraph& g) {
  Json j;
  j["format"] = "stratasim-taskgraph";
  j["version"] = 1;
  j["num_ranks"] = g.num_ranks();
  if (!g.fold().empty()) j["fold"] = g.fold();
  j["streams"] = g.streams();
  // Only when it says something, so that graphs without priorities keep their old text.
  if (g.has_stream_priorities()) j["stream_priorities"] = g.stream_priorities();
  // Likewise only for graphs whose ranks start late (TaskGraph::SetRankStart).
  if (!g.rank_starts().empty()) j["rank_start_s"] = g.rank_starts();
  Json cs = Json::array();
  for (const Collective& c : g.collectives()) {
    cs.push_back({{"kind", ToString(c.kind)},
                  {"ranks", c.ranks},
                  {"bytes", c.bytes},
                  {"dtype", ToString(c.dtype)},
                  {"root", c.root},
                  {"algorithm", c.algorithm},
                  {"members", c.members}});
    if (!c.matrix.empty()) cs.back()["matrix"] = c.matrix;
  }
  j["collectives"] = std::move(cs);
  Json ts = Json::array();
  for (const Task& t : g.tasks()) {
    Json o{{"id", t.id},           {"kind", ToString(t.kind)},     {"rank", t.rank},
           {"stream", t.stream},   {"iteration", t.iteration},     {"phase", ToString(t.phase)},
           {"name", t.name.str()}, {"category", t.category.str()}, {"deps", t.deps}};
    if (t.mirror >= 0) o["mirror"] = t.mirror;
    if (t.on_host) o["on_host"] = true;  // only when set, so older graphs keep their text
    switch (t.kind) {
      case TaskKind::kCompute:
        o["op"] = ToString(t.op);
        o["dtype"] = ToString(t.dtype);
        o["flops"] = t.flops;
        o["bytes"] = t.bytes;
        if (t.gemm.known()) {
          o["gemm"] = {{"m", t.gemm.m}, {"n", t.gemm.n}, {"k", t.gemm.k}, {"batch", t.gemm.batch}};
        }
        if (t.causal) o["causal"] = true;
        break;
      case TaskKind::kCollective:
        o["collective"] = t.collective;
        break;
      case TaskKind::kSend:
      case TaskKind::kRecv:
        o["peer"] = t.peer;
        o["tag"] = t.tag;
        o["bytes"] = t.bytes;
        break;
      case TaskKind::kCopy:
        o["direction"] = ToString(t.copy);
        o["bytes"] = t.bytes;
        break;
      case TaskKind::kMemory:
        o["memory_delta_bytes"] = t.memory_delta_bytes;
        break;
    }
    ts.push_back(std::move(o));
  }
  j["tasks"] = std::move(ts);
  return j.dump();
}

namespace {
TaskGraph FromJson(const Json& j);
}  // namespace

TaskGraph TaskGraphFromJson(const std::string& text) {
  if (NestingDepth(text) > kMaxNesting) {
    throw Error("task graph: nested deeper than " + std::to_string(kMaxNesting) +
                " levels (a task graph nests 4)");
  }
  Json j;
  try {
    j = Json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // syntax, or a number out of range
    throw Error(std::string("task graph: not JSON: ") + e.what());
  }
  try {
    return FromJson(j);
  } catch (const nlohmann::json::exception& e) {  // a shape the checks above did not foresee
    throw Error(std::string("task graph: ") + e.what());
  }
}

namespace {

TaskGraph FromJson(const Json& j) {
  const std::string root = "$";
  if (Get<std::string>(j, "format", root) != "stratasim-taskgraph") {
    throw Error("$.format: expected \"stratasim-taskgraph\"");
  }
  if (Get<int>(j, "version", root) != 1) throw Error("$.version: only version 1 is known");
  const int ranks = Get<int>(j, "num_ranks", root);
  if (ranks < 1 || ranks > limits::kMaxGpus) {
    throw Error("$.num_ranks: must be in [1, " + std::to_string(limits::kMaxGpus) + "]");
  }
  TaskGraph g(ranks);
  for (const std::string& s : Get<std::vector<std::string>>(j, "streams", root)) g.Stream(s);
  if (j.contains("stream_priorities")) {  // absent: every stream has priority 0
    const auto priorities = Get<std::vector<int>>(j, "stream_priorities", root);
    if (priorities.size() != g.streams().size()) {
      throw Error("$.stream_priorities: " + std::to_string(priorities.size()) + " priorities for " +
                  std::to_string(g.streams().size()) + " streams");
    }
    for (size_t i = 0; i < priorities.size(); ++i) {
      if (priorities[i] < kMinStreamPriority || priorities[i] > kMaxStreamPriority) {
        throw Error("$.stream_priorities[" + std::to_string(i) +
                    "]: " + std::to_string(priorities[i]) + " is outside [" +
                    std::to_string(kMinStreamPriority) + ", " + std::to_string(kMaxStreamPriority) +
                    "]");
      }
      g.SetStreamPriority(static_cast<int>(i), priorities[i]);
    }
  }
  if (j.contains("rank_start_s")) {  // absent: every rank starts at 0
    const auto starts = Get<std::vector<double>>(j, "rank_start_s", root);
    if (starts.size() != static_cast<size_t>(ranks)) {
      throw Error("$.rank_start_s: " + std::to_string(starts.size()) + " start times for " +
                  std::to_string(ranks) + " ranks");
    }
    for (size_t i = 0; i < starts.size(); ++i) {
      try {
        g.SetRankStart(static_cast<int>(i), starts[i]);
      } catch (const Error& e) {
        throw Error("$.rank_start_s[" + std::to_string(i) + "]: " + e.what());
      }
    }
  }

  // Collectives are declared first; their member tasks attach as they are added, and the
  // member lists are then compared with the file's, so nothing is trusted unchecked.
  const Json& cs = List(j, "collectives", root);
  std::vector<Collective> pending;
  for (size_t i = 0; i < cs.size(); ++i) {
    const std::string p = "$.collectives[" + std::to_string(i) + "]";
    Collective c;
    c.kind = internal::EnumFromString(kAllCollectiveKinds, Get<std::string>(cs[i], "kind", p),
                                      p + ".kind");
    c.ranks = Get<std::vector<int>>(cs[i], "ranks", p);
    c.bytes = Get<double>(cs[i], "bytes", p);
    c.dtype = DTypeFrom(Get<std::string>(cs[i], "dtype", p), p + ".dtype");
    c.root = Get<int>(cs[i], "root", p);
    c.algorithm = Get<std::string>(cs[i], "algorithm", p);
    c.members = Get<std::vector<TaskId>>(cs[i], "members", p);
    if (cs[i].contains("matrix")) c.matrix = Get<std::vector<double>>(cs[i], "matrix", p);
    pending.push_back(c);
    try {
      g.DeclareCollective(std::move(c));
    } catch (const Error& e) {
      throw Error(p + ": " + e.what());
    }
  }

  const Json& ts = List(j, "tasks", root);
  for (size_t i = 0; i < ts.size(); ++i) {
    const std::string p = "$.tasks[" + std::to_string(i) + "]";
    const Json& o = ts[i];
    if (Get<TaskId>(o, "id", p) != static_cast<TaskId>(i))
      throw Error(p + ".id: must equal " + std::to_string(i));
    Task t;
    t.kind = internal::EnumFromString(kTaskKinds, Get<std::string>(o, "kind", p), p + ".kind");
    t.rank = Get<int>(o, "rank", p);
    t.stream = Get<int>(o, "stream", p);
    t.iteration = Get<int>(o, "iteration", p);
    t.phase = internal::EnumFromString(kPhases, Get<std::string>(o, "phase", p), p + ".phase");
    t.name = Get<std::string>(o, "name", p);
    t.category = Get<std::string>(o, "category", p);
    t.deps = Get<std::vector<TaskId>>(o, "deps", p);
    if (o.contains("mirror")) t.mirror = Get<TaskId>(o, "mirror", p);
    if (o.contains("on_host")) t.on_host = Get<bool>(o, "on_host", p);
    switch (t.kind) {
      case TaskKind::kCompute:
        t.op = internal::EnumFromString(kAllOpKinds, Get<std::string>(o, "op", p), p + ".op");
        t.dtype = DTypeFrom(Get<std::string>(o, "dtype", p), p + ".dtype");
        t.flops = Get<double>(o, "flops", p);
        t.bytes = Get<double>(o, "bytes", p);
        if (o.contains("gemm")) {
          const Json& gemm = o.at("gemm");
          t.gemm.m = Get<double>(gemm, "m", p + ".gemm");
          t.gemm.n = Get<double>(gemm, "n", p + ".gemm");
          t.gemm.k = Get<double>(gemm, "k", p + ".gemm");
          t.gemm.batch = Get<double>(gemm, "batch", p + ".gemm");
        }
        if (o.contains("causal")) t.causal = Get<bool>(o, "causal", p);
        break;
      case TaskKind::kCollective:
        t.collective = Get<int>(o, "collective", p);
        break;
      case TaskKind::kSend:
      case TaskKind::kRecv:
        t.peer = Get<int>(o, "peer", p);
        t.tag = Get<int>(o, "tag", p);
        t.bytes = Get<double>(o, "bytes", p);
        break;
      case TaskKind::kCopy:
        t.copy = internal::EnumFromString(kCopyDirections, Get<std::string>(o, "direction", p),
                                          p + ".direction");
        t.bytes = Get<double>(o, "bytes", p);
        break;
      case TaskKind::kMemory:
        t.memory_delta_bytes = Get<double>(o, "memory_delta_bytes", p);
        break;
    }
    try {
      g.Add(std::move(t));
    } catch (const Error& e) {
      throw Error(p + ": " + e.what());
    }
  }
  for (size_t i = 0; i < pending.size(); ++i) {
    if (g.collectives()[i].members != pending[i].members) {
      throw Error("$.collectives[" + std::to_string(i) + "].members: do not match the tasks");
    }
  }
  if (j.contains("fold")) {
    try {
      g.SetFold(Get<std::vector<int>>(j, "fold", root));
    } catch (const Error& e) {
      throw Error(std::string("$.fold: ") + e.what());
    }
  }
  g.Validate();
  return g;
}

}  // namespace
}  // namespace stratasim
