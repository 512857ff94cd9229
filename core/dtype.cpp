#include "core/dtype.h"

namespace stratasim {

std::string_view ToString(DType d) {
  switch (d) {
    case DType::kFP32:
      return "fp32";
    case DType::kTF32:
      return "tf32";
    case DType::kFP16:
      return "fp16";
    case DType::kBF16:
      return "bf16";
    case DType::kFP8:
      return "fp8";
    case DType::kINT8:
      return "int8";
    case DType::kINT4:
      return "int4";
  }
  return "?";
}

std::optional<DType> ParseDType(std::string_view text) {
  for (DType d : kAllDTypes) {
    if (ToString(d) == text) return d;
  }
  return std::nullopt;
}

double BytesPerElement(DType d) {
  switch (d) {
    case DType::kFP32:
    case DType::kTF32:
      return 4;
    case DType::kFP16:
    case DType::kBF16:
      return 2;
    case DType::kFP8:
    case DType::kINT8:
      return 1;
    case DType::kINT4:
      return 0.5;
  }
  return 4;
}

DType StorageDType(DType precision) { return precision == DType::kFP8 ? DType::kBF16 : precision; }

}  // namespace stratasim
