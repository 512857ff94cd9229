// CASQ's encode and decode on the GPU (CLUSTER 2021; the authors' code LSTM/CASQ, LSSkernel.cu):
// one thread per element finds the nearest centre, ORs its q-bit code into the packed words
// (atomicOr), and adds its value and a count into its cluster's hashed bucket (atomicAdd); a
// second pass turns sums into means. Decoding gives each element the sum over workers of its
// bucket mean. The clustering (centres) and the table layout come from the CPU
// (kernels/casq_ref.h), against which kernels/casq_test.cpp checks these kernels.
#ifndef STRATASIM_KERNELS_CASQ_H_
#define STRATASIM_KERNELS_CASQ_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace stratasim::kernels {

// Device arrays: x (n floats), centres (2^bits ascending floats), offsets (2^bits + 1 bucket
// offsets, casq::TableLayout::offsets), codes (casq::CodeWords(n, bits) words, zeroed here),
// means (offsets[2^bits] = `buckets` floats) and counts (`buckets` unsigned scratch). Means of
// empty buckets are 0. Float atomics make a mean's rounding depend on the order of the adds.
void CasqEncode(const float* x, long long n, int bits, const float* centres,
                const long long* offsets, long long buckets, std::uint64_t hash_seed,
                std::uint32_t* codes, float* means, unsigned* counts, cudaStream_t stream);

// sum[i] = sum over w < workers of worker w's bucket mean for element i, added in worker order;
// codes holds `workers` blocks of CodeWords(n, bits) words, means `workers` blocks of `buckets`.
void CasqDecode(const std::uint32_t* codes, const float* means, int workers, long long n, int bits,
                const long long* offsets, long long buckets, std::uint64_t hash_seed, float* sum,
                cudaStream_t stream);

}  // namespace stratasim::kernels

#endif  // STRATASIM_KERNELS_CASQ_H_
