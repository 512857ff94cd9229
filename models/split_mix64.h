// SplitMix64 (Steele et al. 2014, "Fast Splittable Pseudorandom Number Generators"): a fixed
// generator, so that sampled counts do not depend on the standard library's distributions,
// which differ between implementations. Shared by the workloads that sample (GraphSAGE's
// neighbours, a sparse embedding's token ids).
#ifndef STRATASIM_MODELS_SPLIT_MIX64_H_
#define STRATASIM_MODELS_SPLIT_MIX64_H_

#include <cstdint>

namespace stratasim {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t Next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) from the top 53 bits: exact in IEEE doubles on every platform.
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform in [0, n).
  std::uint64_t Below(double n) { return static_cast<std::uint64_t>(Unit() * n); }

 private:
  std::uint64_t state_;
};

}  // namespace stratasim

#endif  // STRATASIM_MODELS_SPLIT_MIX64_H_
