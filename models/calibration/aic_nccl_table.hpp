#pragma once
// Reader of NVIDIA AIConfigurator's measured NCCL tables (shared/data/kernels-aic/<gpu>/
// nccl_perf.csv; ai-dynamo/aiconfigurator, Apache-2.0): one row per collective call on
// `num_gpus` GPUs of one node, `op_name` (all_gather, all_reduce, reduce_scatter, alltoall),
// `nccl_dtype` (half: 2 bytes, int8: 1, ...), `message_size` in elements of that dtype and
// `latency` in milliseconds. The collector ran nccl-tests (-w 40, 60-100 iterations, -a 1:
// averaged over ranks, out-of-place): calls issued back to back from the host, so a latency is
// the GPU's time per call with the host's launch hidden behind the previous call (launch cost
// shows only where the call is shorter than it).
// Sizes follow nccl-tests, as exasim's collectives do (collective_model.hpp): the all-reduce
// buffer, the gathered (all-gather) and the unscattered (reduce-scatter) size, the per-rank send
// buffer of all-to-all.
#include <string>
#include <vector>

#include "models/collective/collective.hpp"

namespace exasim::models {

struct CollectiveSample {
  Collective op = Collective::kAllReduce;
  int ranks = 0;        // GPUs in the group, all on one node
  double bytes = 0;     // message_size x the dtype's bytes
  double time_s = 0;
  std::string dtype;    // as the table spells nccl_dtype
  int line = 0;         // in the table, for reports
  bool custom_kernel = false;  // the serving engine's own all-reduce (custom_allreduce_perf), not NCCL
};

// Throws IoError when the file cannot be read, ConfigError (file, line, column) on a bad row:
// an unknown op_name or nccl_dtype (the message lists the known ones), a group of fewer than
// two GPUs, a message_size that is not a whole number of elements or above 1 TiB, a
// non-positive latency, more fields than the header; and on a table with no row.
std::vector<CollectiveSample> read_aic_nccl_table(const std::string& path);

// True when the file looks like an AIConfigurator NCCL table (a CSV whose header has op_name,
// nccl_dtype, num_gpus, message_size and latency), or a custom all-reduce table.
bool is_aic_nccl_table(const std::string& path);

// AIConfigurator's custom_allreduce_perf.csv: TensorRT-LLM's own all-reduce (AUTO strategy:
// one-shot, two-shot, or NCCL above its size limit) on `num_gpus` GPUs of one node,
// `message_size` in elements of bfloat16 (the collector's dtype; the table has no column for
// it) and `latency` in milliseconds. Samples are all-reduces with custom_kernel set. The same
// refusals as read_aic_nccl_table.
std::vector<CollectiveSample> read_aic_custom_all_reduce_table(const std::string& path);
bool is_aic_custom_all_reduce_table(const std::string& path);

}  // namespace exasim::models
