#include "report/chrome_trace.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.h"

namespace stratasim {
namespace {

using nlohmann::json;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Two ranks, two streams: per rank a memory allocation, a forward GEMM, a gradient
// all-reduce on the comm stream, and a free; plus a send from rank 0 to rank 1.
struct Example {
  TaskGraph g{2};
  ExecutionTrace t;
  int compute = -1;
  int comm = -1;

  Example() {
    compute = g.Stream("compute");
    comm = g.Stream("comm");
    for (int rank = 0; rank < 2; ++rank) {
      Task alloc;
      alloc.kind = TaskKind::kMemory;
      alloc.rank = rank;
      alloc.stream = compute;
      alloc.name = "alloc weights";
      alloc.memory_delta_bytes = 2 * kGiB;
      g.Add(alloc);
      Task gemm;
      gemm.rank = rank;
      gemm.stream = compute;
      gemm.name = "fwd gemm";
      gemm.phase = Phase::kForward;
      gemm.op = OpKind::kGemm;
      gemm.flops = 2e12;
      gemm.bytes = 3e8;
      g.Add(gemm);
      Task more;
      more.kind = TaskKind::kMemory;
      more.rank = rank;
      more.stream = compute;
      more.name = "alloc activations";
      more.memory_delta_bytes = 1 * kGiB;
      g.Add(more);
    }
    Collective c;
    c.kind = CollectiveKind::kAllReduce;
    c.ranks = {0, 1};
    c.bytes = 1e9;
    Task member;
    member.stream = comm;
    member.name = "allreduce grads";
    member.phase = Phase::kCommunication;
    member.category = "dp";
    g.AddCollective(c, member);
    Task send;
    send.stream = comm;
    send.name = "send act";
    Task recv = send;
    recv.name = "recv act";
    g.AddTransfer(0, 1, 4096, send, recv);
    Task free;
    free.kind = TaskKind::kMemory;
    free.rank = 0;
    free.stream = compute;
    free.name = "free activations";
    free.memory_delta_bytes = -1 * kGiB;
    g.Add(free);

    t.executor = "simgrid";
    t.num_ranks = 2;
    t.streams = g.streams();
    t.makespan_s = 0.02;
    for (const Task& task : g.tasks()) {
      TraceRecord r;
      r.task = task.id;
      r.rank = task.rank;
      r.stream = task.stream;
      t.records.push_back(r);
    }
  }

  // Sets when task `id` ran; peers_joined defaults to start.
  void Ran(TaskId id, double start, double end, double peers_joined = -1) {
    TraceRecord& r = t.records.at(id);
    r.start_s = start;
    r.end_s = end;
    r.peers_joined_s = peers_joined < 0 ? start : peers_joined;
  }
};

// Task ids in the order Example adds them.
enum : TaskId {
  kAlloc0,
  kGemm0,
  kMore0,
  kAlloc1,
  kGemm1,
  kMore1,
  kAllReduce0,
  kAllReduce1,
  kSend,
  kRecv,
  kFree0,
};

Example Timed() {
  Example e;
  e.Ran(kAlloc0, 0, 0);
  e.Ran(kGemm0, 0.001, 0.004);
  e.Ran(kMore0, 0.0015, 0.0015);
  e.Ran(kAlloc1, 0, 0);
  e.Ran(kGemm1, 0.001, 0.006);
  e.Ran(kMore1, 0.002, 0.002);
  e.Ran(kAllReduce0, 0.004, 0.010, 0.006);  // rank 0 waits 2 ms for rank 1
  e.Ran(kAllReduce1, 0.006, 0.010);
  e.Ran(kSend, 0.010, 0.0100005);
  e.Ran(kRecv, 0.010, 0.0100005);
  e.Ran(kFree0, 0.011, 0.011);
  return e;
}

std::vector<json> EventsWithPh(const json& trace, const std::string& ph) {
  std::vector<json> out;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == ph) out.push_back(e);
  }
  return out;
}

const json* FindX(const json& trace, const std::string& name, int pid) {
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["name"] == name && e["pid"] == pid) return &e;
  }
  return nullptr;
}

TEST(ChromeTraceTest, ParsesWithTopLevelFields) {
  Example e = Timed();
  json trace = json::parse(ChromeTraceJson(e.g, e.t));
  EXPECT_TRUE(trace["traceEvents"].is_array());
  EXPECT_EQ(trace["displayTimeUnit"], "ms");
  EXPECT_EQ(trace["otherData"]["executor"], "simgrid");
}

TEST(ChromeTraceTest, OneCompleteEventPerNonMemoryTaskInMicroseconds) {
  Example e = Timed();
  json trace = json::parse(ChromeTraceJson(e.g, e.t));
  int non_memory = 0;
  for (const Task& task : e.g.tasks()) non_memory += task.kind != TaskKind::kMemory;
  std::vector<json> xs = EventsWithPh(trace, "X");
  EXPECT_EQ(static_cast<int>(xs.size()), non_memory);

  const json* gemm = FindX(trace, "fwd gemm", 1);
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->at("tid"), e.compute);
  EXPECT_DOUBLE_EQ(gemm->at("ts").get<double>(), 1000.0);
  EXPECT_DOUBLE_EQ(gemm->at("dur").get<double>(), 5000.0);
  EXPECT_EQ(gemm->at("cat"), std::string(ToString(TaskKind::kCompute)));
  EXPECT_EQ(gemm->at("args")["phase"], std::string(ToString(Phase::kForward)));
  EXPECT_EQ(gemm->at("args")["iteration"], 0);
  EXPECT_DOUBLE_EQ(gemm->at("args")["flops"].get<double>(), 2e12);
  EXPECT_DOUBLE_EQ(gemm->at("args")["bytes"].get<double>(), 3e8);

  const json* send = FindX(trace, "send act", 0);
  ASSERT_NE(send, nullptr);
  EXPECT_DOUBLE_EQ(send->at("ts").get<double>(), 10000.0);
  EXPECT_DOUBLE_EQ(send->at("dur").get<double>(), 0.5);
  EXPECT_FALSE(send->at("args").contains("flops"));
  EXPECT_FALSE(send->at("args").contains("wait_us"));
}

TEST(ChromeTraceTest, CollectiveArgsAndWaitTime) {
  Example e = Timed();
  json trace = json::parse(ChromeTraceJson(e.g, e.t));
  const json* waiting = FindX(trace, "allreduce grads", 0);
  ASSERT_NE(waiting, nullptr);
  const json& args = waiting->at("args");
  EXPECT_EQ(args["collective"], std::string(ToString(CollectiveKind::kAllReduce)));
  EXPECT_EQ(args["group_size"], 2);
  EXPECT_DOUBLE_EQ(args["bytes"].get<double>(), 1e9);
  EXPECT_EQ(args["category"], "dp");
  EXPECT_DOUBLE_EQ(args["wait_us"].get<double>(), 2000.0);
  EXPECT_DOUBLE_EQ(waiting->at("dur").get<double>(), 6000.0);

  const json* last = FindX(trace, "allreduce grads", 1);
  ASSERT_NE(last, nullptr);
  EXPECT_FALSE(last->at("args").contains("wait_us"));  // the last to join waits for no one
}

TEST(ChromeTraceTest, ProcessAndThreadNames) {
  Example e = Timed();
  json trace = json::parse(ChromeTraceJson(e.g, e.t));
  std::vector<std::tuple<std::string, int, int, std::string>> names;
  for (const json& m : EventsWithPh(trace, "M")) {
    if (m["name"] == "process_name" || m["name"] == "thread_name") {
      names.emplace_back(m["name"], m["pid"], m["tid"], m["args"]["name"]);
    }
  }
  std::vector<std::tuple<std::string, int, int, std::string>> expected = {
      {"process_name", 0, 0, "GPU 0"},          {"thread_name", 0, e.compute, "compute"},
      {"thread_name", 0, e.comm, "comm"},       {"process_name", 1, 0, "GPU 1"},
      {"thread_name", 1, e.compute, "compute"}, {"thread_name", 1, e.comm, "comm"},
  };
  EXPECT_EQ(names, expected);
}

TEST(ChromeTraceTest, MemoryBecomesRunningCounter) {
  Example e = Timed();
  json trace = json::parse(ChromeTraceJson(e.g, e.t));
  std::vector<std::tuple<int, double, double>> counters;
  for (const json& c : EventsWithPh(trace, "C")) {
    EXPECT_EQ(c["name"], "memory");
    counters.emplace_back(c["pid"], c["ts"], c["args"]["allocated_GiB"]);
  }
  std::vector<std::tuple<int, double, double>> expected = {
      {0, 0.0, 2.0}, {0, 1500.0, 3.0}, {0, 11000.0, 2.0}, {1, 0.0, 2.0}, {1, 2000.0, 3.0}};
  EXPECT_EQ(counters, expected);
}

TEST(ChromeTraceTest, OrderedByRankStreamStartAndId) {
  Example e = Timed();
  // Recording order must not matter: reverse the records.
  ExecutionTrace reversed = e.t;
  std::reverse(reversed.records.begin(), reversed.records.end());
  std::string text = ChromeTraceJson(e.g, e.t);
  EXPECT_EQ(text, ChromeTraceJson(e.g, reversed));

  json trace = json::parse(text);
  std::vector<std::tuple<int, int, double>> keys;
  for (const json& x : EventsWithPh(trace, "X")) keys.emplace_back(x["pid"], x["tid"], x["ts"]);
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
}

TEST(ChromeTraceTest, CompactOneEventPerLine) {
  Example e = Timed();
  std::string text = ChromeTraceJson(e.g, e.t);
  EXPECT_EQ(text.find("  "), std::string::npos);
  EXPECT_EQ(text.find(": "), std::string::npos);
}

TEST(ChromeTraceTest, RecordOutsideGraphThrows) {
  Example e = Timed();
  e.t.records.back().task = 99;
  EXPECT_THROW(ChromeTraceJson(e.g, e.t), Error);
  Example f = Timed();
  f.t.records.front().rank = 5;
  EXPECT_THROW(ChromeTraceJson(f.g, f.t), Error);
}

TEST(ChromeTraceTest, EmptyGraph) {
  TaskGraph g(1);
  ExecutionTrace t;
  json trace = json::parse(ChromeTraceJson(g, t));
  ASSERT_EQ(trace["traceEvents"].size(), 2u);  // process name and sort index
  EXPECT_EQ(trace["traceEvents"][0]["args"]["name"], "GPU 0");
}

}  // namespace
}  // namespace stratasim

namespace stratasim {
namespace {

// A hand-filled usage (the simulator fills it, core/link_usage.h): two intervals of 10 ms, a
// 100 GB/s link carrying 0.5 GB then nothing, and a link of unknown bandwidth.
LinkUsage TwoLinks() {
  LinkUsage u;
  u.edges_s = {0, 0.01, 0.02};
  LinkSeries nic;
  nic.name = "s0_nic0_UP";
  nic.label = "server 0 NIC 0 -> fabric";
  nic.bandwidth_Bps = 100e9;
  nic.bytes_per_interval = {0.5e9, 0};
  nic.bytes = 0.5e9;
  LinkSeries other;
  other.name = "x";
  other.bytes_per_interval = {1e7, 2e7};
  other.bytes = 3e7;
  u.links = {nic, other};
  u.links_used = 2;
  u.bytes_total = nic.bytes + other.bytes;
  return u;
}

TEST(ChromeTraceTest, LinkUsageBecomesCounterTracksOfALinksProcess) {
  Example e = Timed();
  e.t.link_usage = TwoLinks();
  const json trace = json::parse(ChromeTraceJson(e.g, e.t));
  std::vector<std::tuple<std::string, double, double>> counters;
  for (const json& c : EventsWithPh(trace, "C")) {
    if (c["pid"] != 2) continue;  // the GPUs' memory counters
    const std::string key = c["args"].begin().key();
    counters.emplace_back(c["name"].get<std::string>() + " " + key, c["ts"].get<double>(),
                          c["args"][key].get<double>());
  }
  const std::vector<std::tuple<std::string, double, double>> want = {
      {"server 0 NIC 0 -> fabric utilisation_pct", 0, 50},     // 0.5 GB in 10 ms of 100 GB/s
      {"server 0 NIC 0 -> fabric utilisation_pct", 10000, 0},  // held: no sample at the end
      {"x GBps", 0, 1},                                        // 10 MB in 10 ms
      {"x GBps", 10000, 2},
      {"x GBps", 20000, 0}};
  ASSERT_EQ(counters.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(std::get<0>(counters[i]), std::get<0>(want[i])) << i;
    EXPECT_DOUBLE_EQ(std::get<1>(counters[i]), std::get<1>(want[i])) << i;
    EXPECT_NEAR(std::get<2>(counters[i]), std::get<2>(want[i]), 1e-9) << i;
  }
  bool named = false;
  for (const json& m : EventsWithPh(trace, "M")) {
    if (m["pid"] == 2 && m["name"] == "process_name") named = m["args"]["name"] == "Links";
  }
  EXPECT_TRUE(named);
}

TEST(ChromeTraceTest, WriterTakesLinkUsageInFinish) {
  std::string text;
  ChromeTraceWriter w(
      [&text](const std::string& s) {
        text += s;
        return true;
      },
      2);
  const LinkUsage u = TwoLinks();
  ASSERT_TRUE(w.Finish({"compute"}, "simgrid", 0.02, &u));
  const json trace = json::parse(text);
  EXPECT_EQ(EventsWithPh(trace, "C").size(), 5u);  // the NIC holds its last value 0
  // Without usage (nothing recorded), no Links process.
  Example e = Timed();
  EXPECT_EQ(ChromeTraceJson(e.g, e.t).find("Links"), std::string::npos);
}

TEST(ChromeTraceTest, GpusSelectsRanksAndShrinksTheTrace) {
  const Example e = Timed();
  const std::string all = ChromeTraceJson(e.g, e.t);
  const std::string one = ChromeTraceJson(e.g, e.t, {1});
  EXPECT_LT(one.size(), all.size() * 3 / 5);
  const json trace = json::parse(one);
  int events = 0;
  for (const json& ev : trace["traceEvents"]) {
    EXPECT_EQ(ev["pid"], 1) << ev.dump();
    ++events;
  }
  // Rank 1: gemm, all-reduce, recv; two memory counters; process name and sort index, two
  // threads' names and sort indices.
  EXPECT_EQ(events, 3 + 2 + 2 + 4);
  EXPECT_EQ(ChromeTraceJson(e.g, e.t, {0, 1}), all);
  // A rank the plan does not have selects nothing: no GPU event at all.
  const json none = json::parse(ChromeTraceJson(e.g, e.t, {2}));
  EXPECT_TRUE(none["traceEvents"].empty()) << none.dump();
}

}  // namespace
}  // namespace stratasim
