#include "report/gzip_stream.h"

#include <gtest/gtest.h>

#include <string>

#include "core/error.h"

namespace stratasim {
namespace {

std::string Sample() {
  std::string s;
  for (int i = 0; i < 20000; ++i) {
    s += "{\"name\":\"fwd layer " + std::to_string(i % 48) +
         "\",\"ph\":\"X\",\"ts\":" + std::to_string(i * 7) + "},\n";
  }
  return s;
}

TEST(Gzip, RoundTripAndSmaller) {
  const std::string text = Sample();
  const std::string gz = GzipCompress(text);
  EXPECT_EQ(GzipDecompress(gz), text);
  EXPECT_LT(gz.size(), text.size() / 5);
}

TEST(Gzip, DeterministicHeaderWithoutNameOrTime) {
  const std::string gz = GzipCompress("hello");
  ASSERT_GE(gz.size(), 10u);
  EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(gz[1]), 0x8b);
  EXPECT_EQ(gz[2], 8);                               // deflate
  EXPECT_EQ(gz[3], 0);                               // FLG: no name, no comment, no extra field
  EXPECT_EQ(gz.substr(4, 4), std::string(4, '\0'));  // MTIME 0
  EXPECT_EQ(GzipCompress("hello"), gz);
}

TEST(Gzip, PiecesGiveTheSameBytesAsWhole) {
  const std::string text = Sample();
  std::string out;
  int writes = 0;
  GzipWriter w([&](const std::string& s) {
    out += s;
    ++writes;
    return true;
  });
  for (size_t at = 0; at < text.size(); at += 1000) ASSERT_TRUE(w.Write(text.substr(at, 1000)));
  ASSERT_TRUE(w.Finish());
  EXPECT_EQ(out, GzipCompress(text));
  EXPECT_GT(writes, 0);
}

TEST(Gzip, FailedSinkIsReported) {
  GzipWriter w([](const std::string&) { return false; });
  w.Write(Sample());
  EXPECT_FALSE(w.Finish());
}

TEST(Gzip, NotGzipIsAnError) {
  try {
    GzipDecompress("plain text");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("gunzip: not gzip data", 0), 0u) << e.what();
  }
  EXPECT_THROW(GzipDecompress(GzipCompress(Sample()).substr(0, 100)), Error);
}

}  // namespace
}  // namespace stratasim
