// The CUDA priority of each stream of a task graph (TaskGraph::SetStreamPriority), for the
// backends that create real CUDA streams. CUDA-free, so that the mapping is tested on any
// machine (stream_priorities_test.cpp).
#ifndef STRATASIM_VALIDATE_STREAM_PRIORITIES_H_
#define STRATASIM_VALIDATE_STREAM_PRIORITIES_H_

#include <vector>

namespace stratasim::validate {

// CUDA numbers priorities the other way round (a lower number is more urgent) within the
// device's range [greatest, least] from cudaDeviceGetStreamPriorityRange (CUDA Runtime API;
// least is 0, the default, and greatest a few steps below it, e.g. -5 on recent GPUs). The
// graph's distinct priorities keep their order: the lowest gets `least`, each next one a step
// more urgent, and those beyond the range share `greatest`. All priorities equal: every
// stream gets `least`, the default, as without priorities.
std::vector<int> CudaStreamPriorities(const std::vector<int>& graph_priorities, int least,
                                      int greatest);

}  // namespace stratasim::validate

#endif  // STRATASIM_VALIDATE_STREAM_PRIORITIES_H_
