#include "sim/trace_wire.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "core/error.h"

namespace stratasim::sim {
namespace {

ExecutionTrace Sample() {
  ExecutionTrace t;
  t.executor = "simgrid";
  t.num_ranks = 3;
  t.streams = {"compute", "dp"};
  t.collective_algorithms = {"ring/simple/4ch", ""};
  t.makespan_s = 1.25;
  t.activities = 12345678901LL;
  t.instants = 77;
  t.fused_tasks = 5;
  for (int i = 0; i < 100000; ++i) {
    t.records.push_back(TraceRecord{i, i % 3, i % 2, i * 1e-3, i * 1e-3 + 0.5, i * 1e-3 + 0.1});
  }
  return t;
}

std::string Encode(const ExecutionTrace& t) {
  std::string out;
  EXPECT_TRUE(WriteTraceWire(t, [&](const void* p, size_t n) {
    out.append(static_cast<const char*>(p), n);
    return true;
  }));
  return out;
}

ExecutionTrace Decode(const std::string& bytes, unsigned long long max_records = 0) {
  size_t at = 0;
  return ReadTraceWire(
      [&](void* p, size_t n) {
        if (bytes.size() - at < n) return false;
        std::memcpy(p, bytes.data() + at, n);
        at += n;
        return true;
      },
      max_records);
}

TEST(TraceWire, RoundTripsEveryField) {
  const ExecutionTrace t = Sample();
  const ExecutionTrace r = Decode(Encode(t));
  // With the graph's size known, the records are allocated once: the same result.
  EXPECT_EQ(Decode(Encode(t), t.records.size()).records.size(), t.records.size());
  EXPECT_EQ(r.executor, t.executor);
  EXPECT_EQ(r.num_ranks, 3);
  EXPECT_EQ(r.streams, t.streams);
  EXPECT_EQ(r.collective_algorithms, t.collective_algorithms);
  EXPECT_EQ(r.makespan_s, 1.25);
  EXPECT_EQ(r.activities, t.activities);
  EXPECT_EQ(r.instants, 77);
  EXPECT_EQ(r.fused_tasks, 5);
  ASSERT_EQ(r.records.size(), t.records.size());
  EXPECT_EQ(std::memcmp(r.records.data(), t.records.data(), t.records.size() * sizeof(TraceRecord)),
            0);
}

TEST(TraceWire, ATruncatedStreamIsAnErrorAtEveryCut) {
  ExecutionTrace t = Sample();
  t.records.resize(3);
  const std::string bytes = Encode(t);
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    try {
      Decode(bytes.substr(0, cut));
      FAIL() << "a stream cut at " << cut << " of " << bytes.size() << " bytes was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("simulation result"), std::string::npos) << e.what();
    }
  }
}

TEST(TraceWire, RefusesAnotherFormat) {
  std::string bytes = Encode(Sample());
  bytes[6] = '9';
  try {
    Decode(bytes);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "simulation result: not a trace of this build (bad header)");
  }
}

TEST(TraceWire, ACountBeyondTheLimitIsRefusedBeforeAllocating) {
  ExecutionTrace t;
  t.executor = "x";
  std::string bytes = Encode(t);
  // The record count is the last 8 bytes of a trace without records.
  const std::uint64_t huge = kMaxWireCount + 1;
  std::memcpy(&bytes[bytes.size() - 8], &huge, 8);
  try {
    Decode(bytes);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("record count 17179869185 exceeds the limit"),
              std::string::npos)
        << e.what();
  }
}

TEST(TraceWire, MoreRecordsThanTheGraphHasTasksAreRefused) {
  const std::string bytes = Encode(Sample());
  try {
    Decode(bytes, 99999);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "simulation result: 100000 records for a graph of 99999 tasks");
  }
}

TEST(TraceWire, ALargeCountWithoutDataFailsOnTheShortStream) {
  ExecutionTrace t;
  t.executor = "x";
  std::string bytes = Encode(t);
  const std::uint64_t claimed = 1ULL << 30;  // 40 GiB of records claimed, none sent
  std::memcpy(&bytes[bytes.size() - 8], &claimed, 8);
  try {
    Decode(bytes);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "simulation result ended early, while reading records");
  }
}

}  // namespace
}  // namespace stratasim::sim

namespace stratasim::sim {
namespace {

LinkUsage SampleUsage() {
  LinkUsage u;
  u.edges_s = {0, 0.25, 1.25};
  LinkSeries l;
  l.name = "s0nic0_up";
  l.label = "server 0 NIC 0 → fabric";
  l.bandwidth_Bps = 25e9;
  l.bytes_per_interval = {3e9, 1e9 / 3};
  l.bytes = 3e9 + 1e9 / 3;
  u.links = {l, l};
  u.links[1].name = "s1nic0_down";
  u.links_used = 9;
  u.bytes_total = 1e10 + 0.5;
  return u;
}

TEST(TraceWire, CarriesTheLinkUsage) {
  ExecutionTrace t = Sample();
  t.link_usage = SampleUsage();
  const ExecutionTrace r = Decode(Encode(t));
  EXPECT_EQ(LinkUsageToJson(r.link_usage), LinkUsageToJson(t.link_usage));
  EXPECT_EQ(r.records.size(), t.records.size());
  // Empty usage (nothing moved) too.
  EXPECT_TRUE(Decode(Encode(Sample())).link_usage.edges_s.empty());
}

TEST(TraceWire, RefusesLinkSeriesThatDoNotMatchTheirBounds) {
  ExecutionTrace t = Sample();
  t.records.clear();
  t.link_usage = SampleUsage();
  t.link_usage.links[1].bytes_per_interval.push_back(1);
  try {
    Decode(Encode(t));
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "simulation result: link s1nic0_down has 3 intervals, its bounds give 2");
  }
  t.link_usage = SampleUsage();
  t.link_usage.links.resize(kMaxLinkSeries + 1, t.link_usage.links[0]);
  try {
    Decode(Encode(t));
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "simulation result: 33 link series, more than 32");
  }
}

}  // namespace
}  // namespace stratasim::sim
