// Shared scaffolding of the collective lowerings: a builder that numbers flows and records, per
// flow, how many protocol step latencies it stands for (applied later by ApplyProtocol), plus
// the chunking rule of pipelined algorithms.
#ifndef STRATASIM_SIM_COLLECTIVES_FLOW_BUILDER_H_
#define STRATASIM_SIM_COLLECTIVES_FLOW_BUILDER_H_

#include <cstddef>
#include <vector>

#include "core/scenario.h"
#include "sim/collectives/flow_program.h"

namespace stratasim::sim {

// Pipelined algorithms (chains, trees) cut a message into chunks of this size: NCCL's default
// buffer (NCCL_BUFFSIZE, 4 MiB) divided into its NCCL_STEPS (8) slots.
inline constexpr double kPipelineChunkBytes = 512.0 * 1024;
// Chunks per pipeline are bounded, to keep the events of very large messages in check: at most
// kMaxPipelineChunks, or kChunksPerPipelineHop per hop of the pipeline's depth when that is
// more. A pipeline h hops deep in q chunks pays about h chunk-times of fill before its q chunks
// stream by; chunks coarser than NCCL's lengthen that fill, and the second bound keeps it near
// 1/kChunksPerPipelineHop of the streaming time or less. (With 64 chunks of 4 MiB, the fill of
// a 1 GiB broadcast along a 127-hop chain across 16 DGX-1 took half of its step time.)
inline constexpr int kMaxPipelineChunks = 64;
inline constexpr int kChunksPerPipelineHop = 4;

// Chunks of a pipelined transfer of `bytes` along a pipeline `hops` deep (a chain's hops, a
// tree's depth): ceil(bytes / kPipelineChunkBytes) within
// [1, max(kMaxPipelineChunks, kChunksPerPipelineHop x hops)].
int PipelineChunks(double bytes, int hops);

// Flows of one member index each: e.g. the flows a member must wait for before a phase.
using MemberFlows = std::vector<std::vector<int>>;

// A flow program under construction. `latency_steps` of a flow is the number of protocol
// per-step latencies it pays (ApplyProtocol turns it into Flow::delay_s): 1 for a step, the
// number of steps for a `stream` flow standing for several, 0 for a later chunk of a pipeline
// (its step latency overlaps the transfer of the chunk ahead of it, as NCCL_STEPS slots do).
class FlowBuilder {
 public:
  // Appends a flow and returns its index.
  int Add(int src, int dst, double bytes, std::vector<int> deps, int latency_steps = 1,
          int extra_route_latencies = 0);
  int size() const { return static_cast<int>(program_.flows.size()); }
  // Room for `more` flows beyond those added: a 1,024-GPU step ring is 16.8 M of them, and
  // growing the vector by doubling copied each several times.
  void Reserve(size_t more) {
    program_.flows.reserve(program_.flows.size() + more);
    latency_steps_.reserve(latency_steps_.size() + more);
  }
  // A fresh Flow::latency_group id.
  int NewLatencyGroup() { return next_latency_group_++; }
  void SetLatencyGroup(int id, int group) { program_.flows[id].latency_group = group; }
  // Flow `id` follows flow `ahead` on their connection (Flow::follows); `ahead` joins its deps.
  void SetFollows(int id, int ahead);
  const Flow& flow(int id) const { return program_.flows[id]; }

  FlowProgram& program() { return program_; }
  const std::vector<int>& latency_steps() const { return latency_steps_; }

 private:
  FlowProgram program_;
  std::vector<int> latency_steps_;
  int next_latency_group_ = 0;
};

// Concatenation of the flow lists of `members` (e.g. the entry dependencies of both ends of a
// flow).
std::vector<int> Union(const MemberFlows& flows, std::initializer_list<int> members);

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_COLLECTIVES_FLOW_BUILDER_H_
