// An in-process ProcessGroup (process_group.h) over threads: LocalProcessGroups(n) returns the
// n "processes" of one group, each to be used by one thread (a test's stand-in for an MPI
// process, plus that process's stream threads). They share one mailbox: every message is
// copied into a per-(sender, receiver, channel) FIFO queue on Send and copied out on Recv, so
// that the backends' multi-process paths move real bytes between buffers that no other rank
// touches, as MPI would.
//
// Send is eager (it never waits for the receiver, as MPI's eager protocol below its threshold);
// Recv waits for a message until timeout_s(), polling Wait::cancelled every kPollSeconds, and
// then throws ProcessGroupError naming the silent peer. The control plane runs over the same
// mailbox, on internal queues numbered by the call's sequence number, so that a message that
// arrives after its receiver gave up (GatherToRoot) is never taken for a later call's.
#ifndef STRATASIM_VALIDATE_LOCAL_PROCESS_GROUP_H_
#define STRATASIM_VALIDATE_LOCAL_PROCESS_GROUP_H_

#include <memory>
#include <string>
#include <vector>

#include "validate/process_group.h"

namespace stratasim::validate {

// `n` processes whose calls wait `timeout_s` for a peer. hosts[p] is process p's host() (all
// "localhost" when empty; else it needs n names), so that tests can model several servers.
std::vector<std::unique_ptr<ProcessGroup>> LocalProcessGroups(
    int n, double timeout_s, const std::vector<std::string>& hosts = {});

}  // namespace stratasim::validate

#endif  // STRATASIM_VALIDATE_LOCAL_PROCESS_GROUP_H_
