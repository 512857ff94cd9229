#include "validate/cuda/nccl_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "validate/backend.h"

namespace stratasim::validate::cuda {
namespace {

std::size_t Count(double bytes, double element) {
  return static_cast<std::size_t>(std::max(1.0, std::floor(bytes / element)));
}

char* At(void* base, double offset) {
  return static_cast<char*>(base) + static_cast<std::size_t>(offset);
}

}  // namespace

std::string NcclErrorText(ncclResult_t result) {
  std::string message = ncclGetErrorString(result);
  const char* last = ncclGetLastError(nullptr);
  if (last != nullptr && *last != '\0') message += " (" + std::string(last) + ")";
  return message;
}

void CheckNccl(ncclResult_t result, const char* call, const char* file, int line) {
  if (result == ncclSuccess || result == ncclInProgress) return;
  throw BackendError(
      BackendError::Kind::kCommunication,
      std::string(file) + ":" + std::to_string(line) + ": " + call + ": " + NcclErrorText(result));
}

NcclCalls RealNcclCalls() {
  static_assert(sizeof(ncclUniqueId) == kNcclUniqueIdBytes, "nccl_bootstrap.h's id size");
  static_assert(NCCL_SPLIT_NOCOLOR == kNcclNoColor, "nccl_bootstrap.h's no-color");
  auto nccl = [](ncclResult_t r) { return r == ncclSuccess ? std::string() : NcclErrorText(r); };
  auto cuda = [](cudaError_t e) {
    if (e == cudaSuccess) return std::string();
    cudaGetLastError();  // clear it, so that later calls do not report it again
    return std::string(cudaGetErrorString(e));
  };
  NcclCalls c;
  c.device_count = [cuda](int* count) { return cuda(cudaGetDeviceCount(count)); };
  c.set_device = [cuda](int device) { return cuda(cudaSetDevice(device)); };
  c.get_unique_id = [nccl](std::string* id) {
    ncclUniqueId u;
    const std::string error = nccl(ncclGetUniqueId(&u));
    if (error.empty()) id->assign(u.internal, sizeof(u.internal));
    return error;
  };
  c.comm_init_rank = [nccl](NcclComm* comm, int nranks, const std::string& id, int rank) {
    ncclUniqueId u;
    std::memcpy(u.internal, id.data(), std::min(id.size(), sizeof(u.internal)));
    ncclComm_t made = nullptr;
    const std::string error = nccl(ncclCommInitRank(&made, nranks, u, rank));
    *comm = made;
    return error;
  };
  c.comm_split = [nccl](NcclComm parent, int color, int key, NcclComm* comm) {
    ncclComm_t made = nullptr;
    const std::string error =
        nccl(ncclCommSplit(static_cast<ncclComm_t>(parent), color, key, &made, nullptr));
    *comm = made;
    return error;
  };
  c.comm_destroy = [](NcclComm comm) { ncclCommDestroy(static_cast<ncclComm_t>(comm)); };
  c.comm_abort = [](NcclComm comm) { ncclCommAbort(static_cast<ncclComm_t>(comm)); };
  return c;
}

std::pair<ncclDataType_t, double> NcclType(DType d) {
  switch (d) {
    case DType::kFP32:
    case DType::kTF32:
      return {ncclFloat32, 4};
    case DType::kFP16:
      return {ncclFloat16, 2};
    case DType::kBF16:
      return {ncclBfloat16, 2};
    case DType::kFP8:
      return {ncclFloat8e4m3, 1};
    case DType::kINT8:
      return {ncclInt8, 1};
    case DType::kINT4:
      return {ncclUint8, 1};
  }
  return {ncclUint8, 1};
}

std::pair<double, double> CollectiveBufferBytes(const Collective& c) {
  const int n = static_cast<int>(c.ranks.size());
  if (c.kind != CollectiveKind::kAllToAllV) return {c.bytes, c.bytes};
  double send = 0, recv = 0;
  for (int i = 0; i < n; ++i) {
    double row = 0, col = 0;
    for (int j = 0; j < n; ++j) {
      row += c.matrix.at(static_cast<std::size_t>(i) * n + j);
      col += c.matrix.at(static_cast<std::size_t>(j) * n + i);
    }
    send = std::max(send, row);
    recv = std::max(recv, col);
  }
  return {send, recv};
}

void EnqueueCollective(const Collective& c, int member, ncclComm_t comm, void* send, void* recv,
                       cudaStream_t stream) {
  const int n = static_cast<int>(c.ranks.size());
  const auto [type, esize] = NcclType(c.dtype);
  const int root =
      static_cast<int>(std::find(c.ranks.begin(), c.ranks.end(), c.root) - c.ranks.begin());
  const int root_member = root < n ? root : 0;
  switch (c.kind) {
    case CollectiveKind::kAllReduce:
      STRATASIM_NCCL_CHECK(
          ncclAllReduce(send, recv, Count(c.bytes, esize), type, ncclSum, comm, stream));
      return;
    case CollectiveKind::kReduceScatter:
      STRATASIM_NCCL_CHECK(
          ncclReduceScatter(send, recv, Count(c.bytes / n, esize), type, ncclSum, comm, stream));
      return;
    case CollectiveKind::kAllGather:
      STRATASIM_NCCL_CHECK(
          ncclAllGather(send, recv, Count(c.bytes / n, esize), type, comm, stream));
      return;
    case CollectiveKind::kBroadcast:
      STRATASIM_NCCL_CHECK(
          ncclBroadcast(send, recv, Count(c.bytes, esize), type, root_member, comm, stream));
      return;
    case CollectiveKind::kReduce:
      STRATASIM_NCCL_CHECK(
          ncclReduce(send, recv, Count(c.bytes, esize), type, ncclSum, root_member, comm, stream));
      return;
    default:
      break;
  }
  // Personalised exchanges: grouped point-to-point calls, as NCCL's own all-to-all examples
  // (and PyTorch's all_to_all_single) do. Byte counts travel as ncclInt8.
  STRATASIM_NCCL_CHECK(ncclGroupStart());
  try {
    double send_off = 0, recv_off = 0;
    for (int j = 0; j < n; ++j) {
      double out = 0, in = 0;
      switch (c.kind) {
        case CollectiveKind::kAllToAll:
          out = in = c.bytes / n;
          break;
        case CollectiveKind::kAllToAllV:
          out = c.matrix.at(static_cast<std::size_t>(member) * n + j);
          in = c.matrix.at(static_cast<std::size_t>(j) * n + member);
          break;
        case CollectiveKind::kGather:
          out = j == root_member ? c.bytes / n : 0;
          in = member == root_member ? c.bytes / n : 0;
          break;
        case CollectiveKind::kScatter:
          out = member == root_member ? c.bytes / n : 0;
          in = j == root_member ? c.bytes / n : 0;
          break;
        default:
          break;
      }
      const std::size_t out_b = static_cast<std::size_t>(out), in_b = static_cast<std::size_t>(in);
      if (out_b > 0)
        STRATASIM_NCCL_CHECK(ncclSend(At(send, send_off), out_b, ncclInt8, j, comm, stream));
      if (in_b > 0)
        STRATASIM_NCCL_CHECK(ncclRecv(At(recv, recv_off), in_b, ncclInt8, j, comm, stream));
      send_off += static_cast<double>(out_b);
      recv_off += static_cast<double>(in_b);
    }
  } catch (...) {
    ncclGroupEnd();
    throw;
  }
  STRATASIM_NCCL_CHECK(ncclGroupEnd());
}

Communicators::~Communicators() {
  if (aborted_) return;
  for (auto& [key, comms] : cliques_) {
    for (ncclComm_t c : comms) ncclCommDestroy(c);
  }
}

const std::vector<ncclComm_t>& Communicators::Clique(const std::vector<int>& key,
                                                     const std::vector<int>& devices) {
  auto it = cliques_.find(key);
  if (it != cliques_.end()) return it->second;
  std::vector<ncclComm_t> comms(devices.size());
  STRATASIM_NCCL_CHECK(
      ncclCommInitAll(comms.data(), static_cast<int>(devices.size()), devices.data()));
  return cliques_.emplace(key, std::move(comms)).first->second;
}

void Communicators::AbortAll() {
  for (auto& [key, comms] : cliques_) {
    for (ncclComm_t c : comms) ncclCommAbort(c);
  }
  aborted_ = true;
  cliques_.clear();
}

}  // namespace stratasim::validate::cuda
