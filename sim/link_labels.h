// Labels for people from the platform's link names (sim/platform.cpp), for the link usage the
// simulator records (core/link_usage.h): "s3nic1_up" reads "server 3 NIC 1 → fabric".
#ifndef STRATASIM_SIM_LINK_LABELS_H_
#define STRATASIM_SIM_LINK_LABELS_H_

#include <string>

namespace stratasim::sim {

// The label of platform link `name`; a name the platform does not make is its own label.
std::string LinkLabel(const std::string& name);

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_LINK_LABELS_H_
