#include "cli/exit_status.h"

#include <exception>
#include <new>

#include "cli/phase.h"

namespace stratasim {

int ReportCurrentException(const std::string& command, std::ostream& err) {
  try {
    throw;
  } catch (const ConfigError& e) {
    err << "stratasim: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const UsageError& e) {
    err << "stratasim " << command << ": " << e.what() << "\n";
    return kExitBadInput;
  } catch (const Error& e) {
    err << "stratasim: error: " << e.what() << "\n";
    return kExitFailed;
  } catch (const std::bad_alloc&) {
    // Whatever ran out, the run is over; say where, and what makes a run smaller.
    err << "stratasim: error: out of memory while " << CurrentPhase()
        << " (docs/limits.md: fewer iterations, micro-batches or layers, "
           "simulation.fold: auto, or fewer jobs at once with -j)\n";
    return kExitFailed;
  } catch (const std::exception& e) {
    // Not one of ours: a library's exception that no layer translated. Still a message, and
    // the phase says where to look.
    err << "stratasim: error: unexpected exception while " << CurrentPhase() << ": " << e.what()
        << "\n";
    return kExitFailed;
  } catch (...) {
    err << "stratasim: error: unexpected exception of unknown type while " << CurrentPhase()
        << "\n";
    return kExitFailed;
  }
}

}  // namespace stratasim
