#include "validate/host/sync.h"

#include <algorithm>
#include <thread>

namespace stratasim::validate::host {

void AbortFlag::Abort(std::exception_ptr error) {
  std::vector<Waiter> waiters;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (aborted_) return;
    aborted_ = true;
    error_ = error;
    waiters = waiters_;
  }
  // Notify under each waiter's own mutex, so that a waiter between its check of aborted() and
  // its wait() cannot miss the wake-up.
  for (const Waiter& w : waiters) {
    std::lock_guard<std::mutex> lock(*w.m);
    w.cv->notify_all();
  }
}

bool AbortFlag::aborted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return aborted_;
}

std::exception_ptr AbortFlag::error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

void AbortFlag::Subscribe(std::condition_variable* cv, std::mutex* m) {
  std::lock_guard<std::mutex> lock(mu_);
  waiters_.push_back({cv, m});
}

void AbortFlag::Unsubscribe(std::condition_variable* cv) {
  std::lock_guard<std::mutex> lock(mu_);
  waiters_.erase(std::remove_if(waiters_.begin(), waiters_.end(),
                                [cv](const Waiter& w) { return w.cv == cv; }),
                 waiters_.end());
}

Barrier::Barrier(int n, AbortFlag* abort) : n_(n), abort_(abort) {
  if (abort_) abort_->Subscribe(&cv_, &mu_);
}

Barrier::~Barrier() {
  if (abort_) abort_->Unsubscribe(&cv_);
}

double Barrier::Wait(const Clock& clock) {
  std::unique_lock<std::mutex> lock(mu_);
  const long long gen = generation_.load();
  if (++arrived_ == n_) {
    arrived_ = 0;
    release_s_ = clock.Now();
    generation_.store(gen + 1);
    cv_.notify_all();
    return release_s_;
  }
  lock.unlock();
  const auto spin_until = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(kSpinSeconds));
  while (generation_.load() == gen && std::chrono::steady_clock::now() < spin_until) {
    std::this_thread::yield();
  }
  lock.lock();
  cv_.wait(lock, [&] { return generation_.load() != gen || (abort_ && abort_->aborted()); });
  if (generation_.load() == gen) throw Aborted{};
  return release_s_;
}

}  // namespace stratasim::validate::host
