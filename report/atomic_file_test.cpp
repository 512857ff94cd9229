#include "report/atomic_file.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"

namespace stratasim {
namespace {

namespace fs = std::filesystem;

// gmock's matchers would need the gmock library, which the test helper does not link.
::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

// A fresh directory per test, removed afterwards, so that tests never see each other's files.
class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "stratasim-report-XXXXXX").string();
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    ASSERT_NE(mkdtemp(name.data()), nullptr);
    dir_ = name.data();
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string ReadFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::vector<std::string> DirectoryEntries() const {
    std::vector<std::string> names;
    for (const fs::directory_entry& e : fs::directory_iterator(dir_)) {
      names.push_back(e.path().filename().string());
    }
    return names;
  }

  fs::path dir_;
};

TEST_F(AtomicFileTest, WritesExactContents) {
  fs::path path = dir_ / "results.json";
  // Binary contents with a NUL and no final newline must come back byte for byte.
  std::string contents("{\"a\":1}\n\0tail", 13);
  WriteFileAtomically(path.string(), contents);
  EXPECT_EQ(ReadFile(path), contents);
  EXPECT_EQ(DirectoryEntries(), std::vector<std::string>{"results.json"});
}

TEST_F(AtomicFileTest, ReplacesExistingFileAndLeavesNoTemporary) {
  fs::path path = dir_ / "out.csv";
  WriteFileAtomically(path.string(), "a much longer first version\n");
  WriteFileAtomically(path.string(), "short\n");
  EXPECT_EQ(ReadFile(path), "short\n");
  EXPECT_EQ(DirectoryEntries(), std::vector<std::string>{"out.csv"});
}

// Written in pieces (a streamed run's trace), the file appears whole at Commit and not before;
// dropped without Commit, nothing is left.
TEST_F(AtomicFileTest, PiecesAppearOnlyAtCommit) {
  fs::path path = dir_ / "a.trace.json";
  {
    AtomicFile file(path.string());
    file.Write("{\"traceEvents\":[");
    EXPECT_FALSE(fs::exists(path));
    EXPECT_EQ(DirectoryEntries().size(), 1u);  // the temporary
    file.Write("]}\n");
    file.Commit();
  }
  EXPECT_EQ(ReadFile(path), "{\"traceEvents\":[]}\n");
  {
    AtomicFile abandoned((dir_ / "b.trace.json").string());
    abandoned.Write("half");
  }
  EXPECT_EQ(DirectoryEntries(), std::vector<std::string>{"a.trace.json"});
}

TEST_F(AtomicFileTest, WritesEmptyFile) {
  fs::path path = dir_ / "empty";
  WriteFileAtomically(path.string(), "");
  EXPECT_TRUE(fs::is_regular_file(path));
  EXPECT_EQ(fs::file_size(path), 0u);
}

TEST_F(AtomicFileTest, FileIsReadableByOthers) {
  fs::path path = dir_ / "trace.json";
  WriteFileAtomically(path.string(), "{}");
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST_F(AtomicFileTest, MissingDirectoryFailsNamingThePath) {
  std::string path = (dir_ / "no-such-dir" / "results.json").string();
  try {
    WriteFileAtomically(path, "x");
    FAIL() << "expected stratasim::Error";
  } catch (const Error& e) {
    EXPECT_TRUE(Contains(e.what(), path));
    EXPECT_TRUE(Contains(e.what(), "No such file or directory"));
  }
  EXPECT_TRUE(DirectoryEntries().empty());
}

TEST_F(AtomicFileTest, RenameFailureRemovesTemporary) {
  // The target is a non-empty directory: the temporary is written, but rename cannot replace it.
  fs::path target = dir_ / "taken";
  fs::create_directories(target / "child");
  EXPECT_THROW(WriteFileAtomically(target.string(), "x"), Error);
  EXPECT_EQ(DirectoryEntries(), std::vector<std::string>{"taken"});
}

TEST_F(AtomicFileTest, CreateDirectoriesMakesParentsAndAcceptsExisting) {
  fs::path nested = dir_ / "a" / "b" / "c";
  CreateDirectories(nested.string());
  EXPECT_TRUE(fs::is_directory(nested));
  EXPECT_NO_THROW(CreateDirectories(nested.string()));
  EXPECT_NO_THROW(CreateDirectories(""));
}

TEST_F(AtomicFileTest, CreateDirectoriesFailsOnFileInTheWay) {
  fs::path file = dir_ / "file";
  WriteFileAtomically(file.string(), "x");
  std::string nested = (file / "sub").string();
  try {
    CreateDirectories(nested);
    FAIL() << "expected stratasim::Error";
  } catch (const Error& e) {
    EXPECT_TRUE(Contains(e.what(), "cannot create directory " + nested));
  }
  EXPECT_THROW(CreateDirectories(file.string()), Error);
}

}  // namespace
}  // namespace stratasim
