// `stratasim compress-check`: each gradient compressor's CPU kernels run on gradient-shaped
// tensors, and what they do to the gradient measured (issue 22, "accuracy measured, not
// assumed"; docs/compress-check.md).
#ifndef STRATASIM_CLI_COMPRESS_CHECK_COMMAND_H_
#define STRATASIM_CLI_COMPRESS_CHECK_COMMAND_H_

#include <string>
#include <vector>

namespace stratasim {

// stratasim compress-check SCENARIO [--methods LIST] [--trials N] [--workers W]
//     [--tensor embedding|dense] [--rows R] [--cols C] [--elements N]
//     [--distribution normal|laplace] [--density D] [--scale S] [--npy FILE]... [--noise X]
//     [--max-elements M] [--out DIR] [--calibration-out FILE] [--gpu KIND]
// Exit status: 0 every compressor ran; 1 one could not (the others' results are written);
// 2 bad input (scenario, options, .npy file); 3 an output could not be written.
int CompressCheckCommand(const std::vector<std::string>& args);

}  // namespace stratasim

#endif  // STRATASIM_CLI_COMPRESS_CHECK_COMMAND_H_
