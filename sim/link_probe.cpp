#include "sim/link_probe.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <simgrid/kernel/resource/Model.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <string>

#include "core/error.h"
#include "sim/link_labels.h"

namespace sg4 = simgrid::s4u;
using simgrid::kernel::resource::Action;
using simgrid::kernel::resource::Model;

namespace stratasim::sim {
namespace {

// The network model's generic half, whose started actions are the running Comms. SimGrid
// installs no header defining its NetworkModel class, only the Model and NetworkModelIntf it
// derives from, in that order (SimGrid 3.32, src/kernel/resource/NetworkModel.hpp:
// `class NetworkModel : public Model, public NetworkModelIntf`): Model is its primary base, at
// its start, and the interface follows it. SimGrid hands out both pointers; their distance
// confirms that layout before the first is read as a Model.
Model* NetworkModel() {
  sg4::NetZone* root = sg4::Engine::get_instance()->get_netzone_root();
  const char* model = reinterpret_cast<const char*>(root->get_impl()->get_network_model().get());
  const char* intf = reinterpret_cast<const char*>(root->get_network_model());
  if (model == nullptr || intf - model != static_cast<std::ptrdiff_t>(sizeof(Model))) {
    throw Error(
        "link usage: this SimGrid's network model is not laid out as SimGrid 3.32's "
        "(Model, then NetworkModelIntf)");
  }
  return reinterpret_cast<Model*>(const_cast<char*>(model));
}

}  // namespace

LinkProbe::LinkProbe() : model_(NetworkModel()), lazy_(model_->is_update_lazy()) {}

// Hosts are numbered in a SimGrid extension slot of their own, which costs an index where a
// map keyed by Host* cost a hash lookup and its cache misses for every Comm (measured: 1.8%
// of a 1,536-GPU run). The slot holds the number + 1, not a pointer: no deleter.
std::uint32_t LinkProbe::HostIndex(sg4::Host* h) {
  static const size_t slot = sg4::Host::extension_create(std::function<void(void*)>());
  const auto stored = reinterpret_cast<std::uintptr_t>(h->extension(slot));
  if (stored > 0) return static_cast<std::uint32_t>(stored - 1);
  const std::uint32_t index = hosts_++;
  h->extension_set(slot, reinterpret_cast<void*>(static_cast<std::uintptr_t>(index) + 1), false);
  routes_from_.emplace_back();
  return index;
}

int LinkProbe::RouteOf(sg4::Host* src, sg4::Host* dst) {
  // Per source, its destinations so far, sorted: a host talks to few others (ring and
  // pipeline neighbours), or to all of a group (all-to-all), found in log time either way.
  const std::uint32_t from = HostIndex(src), to = HostIndex(dst);
  std::vector<std::pair<std::uint32_t, int>>& known = routes_from_[from];
  auto it = std::lower_bound(known.begin(), known.end(), std::make_pair(to, -1));
  if (it != known.end() && it->first == to) return it->second;
  std::vector<sg4::Link*> links;
  double latency = 0;
  src->route_to(dst, links, &latency);
  std::vector<int> route;
  route.reserve(links.size());
  for (const sg4::Link* l : links) {
    auto known = link_index_.find(l);
    if (known == link_index_.end()) {
      known = link_index_.emplace(l, recorder_.AddLink(l->get_name(), l->get_bandwidth())).first;
    }
    route.push_back(known->second);
  }
  routes_.push_back(std::move(route));
  open_.bytes.push_back(0);
  late_.bytes.push_back(0);
  const int index = static_cast<int>(routes_.size()) - 1;
  known.insert(it, {to, index});
  return index;
}

int LinkProbe::Started(const sg4::Comm& c, sg4::Host* src, sg4::Host* dst, double bytes) {
  int slot;
  if (free_.empty()) {
    slot = static_cast<int>(flows_.size());
    flows_.emplace_back();
  } else {
    slot = free_.back();
    free_.pop_back();
  }
  flows_[static_cast<size_t>(slot)] = Flow{c.get_impl(), RouteOf(src, dst), bytes, 0.0};
  by_impl_.emplace(c.get_impl(), slot);
  return slot;
}

void LinkProbe::AddToRoute(int route, double bytes, double now) {
  for (int link : routes_[static_cast<size_t>(route)]) recorder_.Add(link, bytes, now);
}

// Bytes moved on `route` since the last close are kept per route until the next one (most
// Comms end between two closes, and many on the same routes), then spread on its links:
// `late` for those that ended at the instant of the last close but were reported after it,
// which the recorder then puts before that bound, where they moved.
void LinkProbe::Pend(int route, double bytes, bool late) {
  if (!(bytes > 0)) return;
  Pending& p = late ? late_ : open_;
  double& b = p.bytes[static_cast<size_t>(route)];
  if (b == 0) p.routes.push_back(route);
  b += bytes;
}

void LinkProbe::Flush(Pending& p, double now) {
  for (int route : p.routes) {
    AddToRoute(route, p.bytes[static_cast<size_t>(route)], now);
    p.bytes[static_cast<size_t>(route)] = 0;
  }
  p.routes.clear();
}

void LinkProbe::Done(int slot, double now) {
  Flow& f = flows_[static_cast<size_t>(slot)];
  Pend(f.route, f.bytes - f.counted, !(now > recorder_.edges_s().back()));
  by_impl_.erase(f.impl);
  f = Flow{};
  free_.push_back(slot);
}

// Every running Comm's bytes since the last reading, then the interval closes. A Comm's
// network action holds its remaining bytes as of its last update and its rate since then
// (the rate max-min gave it when the sharing was last solved, which stays until the next
// solve, after this event): remaining now = remaining then − rate × elapsed. A Comm that
// ended at this instant and whose completion is still to come is no longer among the
// started actions; its bytes come with its completion (LinkRecorder::Add puts them before
// this bound).
void LinkProbe::Snapshot(double now) {
  for (const Action& a : *model_->get_started_action_set()) {
    auto it = by_impl_.find(a.get_activity());
    if (it == by_impl_.end()) continue;
    Flow& f = flows_[static_cast<size_t>(it->second)];
    double remaining = a.get_remains_no_update();
    if (lazy_) remaining -= a.get_last_value() * (now - a.get_last_update());
    const double moved = std::clamp(f.bytes - remaining, 0.0, f.bytes);
    if (moved > f.counted) {
      Pend(f.route, moved - f.counted, false);
      f.counted = moved;
    }
  }
  Flush(late_, recorder_.edges_s().back());
  Flush(open_, now);
  recorder_.Close(now);
  ++snapshots_;
}

LinkUsage LinkProbe::Finish(double end_s) {
  Flush(late_, recorder_.edges_s().back());
  Flush(open_, end_s);
  return recorder_.Finish(end_s, LinkLabel);
}

}  // namespace stratasim::sim
