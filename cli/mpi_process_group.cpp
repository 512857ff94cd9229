#include "cli/mpi_process_group.h"

#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/limits.h"

#ifdef STRATASIM_HAVE_MPI

#include <algorithm>
#include <chrono>
#include <sstream>
#include <thread>
#include <utility>

#include "cli/mpi_api.h"

namespace stratasim::mpi {

using validate::ProcessGroupError;
using validate::Wait;
using Clock = std::chrono::steady_clock;

struct MpiProcessGroup::Comms {
  MPI_Comm data = MPI_COMM_NULL;
  MPI_Comm control = MPI_COMM_NULL;
  int tag_ub = 32767;  // the least MPI guarantees; the library's own is read at start
};

namespace {

std::string Seconds(double s) {
  std::ostringstream out;
  out << s << " s";
  return out.str();
}

std::string MpiErrorText(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (Mpi().error_string(code, text, &length) != MPI_SUCCESS)
    return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<size_t>(length));
}

enum class Polled { kDone, kTimedOut, kCancelled, kFailed };

// Polls MPI_Test on each request until all are complete (MPI_Test sets a complete one to
// MPI_REQUEST_NULL), the deadline passes or `cancelled` returns true. Yields the core between
// polls and, after the first ones, sleeps a little: processes are often more than cores
// (mpirun --oversubscribe), and a spinning waiter would take the core from the peer it waits
// for. The sleep is capped at 200 us, small against the run's collectives (milliseconds).
Polled PollUntil(std::vector<MPI_Request>* reqs, Clock::time_point deadline,
                 const std::function<bool()>& cancelled, std::string* error) {
  for (long long polls = 0;; ++polls) {
    bool all = true;
    for (MPI_Request& r : *reqs) {
      if (r == MPI_REQUEST_NULL) continue;
      int flag = 0;
      MPI_Status status;
      const int rc = Mpi().test(&r, &flag, &status);
      if (rc != MPI_SUCCESS) {
        *error = MpiErrorText(rc);
        return Polled::kFailed;
      }
      if (!flag) all = false;
    }
    if (all) return Polled::kDone;
    if (cancelled && cancelled()) return Polled::kCancelled;
    if (Clock::now() >= deadline) return Polled::kTimedOut;
    if (polls < 200) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(std::min<long long>(polls - 180, 200)));
    }
  }
}

// Gives up the requests not complete: cancels them (a receive not yet matched is withdrawn, so
// no late message lands in a buffer its caller has freed), waits briefly for the cancellation,
// then frees what is left (MPI completes it in the background).
void GiveUp(std::vector<MPI_Request>* reqs) {
  for (MPI_Request& r : *reqs) {
    if (r != MPI_REQUEST_NULL) Mpi().cancel(&r);
  }
  std::string ignored;
  PollUntil(reqs, Clock::now() + std::chrono::milliseconds(200), nullptr, &ignored);
  for (MPI_Request& r : *reqs) {
    if (r != MPI_REQUEST_NULL) Mpi().request_free(&r);
  }
}

Clock::time_point Deadline(double timeout_s) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
}

long long EnvNumber(const char* name, long long fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoll(v) : fallback;
}

}  // namespace

MpiProcessGroup::MpiProcessGroup(double timeout_s, std::size_t max_piece_bytes)
    : timeout_s_(timeout_s),
      max_piece_bytes_(std::clamp<std::size_t>(max_piece_bytes, 1, INT_MAX)) {
  const Api& mpi = Mpi();
  int initialised = 0;
  mpi.initialized(&initialised);
  int provided = MPI_THREAD_SINGLE;
  if (!initialised) {
    mpi.init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    finalize_ = true;
  } else {
    mpi.query_thread(&provided);
  }
  mpi.comm_rank(MPI_COMM_WORLD, &rank_);
  mpi.comm_size(MPI_COMM_WORLD, &size_);
  if (provided < MPI_THREAD_MULTIPLE) {
    if (finalize_) mpi.finalize();
    finalize_ = false;
    throw Error("this MPI library gives thread level " + std::to_string(provided) +
                ", not MPI_THREAD_MULTIPLE (" + std::to_string(MPI_THREAD_MULTIPLE) +
                "), which multi-process validate needs (the stream threads of one process exchange "
                "data at once): use an MPI built with thread support (Debian's OpenMPI is)");
  }
  comms_ = new Comms;
  mpi.comm_dup(MPI_COMM_WORLD, &comms_->control);
  mpi.comm_dup(MPI_COMM_WORLD, &comms_->data);
  // Errors come back as codes, to be reported with the rank and the peer, rather than
  // aborting the job from inside MPI.
  mpi.comm_set_errhandler(comms_->control, MPI_ERRORS_RETURN);
  mpi.comm_set_errhandler(comms_->data, MPI_ERRORS_RETURN);
  int* tag_ub = nullptr;
  int found = 0;
  mpi.comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &found);
  if (found && tag_ub != nullptr) comms_->tag_ub = *tag_ub;
  char name[MPI_MAX_PROCESSOR_NAME];
  int length = 0;
  mpi.get_processor_name(name, &length);
  host_.assign(name, static_cast<size_t>(length));
}

MpiProcessGroup::~MpiProcessGroup() {
  if (!healthy_) return;  // MPI_Finalize would wait for the failed peer
  if (comms_ != nullptr) {
    Mpi().comm_free(&comms_->data);
    Mpi().comm_free(&comms_->control);
    delete comms_;
  }
  if (finalize_) Mpi().finalize();
}

void MpiProcessGroup::Abort(int code) {
  Mpi().abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; this keeps [[noreturn]] honest
}

namespace {

// The data plane's shared steps, on behalf of one process (`self`) of a group.
struct Transfer {
  int self;
  double timeout_s;
  std::size_t piece;
  MPI_Comm comm;
  std::vector<MPI_Request> reqs;
  std::vector<int> peer_of;  // the peer of each request
  std::vector<bool> is_send;

  void Post(bool send, int peer, int tag, void* data, std::size_t bytes,
            const std::string& prefix) {
    // At least one message, so that an empty one still pairs with its receive.
    std::size_t at = 0;
    do {
      const std::size_t n = std::min(piece, bytes - at);
      MPI_Request r = MPI_REQUEST_NULL;
      char* p = static_cast<char*>(data) + at;
      const int rc = send ? Mpi().isend(p, static_cast<int>(n), MPI_BYTE, peer, tag, comm, &r)
                          : Mpi().irecv(p, static_cast<int>(n), MPI_BYTE, peer, tag, comm, &r);
      if (rc != MPI_SUCCESS) {
        GiveUp(&reqs);
        throw ProcessGroupError(peer, prefix +
                                          (send ? "MPI_Isend to rank " : "MPI_Irecv from rank ") +
                                          std::to_string(peer) + " failed: " + MpiErrorText(rc));
      }
      reqs.push_back(r);
      peer_of.push_back(peer);
      is_send.push_back(send);
      at += n;
    } while (at < bytes);
  }
};

}  // namespace

void MpiProcessGroup::Send(int peer, int channel, const void* data, std::size_t bytes,
                           const Wait& wait) {
  SendRecv(peer, data, bytes, -1, nullptr, 0, channel, wait);
}

void MpiProcessGroup::Recv(int peer, int channel, void* data, std::size_t bytes, const Wait& wait) {
  SendRecv(-1, nullptr, 0, peer, data, bytes, channel, wait);
}

void MpiProcessGroup::SendRecv(int to, const void* send, std::size_t send_bytes, int from,
                               void* recv, std::size_t recv_bytes, int channel, const Wait& wait) {
  const std::string prefix = "rank " + std::to_string(rank_) + ": " + wait.what + ": ";
  for (int peer : {to, from}) {
    if (peer != -1 && (peer < 0 || peer >= size_ || peer == rank_)) {
      throw ProcessGroupError(-1, prefix + "no peer rank " + std::to_string(peer) + " among " +
                                      std::to_string(size_) + " processes");
    }
  }
  if (channel < 0 || channel > kMaxChannel || channel > comms_->tag_ub) {
    throw ProcessGroupError(-1, prefix + "channel " + std::to_string(channel) + " outside [0, " +
                                    std::to_string(std::min(kMaxChannel, comms_->tag_ub)) +
                                    "] (MPI_TAG_UB of this MPI is " +
                                    std::to_string(comms_->tag_ub) + ")");
  }
  if (to != -1) CountSendForTestKill();
  Transfer t{rank_, timeout_s_, max_piece_bytes_, comms_->data, {}, {}, {}};
  if (from != -1) t.Post(false, from, channel, recv, recv_bytes, prefix);
  if (to != -1) t.Post(true, to, channel, const_cast<void*>(send), send_bytes, prefix);
  std::string error;
  const Polled p = PollUntil(&t.reqs, Deadline(timeout_s_), wait.cancelled, &error);
  if (p == Polled::kDone) return;
  // The first request not complete names the peer: a receive's sender, or a send's receiver.
  std::size_t i = 0;
  while (i < t.reqs.size() && t.reqs[i] == MPI_REQUEST_NULL) ++i;
  const int peer = i < t.reqs.size() ? t.peer_of[i] : (from != -1 ? from : to);
  const bool sending = i < t.reqs.size() && t.is_send[i];
  GiveUp(&t.reqs);
  if (p == Polled::kCancelled) throw validate::Cancelled{};
  healthy_ = false;
  const std::string channel_text = " on channel " + std::to_string(channel);
  if (p == Polled::kFailed) {
    throw ProcessGroupError(peer, prefix + (sending ? "sending to rank " : "receiving from rank ") +
                                      std::to_string(peer) + channel_text + " failed: " + error);
  }
  throw ProcessGroupError(
      peer, prefix +
                (sending ? "rank " + std::to_string(peer) + " did not take the " +
                               std::to_string(send_bytes) + " bytes sent" + channel_text
                         : "rank " + std::to_string(peer) + " sent nothing" + channel_text + " (" +
                               std::to_string(recv_bytes) + " bytes expected)") +
                " within " + Seconds(timeout_s_) + ": it died or hangs");
}

// Test hook (tests/validate_mpi_test.sh): the process of rank STRATASIM_VALIDATE_TEST_KILL_RANK
// (default 1) kills itself at its Nth send (STRATASIM_VALIDATE_TEST_KILL_AFTER, data or control
// plane), as a crashed rank would: in the middle of a run when the backend exchanges data.
void MpiProcessGroup::CountSendForTestKill() {
  static const long long kill_after = EnvNumber("STRATASIM_VALIDATE_TEST_KILL_AFTER", 0);
  static const long long kill_rank = EnvNumber("STRATASIM_VALIDATE_TEST_KILL_RANK", 1);
  if (kill_after > 0 && rank_ == kill_rank && ++sends_ >= kill_after) std::raise(SIGKILL);
}

long long MpiProcessGroup::TagBound() const { return static_cast<long long>(comms_->tag_ub) + 1; }

void MpiProcessGroup::FreshDataPlane() {
  MPI_Comm fresh = MPI_COMM_NULL;
  std::vector<MPI_Request> reqs(1, MPI_REQUEST_NULL);
  Mpi().comm_idup(comms_->control, &fresh, &reqs[0]);
  std::string error;
  const Polled p = PollUntil(&reqs, Deadline(timeout_s_), nullptr, &error);
  if (p != Polled::kDone) {
    healthy_ = false;
    throw ProcessGroupError(
        -1, "rank " + std::to_string(rank_) + ": renewing the data plane: " +
                (p == Polled::kFailed ? error
                                      : "not every process joined within " + Seconds(timeout_s_) +
                                            ": one died or hangs"));
  }
  Mpi().comm_set_errhandler(fresh, MPI_ERRORS_RETURN);
  Mpi().comm_free(&comms_->data);
  comms_->data = fresh;
}

namespace {

// The control plane's point-to-point steps: a text goes as its 8-byte length, then its bytes in
// pieces, all under one tag.
struct Control {
  MPI_Comm comm;
  std::size_t piece;
  int tag;

  // Posts `text` to `peer`; the caller polls `reqs`. `length` must outlive the requests.
  void PostSend(int peer, const std::string& text, std::uint64_t* length,
                std::vector<MPI_Request>* reqs) const {
    *length = text.size();
    MPI_Request r;
    Mpi().isend(length, sizeof *length, MPI_BYTE, peer, tag, comm, &r);
    reqs->push_back(r);
    std::size_t at = 0;
    while (at < text.size()) {
      const std::size_t n = std::min(piece, text.size() - at);
      Mpi().isend(text.data() + at, static_cast<int>(n), MPI_BYTE, peer, tag, comm, &r);
      reqs->push_back(r);
      at += n;
    }
  }
  void PostLengthRecv(int peer, std::uint64_t* length, std::vector<MPI_Request>* reqs) const {
    MPI_Request r;
    Mpi().irecv(length, sizeof *length, MPI_BYTE, peer, tag, comm, &r);
    reqs->push_back(r);
  }
  void PostTextRecv(int peer, std::string* text, std::vector<MPI_Request>* reqs) const {
    std::size_t at = 0;
    while (at < text->size()) {
      const std::size_t n = std::min(piece, text->size() - at);
      MPI_Request r;
      Mpi().irecv(text->data() + at, static_cast<int>(n), MPI_BYTE, peer, tag, comm, &r);
      reqs->push_back(r);
      at += n;
    }
  }
};

}  // namespace

// Root's side of a gather: every other process's text, nullopt for those silent past the
// deadline (each process's length and text each get timeout_s).
std::vector<std::optional<std::string>> MpiProcessGroup::GatherToRoot(const std::string& mine) {
  const Control c{comms_->control, max_piece_bytes_, NextControlTag()};
  std::string error;
  if (rank_ != 0) {
    CountSendForTestKill();
    std::uint64_t length = 0;
    std::vector<MPI_Request> reqs;
    c.PostSend(0, mine, &length, &reqs);
    const Polled p = PollUntil(&reqs, Deadline(timeout_s_), nullptr, &error);
    if (p == Polled::kDone) return {};
    GiveUp(&reqs);
    healthy_ = false;
    throw ProcessGroupError(
        0, "rank " + std::to_string(rank_) + ": sending its results to rank 0: " +
               (p == Polled::kFailed ? error
                                     : "rank 0 did not take them within " + Seconds(timeout_s_) +
                                           ": it died or hangs"));
  }
  std::vector<std::optional<std::string>> all(static_cast<size_t>(size_));
  all[0] = mine;
  std::vector<std::uint64_t> lengths(static_cast<size_t>(size_), 0);
  std::vector<MPI_Request> reqs;
  for (int p = 1; p < size_; ++p) c.PostLengthRecv(p, &lengths[static_cast<size_t>(p)], &reqs);
  Polled polled = PollUntil(&reqs, Deadline(timeout_s_), nullptr, &error);
  std::vector<int> answered;
  for (int p = 1; p < size_; ++p) {
    if (reqs[static_cast<size_t>(p - 1)] == MPI_REQUEST_NULL) answered.push_back(p);
  }
  if (polled != Polled::kDone) {
    GiveUp(&reqs);
    healthy_ = false;
  }
  std::vector<std::string> texts(static_cast<size_t>(size_));
  std::vector<MPI_Request> text_reqs;
  std::vector<int> owner;
  for (int p : answered) {
    CheckControlLength(lengths[static_cast<size_t>(p)], p);
    texts[static_cast<size_t>(p)].resize(lengths[static_cast<size_t>(p)]);
    const std::size_t before = text_reqs.size();
    c.PostTextRecv(p, &texts[static_cast<size_t>(p)], &text_reqs);
    owner.insert(owner.end(), text_reqs.size() - before, p);
  }
  polled = PollUntil(&text_reqs, Deadline(timeout_s_), nullptr, &error);
  std::vector<bool> complete(static_cast<size_t>(size_), false);
  for (int p : answered) complete[static_cast<size_t>(p)] = true;
  for (std::size_t i = 0; i < text_reqs.size(); ++i) {
    if (text_reqs[i] != MPI_REQUEST_NULL) complete[static_cast<size_t>(owner[i])] = false;
  }
  if (polled != Polled::kDone) {
    GiveUp(&text_reqs);
    healthy_ = false;
  }
  for (int p = 1; p < size_; ++p) {
    if (complete[static_cast<size_t>(p)])
      all[static_cast<size_t>(p)] = std::move(texts[static_cast<size_t>(p)]);
  }
  return all;
}

void MpiProcessGroup::Broadcast(std::string* text, int root) {
  if (root < 0 || root >= size_) {
    throw ProcessGroupError(-1, "rank " + std::to_string(rank_) + ": broadcast from rank " +
                                    std::to_string(root) + ": no such rank among " +
                                    std::to_string(size_) + " processes");
  }
  const Control c{comms_->control, max_piece_bytes_, NextControlTag()};
  std::string error;
  std::vector<MPI_Request> reqs;
  if (rank_ == root) {
    std::vector<std::uint64_t> lengths(static_cast<size_t>(size_));
    for (int p = 0; p < size_; ++p) {
      if (p != root) c.PostSend(p, *text, &lengths[static_cast<size_t>(p)], &reqs);
    }
    const Polled polled = PollUntil(&reqs, Deadline(timeout_s_), nullptr, &error);
    if (polled == Polled::kDone) return;
    GiveUp(&reqs);
    healthy_ = false;
    throw ProcessGroupError(
        -1, "rank " + std::to_string(rank_) + ": broadcasting: " +
                (polled == Polled::kFailed ? error
                                           : "not every process took it within " +
                                                 Seconds(timeout_s_) + ": one died or hangs"));
  }
  std::uint64_t length = 0;
  c.PostLengthRecv(root, &length, &reqs);
  Polled polled = PollUntil(&reqs, Deadline(timeout_s_), nullptr, &error);
  if (polled == Polled::kDone) {
    CheckControlLength(length, root);
    text->assign(length, '\0');
    reqs.clear();
    c.PostTextRecv(root, text, &reqs);
    polled = PollUntil(&reqs, Deadline(timeout_s_), nullptr, &error);
    if (polled == Polled::kDone) return;
  }
  GiveUp(&reqs);
  healthy_ = false;
  throw ProcessGroupError(
      root, "rank " + std::to_string(rank_) + ": waiting for rank " + std::to_string(root) +
                "'s broadcast: " +
                (polled == Polled::kFailed
                     ? error
                     : "nothing came within " + Seconds(timeout_s_) + ": it died or hangs"));
}

// Through rank 0: it gathers every text, then sends all of them, or the names of the silent
// processes, to every process, so that all fail alike with the same message.
std::vector<std::string> MpiProcessGroup::AllGather(const std::string& mine) {
  const std::vector<std::optional<std::string>> gathered = GatherToRoot(mine);
  std::string reply;
  if (rank_ == 0) {
    std::vector<std::string> texts;
    std::string silent;
    int first_silent = -1;
    for (int p = 0; p < size_; ++p) {
      if (gathered[static_cast<size_t>(p)]) {
        texts.push_back(*gathered[static_cast<size_t>(p)]);
      } else {
        silent += (silent.empty() ? "" : ", ") + std::to_string(p);
        if (first_silent < 0) first_silent = p;
      }
    }
    reply = silent.empty() ? "+" + Pack(texts)
                           : "-" + std::to_string(first_silent) + " rank(s) " + silent +
                                 " did not answer rank 0 within " + Seconds(timeout_s_) +
                                 ": they died or hang";
  }
  Broadcast(&reply, 0);
  if (!reply.empty() && reply[0] == '+') return Unpack(reply.substr(1));
  const std::size_t space = reply.find(' ');
  const int peer = std::atoi(reply.substr(1, space).c_str());
  throw ProcessGroupError(peer, "rank " + std::to_string(rank_) +
                                    ": exchanging with every process: " + reply.substr(space + 1));
}

void MpiProcessGroup::Barrier() { AllGather(""); }

}  // namespace stratasim::mpi

#else  // !STRATASIM_HAVE_MPI

namespace stratasim::mpi {
namespace {
[[noreturn]] void Unavailable() {
  throw Error(
      "this stratasim was built without MPI (CMake found no MPI), so it cannot run validate "
      "over several processes: install OpenMPI (Debian: openmpi-bin libopenmpi-dev) and build "
      "again, or run validate without mpirun/srun (one process runs every rank)");
}
}  // namespace

MpiProcessGroup::MpiProcessGroup(double timeout_s, std::size_t max_piece_bytes)
    : timeout_s_(timeout_s), max_piece_bytes_(max_piece_bytes) {
  Unavailable();
}
MpiProcessGroup::~MpiProcessGroup() = default;
void MpiProcessGroup::Abort(int code) { std::_Exit(code); }
void MpiProcessGroup::Send(int, int, const void*, std::size_t, const validate::Wait&) {
  Unavailable();
}
void MpiProcessGroup::Recv(int, int, void*, std::size_t, const validate::Wait&) { Unavailable(); }
void MpiProcessGroup::SendRecv(int, const void*, std::size_t, int, void*, std::size_t, int,
                               const validate::Wait&) {
  Unavailable();
}
void MpiProcessGroup::FreshDataPlane() { Unavailable(); }
long long MpiProcessGroup::TagBound() const { return 1; }
void MpiProcessGroup::CountSendForTestKill() {}
void MpiProcessGroup::Barrier() { Unavailable(); }
void MpiProcessGroup::Broadcast(std::string*, int) { Unavailable(); }
std::vector<std::string> MpiProcessGroup::AllGather(const std::string&) { Unavailable(); }
std::vector<std::optional<std::string>> MpiProcessGroup::GatherToRoot(const std::string&) {
  Unavailable();
}

}  // namespace stratasim::mpi

#endif

// Framing of the control plane, with or without MPI (tested in mpi_launcher_test).
namespace stratasim::mpi {

void CheckControlLength(std::uint64_t bytes, int peer) {
  if (bytes > limits::kControlMessageBytes) {
    throw Error("rank " + std::to_string(peer) + " announced a control message of " +
                std::to_string(bytes) + " bytes, more than the " +
                std::to_string(limits::kControlMessageBytes) +
                " a process sends (core/limits.h): it runs another stratasim or is corrupted");
  }
}

// Byte strings packed into one: a count, then each length and its bytes.
std::string Pack(const std::vector<std::string>& texts) {
  std::string out;
  auto number = [&](std::uint64_t n) { out.append(reinterpret_cast<const char*>(&n), sizeof n); };
  number(texts.size());
  for (const std::string& t : texts) {
    number(t.size());
    out += t;
  }
  return out;
}

std::vector<std::string> Unpack(const std::string& packed) {
  std::size_t at = 0;
  auto number = [&] {
    std::uint64_t n = 0;
    if (at + sizeof n > packed.size()) throw Error("a control message is truncated");
    std::memcpy(&n, packed.data() + at, sizeof n);
    at += sizeof n;
    return n;
  };
  // Each text takes at least its 8-byte length: a larger count is not what Pack wrote.
  const std::uint64_t count = number();
  if (count > (packed.size() - at) / sizeof(std::uint64_t)) {
    throw Error("a control message is truncated");
  }
  std::vector<std::string> texts(count);
  for (std::string& t : texts) {
    const std::uint64_t n = number();
    if (n > packed.size() - at) throw Error("a control message is truncated");
    t = packed.substr(at, n);
    at += n;
  }
  return texts;
}

}  // namespace stratasim::mpi
