#include "workloads/serving/kv_transfer.hpp"

#include <algorithm>

#include "workloads/serving/serving_memory.hpp"

namespace exasim::workloads::serving {

KvTransfer::KvTransfer(sim::NetworkBackend& network, const ModelSpec& model, DType kv_dtype)
    : network_(network), model_(model), kv_dtype_(kv_dtype) {}

double KvTransfer::bytes(std::int64_t tokens) const {
  return kv_cache_bytes(model_, static_cast<double>(tokens), kv_dtype_);
}

double KvTransfer::duration(std::int64_t tokens, std::uint32_t src, std::uint32_t dst, int shards, double now) {
  const auto key = std::make_tuple(tokens, src, dst);
  auto it = ops_.find(key);
  if (it == ops_.end()) {
    sim::CommOp op;
    op.kind = sim::CommKind::kSendRecv;
    op.bytes = bytes(tokens) / std::max(1, shards);
    op.ranks = {src, dst};
    it = ops_.emplace(key, std::move(op)).first;
  }
  return network_.duration(it->second, now);
}

}  // namespace exasim::workloads::serving
