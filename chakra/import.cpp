#include "chakra/import.h"

#include <google/protobuf/io/coded_stream.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <queue>
#include <set>
#include <unordered_map>

#include "chakra/format.h"
#include "core/compute_model.h"
#include "core/input_file.h"
#include "core/json_enums.h"
#include "core/limits.h"

namespace stratasim::chakra {
namespace {

using ChakraProtoMsg::Node;

constexpr Phase kPhases[] = {Phase::kForward,   Phase::kBackward,      Phase::kRecompute,
                             Phase::kOptimizer, Phase::kCommunication, Phase::kOther};

// What a node becomes.
enum class Role { kSkip, kCompute, kCollective, kSend, kRecv, kCopy, kMemory };

struct RankTrace {
  std::string file;
  std::vector<std::string> streams;  // GlobalMetadata's, when given
  std::vector<long long> priorities;
  std::vector<Node> nodes;
  std::vector<Role> roles;
  // Per node: its dependencies on nodes that become tasks (through skipped nodes), data_deps
  // first, then ctrl_deps.
  std::vector<std::vector<int>> data, ctrl;
  std::vector<bool> sink;  // no task of the rank depends on it
  // Nodes of iterations past the scenario's, left out, and their iteration.
  std::unordered_map<std::uint64_t, long long> dropped;
  int iterations = 0;
};

ConfigError Bad(const std::string& file, const Node* n, const std::string& rule) {
  return ConfigError(SourceLocation{file, 0, 0}, n ? "node " + std::to_string(n->id()) : "", "",
                     rule);
}

// Reads one rank's file: the metadata, then every node, length-delimited.
RankTrace ReadRank(const std::string& file, long long* total_nodes) {
  RankTrace r;
  r.file = file;
  const std::string bytes = ReadInputFile(file, limits::kChakraFileBytes, "a Chakra trace file");
  if (bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
      static_cast<unsigned char>(bytes[1]) == 0x8b) {
    throw Bad(file, nullptr, "gzip-compressed; decompress it first (gunzip)");
  }
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  bool first = true;
  while (in.CurrentPosition() < static_cast<int>(bytes.size())) {
    const int at = in.CurrentPosition();
    const std::string what = first ? "the GlobalMetadata message"
                                   : "message " + std::to_string(r.nodes.size() + 2) + " (a Node)";
    std::uint32_t size = 0;
    if (!in.ReadVarint32(&size)) {
      throw Bad(file, nullptr,
                what + " at byte " + std::to_string(at) + ": truncated size prefix (varint)");
    }
    if (size > bytes.size() - static_cast<size_t>(in.CurrentPosition())) {
      throw Bad(file, nullptr,
                what + " at byte " + std::to_string(at) + ": its size prefix says " +
                    std::to_string(size) + " bytes, the file has " +
                    std::to_string(bytes.size() - static_cast<size_t>(in.CurrentPosition())) +
                    " left (truncated, or not a Chakra execution trace)");
    }
    const auto limit = in.PushLimit(static_cast<int>(size));
    bool ok = false;
    if (first) {
      ChakraProtoMsg::GlobalMetadata m;
      ok = m.ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
      if (ok) {
        for (const auto& a : m.attr()) {
          if (a.name() == attr::kStreams && a.has_string_list()) {
            r.streams.assign(a.string_list().values().begin(), a.string_list().values().end());
          } else if (a.name() == attr::kStreamPriorities && a.has_int64_list()) {
            r.priorities.assign(a.int64_list().values().begin(), a.int64_list().values().end());
          }
        }
      }
    } else {
      if (++*total_nodes > limits::kChakraNodes) {
        throw Bad(file, nullptr,
                  "the traces hold more than " + std::to_string(limits::kChakraNodes) +
                      " nodes (limits::kChakraNodes, docs/limits.md)");
      }
      Node n;
      ok = n.ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
      if (ok) r.nodes.push_back(std::move(n));
    }
    if (!ok) {
      throw Bad(file, nullptr,
                what + " at byte " + std::to_string(at) + ": does not parse as Chakra's " +
                    (first ? "GlobalMetadata" : "Node") + " (et_def.proto)");
    }
    in.PopLimit(limit);
    first = false;
  }
  if (first) throw Bad(file, nullptr, "empty: a Chakra file starts with a GlobalMetadata message");
  return r;
}

Role RoleOf(const RankTrace& r, const Node& n) {
  switch (n.type()) {
    case ChakraProtoMsg::COMP_NODE:
      return Role::kCompute;
    case ChakraProtoMsg::COMM_COLL_NODE:
      return Role::kCollective;
    case ChakraProtoMsg::COMM_SEND_NODE:
      return Role::kSend;
    case ChakraProtoMsg::COMM_RECV_NODE:
      return Role::kRecv;
    case ChakraProtoMsg::MEM_LOAD_NODE:
    case ChakraProtoMsg::MEM_STORE_NODE:
      return Role::kCopy;
    case ChakraProtoMsg::METADATA_NODE:
      return FindAttr(n, attr::kMemoryDelta) ? Role::kMemory : Role::kSkip;
    case ChakraProtoMsg::INVALID_NODE:
      return Role::kSkip;
    default:
      throw Bad(r.file, &n,
                "type " + std::to_string(static_cast<int>(n.type())) +
                    " is not a Chakra NodeType (0 to 7)");
  }
}

// Resolves node ids to indices, orders the rank's nodes (finding cycles) and passes the
// dependencies of skipped nodes on to their dependents.
void ResolveDeps(RankTrace* r, bool ctrl_deps) {
  const size_t n = r->nodes.size();
  std::unordered_map<std::uint64_t, int> index;
  for (size_t i = 0; i < n; ++i) {
    if (!index.emplace(r->nodes[i].id(), static_cast<int>(i)).second) {
      throw Bad(r->file, &r->nodes[i], "the id appears twice in the file");
    }
  }
  r->roles.resize(n);
  std::vector<std::vector<int>> raw_data(n), raw_ctrl(n), users(n);
  std::vector<int> pending(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const Node& node = r->nodes[i];
    r->roles[i] = RoleOf(*r, node);
    auto resolve = [&](const google::protobuf::RepeatedField<std::uint64_t>& ids, const char* key,
                       std::vector<int>* out) {
      for (std::uint64_t id : ids) {
        auto it = index.find(id);
        if (it == index.end() && r->dropped.count(id)) {
          throw Bad(r->file, &node,
                    std::string(key) + " names node " + std::to_string(id) + " of iteration " +
                        std::to_string(r->dropped.at(id)) + ", past the " +
                        std::to_string(r->iterations) + " iterations the scenario simulates");
        }
        if (it == index.end()) {
          throw Bad(r->file, &node,
                    std::string(key) + " names node " + std::to_string(id) +
                        ", which is not in the file");
        }
        if (it->second == static_cast<int>(i)) {
          throw Bad(r->file, &node, std::string(key) + " names the node itself");
        }
        out->push_back(it->second);
        users[static_cast<size_t>(it->second)].push_back(static_cast<int>(i));
        ++pending[i];
      }
    };
    resolve(node.data_deps(), "data_deps", &raw_data[i]);
    if (ctrl_deps) resolve(node.ctrl_deps(), "ctrl_deps", &raw_ctrl[i]);
  }
  // Kahn's order within the rank; what never becomes ready is on a cycle.
  std::vector<int> order;
  for (size_t i = 0; i < n; ++i) {
    if (pending[i] == 0) order.push_back(static_cast<int>(i));
  }
  for (size_t k = 0; k < order.size(); ++k) {
    for (int u : users[static_cast<size_t>(order[k])]) {
      if (--pending[static_cast<size_t>(u)] == 0) order.push_back(u);
    }
  }
  if (order.size() != n) {
    for (size_t i = 0; i < n; ++i) {
      if (pending[i] > 0) {
        throw Bad(r->file, &r->nodes[i], "is on a dependency cycle (data_deps and ctrl_deps)");
      }
    }
  }
  r->data.assign(n, {});
  r->ctrl.assign(n, {});
  // Through a skipped node: what it waited for (data and control alike).
  std::vector<std::vector<int>> through(n);
  for (int i : order) {
    auto pass = [&](const std::vector<int>& deps, std::vector<int>* out) {
      for (int d : deps) {
        if (r->roles[static_cast<size_t>(d)] != Role::kSkip) {
          if (std::find(out->begin(), out->end(), d) == out->end()) out->push_back(d);
        } else {
          for (int t : through[static_cast<size_t>(d)]) {
            if (std::find(out->begin(), out->end(), t) == out->end()) out->push_back(t);
          }
        }
      }
    };
    const size_t u = static_cast<size_t>(i);
    if (r->roles[u] == Role::kSkip) {
      pass(raw_data[u], &through[u]);
      pass(raw_ctrl[u], &through[u]);
    } else {
      pass(raw_data[u], &r->data[u]);
      pass(raw_ctrl[u], &r->ctrl[u]);
    }
  }
  r->sink.assign(n, true);
  for (size_t i = 0; i < n; ++i) {
    if (r->roles[i] == Role::kSkip) r->sink[i] = false;
    for (int d : r->data[i]) r->sink[static_cast<size_t>(d)] = false;
    for (int d : r->ctrl[i]) r->sink[static_cast<size_t>(d)] = false;
  }
}

struct NodeRef {
  int rank = 0;
  int index = 0;
};

// A set of nodes added to the graph together: one node, a collective's members (in the
// group's ring order) or a send and its receive.
struct Unit {
  std::vector<NodeRef> members;
  std::vector<int> group;                                  // a collective's ranks
  std::pair<std::uint64_t, int> key{UINT64_MAX, INT_MAX};  // the smallest (node id, rank)
};

class Importer {
 public:
  Importer(std::string prefix, const ImportOptions& o) : prefix_(std::move(prefix)), o_(o) {}

  TaskGraph Run() {
    ReadFiles();
    ReadGroups();
    const int repeat = Iterations();
    for (RankTrace& r : ranks_) ResolveDeps(&r, o_.ctrl_deps);
    MakeUnits();
    const std::vector<int> order = Order();
    TaskGraph g(static_cast<int>(ranks_.size()));
    DeclareStreams(&g);
    task_of_.assign(ranks_.size(), {});
    for (int it = 0; it < repeat; ++it) {
      std::vector<std::vector<TaskId>> previous = std::move(task_of_);
      task_of_.assign(ranks_.size(), {});
      for (size_t r = 0; r < ranks_.size(); ++r) task_of_[r].assign(ranks_[r].nodes.size(), -1);
      for (int u : order) Emit(&g, units_[static_cast<size_t>(u)], repeat > 1 ? it : -1, previous);
    }
    g.Validate();
    return g;
  }

 private:
  const Node& NodeOf(NodeRef n) const {
    return ranks_[static_cast<size_t>(n.rank)].nodes[static_cast<size_t>(n.index)];
  }
  const std::string& FileOf(NodeRef n) const { return ranks_[static_cast<size_t>(n.rank)].file; }
  ConfigError BadNode(NodeRef n, const std::string& rule) const {
    return Bad(FileOf(n), &NodeOf(n), rule);
  }
  // Attribute reads, with a bad value located at the node.
  template <typename F>
  auto Get(NodeRef n, F read) const -> decltype(read()) {
    try {
      return read();
    } catch (const ConfigError&) {
      throw;
    } catch (const Error& e) {
      throw BadNode(n, e.what());
    }
  }
  std::optional<long long> Int(NodeRef n, const char* name) const {
    return Get(n, [&] { return IntAttr(NodeOf(n), name); });
  }
  std::optional<double> Double(NodeRef n, const char* name) const {
    return Get(n, [&] { return DoubleAttr(NodeOf(n), name); });
  }
  std::optional<std::string> String(NodeRef n, const char* name) const {
    return Get(n, [&] { return StringAttr(NodeOf(n), name); });
  }
  std::optional<bool> Bool(NodeRef n, const char* name) const {
    return Get(n, [&] { return BoolAttr(NodeOf(n), name); });
  }
  // A size: the exact double attribute when given, else Chakra's integer one; not negative.
  double Size(NodeRef n, const char* integer_name, const char* exact_name) const {
    double v = 0;
    if (auto exact = Double(n, exact_name)) {
      v = *exact;
    } else if (auto whole = Int(n, integer_name)) {
      v = static_cast<double>(*whole);
    }
    if (!(v >= 0) || !std::isfinite(v)) {
      throw BadNode(n, std::string(integer_name) + " = " + std::to_string(v) +
                           ": must be a finite size, not negative");
    }
    return v;
  }

  void ReadFiles() {
    const int gpus = o_.cluster->NumGpus();
    long long total = 0;
    for (int r = 0;; ++r) {
      const std::string file = RankFile(prefix_, r);
      if (!std::filesystem::exists(file)) {
        if (r == 0) {
          throw ConfigError(SourceLocation{file, 0, 0}, "", "",
                            "no such file: a Chakra trace is <prefix>.<rank>.et from rank 0");
        }
        break;
      }
      if (r >= gpus) {
        throw ConfigError(
            SourceLocation{file, 0, 0}, "", "",
            "the traces have more ranks than the cluster's " + std::to_string(gpus) + " GPUs");
      }
      ranks_.push_back(ReadRank(file, &total));
    }
  }

  // The process groups of <prefix>.comm_groups.json (ASTRA-sim's comm group file), if any.
  void ReadGroups() {
    const std::string file = CommGroupsFile(prefix_);
    if (!std::filesystem::exists(file)) return;
    const std::string text = ReadInputFile(file, limits::kScenarioFileBytes, "a comm groups file");
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      throw ConfigError(SourceLocation{file, 0, 0}, "", "", e.what());
    }
    if (!j.is_object()) {
      throw ConfigError(SourceLocation{file, 0, 0}, "", "",
                        "must be an object {\"<pg_name>\": [ranks]}");
    }
    for (auto it = j.begin(); it != j.end(); ++it) {
      std::vector<int> group;
      std::set<int> seen;
      if (!it.value().is_array() || it.value().empty()) {
        throw ConfigError(SourceLocation{file, 0, 0}, it.key(), "",
                          "must be a non-empty list of ranks");
      }
      for (const auto& v : it.value()) {
        if (!v.is_number_integer() || v.get<long long>() < 0 ||
            v.get<long long>() >= static_cast<long long>(ranks_.size()) ||
            !seen.insert(v.get<int>()).second) {
          throw ConfigError(SourceLocation{file, 0, 0}, it.key(), v.dump(),
                            "ranks must be distinct integers in [0, " +
                                std::to_string(ranks_.size()) + ") (the traces' ranks)");
        }
        group.push_back(v.get<int>());
      }
      groups_[it.key()] = group;
    }
  }

  // The ranks of a collective node's process group.
  std::pair<std::string, std::vector<int>> GroupOf(NodeRef n) const {
    std::string pg = String(n, "pg_name").value_or("");
    if (pg.empty() || pg == "0") {
      // ASTRA-sim's default group (Workload::extract_comm_group): every rank.
      std::vector<int> all(ranks_.size());
      for (size_t r = 0; r < all.size(); ++r) all[r] = static_cast<int>(r);
      return {"", all};
    }
    auto it = groups_.find(pg);
    if (it == groups_.end()) {
      throw BadNode(n, "pg_name = \"" + pg + "\": no such process group in " +
                           CommGroupsFile(prefix_) + " (\"\" and \"0\" mean every rank)");
    }
    if (std::find(it->second.begin(), it->second.end(), n.rank) == it->second.end()) {
      throw BadNode(n, "pg_name = \"" + pg + "\": rank " + std::to_string(n.rank) +
                           " is not a member of the group");
    }
    return *it;
  }

  void AddUnit(std::vector<NodeRef> members, std::vector<int> group) {
    Unit u;
    u.members = std::move(members);
    u.group = std::move(group);
    for (const NodeRef& m : u.members) {
      u.key = std::min(u.key, std::make_pair(NodeOf(m).id(), m.rank));
      unit_of_[static_cast<size_t>(m.rank)][static_cast<size_t>(m.index)] =
          static_cast<int>(units_.size());
    }
    units_.push_back(std::move(u));
  }

  void MakeUnits() {
    unit_of_.resize(ranks_.size());
    for (size_t r = 0; r < ranks_.size(); ++r) unit_of_[r].assign(ranks_[r].nodes.size(), -1);
    // Collectives by group, in file order; transfers by (src, dst, tag), in file order.
    std::map<std::string, std::vector<std::vector<NodeRef>>> colls;  // group -> rank -> nodes
    std::map<std::string, std::vector<int>> group_ranks;
    std::map<std::tuple<int, int, long long>, std::pair<std::vector<NodeRef>, std::vector<NodeRef>>>
        transfers;
    for (size_t r = 0; r < ranks_.size(); ++r) {
      for (size_t i = 0; i < ranks_[r].nodes.size(); ++i) {
        const NodeRef n{static_cast<int>(r), static_cast<int>(i)};
        const Role role = ranks_[r].roles[i];
        if (role == Role::kCollective) {
          if (!Int(n, "comm_type")) throw BadNode(n, "COMM_COLL_NODE needs comm_type");
          auto [pg, members] = GroupOf(n);
          auto& per_rank = colls[pg];
          per_rank.resize(ranks_.size());
          per_rank[r].push_back(n);
          group_ranks[pg] = members;
        } else if (role == Role::kSend || role == Role::kRecv) {
          const bool send = role == Role::kSend;
          const char* peer_key = send ? "comm_dst" : "comm_src";
          const char* self_key = send ? "comm_src" : "comm_dst";
          const auto peer = Int(n, peer_key);
          if (!peer)
            throw BadNode(
                n, std::string(send ? "COMM_SEND_NODE" : "COMM_RECV_NODE") + " needs " + peer_key);
          if (*peer < 0 || *peer >= static_cast<long long>(ranks_.size()) ||
              *peer == static_cast<long long>(r)) {
            throw BadNode(n, std::string(peer_key) + " = " + std::to_string(*peer) +
                                 ": must be another rank of the traces, in [0, " +
                                 std::to_string(ranks_.size()) + ")");
          }
          const auto self = Int(n, self_key);
          if (self && *self != static_cast<long long>(r)) {
            throw BadNode(n, std::string(self_key) + " = " + std::to_string(*self) +
                                 ": must be the file's rank, " + std::to_string(r));
          }
          const long long tag = Int(n, "comm_tag").value_or(0);
          const int src = send ? static_cast<int>(r) : static_cast<int>(*peer);
          const int dst = send ? static_cast<int>(*peer) : static_cast<int>(r);
          auto& slot = transfers[{src, dst, tag}];
          (send ? slot.first : slot.second).push_back(n);
        } else if (role != Role::kSkip) {
          AddUnit({n}, {});
        }
      }
    }
    for (auto& [pg, per_rank] : colls) {
      const std::vector<int>& members = group_ranks[pg];
      const std::string name = pg.empty() ? "of every rank" : "\"" + pg + "\"";
      const size_t count = per_rank[static_cast<size_t>(members.front())].size();
      for (int m : members) {
        const auto& mine = per_rank[static_cast<size_t>(m)];
        const auto& first = per_rank[static_cast<size_t>(members.front())];
        if (mine.size() != count) {
          const bool more = mine.size() > count;
          const NodeRef extra = more ? mine[count] : first[mine.size()];
          throw BadNode(extra, "collective " + std::to_string((more ? count : mine.size()) + 1) +
                                   " of process group " + name + " has no counterpart on rank " +
                                   std::to_string(more ? members.front() : m) + " (" +
                                   RankFile(prefix_, more ? members.front() : m) +
                                   "): collectives are matched by group and order");
        }
      }
      for (size_t k = 0; k < count; ++k) {
        std::vector<NodeRef> unit;
        const NodeRef lead = per_rank[static_cast<size_t>(members.front())][k];
        for (int m : members) {
          const NodeRef n = per_rank[static_cast<size_t>(m)][k];
          for (const char* key : {"comm_type", "comm_size"}) {
            if (Int(n, key) != Int(lead, key)) {
              throw BadNode(n, std::string(key) + " differs from node " +
                                   std::to_string(NodeOf(lead).id()) + " of " + FileOf(lead) +
                                   ", its collective " + std::to_string(k + 1) +
                                   " in process group " + name);
            }
          }
          unit.push_back(n);
        }
        AddUnit(std::move(unit), members);
      }
    }
    for (auto& [key, ends] : transfers) {
      auto& [sends, recvs] = ends;
      const auto [src, dst, tag] = key;
      for (size_t k = 0; k < std::max(sends.size(), recvs.size()); ++k) {
        if (k >= recvs.size() || k >= sends.size()) {
          const bool lone_send = k >= recvs.size();
          throw BadNode(lone_send ? sends[k] : recvs[k],
                        std::string(lone_send ? "COMM_SEND_NODE" : "COMM_RECV_NODE") +
                            " from rank " + std::to_string(src) + " to rank " +
                            std::to_string(dst) + " with comm_tag " + std::to_string(tag) +
                            " has no matching " +
                            (lone_send ? "COMM_RECV_NODE in " : "COMM_SEND_NODE in ") +
                            RankFile(prefix_, lone_send ? dst : src));
        }
        if (Size(sends[k], "comm_size", attr::kBytes) !=
            Size(recvs[k], "comm_size", attr::kBytes)) {
          throw BadNode(recvs[k], "comm_size differs from its COMM_SEND_NODE's (node " +
                                      std::to_string(NodeOf(sends[k]).id()) + " of " +
                                      FileOf(sends[k]) + ")");
        }
        AddUnit({sends[k], recvs[k]}, {});
      }
    }
  }

  // A global order of the units that respects every rank's dependencies, smallest (node id,
  // rank) first among the ready ones: a graph written by ExportChakra comes back in its order.
  std::vector<int> Order() const {
    const size_t n = units_.size();
    std::vector<int> pending(n, 0);
    std::vector<std::vector<int>> users(n);
    for (size_t u = 0; u < n; ++u) {
      for (const NodeRef& m : units_[u].members) {
        const RankTrace& r = ranks_[static_cast<size_t>(m.rank)];
        for (const auto* deps :
             {&r.data[static_cast<size_t>(m.index)], &r.ctrl[static_cast<size_t>(m.index)]}) {
          for (int d : *deps) {
            const int from = unit_of_[static_cast<size_t>(m.rank)][static_cast<size_t>(d)];
            if (from == static_cast<int>(u)) continue;
            users[static_cast<size_t>(from)].push_back(static_cast<int>(u));
            ++pending[u];
          }
        }
      }
    }
    using Item = std::pair<std::pair<std::uint64_t, int>, int>;
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> ready;
    for (size_t u = 0; u < n; ++u) {
      if (pending[u] == 0) ready.push({units_[u].key, static_cast<int>(u)});
    }
    std::vector<int> order;
    while (!ready.empty()) {
      const int u = ready.top().second;
      ready.pop();
      order.push_back(u);
      for (int v : users[static_cast<size_t>(u)]) {
        if (--pending[static_cast<size_t>(v)] == 0)
          ready.push({units_[static_cast<size_t>(v)].key, v});
      }
    }
    if (order.size() != n) {
      for (size_t u = 0; u < n; ++u) {
        if (pending[u] > 0) {
          throw BadNode(units_[u].members.front(),
                        "can never start: it waits, through its dependencies, for a collective or "
                        "transfer that another rank orders after it (ranks must issue collectives "
                        "of a group in one order)");
        }
      }
    }
    return order;
  }

  // How many times the trace is laid out: once when its nodes carry the iterations, else once
  // per simulated iteration.
  int Iterations() {
    long long highest = 0;
    std::optional<NodeRef> where;
    for (size_t r = 0; r < ranks_.size(); ++r) {
      for (size_t i = 0; i < ranks_[r].nodes.size(); ++i) {
        const NodeRef n{static_cast<int>(r), static_cast<int>(i)};
        const long long it = Int(n, attr::kIteration).value_or(0);
        if (it < 0 || it >= limits::kMaxIterations) {
          throw BadNode(n, "iteration = " + std::to_string(it) + ": must be in [0, " +
                               std::to_string(limits::kMaxIterations) + ")");
        }
        if (it > highest) {
          highest = it;
          where = n;
        }
      }
    }
    if (highest == 0) {
      long long nodes = 0;
      for (const RankTrace& r : ranks_) nodes += static_cast<long long>(r.nodes.size());
      if (nodes * o_.iterations > limits::kChakraNodes) {
        throw ConfigError(SourceLocation{prefix_, 0, 0}, "", "",
                          std::to_string(nodes) + " nodes repeated for " +
                              std::to_string(o_.iterations) + " iterations make more than " +
                              std::to_string(limits::kChakraNodes) +
                              " tasks (limits::kChakraNodes)");
      }
      return o_.iterations;
    }
    if (highest + 1 < o_.iterations) {
      throw BadNode(*where, "iteration = " + std::to_string(highest) + ": the traces hold " +
                                std::to_string(highest + 1) +
                                " iterations, the scenario simulates " +
                                std::to_string(o_.iterations) + " (warm-up + measured)");
    }
    // More iterations than the scenario simulates (`stratasim run` sizes a run from a plan of
    // one or two): the first ones are kept.
    for (RankTrace& r : ranks_) {
      std::vector<Node> kept;
      for (Node& node : r.nodes) {
        const long long it = IntAttr(node, attr::kIteration).value_or(0);
        if (it < o_.iterations) {
          kept.push_back(std::move(node));
        } else {
          r.dropped[node.id()] = it;
        }
      }
      r.nodes = std::move(kept);
      r.iterations = o_.iterations;
    }
    return 1;
  }

  // Every stream before the first task (a graph simulated while it is planned has them all),
  // the metadata's first, in its order.
  void DeclareStreams(TaskGraph* g) {
    for (const RankTrace& r : ranks_) {
      for (size_t s = 0; s < r.streams.size(); ++s) {
        const int id = g->Stream(r.streams[s]);
        if (s < r.priorities.size()) {
          const long long p = r.priorities[s];
          if (p < kMinStreamPriority || p > kMaxStreamPriority) {
            throw ConfigError(SourceLocation{r.file, 0, 0}, attr::kStreamPriorities,
                              std::to_string(p),
                              "must be in [" + std::to_string(kMinStreamPriority) + ", " +
                                  std::to_string(kMaxStreamPriority) + "]");
          }
          g->SetStreamPriority(id, static_cast<int>(p));
        }
      }
    }
    for (size_t r = 0; r < ranks_.size(); ++r) {
      for (size_t i = 0; i < ranks_[r].nodes.size(); ++i) {
        if (ranks_[r].roles[i] == Role::kSkip) continue;
        g->Stream(StreamOf(NodeRef{static_cast<int>(r), static_cast<int>(i)}, ranks_[r].roles[i]));
      }
    }
  }

  // A node's stream: stratasim's attribute, or one per kind of work.
  std::string StreamOf(NodeRef n, Role role) const {
    std::string stream = String(n, attr::kStream).value_or("");
    if (!stream.empty()) return stream;
    // Chakra has no streams: a rank's GPU kernels run one at a time, as ASTRA-sim's
    // HardwareResource runs one GPU compute node at a time; its collectives on one
    // communication stream (NCCL's order), its transfers on another.
    const bool on_host = Bool(n, "is_cpu_op").value_or(false);
    return role == Role::kCompute                       ? (on_host ? "cpu" : "compute")
           : role == Role::kCollective                  ? "comm"
           : role == Role::kSend || role == Role::kRecv ? "p2p"
           : role == Role::kCopy                        ? "copy"
                                                        : "compute";
  }

  // The fields every task reads the same way.
  Task Common(TaskGraph* g, NodeRef n, Role role, int iteration,
              const std::vector<std::vector<TaskId>>& previous) {
    const Node& node = NodeOf(n);
    const RankTrace& r = ranks_[static_cast<size_t>(n.rank)];
    Task t;
    t.rank = n.rank;
    t.name = node.name();
    const bool on_host = Bool(n, "is_cpu_op").value_or(false);
    t.stream = g->Stream(StreamOf(n, role));
    t.on_host = on_host && (role == Role::kCompute || role == Role::kSend || role == Role::kRecv);
    t.iteration =
        iteration >= 0 ? iteration : static_cast<int>(Int(n, attr::kIteration).value_or(0));
    const std::string phase =
        String(n, attr::kPhase)
            .value_or(std::string(
                ToString(role == Role::kCompute ? Phase::kOther : Phase::kCommunication)));
    t.phase = Get(n, [&] { return internal::EnumFromString(kPhases, phase, "phase"); });
    if (auto c = String(n, attr::kCategory)) t.category = *c;
    if (auto d = String(n, attr::kDType)) {
      auto dt = ParseDType(*d);
      if (!dt) throw BadNode(n, "dtype = \"" + *d + "\": not a dtype stratasim knows");
      t.dtype = *dt;
    } else {
      t.dtype = o_.dtype;
    }
    // Dependencies: the data deps, then control deps other than the stream's previous task
    // (which the stream orders anyway).
    const auto& mine = task_of_[static_cast<size_t>(n.rank)];
    const auto on_stream = last_on_stream_.find({n.rank, t.stream});
    const TaskId last = on_stream == last_on_stream_.end() ? -1 : on_stream->second;
    for (int d : r.data[static_cast<size_t>(n.index)])
      t.deps.push_back(mine[static_cast<size_t>(d)]);
    for (int d : r.ctrl[static_cast<size_t>(n.index)]) {
      const TaskId id = mine[static_cast<size_t>(d)];
      if (id != last && std::find(t.deps.begin(), t.deps.end(), id) == t.deps.end()) {
        t.deps.push_back(id);
      }
    }
    // A repeated iteration starts on a rank when the rank's previous one has ended.
    if (iteration > 0 && r.data[static_cast<size_t>(n.index)].empty() &&
        r.ctrl[static_cast<size_t>(n.index)].empty()) {
      const auto& before = previous[static_cast<size_t>(n.rank)];
      for (size_t i = 0; i < before.size(); ++i) {
        if (r.sink[i]) t.deps.push_back(before[i]);
      }
    }
    return t;
  }

  void Record(NodeRef n, const Task& t, TaskId id) {
    task_of_[static_cast<size_t>(n.rank)][static_cast<size_t>(n.index)] = id;
    last_on_stream_[{t.rank, t.stream}] = id;
  }

  // FLOPs of a compute node: num_ops (or the exact flops), else its duration on the rank's GPU.
  double ComputeFlops(NodeRef n, const Task& t) const {
    if (auto f = Double(n, attr::kFlops)) return *f;
    if (auto ops = Int(n, "num_ops")) return static_cast<double>(*ops);
    const Node& node = NodeOf(n);
    if (node.duration_micros() == 0 || t.on_host) return 0;
    const GpuSpec& gpu = o_.cluster->GpuOfRank(n.rank);
    if (!gpu.Supports(t.dtype)) {
      throw BadNode(n, "duration_micros needs the GPU's " + std::string(ToString(t.dtype)) +
                           " peak, which " + gpu.name + " does not have");
    }
    // The FLOPs the compute model (core/compute_model.h) runs in duration_micros on this GPU:
    // duration less the launch overhead, at the achieved rate of an unshaped kernel.
    Task probe = t;
    probe.flops = 0;
    probe.bytes = 0;
    const double launch_s = ComputeTaskSeconds(probe, gpu, *o_.simulation);
    const double rate = gpu.Peak(t.dtype) * ComputeEfficiency(probe, gpu, *o_.simulation);
    return std::max(0.0, static_cast<double>(node.duration_micros()) * 1e-6 - launch_s) * rate;
  }

  void Emit(TaskGraph* g, const Unit& u, int iteration,
            const std::vector<std::vector<TaskId>>& previous) {
    const NodeRef first = u.members.front();
    const Role role =
        ranks_[static_cast<size_t>(first.rank)].roles[static_cast<size_t>(first.index)];
    if (role == Role::kCollective) {
      Collective c;
      const auto type = *Int(first, "comm_type");
      const auto kind = FromCommType(type);
      if (!kind) {
        throw BadNode(first, "comm_type = " + std::to_string(type) +
                                 ": not a collective stratasim simulates (BARRIER and unknown "
                                 "types are not)");
      }
      c.kind = *kind;
      c.ranks = u.group;
      c.bytes = Size(first, "comm_size", attr::kBytes);
      if (const auto* m = FindAttr(NodeOf(first), attr::kMatrix)) {
        c.kind = CollectiveKind::kAllToAllV;
        c.matrix.assign(m->double_list().values().begin(), m->double_list().values().end());
      }
      c.dtype = o_.dtype;
      for (const char* key : {attr::kDType, attr::kCommDType}) {
        if (auto d = String(first, key)) {
          auto dt = ParseDType(*d);
          if (!dt)
            throw BadNode(first,
                          std::string(key) + " = \"" + *d + "\": not a dtype stratasim knows");
          c.dtype = *dt;
        }
      }
      // A rooted collective without a root: its group's first rank.
      const bool rooted = c.kind == CollectiveKind::kBroadcast ||
                          c.kind == CollectiveKind::kReduce || c.kind == CollectiveKind::kGather ||
                          c.kind == CollectiveKind::kScatter;
      c.root = static_cast<int>(Int(first, attr::kRoot).value_or(rooted ? u.group.front() : 0));
      c.algorithm = String(first, attr::kAlgorithm).value_or("auto");
      int index = 0;
      try {
        index = g->DeclareCollective(std::move(c));
      } catch (const ConfigError&) {
        throw;
      } catch (const Error& e) {
        throw BadNode(first, e.what());
      }
      for (const NodeRef& m : u.members) {
        Task t = Common(g, m, role, iteration, previous);
        t.kind = TaskKind::kCollective;
        t.collective = index;
        t.flops = Double(m, attr::kFlops).value_or(0);
        t.bytes = Double(m, "member_bytes").value_or(0);
        Record(m, t, g->Add(t));
      }
      return;
    }
    if (role == Role::kSend) {
      const NodeRef recv = u.members[1];
      Task s = Common(g, first, role, iteration, previous);
      s.kind = TaskKind::kSend;
      s.bytes = Size(first, "comm_size", attr::kBytes);
      s.peer = static_cast<int>(*Int(first, "comm_dst"));
      // The trace's tag while it is free in the graph (a graph's tags pair one send each).
      long long tag = Int(first, "comm_tag").value_or(0);
      if (tag < 0 || tag > INT_MAX || used_tags_.count(static_cast<int>(tag))) {
        while (used_tags_.count(next_tag_)) ++next_tag_;
        tag = next_tag_;
      }
      used_tags_.insert(static_cast<int>(tag));
      s.tag = static_cast<int>(tag);
      Record(first, s, g->Add(s));
      Task r = Common(g, recv, Role::kRecv, iteration, previous);
      r.kind = TaskKind::kRecv;
      r.bytes = s.bytes;
      r.peer = first.rank;
      r.tag = s.tag;
      Record(recv, r, g->Add(r));
      return;
    }
    Task t = Common(g, first, role, iteration, previous);
    switch (role) {
      case Role::kCompute: {
        t.kind = TaskKind::kCompute;
        t.flops = ComputeFlops(first, t);
        t.bytes = Size(first, "tensor_size", attr::kBytes);
        if (auto op = String(first, attr::kOp)) {
          t.op = Get(first, [&] { return internal::EnumFromString(kAllOpKinds, *op, "op"); });
        }
        if (const auto* gm = FindAttr(NodeOf(first), attr::kGemm)) {
          if (gm->double_list().values_size() != 4) {
            throw BadNode(first, "gemm: needs 4 values (m, n, k, batch)");
          }
          t.gemm = GemmShape{gm->double_list().values(0), gm->double_list().values(1),
                             gm->double_list().values(2), gm->double_list().values(3)};
        }
        t.causal = Bool(first, attr::kCausal).value_or(false);
        if (!(t.flops >= 0) || !std::isfinite(t.flops)) {
          throw BadNode(first, "num_ops: must be a finite count, not negative");
        }
        break;
      }
      case Role::kCopy:
        t.kind = TaskKind::kCopy;
        t.copy = NodeOf(first).type() == ChakraProtoMsg::MEM_LOAD_NODE
                     ? CopyDirection::kHostToDevice
                     : CopyDirection::kDeviceToHost;
        t.bytes = Size(first, "tensor_size", attr::kBytes);
        break;
      case Role::kMemory:
        t.kind = TaskKind::kMemory;
        t.memory_delta_bytes = *Double(first, attr::kMemoryDelta);
        t.flops = Double(first, attr::kFlops).value_or(0);
        t.bytes = Double(first, attr::kBytes).value_or(0);
        break;
      default:
        throw BadNode(first, "internal: unexpected node role");
    }
    Record(first, t, g->Add(t));
  }

  std::string prefix_;
  const ImportOptions& o_;
  std::vector<RankTrace> ranks_;
  std::map<std::string, std::vector<int>> groups_;
  std::vector<Unit> units_;
  std::vector<std::vector<int>> unit_of_;
  std::vector<std::vector<TaskId>> task_of_;
  std::map<std::pair<int, int>, TaskId> last_on_stream_;
  std::set<int> used_tags_;
  int next_tag_ = 0;
};

}  // namespace

std::string ResolvePrefix(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return path;
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(path, ec)) {
    const std::string name = e.path().filename().string();
    const std::string tail = ".0.et";
    if (name.size() > tail.size() &&
        name.compare(name.size() - tail.size(), tail.size(), tail) == 0) {
      found.push_back((fs::path(path) / name.substr(0, name.size() - tail.size())).string());
    }
  }
  if (found.size() != 1) {
    throw ConfigError(SourceLocation{path, 0, 0}, "", "",
                      found.empty()
                          ? "a folder of Chakra traces needs one <prefix>.0.et file, it has none"
                          : "holds " + std::to_string(found.size()) +
                                " sets of traces (*.0.et): name one by its prefix");
  }
  return found.front();
}

TaskGraph ImportChakra(const std::string& prefix, const ImportOptions& options) {
  if (!options.cluster || !options.simulation) throw Error("ImportChakra needs a cluster");
  return Importer(ResolvePrefix(prefix), options).Run();
}

}  // namespace stratasim::chakra
