// The NCCL bootstrap of multi-process cuda runs, without a GPU: processes are threads talking
// through LocalProcessGroups, and NCCL is a stub that records every call.
#include "validate/cuda/nccl_bootstrap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "validate/local_process_group.h"

namespace stratasim::validate::cuda {
namespace {

// A stub NCCL shared by the threads; the calling process is known from a thread_local.
thread_local int tls_rank = -1;

struct FakeComm {
  int owner = -1;  // the process holding it
  int nranks = 0;  // its size
  int rank = -1;   // the owner's rank in it
  std::string id;  // world: the unique id it was created with
  int split = -1;  // the split call that made it (-1: the world)
  bool destroyed = false, aborted = false;
};

struct SplitCall {
  int parent_rank;  // the caller's rank in the parent
  int color, key;
};

class StubNccl {
 public:
  explicit StubNccl(int devices) : devices_(devices) {}

  NcclCalls Calls() {
    NcclCalls c;
    c.device_count = [this](int* n) {
      *n = devices_;
      return std::string();
    };
    c.set_device = [this](int device) {
      std::lock_guard<std::mutex> lock(mu_);
      device_of[tls_rank] = device;
      return std::string();
    };
    c.get_unique_id = [this](std::string* id) {
      std::lock_guard<std::mutex> lock(mu_);
      id_callers.push_back(tls_rank);
      // Every byte value, NUL included, so that the transport must carry binary safely.
      id->resize(kNcclUniqueIdBytes);
      for (std::size_t i = 0; i < id->size(); ++i)
        (*id)[i] = static_cast<char>((i * 37 + 11) % 256);
      made_id = *id;
      return std::string();
    };
    c.comm_init_rank = [this](NcclComm* comm, int nranks, const std::string& id, int rank) {
      std::lock_guard<std::mutex> lock(mu_);
      if (rank == fail_init_rank) return std::string("unhandled system error (stub)");
      comms.push_back(FakeComm{tls_rank, nranks, rank, id, -1});
      *comm = &comms.back();
      return std::string();
    };
    c.comm_split = [this](NcclComm parent, int color, int key, NcclComm* comm) {
      std::lock_guard<std::mutex> lock(mu_);
      auto* p = static_cast<FakeComm*>(parent);
      const int call = static_cast<int>(splits[tls_rank].size());
      splits[tls_rank].push_back(SplitCall{p->rank, color, key});
      if (color == kNcclNoColor) {
        *comm = nullptr;
        return std::string();
      }
      comms.push_back(FakeComm{tls_rank, 0, key, "", call});
      *comm = &comms.back();
      return std::string();
    };
    c.comm_destroy = [this](NcclComm comm) {
      std::lock_guard<std::mutex> lock(mu_);
      static_cast<FakeComm*>(comm)->destroyed = true;
    };
    c.comm_abort = [this](NcclComm comm) {
      std::lock_guard<std::mutex> lock(mu_);
      static_cast<FakeComm*>(comm)->aborted = true;
    };
    return c;
  }

  std::mutex mu_;
  int devices_;
  int fail_init_rank = -1;
  std::vector<int> id_callers;
  std::string made_id;
  std::map<int, int> device_of;
  std::deque<FakeComm> comms;  // a deque: handles stay valid as it grows
  std::map<int, std::vector<SplitCall>> splits;
};

// Runs the bootstrap on `hosts.size()` processes (process r on hosts[r]); `body` sees each
// process's bootstrap; errors are collected per rank.
struct Outcome {
  std::vector<std::string> errors;  // "" where the process succeeded
  std::vector<BackendError::Kind> kinds;
};

template <typename Body>
Outcome RunProcesses(StubNccl& nccl, const std::vector<std::string>& hosts,
                     const std::vector<CommGroup>& groups, Body body) {
  const int n = static_cast<int>(hosts.size());
  std::vector<std::unique_ptr<ProcessGroup>> processes = LocalProcessGroups(n, 10, hosts);
  Outcome out;
  out.errors.assign(n, "");
  out.kinds.assign(n, BackendError::Kind::kExecution);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      tls_rank = r;
      try {
        NcclBootstrap boot(*processes[r], nccl.Calls(), groups);
        body(r, boot);
      } catch (const BackendError& e) {
        out.errors[r] = e.what();
        out.kinds[r] = e.kind();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return out;
}

std::vector<CommGroup> SomeGroups() {
  return {CommGroup{{0, 1, -1, 0, 0}, {0, 1}}, CommGroup{{3, 1, 2, -1, 0, 0, 0}, {3, 1, 2}},
          CommGroup{{-2, 1, 1}, {0, 1, 2, 3}}};
}

TEST(NcclBootstrap, RankZerosIdReachesEveryRankWhichInitsWithItsRank) {
  StubNccl nccl(8);
  const std::vector<CommGroup> groups = SomeGroups();
  std::mutex mu;
  std::map<int, int> local_rank, device;
  const Outcome out =
      RunProcesses(nccl, {"a", "a", "a", "a"}, groups, [&](int r, NcclBootstrap& boot) {
        std::lock_guard<std::mutex> lock(mu);
        local_rank[r] = boot.local_rank();
        device[r] = boot.device();
        EXPECT_NE(boot.world(), nullptr);
        EXPECT_EQ(boot.all().size(), (std::vector<std::size_t>{3, 4, 3, 3}[r])) << r;
      });
  for (const std::string& e : out.errors) EXPECT_EQ(e, "");
  EXPECT_EQ(nccl.id_callers, std::vector<int>{0});  // only rank 0 made an id
  ASSERT_EQ(nccl.made_id.size(), kNcclUniqueIdBytes);
  int worlds = 0;
  for (const FakeComm& c : nccl.comms) {
    if (c.split >= 0) continue;
    ++worlds;
    EXPECT_EQ(c.id, nccl.made_id) << "rank " << c.owner;
    EXPECT_EQ(c.nranks, 4);
    EXPECT_EQ(c.rank, c.owner);
    EXPECT_TRUE(c.destroyed);
    EXPECT_FALSE(c.aborted);
  }
  EXPECT_EQ(worlds, 4);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(local_rank[r], r);
    EXPECT_EQ(device[r], r);
    EXPECT_EQ(nccl.device_of[r], r);
  }
}

TEST(NcclBootstrap, GroupsAreSplitInTheSameOrderWithTheSameMembersEverywhere) {
  StubNccl nccl(8);
  const std::vector<CommGroup> groups = SomeGroups();
  std::mutex mu;
  std::map<int, std::vector<bool>> has;
  const Outcome out = RunProcesses(nccl, {"a", "a", "a", "a"}, groups, [&](int r, auto& boot) {
    std::lock_guard<std::mutex> lock(mu);
    for (std::size_t i = 0; i < groups.size(); ++i) has[r].push_back(boot.group(i) != nullptr);
  });
  for (const std::string& e : out.errors) EXPECT_EQ(e, "");
  for (int r = 0; r < 4; ++r) {
    // Every process made one split call per group, in the groups' order.
    const std::vector<SplitCall>& calls = nccl.splits[r];
    ASSERT_EQ(calls.size(), groups.size()) << "rank " << r;
    for (std::size_t i = 0; i < groups.size(); ++i) {
      const std::vector<int>& members = groups[i].ranks;
      const auto at = std::find(members.begin(), members.end(), r);
      EXPECT_EQ(calls[i].parent_rank, r);
      if (at == members.end()) {
        EXPECT_EQ(calls[i].color, kNcclNoColor) << "rank " << r << " group " << i;
        EXPECT_FALSE(has[r][i]);
      } else {
        // Key = position among the members, so NCCL rank i is members[i].
        EXPECT_EQ(calls[i].color, 0) << "rank " << r << " group " << i;
        EXPECT_EQ(calls[i].key, at - members.begin()) << "rank " << r << " group " << i;
        EXPECT_TRUE(has[r][i]);
      }
    }
  }
}

TEST(NcclBootstrap, ProcessesOfOneHostTakeItsDevicesInRankOrder) {
  StubNccl nccl(2);  // two devices per host
  std::mutex mu;
  std::map<int, std::pair<int, int>> seen;
  const Outcome out =
      RunProcesses(nccl, {"n0", "n1", "n0", "n1", "n0"}, {}, [&](int r, NcclBootstrap& boot) {
        std::lock_guard<std::mutex> lock(mu);
        seen[r] = {boot.local_rank(), boot.device()};
      });
  for (const std::string& e : out.errors) EXPECT_EQ(e, "");
  EXPECT_EQ(seen[0], std::make_pair(0, 0));
  EXPECT_EQ(seen[1], std::make_pair(0, 0));
  EXPECT_EQ(seen[2], std::make_pair(1, 1));
  EXPECT_EQ(seen[3], std::make_pair(1, 1));
  EXPECT_EQ(seen[4], std::make_pair(2, 0));  // a third process on two devices: modulo
}

TEST(NcclBootstrap, OneRanksInitFailureIsEveryRanksErrorNamingIt) {
  StubNccl nccl(8);
  nccl.fail_init_rank = 3;
  const Outcome out = RunProcesses(nccl, {"a", "a", "a", "a"}, SomeGroups(),
                                   [](int, NcclBootstrap&) { FAIL() << "must not succeed"; });
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(out.kinds[r], BackendError::Kind::kCommunication);
    EXPECT_EQ(out.errors[r],
              "cuda backend, NCCL bootstrap: rank 3 failed joining the NCCL world communicator: "
              "ncclCommInitRank(4 ranks, rank 3): unhandled system error (stub)")
        << "rank " << r;
  }
  // The others' world communicators were aborted, and no group was split.
  for (const FakeComm& c : nccl.comms) {
    EXPECT_TRUE(c.aborted) << "rank " << c.owner;
    EXPECT_FALSE(c.destroyed);
  }
  EXPECT_EQ(nccl.comms.size(), 3u);
  EXPECT_TRUE(nccl.splits.empty());
}

TEST(NcclBootstrap, NoDeviceIsUnavailableNamingTheRank) {
  StubNccl nccl(0);
  const Outcome out =
      RunProcesses(nccl, {"a", "b"}, {}, [](int, NcclBootstrap&) { FAIL() << "no device"; });
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(out.kinds[r], BackendError::Kind::kUnavailable);
    EXPECT_EQ(out.errors[r],
              "cuda backend, NCCL bootstrap: rank 0 failed choosing a CUDA device: no CUDA "
              "device visible (local rank 0 on host a) (also failed: rank 1)");
  }
  EXPECT_TRUE(nccl.id_callers.empty());
}

TEST(NcclBootstrap, HexRoundTripsEveryByteAndRefusesBadText) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  EXPECT_EQ(HexDecode(HexEncode(bytes)), bytes);
  EXPECT_EQ(HexEncode(std::string("\x00\xff", 2)), "00ff");
  try {
    HexDecode("abc");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "an NCCL unique id in hex has an odd length (3)");
  }
  try {
    HexDecode("0g");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "not a hex digit in an NCCL unique id: 'g'");
  }
}

TEST(PlanCommunicators, KeysCollectivesByRanksAndStreamsAndTransfersByStreamPair) {
  TaskGraph g(3);
  g.Stream("compute");
  const int s1 = g.Stream("comm");
  Collective c;
  c.kind = CollectiveKind::kAllReduce;
  c.ranks = {2, 0};
  c.bytes = 1024;
  Task member;
  member.name = "grads";
  member.stream = s1;
  const std::vector<TaskId> ids = g.AddCollective(c, member);
  const std::vector<TaskId> again = g.AddCollective(c, member);  // the same communicator
  Task end;
  end.stream = s1;
  const auto [sid, rid] = g.AddTransfer(0, 1, 64, end, end);
  const CommPlan plan = PlanCommunicators(g);
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_EQ(plan.groups[0].ranks, (std::vector<int>{2, 0}));
  EXPECT_EQ(plan.groups[0].key, (std::vector<int>{2, 0, -1, s1, s1}));
  EXPECT_EQ(plan.groups[1].ranks, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(plan.groups[1].key, (std::vector<int>{-2, s1, s1}));
  EXPECT_EQ(plan.group_of_task[ids[0]], 0);
  EXPECT_EQ(plan.member_of_task[ids[0]], 0);
  EXPECT_EQ(plan.member_of_task[ids[1]], 1);
  EXPECT_EQ(plan.group_of_task[again[1]], 0);
  EXPECT_EQ(plan.group_of_task[sid], 1);
  EXPECT_EQ(plan.member_of_task[sid], 0);
  EXPECT_EQ(plan.member_of_task[rid], 1);
}

}  // namespace
}  // namespace stratasim::validate::cuda
