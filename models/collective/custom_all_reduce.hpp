#pragma once
// The serving engines' own all-reduce (TensorRT-LLM's, vLLM's and SGLang's "custom all-reduce"),
// not NCCL: each GPU's kernel reads its peers' buffers straight over NVLink (or PCIe P2P) and
// reduces them, with a flag barrier between GPUs and no protocol pipeline. One-shot: every GPU
// reads all n-1 peers' whole buffers, one barrier; two-shot: a reduce-scatter then an all-gather
// of (n-1)/n of the buffer each, two barriers. The engines take it below a size limit and NCCL
// above; as their tuner, exasim takes the fastest of the three. Its parameters
// (CollectiveParams::custom_all_reduce_*) are fitted per node on AIConfigurator's
// custom_allreduce_perf tables (exasim calibrate --format aic-nccl).
#include "models/collective/collective_params.hpp"

namespace exasim::models {

// Seconds of the faster of one-shot and two-shot for an all-reduce of `bytes` over `ranks` GPUs
// of one node, each with `link_bandwidth` B/s per direction to the others; infinity where the
// parameters have no custom all-reduce (custom_all_reduce_efficiency 0, the catalog default).
double custom_all_reduce_time(double bytes, int ranks, double link_bandwidth, const CollectiveParams& p);

}  // namespace exasim::models
