#include "core/hardware.h"

#include <string>

#include "core/error.h"

namespace stratasim {

double GpuSpec::Peak(DType d) const {
  auto it = peak_flops.find(d);
  if (it == peak_flops.end()) {
    throw Error("GPU " + name + " has no " + std::string(ToString(d)) + " units");
  }
  return it->second;
}

}  // namespace stratasim
