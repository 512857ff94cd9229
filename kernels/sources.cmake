# Sources of kernels/, relative to this folder: shared by kernels/CMakeLists.txt and the
# standalone GPU-check build (validate/cuda/standalone/), so the two never drift apart.
set(KERNELS_REFERENCE_SOURCES batch_reuse_ref.cpp reference.cpp)
# Gradient compressors (core/compression.h, kernels/compressor.h): CPU references on Eigen, which
# compress-check runs and the CUDA kernels are tested against, their CPU tests, and the CUDA
# kernels with their GPU tests.
set(KERNELS_COMPRESS_SOURCES
  bit_quantize_ref.cpp  # DPC's per-layer bit widths
  casq_ref.cpp
  compressor.cpp
  count_sketch_cpu.cpp  # S2Reducer
  quant_compressors.cpp
  row_bitmap.cpp
  sparse_compressors.cpp
  sparse_encoding.cpp
  stochastic_quant_ref.cpp  # QSGD, TernGrad
)
set(KERNELS_COMPRESS_TESTS
  bit_quantize_ref_test.cpp
  compressor_test.cpp
  count_sketch_cpu_test.cpp
  quant_compressors_test.cpp
  sparse_compressors_test.cpp
  sparse_encoding_test.cpp
)
set(KERNELS_COMPRESS_CUDA_SOURCES bit_quantize.cu casq.cu count_sketch.cu)
set(KERNELS_COMPRESS_CUDA_TESTS bit_quantize_test.cpp casq_test.cpp count_sketch_test.cpp)
set(KERNELS_CUDA_SOURCES
  adam.cu
  attention.cpp
  batch_reuse.cu
  convert.cu
  cuda_check.cpp
  device.cpp
  device_buffer.cpp
  elementwise.cu
  gemm.cpp
  quantize.cu
  rowwise.cu
)
# cuDNN's fused attention when cuDNN is found (STRATASIM_HAVE_CUDNN), else the stub that says why
# it cannot run.
set(KERNELS_CUDNN_SOURCES cudnn_check.cpp flash_attention.cpp)
set(KERNELS_CUDNN_STUB_SOURCES flash_attention_stub.cpp)
set(KERNELS_CUDNN_TESTS cudnn_check_test.cpp flash_attention_test.cpp)
set(KERNELS_CUDA_TESTS
  adam_test.cpp
  batch_reuse_test.cpp
  convert_test.cpp
  cuda_check_test.cpp
  elementwise_test.cpp
  gemm_test.cpp
  quantize_test.cpp
  rowwise_test.cpp
)
# nvcc does not take g++'s warning flags directly: hand them to the host compiler, and make
# nvcc's own warnings errors too, so .cu files meet the same bar as .cpp files.
# One generator expression per flag: a ';' inside one would split it when the list is expanded.
set(KERNELS_COMPILE_OPTIONS
  "$<$<COMPILE_LANGUAGE:CXX>:-Wall>"
  "$<$<COMPILE_LANGUAGE:CXX>:-Wextra>"
  "$<$<COMPILE_LANGUAGE:CXX>:-Werror>"
  "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall$<COMMA>-Wextra$<COMMA>-Werror>"
  "$<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings>")
