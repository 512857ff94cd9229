// What a signal must undo before the program exits: temporary files being written and
// simulation children still running. SIGINT, SIGTERM and SIGHUP then remove the temporaries,
// kill the children and exit with 128 + the signal, as a shell reports a signal's death.
//
// The registry is a fixed table of slots that the handler reads without allocating or locking
// (async-signal-safe); a full table only means a temporary or child is not tracked.
#ifndef STRATASIM_CORE_CLEANUP_H_
#define STRATASIM_CORE_CLEANUP_H_

#include <sys/types.h>

#include <string>

namespace stratasim::cleanup {

// Installs the handlers (once per process; later calls do nothing).
void InstallSignalHandlers();

// A slot to pass back to the matching Forget; -1 when the table is full.
int TrackTempFile(const std::string& path);
void ForgetTempFile(int slot);
int TrackChild(pid_t pid);
void ForgetChild(int slot);

// Removes the temporary files (`NAME.tmp.PID.XXXXXX`, report/atomic_file.h) that processes no
// longer alive left in `dir` over 10 minutes ago: a run killed by SIGKILL cannot remove its
// own. Returns how many.
int RemoveStaleTempFiles(const std::string& dir);

}  // namespace stratasim::cleanup

#endif  // STRATASIM_CORE_CLEANUP_H_
