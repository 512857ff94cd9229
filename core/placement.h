// Placement of the jobs of a shared-cluster scenario (docs/multi-job.md): which GPU of the
// cluster each rank of each job runs on. A registry of policies, each a pure function of the
// cluster's shape and the jobs' sizes and parallel layouts, so that tests check each mapping
// by hand on a small cluster.
#ifndef STRATASIM_CORE_PLACEMENT_H_
#define STRATASIM_CORE_PLACEMENT_H_

#include <string>
#include <vector>

namespace stratasim {

// The cluster as placement sees it: servers of equal size, numbered as the platform does, and
// the leaf switch of each server (one leaf for a single switch).
struct ClusterShape {
  int servers = 1;
  int gpus_per_server = 1;
  int servers_per_leaf = 1;  // a single switch: every server under one leaf

  int gpus() const { return servers * gpus_per_server; }
  int leaves() const { return (servers + servers_per_leaf - 1) / servers_per_leaf; }
  int ServerOf(int gpu) const { return gpu / gpus_per_server; }
  int LeafOf(int server) const { return server / servers_per_leaf; }
};

// One job as placement sees it. Its ranks are numbered as the planner numbers them by default
// (strategies/parallel_layout.h, order "tpd"): each tensor group is `tensor` consecutive ranks,
// each pipeline (one data-parallel replica) `tensor` x `pipeline` consecutive ranks.
struct PlacementJob {
  std::string name;
  int gpus = 1;
  int tensor = 1;
  int pipeline = 1;
  // Expert parallel (a mixture-of-experts model): an all-to-all per MoE layer, which ddlwmp
  // ranks between tensor and pipeline parallelism for locality.
  bool expert = false;
};

// For each job, in the order given, the cluster GPU of each of its ranks. Jobs never share a
// GPU. Throws stratasim::Error when the jobs need more GPUs than the cluster has, or the
// policy is unknown.
using Placement = std::vector<std::vector<int>>;
Placement Place(const std::string& policy, const ClusterShape& cluster,
                const std::vector<PlacementJob>& jobs);

// The policies Place knows, in the order docs/multi-job.md describes them:
//   packed          the first free GPUs in rank order, job after job (fills servers);
//   spread          round-robin over the servers, alternating leaves;
//   topology-aware  each tensor group inside one server, each pipeline under one leaf,
//                   a job's replicas under as few leaves as fit (first fit, jobs in order);
//   ddlwmp          as topology-aware, with the jobs ordered by how much their traffic needs
//                   locality and best-fit choice of leaves and servers (docs/multi-job.md
//                   lists what of the DDLwMP paper this is and assumes).
const std::vector<std::string>& PlacementPolicies();

}  // namespace stratasim

#endif  // STRATASIM_CORE_PLACEMENT_H_
