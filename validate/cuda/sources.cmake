# Sources of the cuda backend, relative to validate/: shared by validate/CMakeLists.txt and the
# standalone GPU-check build (validate/cuda/standalone/).
set(VALIDATE_CUDA_SOURCES
  cuda/cuda_backend.cpp
  cuda/cuda_executor.cpp
  cuda/nccl_ops.cpp
  cuda/task_kernels.cpp
)
set(VALIDATE_CUDA_TESTS
  cuda/cuda_backend_test.cpp
  cuda/cuda_executor_test.cpp
  cuda/cuda_multiprocess_test.cpp
  cuda/task_kernels_test.cpp
)
