// SIGTERM during a multi-process `validate`: when one process dies, plain mpirun sends SIGTERM
// to the others and SIGKILLs them about a second later (measured with OpenMPI 4.1). Rank 0 then
// writes the report it has, the running strategy marked interrupted, before it exits: the
// strategies already compared are kept.
//
// The signals are blocked in the constructing thread and so in every thread started after it
// (construct it before MPI_Init, which starts OpenMPI's threads), and one thread takes them with
// sigtimedwait: writing files is then safe, which a signal handler could not do. Every report
// write goes through Write() under one lock, so the interrupted report never interleaves with
// one the main thread is writing.
#ifndef STRATASIM_CLI_VALIDATE_INTERRUPT_H_
#define STRATASIM_CLI_VALIDATE_INTERRUPT_H_

#include <signal.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "validate/comparison.h"

namespace stratasim {

class ReportOnInterrupt {
 public:
  using Writer = std::function<void(const validate::ValidationReport&)>;

  // Blocks SIGTERM, SIGINT and SIGHUP and starts the thread that waits for them. Until a writer
  // is set (processes other than rank 0), a signal ends the process at once with 128 + signal.
  ReportOnInterrupt();
  // Stops the thread and unblocks the signals in this thread.
  ~ReportOnInterrupt();
  ReportOnInterrupt(const ReportOnInterrupt&) = delete;
  ReportOnInterrupt& operator=(const ReportOnInterrupt&) = delete;

  void SetWriter(Writer writer);
  // Writes `report` with the writer, and keeps it for a signal; no strategy is running.
  void Write(const validate::ValidationReport& report);
  // `running` starts: a signal now writes `report` plus `running` marked interrupted.
  void Running(const validate::ValidationReport& report,
               const validate::StrategyValidation& running);

 private:
  void Wait();

  std::mutex mutex_;
  Writer writer_;
  std::optional<validate::ValidationReport> report_;
  std::optional<validate::StrategyValidation> running_;
  sigset_t signals_;
  sigset_t previous_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace stratasim

#endif  // STRATASIM_CLI_VALIDATE_INTERRUPT_H_
