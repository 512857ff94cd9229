#include "core/input_file.h"

#include <cerrno>
#include <cstdint>
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
  auto too_large = [&] {
    return ConfigError(where, "", "",
                       "larger than " + DescribeLimit(max_bytes) + ", the limit for " + what +
                           " (docs/limits.md)");
  };
  // A regular file says its size: refuse it unread, or read it into one allocation.
  std::string text;
  const auto size = std::filesystem::is_regular_file(path, ec)
                        ? std::filesystem::file_size(path, ec)
                        : static_cast<std::uintmax_t>(0);
  if (!ec && size > max_bytes) throw too_large();
  if (!ec && size > 0) text.reserve(static_cast<size_t>(size));
  // Then in blocks, at most one block past the bound: a device's endless stream (/dev/zero)
  // or a file that grows while read never decides how much is allocated.
  char block[1 << 16];
  while (in && text.size() <= max_bytes) {
    in.read(block, static_cast<std::streamsize>(sizeof block));
    text.append(block, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) throw ConfigError(where, "", "", "cannot read file");
  if (text.size() > max_bytes) throw too_large();
  return text;
}

}  // namespace stratasim
