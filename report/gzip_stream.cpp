#include "report/gzip_stream.h"

#include <zlib.h>

#include <cstring>

#include "core/error.h"

namespace stratasim {

namespace {

// zlib's default level: about 10x on Chrome traces (repetitive JSON) at some 50 MB/s; level 9
// gains a few percent for several times the time.
constexpr int kLevel = Z_DEFAULT_COMPRESSION;
// windowBits 15 (32 KiB, the largest) + 16: a gzip wrapper instead of zlib's.
constexpr int kGzipWindowBits = 15 + 16;
constexpr int kMemLevel = 8;
constexpr size_t kChunkBytes = 1 << 16;

}  // namespace

struct GzipWriter::State {
  z_stream z{};
  std::string out;
};

GzipWriter::GzipWriter(std::function<bool(const std::string&)> sink)
    : state_(std::make_unique<State>()), sink_(std::move(sink)) {
  if (deflateInit2(&state_->z, kLevel, Z_DEFLATED, kGzipWindowBits, kMemLevel,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    throw Error("gzip: zlib could not start a stream (out of memory?)");
  }
  state_->out.resize(kChunkBytes);
}

GzipWriter::~GzipWriter() { deflateEnd(&state_->z); }

bool GzipWriter::Deflate(std::string_view text, int flush) {
  z_stream& z = state_->z;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  int rc;
  do {
    z.next_out = reinterpret_cast<Bytef*>(state_->out.data());
    z.avail_out = static_cast<uInt>(state_->out.size());
    rc = deflate(&z, flush);
    if (rc == Z_STREAM_ERROR) return ok_ = false;
    const size_t have = state_->out.size() - z.avail_out;
    if (have > 0 && ok_) ok_ = sink_(state_->out.substr(0, have));
  } while (z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
  return ok_;
}

bool GzipWriter::Write(std::string_view text) {
  if (!ok_ || finished_) return ok_;
  // avail_in is 32-bit: feed large text in slices.
  constexpr size_t kSlice = size_t{1} << 30;
  for (size_t at = 0; at < text.size() && ok_; at += kSlice) {
    Deflate(text.substr(at, kSlice), Z_NO_FLUSH);
  }
  return ok_;
}

bool GzipWriter::Finish() {
  if (finished_) return ok_;
  finished_ = true;
  return Deflate({}, Z_FINISH) && ok_;
}

std::string GzipCompress(std::string_view text) {
  std::string out;
  GzipWriter w([&out](const std::string& piece) {
    out += piece;
    return true;
  });
  if (!w.Write(text) || !w.Finish()) throw Error("gzip: zlib failed to compress");
  return out;
}

std::string GzipDecompress(std::string_view data) {
  z_stream z{};
  if (inflateInit2(&z, kGzipWindowBits) != Z_OK) throw Error("gunzip: zlib could not start");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  std::string out;
  std::string chunk(kChunkBytes, '\0');
  int rc = Z_OK;
  while (true) {
    z.next_out = reinterpret_cast<Bytef*>(chunk.data());
    z.avail_out = static_cast<uInt>(chunk.size());
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(chunk.data(), chunk.size() - z.avail_out);
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0) break;
      inflateReset(&z);  // another member follows
      continue;
    }
    if (rc != Z_OK) {
      inflateEnd(&z);
      throw Error("gunzip: not gzip data, or truncated (zlib: " +
                  std::string(z.msg ? z.msg : "error " + std::to_string(rc)) + ")");
    }
    if (z.avail_in == 0 && z.avail_out != 0) {
      inflateEnd(&z);
      throw Error("gunzip: truncated gzip data");
    }
  }
  inflateEnd(&z);
  return out;
}

}  // namespace stratasim
