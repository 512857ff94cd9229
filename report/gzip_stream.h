// gzip (RFC 1952) compression through zlib, for traces too large to keep as plain JSON
// (`stratasim run --trace-format json.gz`; Perfetto and chrome://tracing open .json.gz).
//
// The output is deterministic: the header zlib writes for deflateInit2(..., 15 + 16, ...)
// holds no file name and a modification time of 0, so the same text gives the same bytes on
// every run.
#ifndef STRATASIM_REPORT_GZIP_STREAM_H_
#define STRATASIM_REPORT_GZIP_STREAM_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace stratasim {

// Compresses text piece by piece into `sink` (which returns false when it could not write),
// holding only zlib's window and one output buffer.
class GzipWriter {
 public:
  explicit GzipWriter(std::function<bool(const std::string&)> sink);
  ~GzipWriter();
  GzipWriter(const GzipWriter&) = delete;
  GzipWriter& operator=(const GzipWriter&) = delete;

  // Returns false once a write failed; later calls do nothing.
  bool Write(std::string_view text);
  // Ends the gzip member (trailer with CRC-32 and length); returns false if any write failed.
  bool Finish();

 private:
  bool Deflate(std::string_view text, int flush);

  struct State;
  std::unique_ptr<State> state_;
  std::function<bool(const std::string&)> sink_;
  bool ok_ = true;
  bool finished_ = false;
};

// The whole of `text` as one gzip member. Throws stratasim::Error if zlib fails.
std::string GzipCompress(std::string_view text);

// The inverse, for tests and readers (concatenated members are read in turn). Throws
// stratasim::Error on data that is not gzip.
std::string GzipDecompress(std::string_view data);

}  // namespace stratasim

#endif  // STRATASIM_REPORT_GZIP_STREAM_H_
