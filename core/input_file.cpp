#include "core/input_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.h"

namespace stratasim {

std::string DescribeLimit(size_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (u < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++u;
  }
  return std::to_string(bytes) + " " + units[u];
}

std::string ReadInputFile(const std::string& path, size_t max_bytes, const std::string& what) {
  const SourceLocation where{path, 0, 0};
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ConfigError(where, "", "", "cannot read file (it is a directory)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ConfigError(where, "", "",
                      "cannot read file (" + std::string(std::strerror(errno)) + ")");
  }
  // Read in blocks up to one byte past the bound: the size a file claims (or a device's
  // endless stream) never decides how much is allocated.
  std::string text;
  char block[1 << 16];
  while (in && text.size() <= max_bytes) {
    in.read(block, static_cast<std::streamsize>(sizeof block));
    text.append(block, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) throw ConfigError(where, "", "", "cannot read file");
  if (text.size() > max_bytes) {
    throw ConfigError(where, "", "",
                      "larger than " + DescribeLimit(max_bytes) + ", the limit for " + what +
                          " (docs/limits.md)");
  }
  return text;
}

}  // namespace stratasim
