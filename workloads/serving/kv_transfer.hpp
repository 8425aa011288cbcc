#pragma once
// Moving a prompt's KV cache from a prefill replica to a decode replica (disaggregation) over the
// network backend. Bytes = 2 x layers x kv_heads x head_dim x tokens x dtype size (all layers,
// all heads); each of the prefill replica's GPUs sends its share to the matching decode GPU at
// the same time, so the transfer takes as long as one share.
#include <cstdint>
#include <map>
#include <tuple>

#include "hw/dtype.hpp"
#include "sim/network_backend.hpp"
#include "workloads/model/model_spec.hpp"

namespace exasim::workloads::serving {

class KvTransfer {
 public:
  KvTransfer(sim::NetworkBackend& network, const ModelSpec& model, DType kv_dtype);
  double bytes(std::int64_t tokens) const;
  // Duration of moving `tokens` tokens' KV from the replica on ranks [src, src + shards) to the
  // one starting at `dst`, starting at `now`.
  double duration(std::int64_t tokens, std::uint32_t src, std::uint32_t dst, int shards, double now);

 private:
  sim::NetworkBackend& network_;
  const ModelSpec& model_;
  DType kv_dtype_;
  // Backends may cache by op address, so every distinct transfer keeps one stable op.
  std::map<std::tuple<std::int64_t, std::uint32_t, std::uint32_t>, sim::CommOp> ops_;
};

}  // namespace exasim::workloads::serving
