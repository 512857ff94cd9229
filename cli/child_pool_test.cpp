// RunChildPool: every item runs once in its own child, at most N at once; a child's error is
// its item's failure; the idle hook runs while children work.
#include "cli/child_pool.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "sim/trace_wire.h"

namespace stratasim {
namespace {

// Item i's child sleeps `sleep_ms` and replies i * i; item 3 throws.
ChildPoolTasks Squares(std::vector<long>* got, std::vector<std::string>* errors, int sleep_ms) {
  ChildPoolTasks t;
  t.start = [sleep_ms](size_t i) -> std::optional<sim::SimulationProcess> {
    return sim::StartChild([i, sleep_ms](const sim::WireWrite& write) {
      usleep(static_cast<useconds_t>(sleep_ms) * 1000);
      if (i == 3) throw std::runtime_error("item 3 cannot run");
      sim::WireOut out(write);
      out.Pod(static_cast<long>(i * i));
    });
  };
  t.finish = [got](size_t i, sim::SimulationProcess& p) {
    sim::FinishChild(p, [&](const sim::WireRead& read) {
      sim::WireIn in(read);
      (*got)[i] = in.Pod<long>("square");
    });
  };
  t.fail = [errors](size_t i, const std::string& e) { (*errors)[i] = e; };
  return t;
}

TEST(ChildPool, RunsEveryItemOnceAndRecordsFailures) {
  for (int at_once : {1, 3}) {
    std::vector<long> got(6, -1);
    std::vector<std::string> errors(6);
    RunChildPool(6, at_once, Squares(&got, &errors, 0));
    for (long i = 0; i < 6; ++i) {
      if (i == 3) {
        EXPECT_EQ(got[i], -1);
        EXPECT_EQ(errors[i], "item 3 cannot run");
      } else {
        EXPECT_EQ(got[i], i * i) << "at once " << at_once;
        EXPECT_EQ(errors[i], "");
      }
    }
  }
}

TEST(ChildPool, ItemsWithoutAChildAreSkipped) {
  std::vector<long> got(4, -1);
  std::vector<std::string> errors(4);
  ChildPoolTasks t = Squares(&got, &errors, 0);
  const auto start = t.start;
  t.start = [start](size_t i) -> std::optional<sim::SimulationProcess> {
    if (i % 2 == 1) return std::nullopt;
    return start(i);
  };
  RunChildPool(4, 2, t);
  EXPECT_EQ(got, (std::vector<long>{0, -1, 4, -1}));
}

TEST(ChildPool, IdleRunsWhileChildrenWork) {
  std::vector<long> got(2, -1);
  std::vector<std::string> errors(2);
  ChildPoolTasks t = Squares(&got, &errors, 200);
  int idle = 0;
  t.idle = [&idle] { ++idle; };
  t.idle_ms = 10;
  RunChildPool(2, 2, t);
  EXPECT_EQ(got, (std::vector<long>{0, 1}));
  EXPECT_GE(idle, 5);  // 200 ms of children, polled every 10 ms
}

}  // namespace
}  // namespace stratasim
