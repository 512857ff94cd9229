// links.json's per-strategy object (link_usage.h).
#include "core/link_usage.h"

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace stratasim {
namespace {

using Json = nlohmann::ordered_json;

const Json& Member(const Json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key)) {
    throw Error("link usage: " + where + ": missing key \"" + key + "\"");
  }
  return j.at(key);
}

double Number(const Json& j, const char* key, const std::string& where) {
  const Json& v = Member(j, key, where);
  if (!v.is_number()) throw Error("link usage: " + where + "." + key + ": not a number");
  return v.get<double>();
}

std::vector<double> Numbers(const Json& j, const char* key, const std::string& where) {
  const Json& v = Member(j, key, where);
  if (!v.is_array()) throw Error("link usage: " + where + "." + key + ": not an array");
  std::vector<double> out;
  out.reserve(v.size());
  for (const Json& x : v) {
    if (!x.is_number()) throw Error("link usage: " + where + "." + key + ": not a number");
    out.push_back(x.get<double>());
  }
  return out;
}

std::string Text(const Json& j, const char* key, const std::string& where) {
  const Json& v = Member(j, key, where);
  if (!v.is_string()) throw Error("link usage: " + where + "." + key + ": not a string");
  return v.get<std::string>();
}

}  // namespace

std::string LinkUsageToJson(const LinkUsage& u) {
  Json j;
  j["edges_s"] = u.edges_s;
  Json links = Json::array();
  for (const LinkSeries& l : u.links) {
    Json x;
    x["name"] = l.name;
    x["label"] = l.label;
    x["bandwidth_Bps"] = l.bandwidth_Bps;
    x["bytes"] = l.bytes;
    x["bytes_per_interval"] = l.bytes_per_interval;
    links.push_back(std::move(x));
  }
  j["links"] = std::move(links);
  j["links_used"] = u.links_used;
  j["bytes_total"] = u.bytes_total;
  return j.dump();
}

LinkUsage LinkUsageFromJson(const std::string& text) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("link usage: not JSON: ") + e.what());
  }
  LinkUsage u;
  u.edges_s = Numbers(j, "edges_s", "usage");
  // The recorder never writes more (link_usage.h): a larger file is not one of ours, and the
  // report would size its charts by it.
  if (u.edges_s.size() > static_cast<size_t>(kMaxLinkIntervals) + 1) {
    throw Error("link usage: usage.edges_s: " + std::to_string(u.edges_s.size()) +
                " bounds, at most " + std::to_string(kMaxLinkIntervals + 1));
  }
  const Json& links = Member(j, "links", "usage");
  if (!links.is_array()) throw Error("link usage: usage.links: not an array");
  if (links.size() > static_cast<size_t>(kMaxLinkSeries)) {
    throw Error("link usage: usage.links: " + std::to_string(links.size()) + " links, at most " +
                std::to_string(kMaxLinkSeries));
  }
  for (size_t i = 0; i < links.size(); ++i) {
    const std::string where = "links[" + std::to_string(i) + "]";
    LinkSeries l;
    l.name = Text(links[i], "name", where);
    l.label = Text(links[i], "label", where);
    l.bandwidth_Bps = Number(links[i], "bandwidth_Bps", where);
    l.bytes = Number(links[i], "bytes", where);
    l.bytes_per_interval = Numbers(links[i], "bytes_per_interval", where);
    if (!u.edges_s.empty() && l.bytes_per_interval.size() + 1 != u.edges_s.size()) {
      throw Error("link usage: " + where +
                  ".bytes_per_interval: " + std::to_string(l.bytes_per_interval.size()) +
                  " intervals, edges_s gives " + std::to_string(u.edges_s.size() - 1));
    }
    u.links.push_back(std::move(l));
  }
  u.links_used = static_cast<int>(Number(j, "links_used", "usage"));
  u.bytes_total = Number(j, "bytes_total", "usage");
  return u;
}

}  // namespace stratasim
