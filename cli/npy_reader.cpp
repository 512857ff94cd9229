#include "cli/npy_reader.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>

#include "core/error.h"
#include "core/input_file.h"

namespace stratasim {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicBytes = 6;

[[noreturn]] void Fail(const std::string& file, const std::string& key, const std::string& value,
                       const std::string& rule) {
  throw ConfigError(SourceLocation{file, 0, 0}, key, value, rule);
}

// The header's dict literal, as NumPy's repr writes it: string keys; values a string, True or
// False, or a tuple of non-negative integers. Anything else is refused, not guessed at.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& file) : t_(text), file_(file) {}

  struct Value {
    std::string text;                             // as written, for messages
    std::optional<std::string> string;            // 'descr'
    std::optional<bool> boolean;                  // fortran_order
    std::optional<std::vector<long long>> tuple;  // shape
  };

  // Calls `on(key, value)` for every entry.
  template <typename F>
  void Parse(F on) {
    Expect('{');
    for (;;) {
      Skip();
      if (Peek() == '}') break;
      const std::string key = String();
      Expect(':');
      Skip();
      const size_t start = i_;
      Value v = ParseValue();
      v.text = std::string(t_.substr(start, i_ - start));
      on(key, v);
      Skip();
      if (Peek() == ',') {
        ++i_;
        continue;
      }
      if (Peek() != '}') Bad("',' or '}' expected");
    }
    ++i_;
    Skip();
    if (i_ != t_.size()) Bad("text after the dict");
  }

 private:
  [[noreturn]] void Bad(const std::string& what) {
    Fail(file_, "header", "",
         "not the dict literal of a .npy header: " + what + " at byte " + std::to_string(i_) +
             " of the header");
  }
  char Peek() const { return i_ < t_.size() ? t_[i_] : '\0'; }
  void Skip() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\t')) ++i_;
  }
  void Expect(char c) {
    Skip();
    if (Peek() != c) Bad(std::string("'") + c + "' expected");
    ++i_;
  }
  std::string String() {
    const char quote = Peek();
    if (quote != '\'' && quote != '"') Bad("a quoted key expected");
    const size_t end = t_.find(quote, i_ + 1);
    if (end == std::string_view::npos) Bad("unterminated string");
    std::string s(t_.substr(i_ + 1, end - i_ - 1));
    i_ = end + 1;
    return s;
  }
  bool Word(std::string_view w) {
    if (t_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }
  Value ParseValue() {
    Value v;
    const char c = Peek();
    if (c == '\'' || c == '"') {
      v.string = String();
    } else if (Word("True")) {
      v.boolean = true;
    } else if (Word("False")) {
      v.boolean = false;
    } else if (c == '(') {
      ++i_;
      std::vector<long long> dims;
      for (;;) {
        Skip();
        if (Peek() == ')') break;
        if (Peek() < '0' || Peek() > '9') Bad("a non-negative integer expected in the tuple");
        long long d = 0;
        while (Peek() >= '0' && Peek() <= '9') {
          // Past 2^62 any dimension is refused as too large anyway; stop it overflowing.
          if (d < (1LL << 58)) d = d * 10 + (Peek() - '0');
          ++i_;
        }
        dims.push_back(d);
        Skip();
        if (Peek() == ',') {
          ++i_;
        } else if (Peek() != ')') {
          Bad("',' or ')' expected in the tuple");
        }
      }
      ++i_;
      v.tuple = dims;
    } else {
      Bad("a string, True, False or a tuple expected");
    }
    return v;
  }

  std::string_view t_;
  const std::string& file_;
  size_t i_ = 0;
};

std::string ShapeText(const std::vector<long long>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

}  // namespace

NpyArray ParseNpy(std::string_view bytes, const std::string& file, long long max_elements) {
  if (bytes.size() < kMagicBytes || std::memcmp(bytes.data(), kMagic, kMagicBytes) != 0) {
    Fail(file, "magic", "", "not a .npy file: it does not start with \"\\x93NUMPY\"");
  }
  if (bytes.size() < kMagicBytes + 2) Fail(file, "version", "", "truncated before the version");
  const int major = static_cast<unsigned char>(bytes[6]);
  const int minor = static_cast<unsigned char>(bytes[7]);
  if ((major != 1 && major != 2) || minor != 0) {
    Fail(file, "version", std::to_string(major) + "." + std::to_string(minor),
         "unsupported .npy version (1.0 and 2.0 are read)");
  }
  const size_t length_bytes = major == 1 ? 2 : 4;
  const size_t preamble = kMagicBytes + 2 + length_bytes;
  if (bytes.size() < preamble) Fail(file, "header", "", "truncated before the header length");
  std::uint64_t header_bytes = 0;
  for (size_t i = 0; i < length_bytes; ++i) {
    header_bytes |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
  }
  if (header_bytes > kMaxNpyHeaderBytes) {
    Fail(file, "header", std::to_string(header_bytes) + " bytes",
         "too long: at most " + std::to_string(kMaxNpyHeaderBytes) +
             " bytes, NumPy's own default bound (max_header_size)");
  }
  if (bytes.size() < preamble + header_bytes) {
    Fail(file, "header", std::to_string(header_bytes) + " bytes",
         "truncated: the file ends " + std::to_string(preamble + header_bytes - bytes.size()) +
             " bytes before the header does");
  }
  const std::string_view header = bytes.substr(preamble, header_bytes);

  std::optional<std::string> descr;
  std::optional<bool> fortran;
  std::optional<std::vector<long long>> shape;
  HeaderParser(header, file).Parse([&](const std::string& key, const HeaderParser::Value& v) {
    auto twice = [&](bool seen) {
      if (seen) Fail(file, key, "", "given twice in the header");
    };
    if (key == "descr") {
      twice(descr.has_value());
      if (!v.string) Fail(file, key, v.text, "must be a dtype string such as '<f4'");
      descr = *v.string;
    } else if (key == "fortran_order") {
      twice(fortran.has_value());
      if (!v.boolean) Fail(file, key, v.text, "must be True or False");
      fortran = *v.boolean;
    } else if (key == "shape") {
      twice(shape.has_value());
      if (!v.tuple) Fail(file, key, v.text, "must be a tuple of integers");
      shape = *v.tuple;
    } else {
      Fail(file, "header", key, "unknown key (a .npy header has descr, fortran_order and shape)");
    }
  });
  if (!descr || !fortran || !shape) {
    Fail(file, "header", "",
         std::string("lacks the key '") +
             (!descr     ? "descr"
              : !fortran ? "fortran_order"
                         : "shape") +
             "'");
  }
  if (*descr != "<f4" && *descr != "<f8") {
    Fail(file, "descr", *descr,
         "unsupported dtype: only '<f4' (float32) and '<f8' (float64), little-endian "
         "(save with grad.astype(np.float32))");
  }
  if (*fortran) {
    Fail(file, "fortran_order", "True",
         "Fortran-order arrays are not read: save a C-order one (np.ascontiguousarray)");
  }
  if (shape->empty() || shape->size() > 2) {
    Fail(file, "shape", ShapeText(*shape), "must be 1-D (n,) or 2-D (rows, cols)");
  }
  NpyArray a;
  a.dtype = *descr;
  a.rows = (*shape)[0];
  a.cols = shape->size() == 2 ? (*shape)[1] : 1;
  if (a.rows < 1 || a.cols < 1) Fail(file, "shape", ShapeText(*shape), "has no elements");
  if (a.rows > max_elements || a.cols > max_elements || a.rows > max_elements / a.cols) {
    Fail(file, "shape", ShapeText(*shape),
         "more elements than the limit of " + std::to_string(max_elements) + " (--max-elements)");
  }
  const long long n = a.rows * a.cols;
  const size_t item = *descr == "<f4" ? 4 : 8;
  const size_t need = static_cast<size_t>(n) * item;
  const size_t have = bytes.size() - preamble - header_bytes;
  if (have < need) {
    Fail(file, "data", "",
         "truncated: " + std::to_string(have) + " bytes of data, the shape " + ShapeText(*shape) +
             " of " + *descr + " needs " + std::to_string(need));
  }
  if (have > need) {
    Fail(file, "data", "",
         std::to_string(have - need) + " bytes after the " + std::to_string(need) +
             " bytes the shape " + ShapeText(*shape) + " of " + *descr +
             " needs (a size mismatch: one array per file)");
  }
  // Little-endian bytes into host values: byte by byte, so the host's order does not matter.
  const unsigned char* data =
      reinterpret_cast<const unsigned char*>(bytes.data()) + preamble + header_bytes;
  a.values.resize(static_cast<size_t>(n));
  for (long long i = 0; i < n; ++i) {
    std::uint64_t bits = 0;
    for (size_t b = 0; b < item; ++b)
      bits |= static_cast<std::uint64_t>(data[i * item + b]) << (8 * b);
    double v;
    if (item == 4) {
      const std::uint32_t b32 = static_cast<std::uint32_t>(bits);
      float f;
      std::memcpy(&f, &b32, 4);
      v = f;
    } else {
      std::memcpy(&v, &bits, 8);
    }
    if (!std::isfinite(v)) {
      Fail(file, "data", "",
           "element " + std::to_string(i) + " is not finite (" + (std::isnan(v) ? "nan" : "inf") +
               ")");
    }
    if (std::fabs(v) > std::numeric_limits<float>::max()) {
      Fail(file, "data", "", "element " + std::to_string(i) + " is outside float32's range");
    }
    a.values[static_cast<size_t>(i)] = static_cast<float>(v);
  }
  return a;
}

NpyArray ReadNpyFile(const std::string& path, long long max_elements) {
  const size_t bound = 12 + kMaxNpyHeaderBytes + static_cast<size_t>(max_elements) * 8;
  return ParseNpy(ReadInputFile(path, bound, "a .npy file of --max-elements values"), path,
                  max_elements);
}

}  // namespace stratasim
