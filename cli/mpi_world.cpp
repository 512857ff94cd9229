#include "cli/mpi_world.h"

#include <cstdlib>

#include "core/error.h"

#ifdef STRATASIM_HAVE_MPI
#include <dlfcn.h>
#include <link.h>
#include <mpi.h>
#endif

namespace stratasim::mpi {

bool LaunchedByMpirun() { return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr; }

#ifdef STRATASIM_HAVE_MPI

namespace {

constexpr int kTagLine = 1;
constexpr int kTagDone = 2;

// OpenMPI's functions, looked up in OpenMPI's library itself. SimGrid's library, which every
// stratasim links, also exports MPI_Init, MPI_Send and the rest (SMPI, its MPI simulator): a
// plain call would bind to whichever of the two the dynamic linker meets first, which depends
// on the link order (and gcc's --as-needed), and calling SMPI's aborts ("PMPI_Init in
// libsimgrid"). The data symbols (MPI_COMM_WORLD is &ompi_mpi_comm_world, MPI_CHAR
// &ompi_mpi_char) exist only in OpenMPI's library, so they bind to it whatever the order.
struct Api {
  decltype(&MPI_Init) init;
  decltype(&MPI_Initialized) initialized;
  decltype(&MPI_Finalize) finalize;
  decltype(&MPI_Comm_rank) comm_rank;
  decltype(&MPI_Comm_size) comm_size;
  decltype(&MPI_Bcast) bcast;
  decltype(&MPI_Send) send;
  decltype(&MPI_Iprobe) iprobe;
  decltype(&MPI_Get_count) get_count;
  decltype(&MPI_Recv) recv;
  decltype(&MPI_Abort) abort;
};

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
    Api a;
    a.init = reinterpret_cast<decltype(a.init)>(get("MPI_Init"));
    a.initialized = reinterpret_cast<decltype(a.initialized)>(get("MPI_Initialized"));
    a.finalize = reinterpret_cast<decltype(a.finalize)>(get("MPI_Finalize"));
    a.comm_rank = reinterpret_cast<decltype(a.comm_rank)>(get("MPI_Comm_rank"));
    a.comm_size = reinterpret_cast<decltype(a.comm_size)>(get("MPI_Comm_size"));
    a.bcast = reinterpret_cast<decltype(a.bcast)>(get("MPI_Bcast"));
    a.send = reinterpret_cast<decltype(a.send)>(get("MPI_Send"));
    a.iprobe = reinterpret_cast<decltype(a.iprobe)>(get("MPI_Iprobe"));
    a.get_count = reinterpret_cast<decltype(a.get_count)>(get("MPI_Get_count"));
    a.recv = reinterpret_cast<decltype(a.recv)>(get("MPI_Recv"));
    a.abort = reinterpret_cast<decltype(a.abort)>(get("MPI_Abort"));
    return a;
  }();
  return api;
}

}  // namespace

bool Available() { return true; }

World::World() {
  const Api& mpi = Mpi();
  int initialised = 0;
  mpi.initialized(&initialised);
  if (!initialised) mpi.init(nullptr, nullptr);
  mpi.comm_rank(MPI_COMM_WORLD, &rank_);
  mpi.comm_size(MPI_COMM_WORLD, &size_);
}

World::~World() {
  if (finalize_) Mpi().finalize();
}

void World::Broadcast(std::string* text) const {
  unsigned long long n = text->size();
  Mpi().bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  text->resize(n);
  if (n > 0) Mpi().bcast(text->data(), static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD);
}

void World::SendLine(const std::string& line) const {
  Mpi().send(line.data(), static_cast<int>(line.size()), MPI_CHAR, 0, kTagLine, MPI_COMM_WORLD);
}

void World::SendDone() const { Mpi().send(nullptr, 0, MPI_CHAR, 0, kTagDone, MPI_COMM_WORLD); }

std::optional<std::string> World::Poll(bool* done) const {
  int flag = 0;
  MPI_Status status;
  Mpi().iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
  if (!flag) return std::nullopt;
  int count = 0;
  Mpi().get_count(&status, MPI_CHAR, &count);
  std::string text(static_cast<size_t>(count), '\0');
  Mpi().recv(text.data(), count, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
  *done = status.MPI_TAG == kTagDone;
  return text;
}

void World::Abort(int code) const {
  Mpi().abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; this keeps [[noreturn]] honest
}

#else  // !STRATASIM_HAVE_MPI

namespace {
[[noreturn]] void Unavailable() {
  throw Error(
      "this stratasim was built without MPI (CMake found no MPI): install OpenMPI "
      "(Debian: openmpi-bin libopenmpi-dev) and build again, or run the sweep without mpirun "
      "(-j N on one machine, --shard I/N across machines)");
}
}  // namespace

bool Available() { return false; }
World::World() { Unavailable(); }
World::~World() = default;
void World::Broadcast(std::string*) const { Unavailable(); }
void World::SendLine(const std::string&) const { Unavailable(); }
void World::SendDone() const { Unavailable(); }
std::optional<std::string> World::Poll(bool*) const { Unavailable(); }
void World::Abort(int code) const { std::_Exit(code); }

#endif

}  // namespace stratasim::mpi
