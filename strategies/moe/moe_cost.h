// The closed-form performance models the MoE planners decide with (not what the report
// measures: the plan they pick is simulated like any other).
//
// FasterMoE (He et al., PPoPP'22, §4.2): Lat_comp = max_w B_w * t_token,
// Lat_comm = max over links of traffic / bandwidth; a synchronous step costs
// 3 Lat_comp + 4 Lat_comm (forward, backward twice the forward; two all-to-alls each way).
// Pro-Prophet (Wang et al., arXiv 2411.10003, §4.2, Eq. 1-6):
//   T_A2A = max_i R_i size(token) / B,  T_FEC = max_i H_i / t,  T_BEC = 2 T_FEC,
//   T_Trans = sum over replicated experts of (D - n) / D * size(params) / B, T_Agg likewise,
//   with its scheduler T' = 4 T_A2A + 3 T_FEC + max(0, T_Trans - T_FEC - T_FNEC)
//                             + max(0, T_Agg - T_BEC - T_BNEC).
#ifndef STRATASIM_STRATEGIES_MOE_MOE_COST_H_
#define STRATASIM_STRATEGIES_MOE_MOE_COST_H_

#include "core/scenario.h"
#include "strategies/moe/moe_setup.h"
#include "strategies/moe/placement.h"

namespace stratasim {

struct MoeCostModel {
  double token_s = 0;          // forward expert FFN seconds per token on one GPU (4 h f FLOPs)
  double net_Bps = 0;          // per-GPU bandwidth of the all-to-all's bottleneck
  double bytes_per_token = 0;  // hidden values of the training dtype
  double expert_bytes = 0;     // one expert's parameters (= its gradients) in bytes
  double dense_fwd_s = 0;      // non-expert forward compute of one block (T_FNEC)
  double dense_bwd_s = 0;      // and its backward (T_BNEC)
};

// From the scenario's first GPU kind (peak of the training dtype times the scenario's compute
// efficiency) and its network: with several servers the NIC bandwidth shared by the GPUs
// behind one NIC; on one server the GPU's NVSwitch, NVLink or PCIe link.
MoeCostModel MakeMoeCostModel(const Scenario& s, const MoeSetup& st);

// Max over ranks of the tokens it sends to or receives from other ranks, in seconds.
double AllToAllSeconds(const LayerDecision& d, const MoeCostModel& m);
// Max over ranks of the tokens it computes, in forward seconds.
double ExpertSeconds(const LayerDecision& d, const MoeCostModel& m);
// Broadcast of the replicated experts' parameters to their holders over `ranks` GPUs
// (Pro-Prophet's T_Trans(s, n) = s (D - n) size(params) / (D B), summed over the replicas), in
// seconds; the gradients' aggregation moves the same bytes.
double ReplicaTransferSeconds(const LayerDecision& d, int ranks, const MoeCostModel& m);

// Per expert, the tokens routed to it from every rank (`predicted[rank][expert]`); `total`
// receives their sum.
std::vector<double> ExpertLoads(const TokenMatrix& predicted, double* total);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_MOE_MOE_COST_H_
