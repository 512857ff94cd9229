#include "cli/mpi_api.h"

#ifdef STRATASIM_HAVE_MPI

#include <dlfcn.h>
#include <link.h>

#include <string>

#include "core/error.h"

namespace stratasim::mpi {

const Api& Mpi() {
  static const Api api = [] {
    // The loaded object named libmpi.so.*: its data symbols are copied into the program
    // (copy relocations), so dladdr on MPI_COMM_WORLD would name the program itself.
    std::string path;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* out) {
          const std::string name = info->dlpi_name ? info->dlpi_name : "";
          if (name.find("/libmpi.so") == std::string::npos) return 0;
          *static_cast<std::string*>(out) = name;
          return 1;
        },
        &path);
    if (path.empty()) {
      throw Error("cannot find OpenMPI's library (libmpi.so) among the loaded libraries");
    }
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (lib == nullptr) throw Error("cannot open " + path);
    auto get = [&](const char* name) {
      void* f = dlsym(lib, name);
      if (f == nullptr) throw Error(path + " has no " + name);
      return f;
    };
#define STRATASIM_MPI_FUNCTION(field, name) a.field = reinterpret_cast<decltype(a.field)>(get(name))
    Api a;
    STRATASIM_MPI_FUNCTION(init, "MPI_Init");
    STRATASIM_MPI_FUNCTION(init_thread, "MPI_Init_thread");
    STRATASIM_MPI_FUNCTION(query_thread, "MPI_Query_thread");
    STRATASIM_MPI_FUNCTION(initialized, "MPI_Initialized");
    STRATASIM_MPI_FUNCTION(finalized, "MPI_Finalized");
    STRATASIM_MPI_FUNCTION(finalize, "MPI_Finalize");
    STRATASIM_MPI_FUNCTION(comm_rank, "MPI_Comm_rank");
    STRATASIM_MPI_FUNCTION(comm_size, "MPI_Comm_size");
    STRATASIM_MPI_FUNCTION(comm_dup, "MPI_Comm_dup");
    STRATASIM_MPI_FUNCTION(comm_idup, "MPI_Comm_idup");
    STRATASIM_MPI_FUNCTION(comm_free, "MPI_Comm_free");
    STRATASIM_MPI_FUNCTION(comm_set_errhandler, "MPI_Comm_set_errhandler");
    STRATASIM_MPI_FUNCTION(comm_get_attr, "MPI_Comm_get_attr");
    STRATASIM_MPI_FUNCTION(bcast, "MPI_Bcast");
    STRATASIM_MPI_FUNCTION(send, "MPI_Send");
    STRATASIM_MPI_FUNCTION(isend, "MPI_Isend");
    STRATASIM_MPI_FUNCTION(irecv, "MPI_Irecv");
    STRATASIM_MPI_FUNCTION(test, "MPI_Test");
    STRATASIM_MPI_FUNCTION(cancel, "MPI_Cancel");
    STRATASIM_MPI_FUNCTION(request_free, "MPI_Request_free");
    STRATASIM_MPI_FUNCTION(iprobe, "MPI_Iprobe");
    STRATASIM_MPI_FUNCTION(get_count, "MPI_Get_count");
    STRATASIM_MPI_FUNCTION(recv, "MPI_Recv");
    STRATASIM_MPI_FUNCTION(error_string, "MPI_Error_string");
    STRATASIM_MPI_FUNCTION(get_processor_name, "MPI_Get_processor_name");
    STRATASIM_MPI_FUNCTION(abort, "MPI_Abort");
#undef STRATASIM_MPI_FUNCTION
    return a;
  }();
  return api;
}

}  // namespace stratasim::mpi

#endif  // STRATASIM_HAVE_MPI
