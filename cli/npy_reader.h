// A bounded reader of NumPy's .npy files, for `stratasim compress-check --npy`: a user's saved
// gradient (np.save(path, grad.float().cpu().numpy())) as the tensor the compressors run on.
//
// The format (NumPy's numpy/lib/format.py, "NPY format" NEP 1): the magic "\x93NUMPY", a major
// and a minor version byte, the header length (version 1.0: 2 bytes, 2.0: 4 bytes, little
// endian), then the header, a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (50257, 768), }
// padded with spaces and ended by a newline, then the raw array.
//
// What is accepted, and everything else is refused with the file and the rule:
// - versions 1.0 and 2.0;
// - a header of at most kMaxNpyHeaderBytes, NumPy's own default bound (read_array's
//   max_header_size, NumPy 1.24 on), holding exactly the keys descr, fortran_order and shape;
// - dtype '<f4' or '<f8' (little-endian float32 or float64; float64 is rounded to float32, the
//   compressors' input), C order (fortran_order False);
// - 1-D (n,) as n x 1, or 2-D (rows, cols) as a row-major rows x cols gradient, at least one
//   element and at most `max_elements`;
// - exactly the data the shape needs (not truncated, nothing after it), every value finite and
//   within float32's range.
#ifndef STRATASIM_CLI_NPY_READER_H_
#define STRATASIM_CLI_NPY_READER_H_

#include <string>
#include <string_view>
#include <vector>

namespace stratasim {

inline constexpr size_t kMaxNpyHeaderBytes = 10000;

struct NpyArray {
  long long rows = 0;
  long long cols = 1;         // 1 for a 1-D array
  std::string dtype;          // "<f4" or "<f8", as the file says
  std::vector<float> values;  // rows x cols, row-major
};

// Parses the bytes of a .npy file; `file` names it in errors. Throws ConfigError located at
// `file` whose key names the part (magic, version, header, descr, fortran_order, shape, data)
// and whose rule says what is wrong.
NpyArray ParseNpy(std::string_view bytes, const std::string& file, long long max_elements);

// Reads and parses `path`, refusing unread a file larger than an array of `max_elements`
// float64 values and the largest header could make it.
NpyArray ReadNpyFile(const std::string& path, long long max_elements);

}  // namespace stratasim

#endif  // STRATASIM_CLI_NPY_READER_H_
