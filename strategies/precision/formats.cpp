#include "strategies/precision/formats.h"

#include <cstdio>

namespace stratasim {
namespace {

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string Trim(const std::string& s) {
  const size_t first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  const size_t last = s.find_last_not_of(" \t");
  return s.substr(first, last - first + 1);
}

std::string BitsText(DType d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g bits", FormatBits(d));
  return buf;
}

}  // namespace

const std::vector<std::string>& LayerFormatNames() {
  static const std::vector<std::string> names = {"bf16", "fp16", "fp8", "int8", "int4"};
  return names;
}

double FormatBits(DType d) { return 8 * BytesPerElement(d); }

std::vector<DType> ParseFormatList(const OptionReader& opt, const std::string& key,
                                   const std::string& text) {
  const std::string known = "known: " + Join(LayerFormatNames());
  if (Trim(text).empty()) {
    throw opt.Fail(key,
                   "the list of formats is empty: give one or more, highest precision "
                   "first (" +
                       known + ")");
  }
  std::vector<DType> formats;
  size_t from = 0;
  while (true) {
    const size_t comma = text.find(',', from);
    const std::string name =
        Trim(text.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
    if (name.empty()) {
      throw opt.Fail(key, "entry " + std::to_string(formats.size() + 1) +
                              " of the list of formats is empty (" + known + ")");
    }
    bool listed = false;
    for (const std::string& n : LayerFormatNames()) listed = listed || n == name;
    if (!listed) throw opt.Fail(key, "unknown format \"" + name + "\" (" + known + ")");
    const DType d = *ParseDType(name);
    if (!formats.empty() && FormatBits(d) >= FormatBits(formats.back())) {
      throw opt.Fail(key, "formats must decrease in precision, highest first: " + name + " (" +
                              BitsText(d) + ") follows " + std::string(ToString(formats.back())) +
                              " (" + BitsText(formats.back()) + ")");
    }
    formats.push_back(d);
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return formats;
}

void CheckFormatsRun(const ClusterSpec& cluster, const std::vector<DType>& formats,
                     const OptionReader& opt, const std::string& key) {
  for (size_t g = 0; g < cluster.groups.size(); ++g) {
    const GpuSpec& gpu = cluster.GpuOfGroup(static_cast<int>(g));
    for (DType d : formats) {
      if (gpu.Supports(d)) continue;
      std::vector<std::string> has;
      for (const auto& [dtype, peak] : gpu.peak_flops) has.emplace_back(ToString(dtype));
      throw opt.Fail(key, "GPU kind " + gpu.name + " (server group " + cluster.groups[g].name +
                              ") cannot run " + std::string(ToString(d)) +
                              " GEMMs: the catalog has no " + std::string(ToString(d)) +
                              " peak for it (it has " + Join(has) + ")");
    }
  }
}

void CheckStorageFormat(const TrainingSpec& training, const OptionReader& opt) {
  if (training.precision != DType::kFP8) return;
  throw opt.Fail("",
                 "layer-wise precision chooses each GEMM's format itself: train in bf16, "
                 "fp16 or fp32 (training.precision fp8 already runs the transformer GEMMs "
                 "in FP8)");
}

}  // namespace stratasim
