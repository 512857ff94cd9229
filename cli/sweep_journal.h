// The journal of `stratasim sweep` (docs/sweep.md, "Resume"): one JSON line per finished point,
// appended as each point finishes, so that a killed sweep loses no finished point and a new one
// over the same folder runs only the points left.
//
// The first line is a header naming the sweep (its fingerprint: core/sweep_grid.h); each later
// line is a point's result, written with one write(2) on a file opened O_APPEND and flushed to
// disk (fsync) before the next point is reported done. A kill during that write can leave at
// most a partial last line: it is cut off when the journal is opened again.
#ifndef STRATASIM_CLI_SWEEP_JOURNAL_H_
#define STRATASIM_CLI_SWEEP_JOURNAL_H_

#include <cstdint>
#include <map>
#include <string>

namespace stratasim {

// The journal a sweep appends to in `dir`: sweep.jsonl, or sweep.shard-I-of-N.jsonl for
// --shard I/N.
std::string JournalPath(const std::string& dir, int shard, int shards);

// The finished points of every journal in `dir` (sweep.jsonl and sweep.shard-*.jsonl): point
// index -> its line (without the line end). A partial last line is left out; a journal of
// another sweep (another fingerprint), or a line that is not a point of this one, is a
// stratasim::Error naming the file and line. The first line seen for a point wins (a point run
// twice, by two shards, has the same result both times).
std::map<std::uint64_t, std::string> ReadJournals(const std::string& dir,
                                                  const std::string& fingerprint,
                                                  std::uint64_t num_points);

class SweepJournal {
 public:
  // Opens `path` for appending, creating it with `header` (one JSON line holding the
  // fingerprint) when it is new or holds not even a whole header; a partial last line is cut
  // off. Throws stratasim::Error naming `path` when it cannot be opened or written.
  SweepJournal(const std::string& path, const std::string& header);
  ~SweepJournal();
  SweepJournal(const SweepJournal&) = delete;
  SweepJournal& operator=(const SweepJournal&) = delete;

  // Appends `line` and a line end in one write(2), then fsync(2).
  void Append(const std::string& line);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace stratasim

#endif  // STRATASIM_CLI_SWEEP_JOURNAL_H_
