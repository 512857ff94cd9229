// Asynchronous data parallelism simulated over many iterations (issue #23): SSP's staleness
// bound measured on a trace where some workers are slower, a parameter server's step against a
// closed form, and DC-S3GD's update all-reduce overlapping the next iteration's compute.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "core/scenario.h"
#include "strategies/async/staleness.h"
#include "tests/simulated_strategy.h"

namespace stratasim {
namespace {

using testing::Simulated;

// One A100 server and one V100 server (125 TFLOP/s FP16 against the A100's 312: the V100
// ranks 2 and 3 are the slow workers), 9 iterations.
Scenario Hetero() {
  return LoadScenarioText(R"(
name: hetero-async
cluster:
  servers:
    - name: fast
      count: 1
      gpu: A100-SXM4-80GB
      gpus_per_server: 2
      nvswitch: {bandwidth: "300GB/s", latency: "1us"}
      nics: {count: 2, bandwidth: "200Gb/s", latency: "2us"}
    - name: slow
      count: 1
      gpu: V100-SXM2
      gpus_per_server: 2
      nvswitch: {bandwidth: "300GB/s", latency: "1us"}
      nics: {count: 2, bandwidth: "200Gb/s", latency: "2us"}
  network: {kind: single_switch, latency: "1us"}
model: {preset: gpt2-small}
training:
  global_batch: 16
  micro_batch: 4
  precision: fp16
  iterations: {warmup: 1, measured: 8}
strategies:
  - {name: bsp, kind: parameter-server, options: {servers: 2}}
  - {name: ssp1, kind: ssp, options: {servers: 2, staleness: 1}}
  - {name: ssp3, kind: ssp, options: {servers: 2, staleness: 3}}
)",
                          "hetero-async.yaml");
}

TEST(AsyncSimulated, SspNeverRunsMoreThanSIterationsAheadAndUsesItsSlack) {
  const Scenario s = Hetero();
  const testing::SimulatedStrategy zero = Simulated(s, "bsp");
  const StalenessFigures bsp = MeasureStaleness(zero.plan.graph, zero.trace);
  EXPECT_EQ(bsp.workers.size(), 4u);
  EXPECT_EQ(bsp.max_iterations_ahead, 0);
  const testing::SimulatedStrategy one = Simulated(s, "ssp1");
  const testing::SimulatedStrategy three = Simulated(s, "ssp3");
  const StalenessFigures f1 = MeasureStaleness(one.plan.graph, one.trace);
  const StalenessFigures f3 = MeasureStaleness(three.plan.graph, three.trace);
  // The A100 workers run ahead of the V100 ones as far as the bound lets them, no further.
  EXPECT_EQ(f1.max_iterations_ahead, 1);
  EXPECT_LE(f3.max_iterations_ahead, 3);
  EXPECT_GE(f3.max_iterations_ahead, 2);
  // Slack means less time between iterations spent waiting for the slow workers.
  EXPECT_LT(f3.mean_gap_s, bsp.mean_gap_s);
  std::printf(
      "max ahead: bsp %d, ssp1 %d, ssp3 %d; mean gap between iterations: %.3g, %.3g, "
      "%.3g ms\n",
      bsp.max_iterations_ahead, f1.max_iterations_ahead, f3.max_iterations_ahead,
      bsp.mean_gap_s * 1e3, f1.mean_gap_s * 1e3, f3.mean_gap_s * 1e3);
}

// Two single-GPU servers, one 25 GB/s NIC each: a worker on rank 0 and a dedicated shard on 1.
Scenario TwoNodes(const std::string& strategy) {
  return LoadScenarioText(R"(
name: ps-closed-form
cluster:
  servers:
    - name: node
      count: 2
      gpu: A100-SXM4-80GB
      gpus_per_server: 1
      nics: {count: 1, bandwidth: "25GB/s", latency: "2us"}
  network: {kind: single_switch, latency: "1us"}
model: {preset: gpt2-small}
training:
  global_batch: 4
  micro_batch: 4
  precision: fp16
  iterations: {warmup: 1, measured: 3}
strategies:
  - )" + strategy + "\n",
                          "ps.yaml");
}

TEST(AsyncSimulated, ParameterServerStepIsComputePlusPushPlusUpdatePlusPull) {
  const Scenario s =
      TwoNodes("{name: ps, kind: parameter-server, options: {servers: 1, placement: dedicated}}");
  const testing::SimulatedStrategy run = Simulated(s, "ps");
  const TaskGraph& g = run.plan.graph;
  // Out of one NIC and into the other: both NIC latencies and the switch's, then the bytes
  // at the NIC's bandwidth.
  // The scenario's NIC at its achievable rate (core/link_efficiency.h: the default efficiency
  // of a NIC line rate).
  const double latency_s = 2 * 2e-6 + 1e-6, nic_Bps = s.cluster.groups[0].nics.link.bandwidth_Bps;
  EXPECT_LT(nic_Bps, 25e9);
  double compute_s = 0, transfers_s = 0;
  for (const Task& t : g.tasks()) {
    if (t.iteration != 2) continue;
    const TraceRecord& r = run.trace.records.at(t.id);
    if (t.kind == TaskKind::kCompute) compute_s += r.end_s - r.start_s;
    if (t.kind != TaskKind::kRecv) continue;
    const double closed_form = latency_s + t.bytes / nic_Bps;
    EXPECT_NEAR(r.end_s - r.peers_joined_s, closed_form, 1e-6 * closed_form) << t.name.str();
    EXPECT_GT(t.bytes, 1e8);  // gpt2-small's 124 M FP16 parameters
    transfers_s += closed_form;
  }
  // One worker, BSP: forward, backward, push, the shard's sum and Adam, pull, in series.
  EXPECT_NEAR(run.metrics.iteration_time_s, compute_s + transfers_s,
              1e-6 * run.metrics.iteration_time_s);
  EXPECT_GT(transfers_s, 0.3 * run.metrics.iteration_time_s);
}

// CPU shards: the shard on server 0's socket; worker 0 reaches it over its host link (PCIe 4.0
// x16, 31.5 GB/s, 1 us: sim/platform.h), worker 1 over both NICs; the update runs at the
// socket's memory bandwidth.
TEST(AsyncSimulated, CpuParameterServerMovesBytesOverPcieAndNicsAndUpdatesAtDdrBandwidth) {
  Scenario s =
      TwoNodes("{name: ps, kind: parameter-server, options: {servers: 1, server_device: cpu}}");
  s.training.global_batch = 8;  // two workers
  const testing::SimulatedStrategy run = Simulated(s, "ps");
  const TaskGraph& g = run.plan.graph;
  const double nic_Bps = s.cluster.groups[0].nics.link.bandwidth_Bps;
  int recvs = 0, updates = 0;
  for (const Task& t : g.tasks()) {
    if (t.iteration != 2) continue;
    const TraceRecord& r = run.trace.records.at(t.id);
    if (t.kind == TaskKind::kRecv) {
      const int worker = t.rank == 0 && t.on_host ? t.peer : t.rank;
      // Worker 0: the host link of a server without a PCIe section (sim/platform.h,
      // kDefaultHostLinkBps, kDefaultHostLinkLatencyS); worker 1: both NICs.
      const double closed_form =
          worker == 0 ? 1e-6 + t.bytes / 31.5e9 : 2 * 2e-6 + 1e-6 + t.bytes / nic_Bps;
      EXPECT_NEAR(r.end_s - r.peers_joined_s, closed_form, 1e-6 * closed_form) << t.name.str();
      ++recvs;
    }
    if (t.kind == TaskKind::kCompute && t.on_host) {
      EXPECT_NEAR(r.end_s - r.start_s, t.bytes / 204.8e9, 1e-9) << t.name.str();
      ++updates;
    }
  }
  EXPECT_EQ(recvs, 4);    // two pushes, two pulls
  EXPECT_EQ(updates, 2);  // the sum and Adam
}

Scenario SlowNetwork() {
  return LoadScenarioText(R"(
name: dc
cluster:
  servers:
    - name: node
      count: 2
      gpu: A100-SXM4-80GB
      gpus_per_server: 2
      nvswitch: {bandwidth: "300GB/s", latency: "1us"}
      nics: {count: 1, bandwidth: "10Gb/s", latency: "2us"}
  network: {kind: single_switch, latency: "1us"}
model: {preset: gpt2-small}
training:
  global_batch: 16
  micro_batch: 4
  precision: fp16
  iterations: {warmup: 1, measured: 4}
strategies:
  - {name: dc, kind: dc-s3gd}
  - {name: ddp, kind: ddp}
)",
                          "dc.yaml");
}

TEST(AsyncSimulated, DcS3gdUpdateAllReduceOverlapsTheNextIterationsCompute) {
  const Scenario s = SlowNetwork();
  const testing::SimulatedStrategy dc = Simulated(s, "dc");
  const TaskGraph& g = dc.plan.graph;
  const int iterations = 5;
  ASSERT_EQ(g.collectives().size(), static_cast<size_t>(iterations));
  for (int t = 0; t + 1 < iterations; ++t) {
    const TraceRecord& ar = dc.trace.records.at(g.collectives()[t].members[0]);
    double forward_start = -1, backward_end = -1;
    for (const Task& x : g.tasks()) {
      if (x.rank != 0 || x.iteration != t + 1) continue;
      const TraceRecord& r = dc.trace.records.at(x.id);
      if (x.phase == Phase::kForward && forward_start < 0) forward_start = r.start_s;
      if (x.phase == Phase::kBackward) backward_end = r.end_s;
    }
    // The next forward pass starts while the all-reduce of t is still running.
    EXPECT_LT(ar.start_s, forward_start + 1e-3) << "iteration " << t;
    EXPECT_GT(ar.end_s, forward_start) << "iteration " << t;
    std::printf("it %d: all-reduce %.3f-%.3f ms, next fwd/bwd %.3f-%.3f ms\n", t, ar.start_s * 1e3,
                ar.end_s * 1e3, forward_start * 1e3, backward_end * 1e3);
  }
  // The memory report counts the extra model-size buffers: more than DDP's peak.
  const testing::SimulatedStrategy ddp = Simulated(s, "ddp");
  EXPECT_GT(dc.metrics.peak_memory_bytes.at(0), ddp.metrics.peak_memory_bytes.at(0));
}

}  // namespace
}  // namespace stratasim
