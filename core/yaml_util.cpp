#include "core/yaml_util.h"

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "core/input_file.h"
#include "core/limits.h"
#include "core/text_number.h"
#include "core/units.h"

namespace stratasim::yaml {

std::string KindOf(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "a scalar";
    default:
      return "empty";
  }
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

namespace {

// A lone CR (classic Mac line ends) is no line break to yaml-cpp: the whole file would read as
// one line, and a comment on the first line would swallow it.
void RefuseLoneCarriageReturn(const std::string& text, const std::string& file_label) {
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    } else if (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n')) {
      throw ConfigError(SourceLocation{file_label, line, static_cast<int>(i - line_start) + 1}, "",
                        "",
                        "a carriage return (CR) alone ends a line here; use LF or CR LF line "
                        "endings");
    }
  }
}

}  // namespace

namespace {

// Counts the documents of a stream (only their starts matter), with where each starts.
class DocumentCounter : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;
  void OnDocumentStart(const YAML::Mark& m) override { starts.push_back(m); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

SourceLocation At(const std::string& file_label, const YAML::Mark& m) {
  return m.is_null() ? SourceLocation{file_label, 0, 0}
                     : SourceLocation{file_label, m.line + 1, m.column + 1};
}

}  // namespace

Field ParseDocument(const std::string& text, const std::string& file_label) {
  RefuseLoneCarriageReturn(text, file_label);
  YAML::Node root;
  try {
    // Documents first, at most two: YAML::LoadAll would do it, but yaml-cpp 0.7 loops forever
    // on some inputs (a lone ",", jbeder/yaml-cpp#1040: a document that consumes nothing).
    std::istringstream stream(text);
    YAML::Parser parser(stream);
    DocumentCounter counter;
    for (int i = 0; i < 2 && parser.HandleNextDocument(counter); ++i) {
    }
    if (counter.starts.size() > 1) {
      const YAML::Mark& second = counter.starts[1];
      if (second.pos == counter.starts[0].pos) {
        throw ConfigError(At(file_label, second), "", "",
                          "YAML syntax error: no document can start here");
      }
      // A second document would otherwise be silently ignored.
      throw ConfigError(At(file_label, second), "", "",
                        "a second YAML document (after ---): the file must hold exactly one");
    }
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(At(file_label, e.mark), "", "", "YAML syntax error: " + e.msg);
  }
  if (root.IsNull()) {
    throw ConfigError(SourceLocation{file_label, 1, 1}, "", "",
                      "the file holds no YAML document (it is empty, or only comments)");
  }
  return Field{"", root, root};
}

std::string ReadFile(const std::string& path, size_t max_bytes, const std::string& what) {
  return ReadInputFile(path, max_bytes, what);
}

SourceLocation Reader::Where(const YAML::Node& n) const {
  YAML::Mark m = n.Mark();
  if (m.is_null()) return SourceLocation{file_, 0, 0};
  return SourceLocation{file_, m.line + 1, m.column + 1};
}

void Reader::Fail(const Field& f, const std::string& rule) const {
  // An empty value is marked at the start of the next line: point at its key instead.
  const YAML::Node& at = f.value.IsNull() ? f.key : f.value;
  throw ConfigError(Where(at), f.path, f.value.IsScalar() ? f.value.Scalar() : "", rule);
}

void Reader::FailAt(const YAML::Node& at, const std::string& key, const std::string& rule) const {
  throw ConfigError(Where(at), key, "", rule);
}

std::string Reader::String(const Field& f) const {
  if (!f.value.IsScalar()) Fail(f, "must be a string, not " + KindOf(f.value));
  return f.value.Scalar();
}

long long Reader::Integer(const Field& f, long long min_value, long long max_value) const {
  long long v = 0;
  if (!f.value.IsScalar() || !ParseInteger(f.value.Scalar(), &v) || v < min_value ||
      v > max_value) {
    Fail(f, "must be an integer in [" + std::to_string(min_value) + ", " +
                std::to_string(max_value) + "]");
  }
  return v;
}

double Reader::Fraction(const Field& f) const {
  double v = 0;
  if (!f.value.IsScalar() || !ParseNumber(f.value.Scalar(), &v) ||
      v < limits::kMinMeasuredEfficiency || v > 1) {
    Fail(f, "must be a number in [0.0001, 1] (docs/limits.md)");
  }
  return v;
}

double Reader::Efficiency(const Field& f) const {
  double v = 0;
  if (!f.value.IsScalar() || !ParseNumber(f.value.Scalar(), &v) || v < limits::kMinEfficiency ||
      v > 1) {
    Fail(f, "must be a number in [0.01, 1] (a fraction of the peak)");
  }
  return v;
}

double Reader::PositiveNumber(const Field& f) const {
  double v = 0;
  if (!f.value.IsScalar() || !ParseNumber(f.value.Scalar(), &v) || v <= 0) {
    Fail(f, "must be a number greater than 0");
  }
  return v;
}

double Reader::Seconds(const Field& f) const {
  double v = 0;
  try {
    v = ParseSeconds(String(f));
  } catch (const UnitError& e) {
    Fail(f, e.what());
  }
  if (v > limits::kMaxLatencySeconds) Fail(f, "must be in [0s, 1s] (docs/limits.md)");
  return v;
}

double Reader::Bandwidth(const Field& f) const {
  double v = 0;
  try {
    v = ParseBandwidthBps(String(f));
  } catch (const UnitError& e) {
    Fail(f, e.what());
  }
  if (v <= 0) Fail(f, "must be greater than 0");
  if (v < limits::kMinBandwidthBps || v > limits::kMaxBandwidthBps) {
    Fail(f, "must be in [1kB/s, 1PB/s] (docs/limits.md)");
  }
  return v;
}

std::vector<Field> Reader::List(const Field& f, bool non_empty) const {
  if (!f.value.IsSequence()) Fail(f, "must be a list, not " + KindOf(f.value));
  if (non_empty && f.value.size() == 0) Fail(f, "must not be empty");
  std::vector<Field> items;
  for (size_t i = 0; i < f.value.size(); ++i) {
    YAML::Node item = f.value[i];
    items.push_back(Field{f.path + "[" + std::to_string(i) + "]", item, item});
  }
  return items;
}

Map::Map(const Reader& reader, const Field& self, const std::vector<std::string>& known)
    : reader_(reader), self_(self) {
  if (!self.value.IsMap()) {
    reader.Fail(self, "must be a map, not " + KindOf(self.value) + " (keys: " + Join(known) + ")");
  }
  for (const auto& kv : self.value) {
    const YAML::Node& key = kv.first;
    if (!key.IsScalar()) reader.FailAt(key, self.path, "keys must be plain strings");
    const std::string name = key.Scalar();
    Field entry{self.path.empty() ? name : self.path + "." + name, key, kv.second};
    for (const auto& [seen, earlier] : entries_) {
      if (seen == name) {
        reader.FailAt(
            key, entry.path,
            "duplicate key (first at line " + std::to_string(reader.Where(earlier.key).line) + ")");
      }
    }
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      reader.FailAt(key, entry.path, "unknown key (known: " + Join(known) + ")");
    }
    entries_.emplace_back(name, entry);
  }
}

std::optional<Field> Map::Get(const std::string& key) const {
  for (const auto& [name, field] : entries_) {
    if (name == key) return field;
  }
  return std::nullopt;
}

Field Map::Require(const std::string& key) const {
  std::optional<Field> f = Get(key);
  if (!f) {
    reader_.FailAt(self_.value.IsNull() ? self_.key : self_.value,
                   self_.path.empty() ? key : self_.path + "." + key, "required field missing");
  }
  return *f;
}

}  // namespace stratasim::yaml
