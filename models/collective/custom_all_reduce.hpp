#pragma once
// The serving engines' own all-reduce (TensorRT-LLM's, vLLM's and SGLang's "custom all-reduce"),
// not NCCL: each GPU's kernel reads its peers' buffers straight over NVLink (or PCIe P2P) and
// reduces them, with a flag barrier between GPUs and no protocol pipeline. Modelled as one-shot:
// every GPU reads all n-1 peers' whole buffers, one barrier. TensorRT-LLM's measured times follow
// it up to where its AUTO strategy hands over to NCCL (H100, 8 GPUs: 3.1 us at 2 KiB, 17.6 us at
// 512 KiB, NCCL's 26 us at 1 MiB); its two-shot variant (reduce-scatter and all-gather, 2 x
// (n-1)/n of the buffer) is not modelled: taken as the faster of the two it made 8-GPU calls of
// 128-512 KiB 40% too fast. The engines take it below a size limit and NCCL above; as their
// tuner, exasim takes the faster. Its parameters (CollectiveParams::custom_all_reduce_*) are
// fitted per node on AIConfigurator's custom_allreduce_perf tables (exasim calibrate --format
// aic-nccl).
#include "models/collective/collective_params.hpp"

namespace exasim::models {

// Seconds of a one-shot all-reduce of `bytes` over `ranks` GPUs of one node, each with
// `link_bandwidth` B/s per direction to the others; infinity where the parameters have no custom
// all-reduce (custom_all_reduce_efficiency 0, the catalog default).
double custom_all_reduce_time(double bytes, int ranks, double link_bandwidth, const CollectiveParams& p);

// A serving engine's all-reduce inside one node, as its tuner picks: its own kernel, or NCCL
// (`nccl_s`, that call's NCCL time) where NCCL is faster.
double engine_all_reduce_time(double nccl_s, double bytes, int ranks, double link_bandwidth, const CollectiveParams& p);

}  // namespace exasim::models
