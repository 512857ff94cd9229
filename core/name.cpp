#include "core/name.h"

#include <deque>
#include <mutex>
#include <ostream>
#include <unordered_map>

#include "core/error.h"

namespace stratasim {
namespace {

// Every distinct string once; index 0 is "". std::deque keeps the strings in place as it
// grows, so the map's string_view keys stay valid.
class Pool {
 public:
  Pool() {
    strings_.emplace_back();
    index_.emplace(strings_.back(), 0);
    last_text_ = strings_.back();
  }

  std::uint32_t Intern(std::string_view s) {
    std::lock_guard<std::mutex> lock(mu_);
    if (s == last_text_) return last_id_;  // planners repeat one prefix for many tasks
    auto it = index_.find(s);
    std::uint32_t id;
    if (it != index_.end()) {
      id = it->second;
    } else {
      if (strings_.size() >= 0xffffffffu) throw Error("too many distinct task names");
      id = static_cast<std::uint32_t>(strings_.size());
      strings_.emplace_back(s);
      index_.emplace(strings_.back(), id);
    }
    last_text_ = strings_[id];
    last_id_ = id;
    return id;
  }

  std::string Text(std::uint32_t prefix, std::uint32_t rest) {
    std::lock_guard<std::mutex> lock(mu_);
    if (prefix == 0) return strings_[rest];
    return strings_[prefix] + strings_[rest];
  }

 private:
  std::mutex mu_;
  std::deque<std::string> strings_;
  std::unordered_map<std::string_view, std::uint32_t> index_;
  std::string_view last_text_;
  std::uint32_t last_id_ = 0;
};

Pool& ThePool() {
  static Pool* pool = new Pool();  // never destroyed: names may be read during exit
  return *pool;
}

}  // namespace

Name::Name(std::string_view text) : rest_(text.empty() ? 0 : ThePool().Intern(text)) {}

Name Name::Join(std::string_view prefix, std::string_view rest) {
  Name n;
  n.prefix_ = prefix.empty() ? 0 : ThePool().Intern(prefix);
  n.rest_ = rest.empty() ? 0 : ThePool().Intern(rest);
  return n;
}

std::string Name::str() const { return empty() ? std::string() : ThePool().Text(prefix_, rest_); }

std::string operator+(const std::string& a, const Name& b) { return a + b.str(); }
std::string operator+(const Name& a, const std::string& b) { return a.str() + b; }
std::string operator+(const char* a, const Name& b) { return a + b.str(); }
std::string operator+(const Name& a, const char* b) { return a.str() + b; }
std::ostream& operator<<(std::ostream& os, const Name& n) { return os << n.str(); }

}  // namespace stratasim
