// Reading an input file whole, bounded: a scenario, calibration or task-graph file over its
// documented size (core/limits.h) is refused unread, and a device that never ends
// (/dev/zero) after at most one 64 KiB block past the bound: neither is grown into memory.
#ifndef STRATASIM_CORE_INPUT_FILE_H_
#define STRATASIM_CORE_INPUT_FILE_H_

#include <cstddef>
#include <string>

namespace stratasim {

// The file's bytes; a ConfigError at `path` when it cannot be read, is a directory, or holds
// more than `max_bytes` (`what` names the kind of file in that message: "a scenario file").
std::string ReadInputFile(const std::string& path, size_t max_bytes, const std::string& what);

// "1 GiB", "4 MiB", "512 KiB", "100 B": a size limit as a message gives it.
std::string DescribeLimit(size_t bytes);

}  // namespace stratasim

#endif  // STRATASIM_CORE_INPUT_FILE_H_
