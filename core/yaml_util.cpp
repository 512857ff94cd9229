#include "core/yaml_util.h"

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cctype>
#include <climits>
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

bool IsPlainName(const std::string& s) {
  if (s.empty() || s.size() > limits::kNameLength || s[0] == '.') return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') {
      return false;
    }
  }
  return true;
}

SourceLocation Reader::Where(const YAML::Node& n) const { return At(file_, n.Mark()); }

SourceLocation Reader::WhereOf(const Field& f) const {
  return Where(f.value.IsNull() ? f.key : f.value);
}

void Reader::Fail(const Field& f, const std::string& rule) const {
  throw ConfigError(WhereOf(f), f.path, f.value.IsScalar() ? f.value.Scalar() : "", rule);
}

void Reader::FailAt(const YAML::Node& at, const std::string& key, const std::string& rule) const {
  throw ConfigError(Where(at), key, "", rule);
}

std::string Reader::FirstAt(const YAML::Node& n) const {
  return "first at line " + std::to_string(Where(n).line);
}

std::string Reader::String(const Field& f) const {
  if (!f.value.IsScalar()) Fail(f, "must be a string, not " + KindOf(f.value));
  return f.value.Scalar();
}

std::string Reader::Name(const Field& f) const {
  std::string s = String(f);
  if (s.empty()) Fail(f, "must not be empty");
  return s;
}

std::string Reader::PlainName(const Field& f) const {
  std::string s = String(f);
  if (!IsPlainName(s)) {
    Fail(f,
         "must match [A-Za-z0-9_-][A-Za-z0-9._-]* and be at most 128 characters (it names "
         "output files)");
  }
  return s;
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

int Reader::Int(const Field& f, int min_value) const {
  long long v = 0;
  const bool parsed = f.value.IsScalar() && ParseInteger(f.value.Scalar(), &v);
  if (parsed && v > INT_MAX) {
    // Counts are held as int: say so rather than call 2^31 "not an integer".
    Fail(f, "must be at most 2147483647 (counts are 32-bit; docs/limits.md)");
  }
  if (!parsed || v < min_value) Fail(f, "must be an integer >= " + std::to_string(min_value));
  return static_cast<int>(v);
}

bool Reader::AutoOrOff(const Field& f) const {
  const std::string v = String(f);
  if (v != "auto" && v != "off") Fail(f, "must be one of: auto, off");
  return v == "auto";
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

template <typename Parser>
double Reader::Quantity(const Field& f, Parser parse, double min_value, double max_value,
                        const char* range) const {
  const std::string text = String(f);
  double v = 0;
  try {
    v = parse(text);
  } catch (const UnitError& e) {
    Fail(f, e.what());
  }
  if (min_value > 0 && v <= 0) Fail(f, "must be greater than 0");
  if (v < min_value || v > max_value) {
    Fail(f, std::string("must be in ") + range + " (docs/limits.md)");
  }
  return v;
}

double Reader::Seconds(const Field& f) const {
  return Quantity(f, ParseSeconds, 0, limits::kMaxLatencySeconds, "[0s, 1s]");
}

double Reader::Bandwidth(const Field& f) const {
  return Quantity(f, ParseBandwidthBps, limits::kMinBandwidthBps, limits::kMaxBandwidthBps,
                  "[1kB/s, 1PB/s]");
}

double Reader::Bytes(const Field& f) const {
  return Quantity(f, ParseBytes, limits::kMinMemoryBytes, limits::kMaxMemoryBytes, "[1MB, 1PB]");
}

double Reader::Flops(const Field& f) const {
  return Quantity(f, ParseFlops, limits::kMinPeakFlops, limits::kMaxPeakFlops,
                  "[1GFLOPS, 1EFLOPS]");
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

Map::Map(const Reader& reader, const Field& self, const std::vector<std::string>& known,
         bool any_key)
    : reader_(reader), self_(self) {
  if (!self.value.IsMap()) {
    std::string rule = "must be a map, not " + KindOf(self.value);
    if (!known.empty()) rule += " (keys: " + Join(known) + ")";
    reader.Fail(self, rule);
  }
  for (const auto& kv : self.value) {
    const YAML::Node& key = kv.first;
    if (!key.IsScalar()) reader.FailAt(key, self.path, "keys must be plain strings");
    const std::string name = key.Scalar();
    Field entry{PathOf(name), key, kv.second};
    for (const auto& [seen, earlier] : entries_) {
      if (seen == name) {
        reader.FailAt(key, entry.path, "duplicate key (" + reader.FirstAt(earlier.key) + ")");
      }
    }
    if (!any_key && std::find(known.begin(), known.end(), name) == known.end()) {
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

Field Map::Require(const std::string& key, const std::string& why) const {
  std::optional<Field> f = Get(key);
  if (!f) {
    reader_.FailAt(self_.value.IsNull() ? self_.key : self_.value, PathOf(key),
                   "required field missing" + (why.empty() ? "" : " (" + why + ")"));
  }
  return *f;
}

std::string Map::PathOf(const std::string& key) const {
  return self_.path.empty() ? key : self_.path + "." + key;
}

}  // namespace stratasim::yaml
