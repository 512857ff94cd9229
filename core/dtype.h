// Numeric formats of tensors and of the GPU math that consumes them.
#ifndef STRATASIM_CORE_DTYPE_H_
#define STRATASIM_CORE_DTYPE_H_

#include <optional>
#include <string_view>

namespace stratasim {

enum class DType { kFP32, kTF32, kFP16, kBF16, kFP8, kINT8, kINT4 };

inline constexpr DType kAllDTypes[] = {DType::kFP32, DType::kTF32, DType::kFP16, DType::kBF16,
                                       DType::kFP8,  DType::kINT8, DType::kINT4};

// "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "int4".
std::string_view ToString(DType d);
std::optional<DType> ParseDType(std::string_view text);
// Storage size of one element (TF32 is stored as FP32; INT4 packs two per byte).
double BytesPerElement(DType d);

}  // namespace stratasim

#endif  // STRATASIM_CORE_DTYPE_H_
