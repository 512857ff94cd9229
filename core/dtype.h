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

// The format activations, gradients, elementwise kernels and communication use when training
// in `precision`. FP8 training runs only the GEMMs with weights in FP8 and keeps everything
// else in BF16, as Transformer Engine trains (Micikevicius et al. 2022, "FP8 Formats for Deep
// Learning", Section 4), so this is BF16 for FP8 and `precision` itself otherwise.
DType StorageDType(DType precision);

}  // namespace stratasim

#endif  // STRATASIM_CORE_DTYPE_H_
