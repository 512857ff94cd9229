#include "sim/link_labels.h"

#include <cctype>
#include <cstddef>

namespace stratasim::sim {
namespace {

// A direction suffix of MakeDuplex (sim/platform.cpp): `_up` away from the endpoint the link
// belongs to, `_down` towards it, `_half` one link for both.
enum class Dir { kNone, kUp, kDown, kBoth };

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Reads `word` then a number at `*at`, moving past them; false (and `*at` unchanged) if absent.
bool Take(const std::string& s, size_t* at, const std::string& word, std::string* number) {
  if (s.compare(*at, word.size(), word) != 0) return false;
  size_t i = *at + word.size();
  const size_t first = i;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == first) return false;
  if (number) *number = s.substr(first, i - first);
  *at = i;
  return true;
}

bool Take(const std::string& s, size_t* at, const std::string& word) {
  if (s.compare(*at, word.size(), word) != 0) return false;
  *at += word.size();
  return true;
}

// "A → B", "B → A" or "A ↔ B" as the direction says (`up`: from `a` to `b`).
std::string Arrow(Dir d, const std::string& a, const std::string& b) {
  if (d == Dir::kBoth) return a + " ↔ " + b;
  return d == Dir::kDown ? b + " → " + a : a + " → " + b;
}

// A link of server `server`'s fabric, `rest` being the name after "s<server>".
std::string ServerLink(const std::string& server, const std::string& rest, Dir d) {
  const std::string srv = "server " + server + " ";
  size_t at = 0;
  std::string a, b;
  if (Take(rest, &at, "g", &a)) {
    const std::string gpu = srv + "GPU " + a;
    if (rest.compare(at, std::string::npos, "_nvs") == 0) return Arrow(d, gpu, "NVSwitch");
    if (rest.compare(at, std::string::npos, "_pcie") == 0) return Arrow(d, gpu, "PCIe switch");
    if (rest.compare(at, std::string::npos, "_host") == 0) return Arrow(d, gpu, "host CPU");
    return "";
  }
  if (Take(rest, &at, "nvl", &a) && Take(rest, &at, "_", &b) && at == rest.size()) {
    return srv + "NVLink " + Arrow(d, "GPU " + a, "GPU " + b);
  }
  at = 0;
  if (Take(rest, &at, "psw", &a) && Take(rest, &at, "_uplink") && at == rest.size()) {
    return Arrow(d, srv + "PCIe switch " + a, "CPU");
  }
  at = 0;
  if (Take(rest, &at, "nic", &a) && at == rest.size()) return Arrow(d, srv + "NIC " + a, "fabric");
  at = 0;
  if (d == Dir::kNone && Take(rest, &at, "socket", &a) && Take(rest, &at, "to", &b) &&
      at == rest.size()) {
    return srv + "CPU socket " + a + " → socket " + b;
  }
  return "";
}

}  // namespace

std::string LinkLabel(const std::string& name) {
  std::string base = name;
  Dir d = Dir::kNone;
  for (const auto& [tail, dir] : {std::pair<const char*, Dir>{"_up", Dir::kUp},
                                  {"_down", Dir::kDown},
                                  {"_half", Dir::kBoth}}) {
    if (EndsWith(name, tail)) {
      base = name.substr(0, name.size() - std::string(tail).size());
      d = dir;
      break;
    }
  }
  size_t at = 0;
  std::string server, leaf, rail;
  std::string label;
  if (Take(base, &at, "s", &server)) {
    label = ServerLink(server, base.substr(at), d);
  } else if (Take(base, &at, "leaf", &leaf)) {
    const bool by_rail = Take(base, &at, "_rail", &rail);
    if (d != Dir::kNone && base.compare(at, std::string::npos, "_uplink") == 0) {
      label = Arrow(d, "leaf " + leaf + (by_rail ? " rail " + rail : ""), "spine");
    }
  }
  return label.empty() ? name : label;
}

}  // namespace stratasim::sim
