// SimGrid 3.32's maestro activity list, and keeping the simulator's activities off it.
//
// In SimGrid 3.32 every Comm between two hosts is detached, which files it in the maestro's
// `std::list` of activities (src/kernel/activity/CommImpl.cpp:112-117, CommImpl::detach), and
// an Exec created outside an actor is filed there too (ExecImpl.cpp:22-29). Each completion
// then erases its activity with std::list::remove, which walks the whole list
// (CommImpl.cpp:545-546, ExecImpl.cpp:169-171): with K activities in flight a completion costs
// O(K). The executor starts every activity from completion callbacks, with 10k-60k in flight
// for large collectives at step fidelity, so that walk was 46-59% of the time (perf) and a
// 1,024-GPU ring all-reduce took 220 CPU s. SimGrid 3.35 replaced the list with a set.
//
// The list only lets the maestro cancel its activities when it is killed or its host turned
// off, which the simulator never does; the executor owns each activity through its own
// ActivityPtr until completion. So, right after creating an activity, the executor takes it
// off the list (TakeOffMaestroList); the completion's remove then walks an empty list. Same
// simulation, same results (sim/maestro_list_test.cpp, tests/cli_test.cpp). Reaching the list
// needs three of SimGrid's private headers, which Debian does not install: the build fetches
// them from the same release's source in Debian's archive (top CMakeLists.txt,
// STRATASIM_SIMGRID_LIST_TRIM).
#ifndef STRATASIM_SIM_MAESTRO_LIST_H_
#define STRATASIM_SIM_MAESTRO_LIST_H_

#include <cstddef>
#include <simgrid/s4u/Activity.hpp>

namespace stratasim::sim {

// Whether this build can take activities off the list (built against SimGrid 3.32's private
// headers).
bool MaestroListTrimBuilt();

// Whether it does: built, running on SimGrid 3.32, and not disabled by the environment
// variable STRATASIM_SIMGRID_TRIM=0 (for measuring what it saves).
bool MaestroListTrimEnabled();

// Takes `a`, just created outside any actor (hence the last activity the maestro's list
// received), off that list. Returns whether it did; false when disabled, or when `a` is not the
// list's last entry (then it stays and costs its walk, nothing else).
bool TakeOffMaestroList(const simgrid::s4u::Activity& a);

// Activities taken off the list so far in this process, and the longest the list was when one
// was (1 when every activity is taken off as it is created: the list held only it).
long long TakenOffMaestroList();
size_t MaestroListPeak();

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_MAESTRO_LIST_H_
