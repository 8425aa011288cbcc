#pragma once
// Calibratable parameters of NCCL-like collectives: the achieved fraction of each link class's
// datasheet bandwidth, and the software latencies per algorithm step and per call. Both network
// backends apply them the same way (see sim/net/network_fabric.hpp).
// NCCL moves data with one of its protocols: Simple (full bandwidth; each step moves a whole
// chunk through the pipeline and synchronises, the largest per-step cost), LL128 (flags in every
// 128-byte line: 94% of the bandwidth, a cheaper step) or LL (low latency: flag beside every
// 4-byte word, half the bandwidth, the cheapest step). The tuner takes the fastest per size.
//   calibration file keys, under `collective:`: intra_efficiency, xgmi_efficiency,
//   pcie_efficiency, inter_efficiency, reduction_efficiency, nvls_efficiency, ll128_efficiency,
//   ll_efficiency, pipeline_fill_rounds,
//   step_overhead, inter_step_overhead, ll_step_overhead,
//   ll_inter_step_overhead, ll128_step_overhead, ll128_inter_step_overhead, simple_base_latency,
//   ll128_base_latency, launch_overhead,
//   p2p_launch_overhead, custom_all_reduce_efficiency, custom_all_reduce_overhead, collective_sms, p2p_sms, userbuffers_reduce_scatter_sms,
//   userbuffers_all_gather_sms; the expert all-to-all phases (maps: expert_all_to_all.hpp)
#include <string>
#include <string_view>
#include <vector>

#include "hw/config/node.hpp"
#include "models/collective/expert_all_to_all.hpp"

namespace exasim::models {

enum class Protocol { kSimple, kLL128, kLL };
inline constexpr Protocol kAllProtocols[] = {Protocol::kSimple, Protocol::kLL128, Protocol::kLL};
std::string_view protocol_name(Protocol p);
// Payload per byte stored: LL 4 of 8 (a 4-byte flag beside each 4-byte word, NCCL
// src/device/prims_ll.h), LL128 120 of 128 (an 8-byte flag per 128-byte line, prims_ll128.h).
double protocol_bandwidth_fraction(Protocol p);

struct CollectiveParams {
  // Achieved fraction of each link class's datasheet bandwidth (nccl-tests busbw, large
  // messages, shared/validation/gpu_specs.yaml). NVLink: fitted to A100 8-GPU all-reduce,
  // 235 of 300 GB/s; checked on H200 ring (NVLS off) 366 and 4-GPU 363 of 450 GB/s.
  double intra_efficiency = 0.78;
  // xGMI (AMD mesh): fitted to MI300X 2-GPU all-reduce, 47.7 of 64 GB/s on the pair's link;
  // checked on 8 GPUs, 313 of 448 GB/s.
  double xgmi_efficiency = 0.745;
  // PCIe (switch trees, GPU to NIC): A100 pairs joined by PCIe Gen4 x16 all-reduce at 23.7 of
  // 31.5 GB/s (shared/data/profiles/a100_pairwise_nvlink_all_reduce.csv, 4 GPUs, 512 MiB).
  double pcie_efficiency = 0.75;
  // Network (NIC and switch links): InfiniBand ib_write_bw reaches ~97% of line rate and NCCL
  // ~90% (stated default); EFA one adapter 193.7 of 200 Gb/s (gpu_specs.yaml).
  double inter_efficiency = 0.90;
  // Reducing collectives (all-reduce, reduce-scatter, reduce) run NCCL's reduce-copy kernels:
  // the fraction of a link's copy rate (above) they reach. 1 by default: the nccl-tests
  // efficiencies above are all-reduce figures, so they already hold it; a cluster calibrated
  // on both copies (send/recv) and reductions fits it.
  double reduction_efficiency = 1.0;
  // In-switch reduction (NVLS): payload fraction of the NVLink rate that multimem reduce and
  // multicast reach; fitted to H200 NVLS all-reduce on 5-8 GPUs (414-473 GB/s busbw =
  // 2(n-1)/n x 450 GB/s x 0.575-0.60); checked on H100 (480) and B200 (846 of 900 GB/s).
  double nvls_efficiency = 0.59;
  // Software latency of one algorithm step inside a node (NCCL protocol, flag wait): H100 8-GPU
  // small all-reduce 13-17 us over 14 ring steps (gpu_specs.yaml).
  double step_overhead_s = 1.0e-6;
  // Software latency of one step that crosses the network (proxy thread, RDMA post and
  // completion): NCCL's tuning model charges ~2-5 us per network step; estimate.
  double inter_step_overhead_s = 2.0e-6;
  // The same for the LL protocol (no Simple-protocol chunk synchronisation): NCCL's tuning
  // model charges ~0.6 us of NVLink hardware latency per LL step (src/graph/tuning.cc); estimate.
  double ll_step_overhead_s = 0.6e-6;
  double ll_inter_step_overhead_s = 1.0e-6;
  // LL128: between the two (estimate).
  double ll128_step_overhead_s = 0.8e-6;
  double ll128_inter_step_overhead_s = 1.5e-6;
  // A phase's pipeline fill and drain: it takes this many times one peer's share of a round's
  // transfer beyond its rounds (collective_plan.hpp, phase_fill; 0: an ideal pipeline). What
  // makes small groups slower per byte: nccl-tests on one DGX A100 reach 197 / 222 / 228 GB/s
  // bus bandwidth in 2- / 4- / 8-GPU all-reduces of 64-512 MiB (all-gather 155 / 198 / 214,
  // all-to-all 169 / 201 / 210; shared/data/kernels-aic/a100_sxm/nccl_perf.csv), as if each
  // phase ran about a third of a round more than its rounds, whatever the group. Fitted per
  // node by exasim calibrate --format aic-nccl; 0 in the catalog defaults.
  double pipeline_fill_rounds = 0;
  // The serving engine's own all-reduce (custom_all_reduce.hpp): the fraction of a GPU's link
  // rate its peer reads reach (0: the engine has none, NCCL only: the catalog default), and its
  // cost per call and barrier (launch, flag wait). Fitted per node on custom_allreduce_perf.
  double custom_all_reduce_efficiency = 0;
  double custom_all_reduce_overhead_s = 0;
  // The rate the low-latency protocols reach at the sizes NCCL runs them, as a fraction of
  // Simple's on the same links. Their payload share is the most they can (LL128 120 of 128
  // bytes, LL 4 of 8: protocol_bandwidth_fraction, the defaults). NCCL runs them on small and
  // mid-size calls, with fewer channels than large ones (enqueue.cc drops channels while the call
  // is under nChannels x nThreads x threadThreshold bytes) and a per-channel cap of its own
  // (graph/tuning.cc), so they reach less. The nccl-tests tables show it: on DGX B200 an 8-GPU
  // all-gather reaches 617 GB/s of bus bandwidth at 512 MiB and 144-261 at 16-32 MiB, which one
  // rate for all three protocols cannot give (it fitted 0.59 of NVLink, 453 GB/s at 512 MiB).
  // Fitted per node (exasim calibrate --format aic-nccl): LL128 at 0.39-0.79 since the base
  // latencies below (0.11-0.48 before, when Simple's step latency carried its fixed cost).
  double ll128_efficiency = protocol_bandwidth_fraction(Protocol::kLL128);
  double ll_efficiency = protocol_bandwidth_fraction(Protocol::kLL);
  double protocol_efficiency(Protocol p) const {
    return p == Protocol::kLL128 ? ll128_efficiency : p == Protocol::kLL ? ll_efficiency : 1.0;
  }
  // Per call, what a protocol costs beyond LL whatever the size (NCCL's own tuning model has a
  // base latency per algorithm and protocol, src/graph/tuning.cc baseLat: ring LL 6.6, LL128
  // 14, Simple 8.4 us): Simple's connection handshake and its pipeline of 512 KiB-class chunks
  // filling and draining once, LL128's line flags. The nccl-tests tables show it where Simple
  // runs: on one DGX A100 an 8-GPU all-reduce of 16 MiB-1 GiB takes 7.6-9.4 us per MiB plus ~88
  // us, an all-gather (half the steps) 4.2-5.2 us per MiB plus ~66 us: 44 us a call and 3.1 us a
  // step, where LL's whole 8-GPU all-reduce takes 22 us. 0 in the catalog defaults; fitted per
  // node by exasim calibrate --format aic-nccl.
  double simple_base_latency_s = 0;
  double ll128_base_latency_s = 0;
  double base_latency(Protocol p) const {
    return p == Protocol::kSimple ? simple_base_latency_s : p == Protocol::kLL128 ? ll128_base_latency_s : 0.0;
  }
  // Per call: kernel launch and the host-side cost of issuing the collective. Asynchronous
  // training loops hide it, so the default is 0; measured tables timed from the host include it.
  double launch_overhead_s = 0;
  // The same for send/recv, which NCCL runs through its own (p2p) kernels and proxy path.
  double p2p_launch_overhead_s = 0;

  // SMs a communication holds on each of its GPUs while it runs; kernels running beside it there
  // have only the rest (sim::Engine::slow_compute_during_comm). NCCL runs one thread block of
  // 256-640 threads per channel, which takes most of an SM's registers, so a GEMM's tiles cannot
  // share it. Library defaults, not measured here: NCCL collectives on 8-GPU NVSwitch nodes with
  // 8 NICs open 16 channels (up to 32; NCCL_MIN/MAX_NCHANNELS); send/recv 2 per peer
  // (NCCL_NCHANNELS_PER_NET_PEER); Transformer Engine's userbuffers, which run TP communication
  // overlapped with GEMMs, give their pipelined reduce-scatter 16 SMs and move all-gathers with
  // the copy engines (1 SM; transformer_engine/pytorch/module/base.py, initialize_ub).
  double collective_sms = 16;
  double p2p_sms = 2;
  double userbuffers_reduce_scatter_sms = 16;
  double userbuffers_all_gather_sms = 1;

  // The MoE layers' expert all-to-all kernels (expert_all_to_all.hpp: DeepEP, TensorRT-LLM's
  // NVLink all-to-all), per phase and format; none in the catalog defaults. Calibration keys
  // expert_all_to_all_key_name() (deepep_normal_dispatch, nvlink_two_sided_dispatch_fp8, ...),
  // each a map of the phase's constants.
  ExpertAllToAllParams expert_all_to_all;

  std::string source = "catalog defaults";  // where the values came from (a calibration file)

  // Software latency of one step of `p`, inside a node or across the network.
  double step_overhead(Protocol p, bool crosses_nodes) const {
    if (p == Protocol::kLL) return crosses_nodes ? ll_inter_step_overhead_s : ll_step_overhead_s;
    if (p == Protocol::kLL128) return crosses_nodes ? ll128_inter_step_overhead_s : ll128_step_overhead_s;
    return crosses_nodes ? inter_step_overhead_s : step_overhead_s;
  }
};

// Every calibratable number of CollectiveParams by its calibration-file key, with its kind and
// the physical range a fit may move it in (exasim calibrate, sim/net/collective_calibration.hpp).
enum class CollectiveParamKind { kEfficiency, kTime, kCount, kRounds };
struct CollectiveParamSlot {
  const char* name;
  double CollectiveParams::*field;
  CollectiveParamKind kind;
  double lower, upper;
};
const std::vector<CollectiveParamSlot>& collective_param_slots();
// The slot called `name`; throws std::out_of_range when there is none.
const CollectiveParamSlot& collective_param_slot(std::string_view name);

// Applies the keys present in `n` (a mapping) on top of `p`. Efficiencies must be in (0, 1].
void apply_collective_params(CollectiveParams& p, const config::Node& n);

}  // namespace exasim::models
