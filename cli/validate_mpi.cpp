#include "cli/validate_mpi.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "cli/mpi_world.h"
#include "core/error.h"
#include "validate/graph_hash.h"
#include "validate/trace_gather.h"

namespace stratasim {
namespace {

using validate::ProcessGroup;

// One line per fact the processes must agree on, after the first, "host NAME", which they need
// not: "ranks N", then "strategy NAME HASH" ("unplanned" for a strategy that cannot be planned).
std::string Fingerprint(const std::string& host, int ranks,
                        const std::vector<PlannedGraph>& plans) {
  std::string text = "host " + host + "\nranks " + std::to_string(ranks) + "\n";
  for (const PlannedGraph& p : plans) {
    text += "strategy " + p.name + " " +
            (p.graph ? validate::GraphHashHex(validate::GraphHash(*p.graph)) : "unplanned") + "\n";
  }
  return text;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// How `theirs` (rank `rank`'s lines) first differs from rank 0's `ours`, in words.
std::string FirstDifference(int rank, const std::vector<std::string>& ours,
                            const std::vector<std::string>& theirs) {
  const std::string who = "rank " + std::to_string(rank);
  for (std::size_t i = 1; i < std::max(ours.size(), theirs.size()); ++i) {
    const std::string a = i < ours.size() ? ours[i] : "";
    const std::string b = i < theirs.size() ? theirs[i] : "";
    if (a == b) continue;
    if (a.rfind("ranks ", 0) == 0 && b.rfind("ranks ", 0) == 0) {
      return who + "'s scenario has " + b.substr(6) + " ranks, rank 0's " + a.substr(6);
    }
    if (a.empty()) return who + " planned one more strategy (" + b.substr(9) + ")";
    if (b.empty()) return who + " planned one strategy fewer (rank 0 has " + a.substr(9) + ")";
    const std::size_t sa = a.rfind(' '), sb = b.rfind(' ');
    if (a.compare(0, sa, b, 0, sb) == 0) {
      return who + "'s graph of " + a.substr(9, sa - 9) + " hashes to " + b.substr(sb + 1) +
             ", rank 0's to " + a.substr(sa + 1);
    }
    return who + " planned '" + b + "' where rank 0 planned '" + a + "'";
  }
  return who + " differs";
}

std::string Launcher() { return mpi::LaunchedByMpirun() ? "mpirun" : "srun"; }

std::string Plural(int n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "es");
}

}  // namespace

Agreement CheckAgreement(ProcessGroup& group, const std::string& scenario, int ranks,
                         const std::vector<PlannedGraph>& plans) {
  const std::vector<std::string> all = group.AllGather(Fingerprint(group.host(), ranks, plans));
  Agreement a;
  const std::vector<std::string> ours = Lines(all.at(0));
  std::vector<int> differ;
  std::string first;
  for (int p = 0; p < static_cast<int>(all.size()); ++p) {
    const std::vector<std::string> theirs = Lines(all[static_cast<size_t>(p)]);
    a.hosts.push_back(theirs.empty() ? "" : theirs[0].substr(5));
    if (p == 0 || std::equal(ours.begin() + 1, ours.end(), theirs.begin() + 1, theirs.end())) {
      continue;
    }
    differ.push_back(p);
    if (first.empty()) first = FirstDifference(p, ours, theirs);
  }
  if (!differ.empty()) {
    std::string list;
    for (int p : differ) list += (list.empty() ? "" : ", ") + std::to_string(p);
    a.error = scenario + ": the processes did not plan the same graphs: rank" +
              (differ.size() == 1 ? " " : "s ") + list +
              (differ.size() == 1 ? " differs" : " differ") + " from rank 0 (" + first +
              "); every process must run the same stratasim, scenario and options: nothing was "
              "run";
    return a;
  }
  const int processes = group.size();
  if (processes < ranks) {
    a.error = scenario + ": " + Launcher() + " started " + Plural(processes, "process") +
              " for a plan of " + std::to_string(ranks) +
              " ranks (the scenario's GPUs): start one process per rank (mpirun -np " +
              std::to_string(ranks) + ", srun -n " + std::to_string(ranks) +
              "), or pass --fit to shrink the plan to " + std::to_string(processes) +
              " ranks: nothing was run";
  } else if (processes > ranks) {
    a.error = scenario + ": " + Launcher() + " started " + Plural(processes, "process") +
              " for a plan of " + std::to_string(ranks) + " ranks: processes " +
              std::to_string(ranks) + ".." + std::to_string(processes - 1) +
              " would have nothing to run; start one process per rank (mpirun -np " +
              std::to_string(ranks) + "): nothing was run";
  }
  return a;
}

GatheredRun RunAndGather(validate::Backend& backend, const TaskGraph& g, validate::RunOptions run,
                         mpi::MpiProcessGroup& group) {
  group.FreshDataPlane();
  run.processes = &group;
  validate::ProcessOutcome o;
  o.rank = group.rank();
  try {
    o.trace = backend.Run(g, run);
  } catch (const validate::BackendError& e) {
    o.ok = false;
    o.error_kind = std::string(validate::ToString(e.kind()));
    o.error = e.what();
    o.trace = e.partial();
  } catch (const validate::ProcessGroupError& e) {
    // A backend turns these into BackendError kCommunication; one that escapes is the same.
    o.ok = false;
    o.error_kind = std::string(validate::ToString(validate::BackendError::Kind::kCommunication));
    o.error = e.what();
  }
  const std::vector<std::optional<std::string>> gathered =
      group.GatherToRoot(validate::EncodeOutcome(o));
  GatheredRun r;
  if (group.rank() != 0) return r;
  r.lost_process = std::any_of(gathered.begin(), gathered.end(),
                               [](const std::optional<std::string>& x) { return !x; });
  try {
    validate::MergedRun m = validate::MergeOutcomes(g, gathered, group.timeout_s());
    r.trace = std::move(m.trace);
    r.measured = m.complete;
    for (const std::string& e : m.errors) r.error += (r.error.empty() ? "" : "; ") + e;
  } catch (const Error& e) {
    r.error = e.what();
  }
  return r;
}

ClusterSpec ClusterOfProcesses(ClusterSpec server, const std::vector<std::string>& hosts,
                               const ClusterSpec& scenario, std::string* note) {
  if (server.groups.size() != 1 || server.groups[0].count != 1) {
    throw Error("the backend describes more than one server; validate runs on one per host");
  }
  const int n = static_cast<int>(hosts.size());
  // Servers in order of their first rank, and whether each holds one run of consecutive ranks.
  std::vector<std::string> servers;
  bool consecutive = true;
  for (int r = 0; r < n; ++r) {
    if (r > 0 && hosts[r] == hosts[r - 1]) continue;
    if (std::find(servers.begin(), servers.end(), hosts[r]) != servers.end()) consecutive = false;
    servers.push_back(hosts[r]);
  }
  const int count = static_cast<int>(servers.size());
  const int per_server = count > 0 ? n / count : 0;
  bool even = consecutive && count > 0 && per_server * count == n;
  for (int s = 0; even && s < count; ++s) even = hosts[s * per_server] == servers[s];
  ServerGroup& g = server.groups[0];
  if (count <= 1 || !even) {
    g.gpus_per_server = n;
    if (count > 1 && note) {
      *note = "simulated as one server of " + std::to_string(n) +
              " GPUs: the processes are not spread evenly over the servers in consecutive "
              "ranks (" +
              ProcessesLine(hosts) + ")";
    }
    return server;
  }
  g.count = count;
  g.gpus_per_server = per_server;
  if (!scenario.groups.empty()) {
    g.nics = scenario.groups[0].nics;
    // NICs are shared by contiguous blocks of GPUs: a count that does not divide the
    // processes per server becomes one NIC of the same link.
    if (g.nics.count < 1 || per_server % g.nics.count != 0) g.nics.count = 1;
    g.measured_inter_step_s = scenario.groups[0].measured_inter_step_s;
  }
  server.network = scenario.network;
  if (note) {
    *note = "simulated as " + std::to_string(count) + " servers of " + std::to_string(per_server) +
            " GPUs joined by the scenario's NICs and network";
  }
  return server;
}

std::string ProcessesLine(const std::vector<std::string>& hosts) {
  std::vector<std::string> servers;
  for (const std::string& h : hosts) {
    if (std::find(servers.begin(), servers.end(), h) == servers.end()) servers.push_back(h);
  }
  std::string names;
  for (const std::string& s : servers) names += (names.empty() ? "" : ", ") + s;
  return Plural(static_cast<int>(hosts.size()), "MPI process") + " on " +
         std::to_string(servers.size()) + (servers.size() == 1 ? " server" : " servers") + " (" +
         names + ")";
}

}  // namespace stratasim
