// The built-in GPU catalog. Every figure is a vendor datasheet or whitepaper number:
//   - peaks are dense (the "with sparsity" figures NVIDIA also prints are twice these);
//   - fp16/bf16 are tensor-core peaks with FP32 accumulation (what mixed-precision training
//     runs; GeForce parts run FP16 accumulation at twice that rate, which training does not use);
//   - tf32/fp8 are tensor-core peaks, fp8 with FP32 accumulation; int8 is the dense tensor-core
//     TOPS figure; fp32 is the non-tensor (CUDA core) peak;
//   - memory is in decimal bytes as the part is sold ("80 GB" = 80e9), bandwidth in B/s.
// A dtype the part has no units for is left out, so GpuSpec::Peak() refuses it.
#include <string>
#include <vector>

#include "core/hardware.h"

namespace stratasim {
namespace {

constexpr double kT = 1e12;  // tera
constexpr double kG = 1e9;   // giga

std::vector<GpuSpec> MakeCatalog() {
  std::vector<GpuSpec> c;

  // A100 SXM4 80GB: 19.5 TFLOPS FP32, 156 TF32, 312 FP16/BF16, 624 INT8, 1,248 INT4 TOPS (dense);
  // 80 GB HBM2e at 2,039 GB/s. No FP8 units (FP8 arrived with Hopper).
  c.push_back(GpuSpec{"A100-SXM4-80GB",
                      {{DType::kFP32, 19.5 * kT},
                       {DType::kTF32, 156 * kT},
                       {DType::kFP16, 312 * kT},
                       {DType::kBF16, 312 * kT},
                       {DType::kINT8, 624 * kT},
                       {DType::kINT4, 1248 * kT}},
                      80 * kG,
                      2039 * kG,
                      "NVIDIA A100 Tensor Core GPU datasheet (2021), NVIDIA Ampere GA100 "
                      "architecture whitepaper (2020)",
                      108});  // 108 SMs enabled in A100 (Ampere GA100 whitepaper)

  // A100 SXM4 40GB: same GA100 compute as the 80 GB part; 40 GB HBM2 at 1,555 GB/s.
  c.push_back(GpuSpec{"A100-SXM4-40GB",
                      {{DType::kFP32, 19.5 * kT},
                       {DType::kTF32, 156 * kT},
                       {DType::kFP16, 312 * kT},
                       {DType::kBF16, 312 * kT},
                       {DType::kINT8, 624 * kT},
                       {DType::kINT4, 1248 * kT}},
                      40 * kG,
                      1555 * kG,
                      "NVIDIA A100 Tensor Core GPU datasheet (2021), NVIDIA Ampere GA100 "
                      "architecture whitepaper (2020)",
                      108});  // 108 SMs, as the 80 GB part

  // H100 SXM5: 67 TFLOPS FP32, 495 TF32, 989 FP16/BF16, 1,979 FP8, 1,979 INT8 TOPS (dense,
  // half the datasheet's sparsity figures); 80 GB HBM3 at 3.35 TB/s. Hopper tensor cores have no
  // INT4.
  c.push_back(GpuSpec{"H100-SXM5",
                      {{DType::kFP32, 67 * kT},
                       {DType::kTF32, 495 * kT},
                       {DType::kFP16, 989 * kT},
                       {DType::kBF16, 989 * kT},
                       {DType::kFP8, 1979 * kT},
                       {DType::kINT8, 1979 * kT}},
                      80 * kG,
                      3350 * kG,
                      "NVIDIA H100 Tensor Core GPU datasheet (2023), NVIDIA H100 Tensor Core GPU "
                      "architecture whitepaper (Hopper, 2022)",
                      132});  // 132 SMs in H100 SXM5 (Hopper whitepaper)

  // H200 SXM: the H100's compute with 141 GB HBM3e at 4.8 TB/s.
  c.push_back(GpuSpec{"H200",
                      {{DType::kFP32, 67 * kT},
                       {DType::kTF32, 495 * kT},
                       {DType::kFP16, 989 * kT},
                       {DType::kBF16, 989 * kT},
                       {DType::kFP8, 1979 * kT},
                       {DType::kINT8, 1979 * kT}},
                      141 * kG,
                      4800 * kG,
                      "NVIDIA H200 Tensor Core GPU datasheet (2024)",
                      132});  // 132 SMs (the H100 SXM5 die)

  // V100 SXM2 32GB: 15.7 TFLOPS FP32, 125 FP16 tensor (mixed precision). Volta tensor cores
  // do FP16 only: no BF16, TF32, FP8 or INT8 tensor units. 32 GB HBM2 at 900 GB/s.
  c.push_back(GpuSpec{"V100-SXM2",
                      {{DType::kFP32, 15.7 * kT}, {DType::kFP16, 125 * kT}},
                      32 * kG,
                      900 * kG,
                      "NVIDIA Tesla V100 GPU datasheet (2020), NVIDIA Tesla V100 GPU architecture "
                      "whitepaper (Volta, 2017)",
                      80});  // 80 SMs in V100 (Volta whitepaper)

  // GeForce RTX 3090: 35.6 TFLOPS FP32, 35.6 TF32, 71 FP16/BF16 with FP32 accumulate (142 with
  // FP16 accumulate), 284 INT8 and 568 INT4 TOPS (dense); 24 GB GDDR6X at 936 GB/s.
  c.push_back(GpuSpec{"RTX3090",
                      {{DType::kFP32, 35.6 * kT},
                       {DType::kTF32, 35.6 * kT},
                       {DType::kFP16, 71 * kT},
                       {DType::kBF16, 71 * kT},
                       {DType::kINT8, 284 * kT},
                       {DType::kINT4, 568 * kT}},
                      24 * kG,
                      936 * kG,
                      "NVIDIA Ampere GA102 GPU architecture whitepaper (2020), Appendix A: "
                      "GeForce RTX 3090",
                      82});  // 82 SMs in RTX 3090 (GA102 whitepaper)

  // GeForce RTX 4090: 82.6 TFLOPS FP32, 82.6 TF32, 165.2 FP16/BF16 and 330.3 FP8 with FP32
  // accumulate, 660.6 INT8 and 1,321.2 INT4 TOPS (dense); 24 GB GDDR6X at 1,008 GB/s.
  c.push_back(GpuSpec{"RTX4090",
                      {{DType::kFP32, 82.6 * kT},
                       {DType::kTF32, 82.6 * kT},
                       {DType::kFP16, 165.2 * kT},
                       {DType::kBF16, 165.2 * kT},
                       {DType::kFP8, 330.3 * kT},
                       {DType::kINT8, 660.6 * kT},
                       {DType::kINT4, 1321.2 * kT}},
                      24 * kG,
                      1008 * kG,
                      "NVIDIA Ada Lovelace GPU architecture whitepaper (AD102, 2022), GeForce "
                      "RTX 4090",
                      128});  // 128 SMs in RTX 4090 (Ada whitepaper)

  // GeForce RTX 2080 Ti (reference clocks, not Founders Edition): 13.4 TFLOPS FP32, 53.8 FP16
  // with FP32 accumulate (107.6 with FP16 accumulate), 215.2 INT8, 430.3 INT4 TOPS. Turing tensor
  // cores have no BF16 or TF32. 11 GB GDDR6 at 616 GB/s.
  c.push_back(GpuSpec{"RTX2080Ti",
                      {{DType::kFP32, 13.4 * kT},
                       {DType::kFP16, 53.8 * kT},
                       {DType::kINT8, 215.2 * kT},
                       {DType::kINT4, 430.3 * kT}},
                      11 * kG,
                      616 * kG,
                      "NVIDIA Turing GPU architecture whitepaper (TU102, 2018), GeForce RTX 2080 "
                      "Ti at reference clocks",
                      68});  // 68 SMs in RTX 2080 Ti (Turing whitepaper)
  return c;
}

}  // namespace

const std::vector<GpuSpec>& BuiltinGpuCatalog() {
  static const std::vector<GpuSpec> catalog = MakeCatalog();
  return catalog;
}

const GpuSpec* FindBuiltinGpu(std::string_view name) {
  for (const GpuSpec& g : BuiltinGpuCatalog()) {
    if (g.name == name) return &g;
  }
  return nullptr;
}

}  // namespace stratasim
