#include "cli/sweep_journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "core/error.h"

namespace stratasim {
namespace {

[[noreturn]] void Fail(const std::string& path, const std::string& what, int err) {
  throw Error("cannot " + what + " " + path + ": " + std::strerror(err));
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail(path, "read", errno);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool IsJournalName(const std::string& name) {
  if (name == "sweep.jsonl") return true;
  const std::string prefix = "sweep.shard-", suffix = ".jsonl";
  return name.size() > prefix.size() + suffix.size() &&
         name.compare(0, prefix.size(), prefix) == 0 &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::string JournalPath(const std::string& dir, int shard, int shards) {
  if (shards <= 1) return dir + "/sweep.jsonl";
  return dir + "/sweep.shard-" + std::to_string(shard) + "-of-" + std::to_string(shards) + ".jsonl";
}

std::map<std::uint64_t, std::string> ReadJournals(const std::string& dir,
                                                  const std::string& fingerprint,
                                                  std::uint64_t num_points) {
  std::map<std::uint64_t, std::string> done;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return done;
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && IsJournalName(e.path().filename().string())) {
      files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());  // the same result whatever the directory's order
  for (const std::string& file : files) {
    const std::string text = Slurp(file);
    const size_t whole = text.rfind('\n');  // a partial last line is no point yet
    if (whole == std::string::npos) continue;
    std::istringstream lines(text.substr(0, whole + 1));
    std::string line;
    int number = 0;
    while (std::getline(lines, line)) {
      ++number;
      const std::string at = file + ":" + std::to_string(number) + ": ";
      nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (!j.is_object()) throw Error(at + "not a JSON object: the journal is damaged");
      if (number == 1) {
        if (!j.contains("fingerprint") || j["fingerprint"] != fingerprint) {
          throw Error(at + "this journal belongs to another sweep (fingerprint " +
                      (j.contains("fingerprint") ? j["fingerprint"].dump() : "none") +
                      "; this scenario and grid: \"" + fingerprint +
                      "\"): the scenario or the grid changed. Give another --out, or remove " +
                      dir + "'s sweep*.jsonl to start over");
        }
        continue;
      }
      if (!j.contains("point") || !j["point"].is_number_unsigned() ||
          j["point"].get<std::uint64_t>() >= num_points) {
        throw Error(at + "not a point of this sweep (of " + std::to_string(num_points) +
                    " points): the journal is damaged");
      }
      done.emplace(j["point"].get<std::uint64_t>(), line);
    }
  }
  return done;
}

SweepJournal::SweepJournal(const std::string& path, const std::string& header) : path_(path) {
  fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) Fail(path, "open the sweep journal", errno);
  // Cut a partial last line (a kill during its write): appending after it would glue the next
  // point to it.
  const std::string text = Slurp(path);
  const size_t whole = text.rfind('\n');
  const size_t keep = whole == std::string::npos ? 0 : whole + 1;
  if (keep < text.size()) {
    if (ftruncate(fd_, static_cast<off_t>(keep)) != 0) Fail(path, "truncate", errno);
  }
  if (keep == 0) Append(header);
}

SweepJournal::~SweepJournal() {
  if (fd_ >= 0) close(fd_);
}

void SweepJournal::Append(const std::string& line) {
  const std::string out = line + "\n";
  // One write: with O_APPEND the line lands whole at the end, or (killed, disk full) as a
  // partial last line that the next open cuts off.
  ssize_t n;
  do {
    n = write(fd_, out.data(), out.size());
  } while (n < 0 && errno == EINTR);
  if (n < 0) Fail(path_, "append to", errno);
  if (static_cast<size_t>(n) != out.size()) {
    // A short write (disk full): take it back, so the journal ends with a whole line.
    struct stat st;
    if (fstat(fd_, &st) == 0) (void)!ftruncate(fd_, st.st_size - n);
    throw Error("cannot append to " + path_ + ": short write (disk full?)");
  }
  if (fsync(fd_) != 0) Fail(path_, "flush (fsync)", errno);
}

}  // namespace stratasim
