#include "cli/validate_interrupt.h"

#include <pthread.h>
#include <unistd.h>

#include <cstring>
#include <iostream>

namespace stratasim {

ReportOnInterrupt::ReportOnInterrupt() {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGTERM);
  sigaddset(&signals_, SIGINT);
  sigaddset(&signals_, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals_, &previous_);
  thread_ = std::thread([this] { Wait(); });
}

ReportOnInterrupt::~ReportOnInterrupt() {
  stop_ = true;
  thread_.join();
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

void ReportOnInterrupt::SetWriter(Writer writer) {
  std::lock_guard<std::mutex> lock(mutex_);
  writer_ = std::move(writer);
}

void ReportOnInterrupt::Write(const validate::ValidationReport& report) {
  std::lock_guard<std::mutex> lock(mutex_);
  report_ = report;
  running_.reset();
  if (writer_) writer_(report);
}

void ReportOnInterrupt::Running(const validate::ValidationReport& report,
                                const validate::StrategyValidation& running) {
  std::lock_guard<std::mutex> lock(mutex_);
  report_ = report;
  running_ = running;
}

void ReportOnInterrupt::Wait() {
  const timespec poll{0, 100 * 1000 * 1000};  // 100 ms: how soon the destructor's stop is seen
  while (!stop_) {
    const int sig = sigtimedwait(&signals_, nullptr, &poll);
    if (sig <= 0) continue;
    std::lock_guard<std::mutex> lock(mutex_);
    if (writer_ && report_) {
      validate::ValidationReport r = *report_;
      if (running_) {
        validate::StrategyValidation v = *running_;
        v.error = std::string("interrupted by ") + (sig == SIGTERM ? "SIGTERM" : strsignal(sig)) +
                  " while it ran: mpirun ends every process when one of them dies (its output "
                  "names the rank); what this strategy measured is lost";
        r.strategies.push_back(v);
      }
      try {
        writer_(r);
        std::cerr << "stratasim validate: interrupted (signal " << sig
                  << "): the report was written with "
                  << (running_ ? "'" + running_->name + "' marked interrupted" : "what was done")
                  << "\n";
      } catch (const std::exception& e) {
        std::cerr << "stratasim validate: interrupted, and the report could not be written: "
                  << e.what() << "\n";
      }
    }
    std::cerr.flush();
    _exit(128 + sig);
  }
}

}  // namespace stratasim
