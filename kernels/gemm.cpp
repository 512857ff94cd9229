#include "kernels/gemm.h"

#include <cublasLt.h>
#include <cublas_v2.h>

#include <cstdint>
#include <string>

#include "core/error.h"
#include "kernels/cuda_check.h"

namespace stratasim::kernels {
namespace {

constexpr std::size_t kWorkspaceBytes = 32u << 20;

std::string Describe(const GemmProblem& p) {
  return std::string(ToString(p.dtype)) + " GEMM m=" + std::to_string(p.m) +
         " n=" + std::to_string(p.n) + " k=" + std::to_string(p.k) +
         " batch=" + std::to_string(p.batch);
}

// cuBLAS's 32-bit API: every dimension and leading dimension must fit an int.
void CheckShape(const GemmProblem& p) {
  constexpr long long kMax = 2147483647LL;
  if (p.m <= 0 || p.n <= 0 || p.k <= 0 || p.batch <= 0 || p.m > kMax || p.n > kMax || p.k > kMax ||
      p.batch > kMax) {
    throw Error(Describe(p) + ": dimensions must be in [1, 2^31)");
  }
}

// Lt descriptors freed on every path, including a throw.
struct LtDescriptors {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~LtDescriptors() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

void SetBatch(cublasLtMatrixLayout_t layout, long long batch, long long stride) {
  const std::int32_t count = static_cast<std::int32_t>(batch);
  const std::int64_t offset = stride;
  STRATASIM_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
      layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
  STRATASIM_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
      layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &offset, sizeof(offset)));
}

}  // namespace

double GemmOutputBytesPerElement(DType dtype) {
  switch (dtype) {
    case DType::kINT8:
      return 4;
    case DType::kFP8:
      return 2;
    default:
      return BytesPerElement(dtype);
  }
}

double GemmProblem::bytes_a() const { return BytesPerElement(dtype) * m * k * batch; }
double GemmProblem::bytes_b() const { return BytesPerElement(dtype) * k * n * batch; }
double GemmProblem::bytes_c() const { return GemmOutputBytesPerElement(dtype) * m * n * batch; }

Blas::Blas() {
  STRATASIM_CUDA_CHECK(cudaGetDevice(&device_));
  cudaDeviceProp prop{};
  STRATASIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device_));
  compute_capability_ = prop.major * 10 + prop.minor;
  STRATASIM_CUDA_CHECK(cudaMalloc(&workspace_, kWorkspaceBytes));
  try {
    STRATASIM_CUBLAS_CHECK(cublasCreate(&handle_));
    STRATASIM_CUBLAS_CHECK(cublasSetWorkspace(handle_, workspace_, kWorkspaceBytes));
    STRATASIM_CUBLAS_CHECK(cublasLtCreate(&lt_));
  } catch (...) {
    if (handle_) cublasDestroy(handle_);
    cudaFree(workspace_);
    throw;
  }
}

Blas::~Blas() {
  if (lt_) cublasLtDestroy(lt_);
  if (handle_) cublasDestroy(handle_);
  if (workspace_) cudaFree(workspace_);
}

void Blas::Gemm(const GemmProblem& p, const void* a, const void* b, void* c, cudaStream_t stream) {
  CheckShape(p);
  if (p.dtype == DType::kFP8) {
    GemmFp8(p, a, b, c, stream);
    return;
  }
  cudaDataType ab_type, c_type;
  cublasComputeType_t compute;
  const float alpha_f = 1, beta_f = 0;
  const std::int32_t alpha_i = 1, beta_i = 0;
  const void* alpha = &alpha_f;
  const void* beta = &beta_f;
  switch (p.dtype) {
    case DType::kFP32:
      ab_type = c_type = CUDA_R_32F;
      compute = CUBLAS_COMPUTE_32F;
      break;
    case DType::kTF32:
      ab_type = c_type = CUDA_R_32F;
      compute = CUBLAS_COMPUTE_32F_FAST_TF32;
      break;
    case DType::kFP16:
      ab_type = c_type = CUDA_R_16F;
      compute = CUBLAS_COMPUTE_32F;
      break;
    case DType::kBF16:
      ab_type = c_type = CUDA_R_16BF;
      compute = CUBLAS_COMPUTE_32F;
      break;
    case DType::kINT8:
      ab_type = CUDA_R_8I;
      c_type = CUDA_R_32I;
      compute = CUBLAS_COMPUTE_32I;
      alpha = &alpha_i;
      beta = &beta_i;
      break;
    default:
      throw Error(Describe(p) + ": no GEMM for this format (fp32, tf32, fp16, bf16, int8, fp8)");
  }
  STRATASIM_CUBLAS_CHECK(cublasSetStream(handle_, stream));
  // Column-major view of the row-major product: C^T[n][m] = op(B)[n][k] · A^T[k][m].
  const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
  const cublasOperation_t op_b = p.b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int ldb = p.b_transposed ? k : n;
  const cublasStatus_t status =
      cublasGemmStridedBatchedEx(handle_, op_b, CUBLAS_OP_N, n, m, k, alpha, b, ab_type, ldb,
                                 p.k * p.n, a, ab_type, k, p.m * p.k, beta, c, c_type, n, p.m * p.n,
                                 static_cast<int>(p.batch), compute, CUBLAS_GEMM_DEFAULT);
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw Error(Describe(p) + ": cublasGemmStridedBatchedEx: " + CublasStatusName(status));
  }
}

void Blas::GemmFp8(const GemmProblem& p, const void* a, const void* b, void* c,
                   cudaStream_t stream) {
  if (compute_capability_ < 89) {
    throw Error(Describe(p) + ": FP8 tensor cores need compute capability 8.9 or newer; device " +
                std::to_string(device_) + " has " + std::to_string(compute_capability_ / 10) + "." +
                std::to_string(compute_capability_ % 10));
  }
  if (!p.b_transposed || p.m % 16 != 0 || p.n % 16 != 0 || p.k % 16 != 0) {
    throw Error(Describe(p) +
                ": cuBLASLt FP8 GEMMs take B stored [n][k] and m, n, k multiples of 16");
  }
  LtDescriptors d;
  STRATASIM_CUBLAS_CHECK(cublasLtMatmulDescCreate(&d.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t trans = CUBLAS_OP_T, no_trans = CUBLAS_OP_N;
  STRATASIM_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof(trans)));
  STRATASIM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSB,
                                                        &no_trans, sizeof(no_trans)));
  // Lt's A is our B ([n][k] row-major = k x n column-major, transposed); Lt's B is our A
  // (k x m column-major); D = C^T, n x m column-major in BF16.
  STRATASIM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d.a, CUDA_R_8F_E4M3, p.k, p.n, p.k));
  STRATASIM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d.b, CUDA_R_8F_E4M3, p.k, p.m, p.k));
  STRATASIM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d.c, CUDA_R_16BF, p.n, p.m, p.n));
  if (p.batch > 1) {
    SetBatch(d.a, p.batch, p.k * p.n);
    SetBatch(d.b, p.batch, p.k * p.m);
    SetBatch(d.c, p.batch, p.n * p.m);
  }
  STRATASIM_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&d.pref));
  const std::size_t ws = kWorkspaceBytes;
  STRATASIM_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      d.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  STRATASIM_CUBLAS_CHECK(
      cublasLtMatmulAlgoGetHeuristic(lt_, d.op, d.a, d.b, d.c, d.c, d.pref, 1, &heuristic, &found));
  if (found == 0) throw Error(Describe(p) + ": cuBLASLt has no FP8 algorithm for this shape");
  const float alpha = 1, beta = 0;
  const cublasStatus_t status = cublasLtMatmul(lt_, d.op, &alpha, b, d.a, a, d.b, &beta, c, d.c, c,
                                               d.c, &heuristic.algo, workspace_, ws, stream);
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw Error(Describe(p) + ": cublasLtMatmul: " + CublasStatusName(status));
  }
}

}  // namespace stratasim::kernels
