#include "cli/collective_sweep.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "tests/test_clusters.h"

namespace stratasim {
namespace {

// Two NVSwitch servers of 4 GPUs, a NIC per GPU, one switch between the servers (the defaults
// of tests/test_clusters.h: NVSwitch ports 300 GB/s and 1 us per direction, NICs 25 GB/s and
// 2 us, switch 1 us charged on the sending NIC's link).
Scenario TwoServers() {
  Scenario s;
  s.name = "two-nvswitch-servers";
  s.cluster = testing::NvSwitchCluster(testing::NvSwitchLayout(2, 4, 4));
  return s;
}

CollectiveSweep SendRecv(double min_bytes, double max_bytes, double factor) {
  CollectiveSweep sweep;
  sweep.op = SweepOp::kSendRecv;
  sweep.min_bytes = min_bytes;
  sweep.max_bytes = max_bytes;
  sweep.factor = factor;
  return sweep;
}

// Ranks 0-3 on server 0, 4-7 on server 1; rank r sends to r+1 mod 8. The six flows inside a
// server (0->1, 1->2, 2->3, 4->5, 5->6, 6->7) cross the sender's NVSwitch port up and the
// receiver's port down: 2 us + S / 300 GB/s. The two flows between servers, 3->4 and 7->0,
// cross the sender's NIC out (2 us + 1 us switch) and the receiver's NIC in (2 us):
// 5 us + S / 25 GB/s. Every GPU sends once and receives once and only GPUs 3 and 7 use a NIC
// out, GPUs 0 and 4 a NIC in, so no two flows share a link direction. The exchange ends with
// the slowest flow, for every size:
//
//     T(S) = 5 us + S / 25 GB/s
TEST(SendRecvSweep, EachSizeTakesTheNicHopsLatencyPlusSizeOverNicBandwidth) {
  const Scenario s = TwoServers();
  const std::vector<SweepRow> rows = RunCollectiveSweep(s, SendRecv(8, 1024.0 * 1024 * 1024, 8));
  ASSERT_EQ(rows.size(), 10u);  // 8 B, 64 B, ..., 1 GiB
  for (const SweepRow& r : rows) {
    const double expected = 5e-6 + r.bytes / 25e9;
    // Large sizes to 1e-6 relative; small ones to 1 ns (SimGrid's timing precision).
    if (r.bytes >= 1024 * 1024) {
      EXPECT_NEAR(r.time_s, expected, 1e-6 * expected) << r.bytes << " B";
    } else {
      EXPECT_NEAR(r.time_s, expected, 1e-9) << r.bytes << " B";
    }
  }
}

// The same closed form with the NICs made slower and higher-latency, so that a sweep which
// timed the wrong hop (the NVSwitch one) or ignored latency could not pass both tests.
TEST(SendRecvSweep, ClosedFormFollowsTheNicSpec) {
  testing::NvSwitchOptions o = testing::NvSwitchLayout(2, 4, 4);
  o.nic_Bps = 12.5e9;
  o.nic_latency_s = 3e-6;
  o.switch_latency_s = 0.5e-6;
  Scenario s;
  s.name = "slow-nics";
  s.cluster = testing::NvSwitchCluster(o);
  const std::vector<SweepRow> rows = RunCollectiveSweep(s, SendRecv(256 << 20, 256 << 20, 2));
  ASSERT_EQ(rows.size(), 1u);
  const double expected = 3e-6 + 0.5e-6 + 3e-6 + (256 << 20) / 12.5e9;
  EXPECT_NEAR(rows[0].time_s, expected, 1e-6 * expected);
}

TEST(SendRecvSweep, BusBandwidthIsAlgorithmBandwidthAndTheAlgorithmIsP2p) {
  const Scenario s = TwoServers();
  const std::vector<SweepRow> rows = RunCollectiveSweep(s, SendRecv(8, 64 << 20, 4));
  ASSERT_EQ(rows.size(), 12u);  // 8 B, 32 B, ..., 32 MiB
  for (const SweepRow& r : rows) {
    EXPECT_GT(r.algbw_Bps, 0);
    EXPECT_DOUBLE_EQ(r.algbw_Bps, r.bytes / r.time_s);
    EXPECT_EQ(r.busbw_Bps, r.algbw_Bps);
    EXPECT_EQ(r.algorithm, "p2p");
    EXPECT_EQ(r.count, r.bytes / 4);  // fp32
  }
  // The buffer is not split among ranks: 12 B stays 12 B (3 floats), where an all-gather over
  // 8 ranks would round it to 32 B.
  EXPECT_EQ(RunCollectiveSweep(s, SendRecv(12, 12, 2)).at(0).bytes, 12);
}

TEST(SendRecvSweep, JsonCarriesTheSameRows) {
  const Scenario s = TwoServers();
  const CollectiveSweep sweep = SendRecv(1024, 16 << 20, 16);
  const std::vector<SweepRow> rows = RunCollectiveSweep(s, sweep);
  const nlohmann::json j = nlohmann::json::parse(SweepToJson(s, sweep, rows));
  EXPECT_EQ(j["collective"], "sendrecv");
  EXPECT_EQ(j["gpus"], 8);
  ASSERT_EQ(j["rows"].size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const nlohmann::json& r = j["rows"][i];
    EXPECT_EQ(r["bytes"].get<double>(), rows[i].bytes);
    EXPECT_EQ(r["count"].get<double>(), rows[i].count);
    EXPECT_EQ(r["time_s"].get<double>(), rows[i].time_s);
    EXPECT_EQ(r["algbw_Bps"].get<double>(), rows[i].algbw_Bps);
    EXPECT_EQ(r["busbw_Bps"].get<double>(), rows[i].busbw_Bps);
    EXPECT_EQ(r["algorithm"], "p2p");
  }
  const std::string table = FormatSweepTable(s, sweep, rows);
  EXPECT_NE(table.find("# sendrecv on 8 GPUs of two-nvswitch-servers, point-to-point flows"),
            std::string::npos)
      << table;
}

TEST(SendRecvSweep, OneGpuIsRejected) {
  const Scenario s = TwoServers();
  CollectiveSweep sweep = SendRecv(8, 8, 2);
  sweep.gpus = 1;
  try {
    RunCollectiveSweep(s, sweep);
    FAIL() << "a one-GPU sendrecv ran";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "sendrecv needs at least 2 GPUs (a rank sending to itself is a local copy)");
  }
}

}  // namespace
}  // namespace stratasim
