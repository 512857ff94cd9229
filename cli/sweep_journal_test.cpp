// The sweep's journal: appends whole lines, cuts a partial last line, reads every journal of a
// folder, and refuses another sweep's journal or a damaged line by file and line.
#include "cli/sweep_journal.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace stratasim {
namespace {

namespace fs = std::filesystem;

fs::path Dir(const std::string& name) {
  const fs::path d =
      fs::temp_directory_path() / ("stratasim-journal-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::string kHeader = R"({"stratasim_sweep":1,"fingerprint":"abc"})";

std::string ErrorOf(const fs::path& dir) {
  try {
    ReadJournals(dir.string(), "abc", 10);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(SweepJournal, AppendsAfterTheHeaderAndCutsAPartialLine) {
  const fs::path d = Dir("append");
  const std::string path = JournalPath(d.string(), 0, 1);
  EXPECT_EQ(path, d.string() + "/sweep.jsonl");
  {
    SweepJournal j(path, kHeader);
    j.Append(R"({"point":2})");
  }
  std::ofstream(path, std::ios::app) << R"({"point":5,"val)";
  EXPECT_EQ(ReadJournals(d.string(), "abc", 10).size(), 1u);  // the partial line is no point
  {
    SweepJournal j(path, kHeader);  // cuts it, writes no second header
    j.Append(R"({"point":7})");
  }
  EXPECT_EQ(Slurp(path), kHeader + "\n" + R"({"point":2})" + "\n" + R"({"point":7})" + "\n");
  const auto done = ReadJournals(d.string(), "abc", 10);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done.at(7), R"({"point":7})");
  fs::remove_all(d);
}

TEST(SweepJournal, ReadsEveryShardsJournal) {
  const fs::path d = Dir("shards");
  EXPECT_EQ(JournalPath(d.string(), 1, 3), d.string() + "/sweep.shard-1-of-3.jsonl");
  SweepJournal(JournalPath(d.string(), 0, 2), kHeader).Append(R"({"point":0})");
  SweepJournal(JournalPath(d.string(), 1, 2), kHeader).Append(R"({"point":1})");
  std::ofstream(d / "notes.jsonl") << "not a journal\n";
  EXPECT_EQ(ReadJournals(d.string(), "abc", 10).size(), 2u);
  EXPECT_TRUE(ReadJournals((d / "missing").string(), "abc", 10).empty());
  fs::remove_all(d);
}

TEST(SweepJournal, AnotherSweepsJournalIsRefused) {
  const fs::path d = Dir("other");
  SweepJournal(JournalPath(d.string(), 0, 1), R"({"fingerprint":"xyz"})");
  EXPECT_EQ(ErrorOf(d), (d / "sweep.jsonl").string() +
                            ":1: this journal belongs to another sweep (fingerprint \"xyz\"; this "
                            "scenario and grid: \"abc\"): the scenario or the grid changed. Give "
                            "another --out, or remove " +
                            d.string() + "'s sweep*.jsonl to start over");
  fs::remove_all(d);
}

TEST(SweepJournal, DamagedLinesAreLocated) {
  const fs::path d = Dir("damaged");
  {
    SweepJournal j(JournalPath(d.string(), 0, 1), kHeader);
    j.Append(R"({"point":1})");
    j.Append("garbage");
  }
  EXPECT_EQ(ErrorOf(d),
            (d / "sweep.jsonl").string() + ":3: not a JSON object: the journal is damaged");
  fs::remove_all(d);
  const fs::path e = Dir("range");
  SweepJournal(JournalPath(e.string(), 0, 1), kHeader).Append(R"({"point":10})");
  EXPECT_EQ(ErrorOf(e), (e / "sweep.jsonl").string() +
                            ":2: not a point of this sweep (of 10 points): the journal is damaged");
  fs::remove_all(e);
}

}  // namespace
}  // namespace stratasim
