// Chooses a backend by name. Lives in stratasim_validate, not stratasim_validate_core, because
// it is the one place that knows whether the CUDA backend was compiled in.
#include "validate/backend.h"
#include "validate/host/host_backend.h"

namespace stratasim::validate {

std::vector<std::string> BackendNames() {
#ifdef STRATASIM_HAVE_CUDA_BACKEND
  return {"host", "cuda"};
#else
  return {"host"};
#endif
}

std::unique_ptr<Backend> MakeBackend(const std::string& name, int ranks) {
  if (name == "host") {
    HostBackendOptions o;
    o.ranks = ranks;
    return std::make_unique<HostBackend>(o);
  }
  if (name == "cuda") {
#ifdef STRATASIM_HAVE_CUDA_BACKEND
    return MakeCudaBackend(ranks);
#else
    throw BackendError(BackendError::Kind::kUnavailable,
                       "backend 'cuda' is not available: this stratasim was built without "
                       "nvcc and NCCL (cmake reports \"CUDA and NCCL backends: OFF\")");
#endif
  }
  throw BackendError(BackendError::Kind::kUnavailable,
                     "unknown backend '" + name + "': must be host or cuda");
}

}  // namespace stratasim::validate
