// OpenMPI's functions, looked up in OpenMPI's own library (libmpi.so) at run time; only where
// stratasim is built with MPI (STRATASIM_HAVE_MPI). Shared by the sweep's World
// (cli/mpi_world.cpp) and validate's process group (cli/mpi_process_group.cpp).
//
// Why not plain calls: SimGrid's library, which every stratasim links, also exports MPI_Init,
// MPI_Send and the rest (SMPI, its MPI simulator): a plain call would bind to whichever of the
// two the dynamic linker meets first, which depends on the link order (and gcc's --as-needed),
// and calling SMPI's aborts ("PMPI_Init in libsimgrid"). The data symbols (MPI_COMM_WORLD is
// &ompi_mpi_comm_world, MPI_CHAR &ompi_mpi_char) exist only in OpenMPI's library, so they bind
// to it whatever the order.
#ifndef STRATASIM_CLI_MPI_API_H_
#define STRATASIM_CLI_MPI_API_H_

#ifdef STRATASIM_HAVE_MPI

#include <mpi.h>

namespace stratasim::mpi {

struct Api {
  decltype(&MPI_Init) init;
  decltype(&MPI_Init_thread) init_thread;
  decltype(&MPI_Query_thread) query_thread;
  decltype(&MPI_Initialized) initialized;
  decltype(&MPI_Finalized) finalized;
  decltype(&MPI_Finalize) finalize;
  decltype(&MPI_Comm_rank) comm_rank;
  decltype(&MPI_Comm_size) comm_size;
  decltype(&MPI_Comm_dup) comm_dup;
  decltype(&MPI_Comm_idup) comm_idup;
  decltype(&MPI_Comm_free) comm_free;
  decltype(&MPI_Comm_set_errhandler) comm_set_errhandler;
  decltype(&MPI_Comm_get_attr) comm_get_attr;
  decltype(&MPI_Bcast) bcast;
  decltype(&MPI_Send) send;
  decltype(&MPI_Isend) isend;
  decltype(&MPI_Irecv) irecv;
  decltype(&MPI_Test) test;
  decltype(&MPI_Cancel) cancel;
  decltype(&MPI_Request_free) request_free;
  decltype(&MPI_Iprobe) iprobe;
  decltype(&MPI_Get_count) get_count;
  decltype(&MPI_Recv) recv;
  decltype(&MPI_Error_string) error_string;
  decltype(&MPI_Get_processor_name) get_processor_name;
  decltype(&MPI_Abort) abort;
};

// The functions of the loaded libmpi.so. Throws stratasim::Error when it is not loaded or lacks
// one of them.
const Api& Mpi();

}  // namespace stratasim::mpi

#endif  // STRATASIM_HAVE_MPI

#endif  // STRATASIM_CLI_MPI_API_H_
