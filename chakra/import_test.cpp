// ImportChakra on traces written here node by node: what each node type becomes, and every rule
// a bad trace breaks, with its message.
#include "chakra/import.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "chakra/export.h"
#include "chakra/format.h"
#include "core/compute_model.h"

namespace stratasim::chakra {
namespace {

namespace fs = std::filesystem;
using ChakraProtoMsg::Node;

// One server of four A100s (NVSwitch), no kernel launch cost: times are closed forms.
Scenario FourGpus() {
  return LoadScenarioText(R"(name: t
cluster:
  servers:
    - {name: box, count: 1, gpu: A100-SXM4-80GB, gpus_per_server: 4,
       nvswitch: {bandwidth: "300GB/s", latency: "1us"},
       nics: {count: 4, bandwidth: "100Gb/s", latency: "2us"}}
  network: {kind: single_switch, latency: "1us"}
model: {preset: gpt2-medium}
training: {global_batch: 4, micro_batch: 1}
simulation: {kernel_launch: 0}
strategies: [{name: d, kind: ddp}]
)",
                          "t.yaml");
}

class ChakraImport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("stratasim-chakra-" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "-" +
            std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    prefix_ = (dir_ / "t").string();
    scenario_ = FourGpus();
    options_.cluster = &scenario_.cluster;
    options_.simulation = &scenario_.simulation;
    options_.iterations = 1;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string File(int rank) const { return RankFile(prefix_, rank); }
  void WriteBytes(const std::string& path, const std::string& bytes) const {
    std::ofstream(path, std::ios::binary) << bytes;
  }
  // Rank r's file: the metadata, then `nodes`.
  void Write(int rank, const std::vector<Node>& nodes) const {
    std::string bytes;
    ChakraProtoMsg::GlobalMetadata m;
    m.set_version("0.0.4");
    AppendDelimited(m, &bytes);
    for (const Node& n : nodes) AppendDelimited(n, &bytes);
    WriteBytes(File(rank), bytes);
  }
  TaskGraph Import() const { return ImportChakra(prefix_, options_); }
  // The message ImportChakra throws.
  std::string Error() const {
    try {
      Import();
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "(no error)";
  }

  fs::path dir_;
  std::string prefix_;
  Scenario scenario_;
  ImportOptions options_;
};

Node Make(std::uint64_t id, ChakraProtoMsg::NodeType type, std::vector<std::uint64_t> deps = {}) {
  Node n;
  n.set_id(id);
  n.set_name("n" + std::to_string(id));
  n.set_type(type);
  for (auto d : deps) n.add_data_deps(d);
  return n;
}
Node& Int64(Node& n, const std::string& name, long long v) {
  AddAttr(n.mutable_attr(), name)->set_int64_val(v);
  return n;
}
Node& Int32(Node& n, const std::string& name, int v) {
  AddAttr(n.mutable_attr(), name)->set_int32_val(v);
  return n;
}
Node& Str(Node& n, const std::string& name, const std::string& v) {
  AddAttr(n.mutable_attr(), name)->set_string_val(v);
  return n;
}
Node Coll(std::uint64_t id, long long type, long long bytes, std::vector<std::uint64_t> deps = {}) {
  Node n = Make(id, ChakraProtoMsg::COMM_COLL_NODE, std::move(deps));
  Int64(n, "comm_type", type);
  Int64(n, "comm_size", bytes);
  return n;
}
Node Comp(std::uint64_t id, long long flops, std::vector<std::uint64_t> deps = {}) {
  Node n = Make(id, ChakraProtoMsg::COMP_NODE, std::move(deps));
  Int64(n, "num_ops", flops);
  return n;
}
Node P2p(std::uint64_t id, bool send, int peer, int tag, long long bytes) {
  Node n = Make(id, send ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
  Int32(n, send ? "comm_dst" : "comm_src", peer);
  Int32(n, "comm_tag", tag);
  Int64(n, "comm_size", bytes);
  return n;
}

TEST_F(ChakraImport, NodesBecomeTasks) {
  options_.ctrl_deps = true;
  Node recv = P2p(3, false, 1, 7, 4096);
  recv.add_ctrl_deps(2);
  Write(0, {Comp(1, 1000), Coll(2, ChakraProtoMsg::ALL_GATHER, 1 << 20, {1}), recv,
            Make(4, ChakraProtoMsg::MEM_LOAD_NODE, {3})});
  Write(1, {Coll(10, ChakraProtoMsg::ALL_GATHER, 1 << 20), P2p(11, true, 0, 7, 4096)});
  const TaskGraph g = Import();
  ASSERT_EQ(g.num_ranks(), 2);
  ASSERT_EQ(g.tasks().size(), 6u);
  // Units in order of (node id, rank): compute 1, the all-gather, the transfer, the copy.
  EXPECT_EQ(g.task(0).kind, TaskKind::kCompute);
  EXPECT_EQ(g.task(0).flops, 1000);
  EXPECT_EQ(g.task(0).dtype, DType::kBF16);
  EXPECT_EQ(g.task(1).kind, TaskKind::kCollective);
  EXPECT_EQ(g.task(1).deps, std::vector<TaskId>{0});
  ASSERT_EQ(g.collectives().size(), 1u);
  EXPECT_EQ(g.collective(0).kind, CollectiveKind::kAllGather);
  EXPECT_EQ(g.collective(0).ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(g.collective(0).bytes, 1 << 20);
  EXPECT_EQ(g.task(3).kind, TaskKind::kSend);
  EXPECT_EQ(g.task(3).rank, 1);
  EXPECT_EQ(g.task(4).kind, TaskKind::kRecv);
  EXPECT_EQ(g.task(4).tag, 7);
  EXPECT_EQ(g.task(4).bytes, 4096);
  // The ctrl_dep on the collective is kept: the receive is on another stream.
  EXPECT_EQ(g.task(4).deps, std::vector<TaskId>{1});
  EXPECT_EQ(g.task(5).kind, TaskKind::kCopy);
  EXPECT_EQ(g.task(5).copy, CopyDirection::kHostToDevice);
}

// A node with only a duration runs that long on its GPU; a one-iteration trace repeats once per
// simulated iteration, each after the rank's previous one.
TEST_F(ChakraImport, DurationsAndRepeatedIterations) {
  Node n = Make(0, ChakraProtoMsg::COMP_NODE);
  n.set_duration_micros(1500);
  Write(0, {n});
  options_.iterations = 3;
  const TaskGraph g = Import();
  ASSERT_EQ(g.tasks().size(), 3u);
  const GpuSpec& gpu = scenario_.cluster.GpuOfRank(0);
  for (TaskId t = 0; t < 3; ++t) {
    EXPECT_EQ(g.task(t).iteration, t);
    EXPECT_NEAR(ComputeTaskSeconds(g.task(t), gpu, scenario_.simulation), 1.5e-3, 1e-12);
  }
  EXPECT_EQ(g.task(2).deps, std::vector<TaskId>{1});
}

TEST_F(ChakraImport, AFolderNamesItsOneSetOfTraces) {
  Write(0, {Comp(0, 1)});
  EXPECT_EQ(ResolvePrefix(dir_.string()), prefix_);
  EXPECT_EQ(ImportChakra(dir_.string(), options_).tasks().size(), 1u);
  WriteBytes((dir_ / "u.0.et").string(), "");
  EXPECT_THROW(ResolvePrefix(dir_.string()), ConfigError);
  try {
    ResolvePrefix(dir_.string());
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              dir_.string() +
                  ": <document>: holds 2 sets of traces (*.0.et): name one by its "
                  "prefix");
  }
  fs::remove(dir_ / "u.0.et");
  fs::remove(File(0));
  try {
    ResolvePrefix(dir_.string());
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              dir_.string() +
                  ": <document>: a folder of Chakra traces needs one <prefix>.0.et file, it has "
                  "none");
  }
}

// Every bad input: the file, the node and the rule.
TEST_F(ChakraImport, MissingFirstRank) {
  EXPECT_EQ(Error(), File(0) +
                         ": <document>: no such file: a Chakra trace is <prefix>.<rank>.et "
                         "from rank 0");
}

TEST_F(ChakraImport, MoreRanksThanGpus) {
  for (int r = 0; r < 5; ++r) Write(r, {Comp(0, 1)});
  EXPECT_EQ(Error(),
            File(4) + ": <document>: the traces have more ranks than the cluster's 4 GPUs");
}

TEST_F(ChakraImport, Gzip) {
  WriteBytes(File(0), "\x1f\x8b\x08\x00");
  EXPECT_EQ(Error(), File(0) + ": <document>: gzip-compressed; decompress it first (gunzip)");
}

TEST_F(ChakraImport, Empty) {
  WriteBytes(File(0), "");
  EXPECT_EQ(Error(),
            File(0) + ": <document>: empty: a Chakra file starts with a GlobalMetadata message");
}

TEST_F(ChakraImport, TruncatedMessage) {
  Write(0, {Comp(0, 1)});
  std::string bytes;
  {
    std::ifstream in(File(0), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  WriteBytes(File(0), bytes.substr(0, bytes.size() - 3));
  const size_t meta = static_cast<size_t>(bytes[0]) + 1;
  EXPECT_EQ(Error(), File(0) + ": <document>: message 2 (a Node) at byte " + std::to_string(meta) +
                         ": its size prefix says " + std::to_string(bytes.size() - meta - 1) +
                         " bytes, the file has " + std::to_string(bytes.size() - meta - 4) +
                         " left (truncated, or not a Chakra execution trace)");
}

TEST_F(ChakraImport, TruncatedVarint) {
  WriteBytes(File(0), "\x80");
  EXPECT_EQ(Error(), File(0) +
                         ": <document>: the GlobalMetadata message at byte 0: truncated "
                         "size prefix (varint)");
}

TEST_F(ChakraImport, NotANode) {
  Write(0, {});
  std::ofstream(File(0), std::ios::binary | std::ios::app) << std::string("\x02\xff\xff", 3);
  EXPECT_EQ(Error(), File(0) +
                         ": <document>: message 2 (a Node) at byte 8: does not parse as "
                         "Chakra's Node (et_def.proto)");
}

TEST_F(ChakraImport, DuplicateId) {
  Write(0, {Comp(5, 1), Comp(5, 1)});
  EXPECT_EQ(Error(), File(0) + ": node 5: the id appears twice in the file");
}

TEST_F(ChakraImport, MissingDependency) {
  Write(0, {Comp(1, 1, {9})});
  EXPECT_EQ(Error(), File(0) + ": node 1: data_deps names node 9, which is not in the file");
}

TEST_F(ChakraImport, SelfDependency) {
  options_.ctrl_deps = true;
  Node n = Comp(1, 1);
  n.add_ctrl_deps(1);
  Write(0, {n});
  EXPECT_EQ(Error(), File(0) + ": node 1: ctrl_deps names the node itself");
}

// ctrl_deps are not dependencies unless asked for (a PyTorch trace's name call-tree parents,
// some of them not in the file).
TEST_F(ChakraImport, ControlDependenciesOnlyWhenAsked) {
  Node n = Comp(2, 1);
  n.add_ctrl_deps(1);
  n.add_ctrl_deps(99);
  Write(0, {Comp(1, 1), n});
  const TaskGraph g = Import();
  EXPECT_TRUE(g.task(1).deps.empty());
  options_.ctrl_deps = true;
  EXPECT_EQ(Error(), File(0) + ": node 2: ctrl_deps names node 99, which is not in the file");
}

TEST_F(ChakraImport, Cycle) {
  Write(0, {Comp(1, 1, {2}), Comp(2, 1, {1})});
  EXPECT_EQ(Error(), File(0) + ": node 1: is on a dependency cycle (data_deps and ctrl_deps)");
}

TEST_F(ChakraImport, UnknownNodeType) {
  Write(0, {Make(1, static_cast<ChakraProtoMsg::NodeType>(12))});
  EXPECT_EQ(Error(), File(0) + ": node 1: type 12 is not a Chakra NodeType (0 to 7)");
}

TEST_F(ChakraImport, AttributeOfTheWrongType) {
  Node n = Make(1, ChakraProtoMsg::COMP_NODE);
  Str(n, "num_ops", "many");
  Write(0, {n});
  EXPECT_EQ(Error(), File(0) +
                         ": node 1: attribute num_ops: not an integer (int32_val, "
                         "int64_val, uint32_val or uint64_val)");
}

TEST_F(ChakraImport, NegativeSize) {
  Write(0, {Coll(1, ChakraProtoMsg::ALL_REDUCE, -5)});
  EXPECT_EQ(Error(), File(0) +
                         ": node 1: comm_size = -5.000000: must be a finite size, not "
                         "negative");
}

TEST_F(ChakraImport, CollectiveWithoutCounterpart) {
  Write(0, {Coll(1, ChakraProtoMsg::ALL_REDUCE, 8), Coll(2, ChakraProtoMsg::ALL_REDUCE, 8)});
  Write(1, {Coll(1, ChakraProtoMsg::ALL_REDUCE, 8)});
  EXPECT_EQ(Error(), File(0) +
                         ": node 2: collective 2 of process group of every rank has no "
                         "counterpart on rank 1 (" +
                         File(1) + "): collectives are matched by group and order");
}

TEST_F(ChakraImport, CollectivesDisagree) {
  Write(0, {Coll(1, ChakraProtoMsg::ALL_REDUCE, 8)});
  Write(1, {Coll(1, ChakraProtoMsg::ALL_REDUCE, 16)});
  EXPECT_EQ(Error(), File(1) + ": node 1: comm_size differs from node 1 of " + File(0) +
                         ", its collective 1 in process group of every rank");
}

TEST_F(ChakraImport, UnknownProcessGroup) {
  Node n = Coll(1, ChakraProtoMsg::ALL_REDUCE, 8);
  Str(n, "pg_name", "3");
  Write(0, {n});
  EXPECT_EQ(Error(), File(0) + ": node 1: pg_name = \"3\": no such process group in " + prefix_ +
                         ".comm_groups.json (\"\" and \"0\" mean every rank)");
}

TEST_F(ChakraImport, NotAMemberOfItsGroup) {
  Node n = Coll(1, ChakraProtoMsg::ALL_REDUCE, 8);
  Str(n, "pg_name", "1");
  Write(0, {Comp(0, 1)});
  Write(1, {n});
  WriteBytes(CommGroupsFile(prefix_), R"({"1": [0]})");
  EXPECT_EQ(Error(), File(1) + ": node 1: pg_name = \"1\": rank 1 is not a member of the group");
}

TEST_F(ChakraImport, BadCommGroupsFile) {
  Write(0, {Comp(0, 1)});
  WriteBytes(CommGroupsFile(prefix_), R"({"1": [0, 7]})");
  EXPECT_EQ(Error(), CommGroupsFile(prefix_) +
                         ": 1 = \"7\": ranks must be distinct integers in [0, 1) (the traces' "
                         "ranks)");
  WriteBytes(CommGroupsFile(prefix_), R"([1])");
  EXPECT_EQ(Error(),
            CommGroupsFile(prefix_) + ": <document>: must be an object {\"<pg_name>\": [ranks]}");
}

TEST_F(ChakraImport, OrderThatCanNeverRun) {
  // Rank 0 joins the world all-reduce before the pair's; rank 1 the other way round.
  Node a = Coll(1, ChakraProtoMsg::ALL_REDUCE, 8);
  Node b = Coll(2, ChakraProtoMsg::ALL_REDUCE, 8, {1});
  Str(b, "pg_name", "1");
  Node c = Coll(1, ChakraProtoMsg::ALL_REDUCE, 8);
  Str(c, "pg_name", "1");
  Node d = Coll(2, ChakraProtoMsg::ALL_REDUCE, 8, {1});
  Write(0, {a, b});
  Write(1, {c, d});
  WriteBytes(CommGroupsFile(prefix_), R"({"1": [0, 1]})");
  EXPECT_EQ(Error(), File(0) +
                         ": node 1: can never start: it waits, through its dependencies, "
                         "for a collective or transfer that another rank orders after it "
                         "(ranks must issue collectives of a group in one order)");
}

TEST_F(ChakraImport, SendWithoutDestination) {
  Node n = Make(1, ChakraProtoMsg::COMM_SEND_NODE);
  Write(0, {n});
  EXPECT_EQ(Error(), File(0) + ": node 1: COMM_SEND_NODE needs comm_dst");
}

TEST_F(ChakraImport, CollectiveWithoutType) {
  Write(0, {Make(1, ChakraProtoMsg::COMM_COLL_NODE)});
  EXPECT_EQ(Error(), File(0) + ": node 1: COMM_COLL_NODE needs comm_type");
}

TEST_F(ChakraImport, PeerOutOfRange) {
  Write(0, {P2p(1, true, 0, 0, 8)});
  Write(1, {Comp(0, 1)});
  EXPECT_EQ(Error(), File(0) +
                         ": node 1: comm_dst = 0: must be another rank of the traces, in "
                         "[0, 2)");
}

TEST_F(ChakraImport, SendFromAnotherRank) {
  Node n = P2p(1, true, 1, 0, 8);
  Int32(n, "comm_src", 1);
  Write(0, {n});
  Write(1, {P2p(1, false, 0, 0, 8)});
  EXPECT_EQ(Error(), File(0) + ": node 1: comm_src = 1: must be the file's rank, 0");
}

TEST_F(ChakraImport, SendWithoutReceive) {
  Write(0, {P2p(1, true, 1, 4, 8)});
  Write(1, {P2p(1, false, 0, 5, 8)});
  EXPECT_EQ(Error(), File(0) +
                         ": node 1: COMM_SEND_NODE from rank 0 to rank 1 with comm_tag 4 "
                         "has no matching COMM_RECV_NODE in " +
                         File(1));
}

TEST_F(ChakraImport, TransferSizesDisagree) {
  Write(0, {P2p(1, true, 1, 4, 8)});
  Write(1, {P2p(2, false, 0, 4, 16)});
  EXPECT_EQ(Error(), File(1) + ": node 2: comm_size differs from its COMM_SEND_NODE's (node 1 of " +
                         File(0) + ")");
}

TEST_F(ChakraImport, Barrier) {
  Write(0, {Coll(1, ChakraProtoMsg::BARRIER, 0)});
  EXPECT_EQ(Error(), File(0) +
                         ": node 1: comm_type = 9: not a collective stratasim simulates "
                         "(BARRIER and unknown types are not)");
}

TEST_F(ChakraImport, IterationsDisagreeWithTheScenario) {
  Node n = Comp(1, 1);
  Int64(n, "iteration", 1);
  Write(0, {Comp(0, 1), n});
  options_.iterations = 3;
  EXPECT_EQ(Error(), File(0) +
                         ": node 1: iteration = 1: the traces hold 2 iterations, the "
                         "scenario simulates 3 (warm-up + measured)");
}

// A trace of more iterations than the scenario's keeps the first ones, unless one of them
// depends on a later one.
TEST_F(ChakraImport, LaterIterationsAreLeftOut) {
  Node later = Comp(2, 1, {1});
  Int64(later, "iteration", 1);
  Write(0, {Comp(1, 1), later});
  EXPECT_EQ(Import().tasks().size(), 1u);
  Node early = Comp(1, 1, {2});
  Node late = Comp(2, 1);
  Int64(late, "iteration", 1);
  Write(0, {early, late});
  EXPECT_EQ(Error(), File(0) +
                         ": node 1: data_deps names node 2 of iteration 1, past the 1 "
                         "iterations the scenario simulates");
}

TEST_F(ChakraImport, UnknownDType) {
  Node n = Comp(1, 1);
  Str(n, "dtype", "fp64");
  Write(0, {n});
  EXPECT_EQ(Error(), File(0) + ": node 1: dtype = \"fp64\": not a dtype stratasim knows");
}

// The exporter refuses what a Chakra file cannot hold.
TEST(ChakraExport, RefusesCrossRankDependencies) {
  TaskGraph g(2);
  Task a;
  a.stream = g.Stream("compute");
  a.name = "a";
  const TaskId first = g.Add(a);
  a.rank = 1;
  a.deps = {first};
  g.Add(a);
  try {
    ExportChakra(g);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "task 1 ('a') on rank 1: depends on task 0 of rank 0, and a "
              "Chakra file holds one rank's nodes");
  }
}

TEST(ChakraExport, RefusesFoldedGraphs) {
  TaskGraph g(2);
  g.SetFold({0, 0});
  try {
    ExportChakra(g);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "the graph is folded (its mirror tasks stand for ranks not simulated): plan it with "
              "simulation.fold off to export it");
  }
}

}  // namespace
}  // namespace stratasim::chakra
