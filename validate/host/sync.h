// Synchronisation between the host backend's threads: a barrier and the run-wide abort flag.
//
// Every wait can be interrupted: when one thread fails (out of memory, a bad task), the run
// aborts and every thread blocked in a barrier or on a dependency wakes up and unwinds, so that
// the run ends with the first error instead of hanging.
#ifndef STRATASIM_VALIDATE_HOST_SYNC_H_
#define STRATASIM_VALIDATE_HOST_SYNC_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <vector>

namespace stratasim::validate::host {

// Seconds since the run's common time origin, on the monotonic clock (wall-clock jumps must not
// reach a trace).
class Clock {
 public:
  Clock() : origin_(std::chrono::steady_clock::now()) {}
  void Reset() { origin_ = std::chrono::steady_clock::now(); }
  // A multi-process run's common start instant (validate/clock_sync.h), on this process's clock.
  void SetOrigin(std::chrono::steady_clock::time_point origin) { origin_ = origin; }
  std::chrono::steady_clock::time_point origin() const { return origin_; }
  double Now() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - origin_).count();
  }

 private:
  std::chrono::steady_clock::time_point origin_;
};

// Thrown in a thread that was waiting when the run aborted; never escapes the backend.
struct Aborted {};

// The run's abort state, shared by all threads.
class AbortFlag {
 public:
  // Records the first failure and wakes every waiter of every Barrier that uses this flag.
  void Abort(std::exception_ptr error);
  bool aborted() const;
  std::exception_ptr error() const;

  // A waiter's condition variable and its mutex: Abort() notifies it under that mutex, and the
  // waiter checks aborted() after every wake-up.
  void Subscribe(std::condition_variable* cv, std::mutex* m);
  void Unsubscribe(std::condition_variable* cv);

 private:
  mutable std::mutex mu_;
  bool aborted_ = false;
  std::exception_ptr error_;
  struct Waiter {
    std::condition_variable* cv;
    std::mutex* m;
  };
  std::vector<Waiter> waiters_;
};

// A reusable barrier of `n` threads (C++17 has no std::barrier). Wait() returns the time at
// which the last thread arrived, which is when a collective's members had all joined.
// A waiter first spins (yielding) for up to kSpinSeconds, as NCCL's kernels poll flags,
// before blocking on the condition variable: a peer running on another core is then seen in
// a microsecond instead of a scheduler wake-up.
class Barrier {
 public:
  Barrier(int n, AbortFlag* abort);
  ~Barrier();
  Barrier(const Barrier&) = delete;
  Barrier& operator=(const Barrier&) = delete;

  // Blocks until `n` threads called Wait() in this generation; throws Aborted if the run
  // aborts meanwhile. Returns the release time on `clock`.
  double Wait(const Clock& clock);

 private:
  static constexpr double kSpinSeconds = 20e-6;

  const int n_;
  AbortFlag* abort_;
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  std::atomic<long long> generation_{0};
  double release_s_ = 0;
};

}  // namespace stratasim::validate::host

#endif  // STRATASIM_VALIDATE_HOST_SYNC_H_
