// Cost of one Comm completion in SimGrid 3.32 against the number of Comms in flight.
//
//   build/bench/inflight_bench [in_flight=1000,4000,16000] [comms_per_point=200000]
//   STRATASIM_SIMGRID_TRIM=0 build/bench/inflight_bench     # without taking Comms off the list
//
// K host pairs, each joined by its own link (so every max-min component is one flow), each
// sending a chain of 1 MB Comms: the next Comm of a pair starts from the completion callback
// of the previous one, as the executor starts collective flows. Prints, per K, the wall time
// per completed Comm. In SimGrid 3.32 a Comm started outside an actor is detached and sits in
// the maestro's std::list of activities, which CommImpl::finish scans in full
// (std::list::remove) on every completion, so the cost per Comm grows with K, and with how
// scattered the list's nodes are in memory (compare builds with STRATASIM_ALLOCATOR=jemalloc,
// the default, and =system) -- unless each Comm is taken off the list as it is created
// (sim/maestro_list.h), as here and in the executor.
#include <xbt/log.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <simgrid/s4u.hpp>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/maestro_list.h"

namespace sg4 = simgrid::s4u;

namespace {

struct Chains {
  std::vector<sg4::Host*> src, dst;
  std::vector<int> left;  // Comms still to send, per pair
  std::unordered_map<const sg4::Activity*, std::pair<sg4::CommPtr, int>> running;
  std::vector<sg4::CommPtr> finished;  // freed on the next callback, never inside their own

  void Launch(int k) {
    sg4::CommPtr c = sg4::Comm::sendto_init(src[k], dst[k]);
    stratasim::sim::TakeOffMaestroList(*c);  // as the executor does; STRATASIM_SIMGRID_TRIM=0: not
    c->set_payload_size(1e6);
    c->start();
    running[c.get()] = {c, k};
  }
};

Chains* g_chains = nullptr;

// One simulation (SimGrid allows one Engine per process): K pairs, `per_pair` Comms each.
double SecondsPerComm(int k, int per_pair) {
  int argc = 1;
  char arg0[] = "inflight_bench";
  char* argv[] = {arg0, nullptr};
  xbt_log_control_set("root.thres:critical");
  sg4::Engine engine(&argc, argv);
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::NetZone* zone = sg4::create_full_zone("pairs");
  Chains chains;
  for (int i = 0; i < k; ++i) {
    const std::string id = std::to_string(i);
    sg4::Host* a = zone->create_host("a" + id, 1e9);
    sg4::Host* b = zone->create_host("b" + id, 1e9);
    sg4::Link* l = zone->create_link("l" + id, 1e10)->set_latency(1e-6)->seal();
    zone->add_route(a->get_netpoint(), b->get_netpoint(), nullptr, nullptr, {sg4::LinkInRoute(l)},
                    false);
    chains.src.push_back(a);
    chains.dst.push_back(b);
  }
  zone->seal();
  chains.left.assign(k, per_pair);
  g_chains = &chains;
  sg4::Activity::on_completion_cb([](const sg4::Activity& a) {
    Chains& c = *g_chains;
    c.finished.clear();
    auto it = c.running.find(&a);
    if (it == c.running.end()) return;
    const int pair = it->second.second;
    c.finished.push_back(std::move(it->second.first));
    c.running.erase(it);
    if (--c.left[pair] > 0) c.Launch(pair);
  });
  for (int i = 0; i < k; ++i) chains.Launch(i);
  const auto start = std::chrono::steady_clock::now();
  engine.run();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return s / (static_cast<double>(k) * per_pair);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> points{1000, 4000, 16000};
  if (argc > 1) {
    points.clear();
    std::stringstream list(argv[1]);
    for (std::string item; std::getline(list, item, ',');)
      points.push_back(std::atoi(item.c_str()));
  }
  const int comms = argc > 2 ? std::atoi(argv[2]) : 200000;
  if (argc > 3) {  // child: one simulation
    std::printf("%.3f\n",
                1e6 * SecondsPerComm(std::atoi(argv[3]), std::max(1, comms / std::atoi(argv[3]))));
    return 0;
  }
  std::printf("%10s %14s\n", "in flight", "us per Comm");
  for (int k : points) {
    const std::string cmd =
        std::string(argv[0]) + " x " + std::to_string(comms) + " " + std::to_string(k);
    FILE* child = popen(cmd.c_str(), "r");
    double us = -1;
    if (child == nullptr || std::fscanf(child, "%lf", &us) != 1) us = -1;
    if (child) pclose(child);
    std::printf("%10d %14.2f\n", k, us);
  }
  return 0;
}
