// Task names and labels as interned strings: 8 bytes in a Task instead of a std::string and its
// heap block (a 1,536-GPU plan holds millions of tasks; docs/scale.md).
//
// A Name is a prefix and a rest, each an index into one process-wide pool that stores every
// distinct string once. Planners name a kernel "it0/mb12/" + "layer3/qkv/fwd": a few hundred
// prefixes and a few hundred rests make millions of names. Name::Join keeps the two parts;
// a Name made from one string keeps it whole as its rest. Two Names are equal when their
// texts are, however they are split.
//
// The pool only grows; it is guarded by a mutex, so names may be made and read from several
// threads (the host backend's workers read them in error messages).
#ifndef STRATASIM_CORE_NAME_H_
#define STRATASIM_CORE_NAME_H_

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

namespace stratasim {

class Name {
 public:
  Name() = default;
  explicit Name(std::string_view text);
  Name(const std::string& text) : Name(std::string_view(text)) {}  // NOLINT: names are strings
  Name(const char* text) : Name(std::string_view(text)) {}         // NOLINT

  // prefix + rest, each part interned on its own.
  static Name Join(std::string_view prefix, std::string_view rest);

  std::string str() const;
  bool empty() const { return prefix_ == 0 && rest_ == 0; }

  friend bool operator==(const Name& a, const Name& b) {
    return (a.prefix_ == b.prefix_ && a.rest_ == b.rest_) || a.str() == b.str();
  }
  friend bool operator!=(const Name& a, const Name& b) { return !(a == b); }

 private:
  std::uint32_t prefix_ = 0;  // 0: the empty string
  std::uint32_t rest_ = 0;
};

// Name meets std::string in messages and comparisons.
std::string operator+(const std::string& a, const Name& b);
std::string operator+(const Name& a, const std::string& b);
std::string operator+(const char* a, const Name& b);
std::string operator+(const Name& a, const char* b);
inline bool operator==(const Name& a, const char* b) { return a.str() == b; }
inline bool operator==(const Name& a, const std::string& b) { return a.str() == b; }
std::ostream& operator<<(std::ostream& os, const Name& n);

}  // namespace stratasim

#endif  // STRATASIM_CORE_NAME_H_
