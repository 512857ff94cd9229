#include "report/links_json.h"

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace stratasim {
namespace {

constexpr char kFormat[] = "stratasim-links";
constexpr int kVersion = 1;

}  // namespace

std::string LinksToJson(const std::vector<StrategyLinks>& strategies) {
  // Built as text around LinkUsageToJson's objects, so that the figures are written by the one
  // writer the readers' LinkUsageFromJson matches.
  std::string out = std::string("{\"format\": \"") + kFormat +
                    "\", \"version\": " + std::to_string(kVersion) + ", \"strategies\": [";
  for (size_t i = 0; i < strategies.size(); ++i) {
    const StrategyLinks& s = strategies[i];
    out += i == 0 ? "\n" : ",\n";
    out += "  {\"name\": " + nlohmann::json(s.name).dump() +
           ", \"usage\": " + (s.usage ? LinkUsageToJson(*s.usage) : std::string("null")) + "}";
  }
  out += strategies.empty() ? "]}\n" : "\n]}\n";
  return out;
}

std::vector<StrategyLinks> LinksFromJson(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("links.json: not JSON: ") + e.what());
  }
  if (!j.is_object() || j.value("format", "") != kFormat) {
    throw Error(std::string("links.json: \"format\" is not \"") + kFormat + "\"");
  }
  if (!j.contains("version") || j["version"] != kVersion) {
    throw Error("links.json: \"version\" is not " + std::to_string(kVersion));
  }
  if (!j.contains("strategies") || !j["strategies"].is_array()) {
    throw Error("links.json: \"strategies\" is not an array");
  }
  std::vector<StrategyLinks> out;
  for (size_t i = 0; i < j["strategies"].size(); ++i) {
    const nlohmann::json& s = j["strategies"][i];
    const std::string where = "links.json: strategies[" + std::to_string(i) + "]";
    if (!s.is_object() || !s.contains("name") || !s["name"].is_string()) {
      throw Error(where + ": no \"name\" string");
    }
    if (!s.contains("usage")) throw Error(where + ": no \"usage\"");
    StrategyLinks l;
    l.name = s["name"].get<std::string>();
    if (!s["usage"].is_null()) {
      try {
        l.usage = LinkUsageFromJson(s["usage"].dump());
      } catch (const Error& e) {
        throw Error(where + " (" + l.name + "): " + e.what());
      }
    }
    out.push_back(std::move(l));
  }
  return out;
}

}  // namespace stratasim
