#include "cli/npy_reader.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"

namespace stratasim {
namespace {

// A .npy file as NumPy writes it: magic, version, header length, header padded so that the
// preamble and header end on a 64-byte boundary with a newline, then the data.
std::string Npy(const std::string& dict, const std::string& data, int major = 1) {
  const size_t preamble = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((preamble + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0';
  const size_t n = header.size();
  out += static_cast<char>(n & 0xff);
  out += static_cast<char>((n >> 8) & 0xff);
  if (major == 2) out += std::string(2, '\0');
  return out + header + data;
}

template <typename T>
std::string Bytes(const std::vector<T>& v) {
  std::string s(v.size() * sizeof(T), '\0');
  std::memcpy(s.data(), v.data(), s.size());  // the test hosts are little-endian
  return s;
}

std::string Header(const std::string& descr, const std::string& shape, bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + shape + ", }";
}

std::string ErrorOf(const std::string& bytes, long long max_elements = 1000) {
  try {
    ParseNpy(bytes, "g.npy", max_elements);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(NpyReader, ReadsFloat32MatricesAndFloat64Vectors) {
  const NpyArray m =
      ParseNpy(Npy(Header("<f4", "(2, 3)"), Bytes<float>({1, 2, 3, 4, 5, -6})), "m.npy", 100);
  EXPECT_EQ(m.rows, 2);
  EXPECT_EQ(m.cols, 3);
  EXPECT_EQ(m.dtype, "<f4");
  EXPECT_EQ(m.values, (std::vector<float>{1, 2, 3, 4, 5, -6}));
  const NpyArray v =
      ParseNpy(Npy(Header("<f8", "(3,)"), Bytes<double>({0.5, -1e-3, 0}), 2), "v.npy", 100);
  EXPECT_EQ(v.rows, 3);
  EXPECT_EQ(v.cols, 1);
  EXPECT_EQ(v.values, (std::vector<float>{0.5f, static_cast<float>(-1e-3), 0.0f}));
  // Keys in any order, double quotes, no trailing comma.
  const NpyArray o = ParseNpy(
      Npy("{\"shape\": (1, 1), \"fortran_order\": False, \"descr\": \"<f4\"}", Bytes<float>({7})),
      "o.npy", 100);
  EXPECT_EQ(o.values, (std::vector<float>{7}));
}

TEST(NpyReader, BadMagic) {
  EXPECT_EQ(ErrorOf("PK\x03\x04 not numpy"),
            "g.npy: magic: not a .npy file: it does not start with \"\\x93NUMPY\"");
  EXPECT_EQ(ErrorOf(""), "g.npy: magic: not a .npy file: it does not start with \"\\x93NUMPY\"");
}

TEST(NpyReader, UnsupportedVersion) {
  std::string b = Npy(Header("<f4", "(1,)"), Bytes<float>({1}));
  b[6] = 3;
  EXPECT_EQ(ErrorOf(b),
            "g.npy: version = \"3.0\": unsupported .npy version (1.0 and 2.0 are read)");
}

TEST(NpyReader, HeaderTooLongOrTruncated) {
  std::string b = Npy(Header("<f4", "(1,)"), Bytes<float>({1}), 2);
  b[8] = 0x11;
  b[9] = 0x27;  // 10001 bytes
  EXPECT_EQ(ErrorOf(b),
            "g.npy: header = \"10001 bytes\": too long: at most 10000 bytes, NumPy's own default "
            "bound (max_header_size)");
  const std::string cut = Npy(Header("<f4", "(1,)"), "").substr(0, 40);
  EXPECT_EQ(ErrorOf(cut),
            "g.npy: header = \"118 bytes\": truncated: the file ends 88 bytes before the header "
            "does");
}

TEST(NpyReader, MalformedHeaderDict) {
  EXPECT_EQ(ErrorOf(Npy("{'descr': <f4}", "")),
            "g.npy: header: not the dict literal of a .npy header: a string, True, False or a "
            "tuple expected at byte 10 of the header");
  EXPECT_EQ(ErrorOf(Npy("{'descr': '<f4', 'fortran_order': False}", "")),
            "g.npy: header: lacks the key 'shape'");
  EXPECT_EQ(ErrorOf(Npy(Header("<f4", "(1,)") + "{'x': 1}", "")),
            "g.npy: header: not the dict literal of a .npy header: text after the dict at byte 57 "
            "of the header");
  EXPECT_EQ(
      ErrorOf(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 'y'}", "")),
      "g.npy: header = \"x\": unknown key (a .npy header has descr, fortran_order and shape)");
}

TEST(NpyReader, UnsupportedDtype) {
  EXPECT_EQ(ErrorOf(Npy(Header("<i4", "(1,)"), Bytes<int>({1}))),
            "g.npy: descr = \"<i4\": unsupported dtype: only '<f4' (float32) and '<f8' (float64), "
            "little-endian (save with grad.astype(np.float32))");
  EXPECT_NE(ErrorOf(Npy(Header(">f4", "(1,)"), Bytes<float>({1}))).find("unsupported dtype"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Npy(Header("<f2", "(1,)"), "ab")).find("unsupported dtype"), std::string::npos);
}

TEST(NpyReader, FortranOrder) {
  EXPECT_EQ(ErrorOf(Npy(Header("<f4", "(1, 1)", true), Bytes<float>({1}))),
            "g.npy: fortran_order = \"True\": Fortran-order arrays are not read: save a C-order "
            "one (np.ascontiguousarray)");
}

TEST(NpyReader, ShapesOtherThanOneOrTwoDimensions) {
  EXPECT_EQ(ErrorOf(Npy(Header("<f4", "(1, 1, 1)"), Bytes<float>({1}))),
            "g.npy: shape = \"(1, 1, 1)\": must be 1-D (n,) or 2-D (rows, cols)");
  EXPECT_EQ(ErrorOf(Npy(Header("<f4", "()"), Bytes<float>({1}))),
            "g.npy: shape = \"()\": must be 1-D (n,) or 2-D (rows, cols)");
  EXPECT_EQ(ErrorOf(Npy(Header("<f4", "(0, 4)"), "")),
            "g.npy: shape = \"(0, 4)\": has no elements");
}

TEST(NpyReader, TooManyElements) {
  EXPECT_EQ(ErrorOf(Npy(Header("<f4", "(100, 11)"), ""), 1000),
            "g.npy: shape = \"(100, 11)\": more elements than the limit of 1000 (--max-elements)");
  // Dimensions whose product overflows 64 bits are refused the same way.
  EXPECT_NE(ErrorOf(Npy(Header("<f4", "(99999999999999999999, 99999999999999999999)"), ""))
                .find("more elements than the limit"),
            std::string::npos);
}

TEST(NpyReader, TruncatedOrTrailingData) {
  EXPECT_EQ(ErrorOf(Npy(Header("<f4", "(2, 2)"), Bytes<float>({1, 2, 3}))),
            "g.npy: data: truncated: 12 bytes of data, the shape (2, 2) of <f4 needs 16");
  EXPECT_EQ(ErrorOf(Npy(Header("<f8", "(2,)"), Bytes<double>({1, 2, 3}))),
            "g.npy: data: 8 bytes after the 16 bytes the shape (2,) of <f8 needs (a size "
            "mismatch: one array per file)");
}

TEST(NpyReader, NonFiniteAndOutOfRangeValues) {
  EXPECT_EQ(ErrorOf(Npy(Header("<f4", "(2,)"),
                        Bytes<float>({1, std::numeric_limits<float>::quiet_NaN()}))),
            "g.npy: data: element 1 is not finite (nan)");
  EXPECT_EQ(ErrorOf(Npy(Header("<f8", "(1,)"), Bytes<double>({1e39}))),
            "g.npy: data: element 0 is outside float32's range");
}

TEST(NpyReader, FileErrorsNameTheFile) {
  try {
    ReadNpyFile("/nonexistent/grad.npy", 100);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "/nonexistent/grad.npy: <document>: cannot read file (No such file or directory)");
  }
  const std::filesystem::path p = std::filesystem::temp_directory_path() / "npy_reader_test.npy";
  {
    std::ofstream out(p, std::ios::binary);
    out << Npy(Header("<f4", "(3,)"), Bytes<float>({1, 2, 3}));
  }
  EXPECT_EQ(ReadNpyFile(p.string(), 100).values, (std::vector<float>{1, 2, 3}));
  // Larger than any array of 2 elements could make it: refused unread.
  {
    std::ofstream out(p, std::ios::binary);
    out << std::string(20000, 'x');
  }
  try {
    ReadNpyFile(p.string(), 2);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("larger than"), std::string::npos) << e.what();
  }
  std::filesystem::remove(p);
}

}  // namespace
}  // namespace stratasim
