#include "chakra/format.h"

#include "core/error.h"

namespace stratasim::chakra {

using ChakraProtoMsg::AttributeProto;
using ChakraProtoMsg::CollectiveCommType;
using ChakraProtoMsg::Node;

std::string RankFile(const std::string& prefix, int rank) {
  return prefix + "." + std::to_string(rank) + ".et";
}

std::string CommGroupsFile(const std::string& prefix) { return prefix + ".comm_groups.json"; }

void AppendDelimited(const google::protobuf::MessageLite& m, std::string* out) {
  const std::string body = m.SerializeAsString();
  // A varint of at most 5 bytes: messages are far below 4 GiB.
  std::uint32_t size = static_cast<std::uint32_t>(body.size());
  while (size >= 0x80) {
    out->push_back(static_cast<char>((size & 0x7f) | 0x80));
    size >>= 7;
  }
  out->push_back(static_cast<char>(size));
  out->append(body);
}

CollectiveCommType ToCommType(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::kAllReduce:
      return ChakraProtoMsg::ALL_REDUCE;
    case CollectiveKind::kReduceScatter:
      return ChakraProtoMsg::REDUCE_SCATTER;
    case CollectiveKind::kAllGather:
      return ChakraProtoMsg::ALL_GATHER;
    case CollectiveKind::kBroadcast:
      return ChakraProtoMsg::BROADCAST;
    case CollectiveKind::kReduce:
      return ChakraProtoMsg::REDUCE;
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kAllToAllV:
      return ChakraProtoMsg::ALL_TO_ALL;
    case CollectiveKind::kGather:
      return ChakraProtoMsg::GATHER;
    case CollectiveKind::kScatter:
      return ChakraProtoMsg::SCATTER;
  }
  throw Error("unknown collective kind");
}

std::optional<CollectiveKind> FromCommType(long long type) {
  switch (type) {
    case ChakraProtoMsg::ALL_REDUCE:
      return CollectiveKind::kAllReduce;
    case ChakraProtoMsg::REDUCE:
      return CollectiveKind::kReduce;
    case ChakraProtoMsg::ALL_GATHER:
      return CollectiveKind::kAllGather;
    case ChakraProtoMsg::GATHER:
      return CollectiveKind::kGather;
    case ChakraProtoMsg::SCATTER:
      return CollectiveKind::kScatter;
    case ChakraProtoMsg::BROADCAST:
      return CollectiveKind::kBroadcast;
    case ChakraProtoMsg::ALL_TO_ALL:
      return CollectiveKind::kAllToAll;
    case ChakraProtoMsg::REDUCE_SCATTER:
    case ChakraProtoMsg::REDUCE_SCATTER_BLOCK:
      return CollectiveKind::kReduceScatter;
    default:
      return std::nullopt;
  }
}

const AttributeProto* FindAttr(const Node& n, const std::string& name) {
  for (const AttributeProto& a : n.attr()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

std::optional<long long> IntAttr(const Node& n, const std::string& name) {
  const AttributeProto* a = FindAttr(n, name);
  if (!a) return std::nullopt;
  switch (a->value_case()) {
    case AttributeProto::kInt32Val:
      return a->int32_val();
    case AttributeProto::kInt64Val:
      return a->int64_val();
    case AttributeProto::kUint32Val:
      return a->uint32_val();
    case AttributeProto::kUint64Val:
      if (a->uint64_val() > static_cast<std::uint64_t>(INT64_MAX)) {
        throw Error("attribute " + name + " = " + std::to_string(a->uint64_val()) +
                    ": larger than 2^63 - 1");
      }
      return static_cast<long long>(a->uint64_val());
    default:
      throw Error("attribute " + name + ": not an integer (int32_val, int64_val, uint32_val or " +
                  "uint64_val)");
  }
}

std::optional<double> DoubleAttr(const Node& n, const std::string& name) {
  const AttributeProto* a = FindAttr(n, name);
  if (!a) return std::nullopt;
  if (a->value_case() != AttributeProto::kDoubleVal) {
    throw Error("attribute " + name + ": not a double_val");
  }
  return a->double_val();
}

std::optional<std::string> StringAttr(const Node& n, const std::string& name) {
  const AttributeProto* a = FindAttr(n, name);
  if (!a) return std::nullopt;
  if (a->value_case() != AttributeProto::kStringVal) {
    throw Error("attribute " + name + ": not a string_val");
  }
  return a->string_val();
}

std::optional<bool> BoolAttr(const Node& n, const std::string& name) {
  const AttributeProto* a = FindAttr(n, name);
  if (!a) return std::nullopt;
  if (a->value_case() != AttributeProto::kBoolVal) {
    throw Error("attribute " + name + ": not a bool_val");
  }
  return a->bool_val();
}

AttributeProto* AddAttr(google::protobuf::RepeatedPtrField<AttributeProto>* attrs,
                        const std::string& name) {
  AttributeProto* a = attrs->Add();
  a->set_name(name);
  return a;
}

}  // namespace stratasim::chakra
