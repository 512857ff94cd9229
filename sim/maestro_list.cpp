#include "sim/maestro_list.h"

#include <simgrid/version.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#ifdef STRATASIM_SIMGRID_PRIVATE_HEADERS
// SimGrid 3.32's own ActorImpl (with its `activities_` list), from the release's source.
#include "src/kernel/actor/ActorImpl.hpp"
#endif

namespace stratasim::sim {
namespace {

long long taken = 0;
size_t peak = 0;  // longest list seen when taking an activity off

}  // namespace

bool MaestroListTrimBuilt() {
#ifdef STRATASIM_SIMGRID_PRIVATE_HEADERS
  return true;
#else
  return false;
#endif
}

bool MaestroListTrimEnabled() {
  static const bool enabled = [] {
    if (!MaestroListTrimBuilt()) return false;
    // The headers describe 3.32's layout; the library's soname pins it, check all the same.
    int major = 0, minor = 0, patch = 0;
    sg_version_get(&major, &minor, &patch);
    if (major != 3 || minor != 32) return false;
    const char* env = std::getenv("STRATASIM_SIMGRID_TRIM");
    return env == nullptr || std::strcmp(env, "0") != 0;
  }();
  return enabled;
}

bool TakeOffMaestroList([[maybe_unused]] const simgrid::s4u::Activity& a) {
#ifdef STRATASIM_SIMGRID_PRIVATE_HEADERS
  if (!MaestroListTrimEnabled()) return false;
  // Outside actors the current actor is the maestro: CommImpl::detach filed the Comm in its
  // list, ExecImpl's constructor the Exec.
  simgrid::kernel::actor::ActorImpl* maestro = simgrid::kernel::actor::ActorImpl::self();
  if (maestro == nullptr) return false;
  auto& list = maestro->activities_;
  if (list.empty() || list.back().get() != a.get_impl()) return false;
  peak = std::max(peak, list.size());
  list.pop_back();
  ++taken;
  return true;
#else
  return false;
#endif
}

long long TakenOffMaestroList() { return taken; }

size_t MaestroListPeak() { return peak; }

}  // namespace stratasim::sim
