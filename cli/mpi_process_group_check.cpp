// The MPI process group (cli/mpi_process_group.h) between real processes: run under
// `mpirun -np 3` by tests/validate_mpi_test.sh. Prints "PASS" on rank 0 when every check held,
// else the failed check on the rank that saw it, and exits 1.
//
//   mpi_process_group_check           the data and control planes, pieces, threads, cancel
//   mpi_process_group_check timeout   rank 0 waits for a message rank 1 never sends: the error
//                                     names both ranks and the deadline (exits without
//                                     MPI_Finalize, as a failed run does)
#include <chrono>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "cli/mpi_process_group.h"
#include "core/error.h"

namespace {

using stratasim::mpi::MpiProcessGroup;
using stratasim::validate::Cancelled;
using stratasim::validate::ProcessGroupError;
using stratasim::validate::Wait;

int failures = 0;

void Check(bool ok, int rank, const std::string& what) {
  if (!ok) {
    std::cerr << "FAIL on rank " << rank << ": " << what << "\n";
    ++failures;
  }
}

std::vector<char> Pattern(std::size_t bytes, int seed) {
  std::vector<char> v(bytes);
  for (std::size_t i = 0; i < bytes; ++i) v[i] = static_cast<char>((i * 31 + seed) & 0xff);
  return v;
}

int Checks(MpiProcessGroup& g) {
  const int r = g.rank(), n = g.size();
  const Wait wait{"check", nullptr};
  // A message of 10007 bytes in pieces of at most 1000 (the group was made so), then an empty
  // one: both arrive whole and in order on one channel.
  if (r == 0) {
    const auto big = Pattern(10007, 1);
    g.Send(1, 5, big.data(), big.size(), wait);
    g.Send(1, 5, nullptr, 0, wait);
  } else if (r == 1) {
    std::vector<char> got(10007);
    g.Recv(0, 5, got.data(), got.size(), wait);
    Check(got == Pattern(10007, 1), r, "a message in 11 pieces arrives whole");
    g.Recv(0, 5, nullptr, 0, wait);
  }
  // A ring step: each sends to the next and receives from the previous, sizes differing.
  {
    const int next = (r + 1) % n, prev = (r + n - 1) % n;
    const auto mine = Pattern(3000 + 100 * static_cast<std::size_t>(r), r);
    std::vector<char> got(3000 + 100 * static_cast<std::size_t>(prev));
    g.SendRecv(next, mine.data(), mine.size(), prev, got.data(), got.size(), 9, wait);
    Check(got == Pattern(got.size(), prev), r, "a ring SendRecv delivers the previous rank's data");
  }
  // Four threads at once between ranks 0 and 1, each on its own channel (MPI_THREAD_MULTIPLE).
  if (r < 2) {
    std::vector<std::thread> threads;
    std::vector<int> ok(4, 0);
    for (int c = 0; c < 4; ++c) {
      threads.emplace_back([&, c] {
        for (int round = 0; round < 20; ++round) {
          const auto data = Pattern(2500, c * 100 + round);
          std::vector<char> got(2500);
          if (r == 0) {
            g.Send(1, 100 + c, data.data(), data.size(), wait);
            g.Recv(1, 100 + c, got.data(), got.size(), wait);
          } else {
            g.Recv(0, 100 + c, got.data(), got.size(), wait);
            g.Send(0, 100 + c, got.data(), got.size(), wait);
          }
          if (got != data) return;
        }
        ok[static_cast<std::size_t>(c)] = 1;
      });
    }
    for (auto& t : threads) t.join();
    for (int c = 0; c < 4; ++c)
      Check(ok[static_cast<std::size_t>(c)] == 1, r, "thread " + std::to_string(c) + "'s echoes");
  }
  // A receive whose run is ending gives up when told (Wait::cancelled), long before the deadline.
  if (r == n - 1) {
    const auto start = std::chrono::steady_clock::now();
    Wait cancel{"cancelled check", [start] {
                  return std::chrono::steady_clock::now() - start > std::chrono::milliseconds(50);
                }};
    char byte = 0;
    bool cancelled = false;
    try {
      g.Recv(0, 77, &byte, 1, cancel);
    } catch (const Cancelled&) {
      cancelled = true;
    }
    Check(cancelled, r, "a cancelled receive throws Cancelled");
    Check(std::chrono::steady_clock::now() - start < std::chrono::seconds(5), r,
          "a cancelled receive returns at once");
  }
  // The control plane.
  const auto all = g.AllGather("from " + std::to_string(r));
  Check(static_cast<int>(all.size()) == n, r, "AllGather has every rank");
  for (int p = 0; p < n && p < static_cast<int>(all.size()); ++p) {
    Check(all[static_cast<std::size_t>(p)] == "from " + std::to_string(p), r, "AllGather by rank");
  }
  std::string text = r == n - 1 ? std::string(4321, 'x') : "";
  g.Broadcast(&text, n - 1);
  Check(text == std::string(4321, 'x'), r, "Broadcast from the last rank, in pieces");
  const auto gathered =
      g.GatherToRoot(std::string(static_cast<std::size_t>(r) * 1500, 'a' + static_cast<char>(r)));
  if (r == 0) {
    Check(static_cast<int>(gathered.size()) == n, r, "GatherToRoot has every rank");
    for (int p = 0; p < n && p < static_cast<int>(gathered.size()); ++p) {
      Check(gathered[static_cast<std::size_t>(p)] &&
                *gathered[static_cast<std::size_t>(p)] ==
                    std::string(static_cast<std::size_t>(p) * 1500, 'a' + static_cast<char>(p)),
            r, "GatherToRoot's text of rank " + std::to_string(p));
    }
  } else {
    Check(gathered.empty(), r, "GatherToRoot gives other ranks nothing");
  }
  g.FreshDataPlane();
  g.Barrier();
  Check(g.healthy(), r, "healthy after every check");
  Check(!g.host().empty(), r, "host() names the server");
  if (r == 0 && failures == 0) std::cout << "PASS: " << n << " processes on " << g.host() << "\n";
  return failures == 0 ? 0 : 1;
}

int Timeout(MpiProcessGroup& g) {
  if (g.rank() == 0) {
    char byte = 0;
    try {
      g.Recv(1, 3, &byte, 1, Wait{"all_reduce 'grads' (task 12)", nullptr});
      std::cout << "FAIL: a receive from a silent rank returned\n";
      return 1;
    } catch (const ProcessGroupError& e) {
      std::cout << "peer " << e.peer() << ": " << e.what() << "\n";
      std::cout.flush();
    }
  } else {
    std::this_thread::sleep_for(std::chrono::seconds(3));
  }
  std::_Exit(0);
}

}  // namespace

int main(int argc, char** argv) {
  const bool timeout = argc > 1 && std::strcmp(argv[1], "timeout") == 0;
  try {
    MpiProcessGroup g(timeout ? 1.0 : 60.0, 1000);
    return timeout ? Timeout(g) : Checks(g);
  } catch (const std::exception& e) {
    std::cerr << "FAIL: " << e.what() << "\n";
    return 1;
  }
}
