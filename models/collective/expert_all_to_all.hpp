#pragma once
// DeepEP's expert-parallel all-to-all (github deepseek-ai/DeepEP): an MoE layer's dispatch (each
// token to the GPUs holding its routed experts) and combine (the experts' outputs back, summed),
// as the kernels run inside one NVLink domain, not as a generic all-to-all of equal buffers.
//
// - normal (prefill, training): a token goes once to each GPU holding one of its top-k experts
//   (expected distinct destinations under uniform routing, expected_destination_ranks), over
//   `sms` SMs the caller gives the kernel (DeepEP's Buffer.set_num_sms; pairs of sender and
//   receiver SMs, one channel each).
// - low-latency (decode): a token goes once per routed expert (top-k copies, no deduplication),
//   sent by as many SMs as the kernel takes for the experts (ll_sms: one warp group per expert,
//   up to the GPU's SMs).
// Dispatch moves fp8 rows with one fp32 scale per 128 elements (both kernels' default); combine
// moves bf16 rows and sums them. Both the measured tables' rates show it: a bf16 dispatch would
// put H100's 24-SM dispatch at 700 GB/s, beyond its 450 GB/s of NVLink a direction.
//
// One phase's time on a GPU:
//   floor + experts x expert_cost + (tokens x token_sm_time + copies x pair_sm_time
//        + tokens x row_bytes / token_sm_bandwidth) / sms + copies x payload / min(sms x pair_sm_bandwidth, link_bandwidth)
// floor: launch, the layout / count handshake and the closing barrier; expert_cost: each
// expert's count signal and receive flag; token_sm_time and the bf16 row (2 x hidden bytes, read
// for dispatch's cast, written by combine's sum) at token_sm_bandwidth: what each SM does per
// token; pair_sm_time: per copy (address math, flags). The copies' payload streams at each SM's
// rate up to the GPU's link rate. Every constant is fitted per GPU on AIConfigurator's
// wideep_deepep_normal / _ll tables (models/calibration/expert_all_to_all_fit.hpp).
#include <optional>
#include <string>
#include <string_view>

namespace exasim::models {

enum class ExpertAllToAllKernel { kDeepEpNormal, kDeepEpLowLatency };
enum class ExpertAllToAllPhase { kDispatch, kCombine };

std::string_view expert_all_to_all_kernel_name(ExpertAllToAllKernel k);  // "deepep-normal", "deepep-ll"
std::optional<ExpertAllToAllKernel> parse_expert_all_to_all_kernel(std::string_view name);
std::string_view expert_all_to_all_phase_name(ExpertAllToAllPhase p);  // "dispatch", "combine"

// One rank's side of one MoE layer's exchange.
struct ExpertExchange {
  double tokens = 0;  // tokens this rank routes
  int hidden = 0;     // elements of a token's row
  int topk = 0;       // experts each token is routed to
  int experts = 0;    // routed experts of the layer, spread evenly over the ranks
  int ranks = 0;      // GPUs of the expert-parallel group
  int sms = 0;        // normal kernel: SMs given to it (DeepEP's default 20 on H800); LL: unused
};

// A phase's constants on one GPU (the formula above). pair_sm_bandwidth 0: not fitted.
struct ExpertAllToAllCosts {
  double floor_s = 0;
  double expert_s = 0;
  double token_sm_s = 0;
  double pair_sm_s = 0;
  double token_sm_bandwidth = 0;  // B/s per SM, 0: no per-token byte cost
  double pair_sm_bandwidth = 0;   // B/s per SM
  double link_bandwidth = 0;      // B/s out of one GPU
  bool fitted() const { return pair_sm_bandwidth > 0 && link_bandwidth > 0; }
};

// The four phases' constants of one node (CollectiveParams::expert_all_to_all).
struct ExpertAllToAllParams {
  ExpertAllToAllCosts normal_dispatch, normal_combine, ll_dispatch, ll_combine;
  const ExpertAllToAllCosts& of(ExpertAllToAllKernel k, ExpertAllToAllPhase p) const;
  ExpertAllToAllCosts& of(ExpertAllToAllKernel k, ExpertAllToAllPhase p);
};

// Expected GPUs a token's top-k experts land on, of `ranks` holding experts / ranks each, when
// the k experts are drawn uniformly without replacement: ranks x (1 - C(E - E/R, k) / C(E, k)).
double expected_destination_ranks(int experts, int topk, int ranks);
// Copies a rank sends: tokens x expected destinations (normal) or tokens x topk (low-latency).
double expert_all_to_all_copies(ExpertAllToAllKernel k, const ExpertExchange& x);
// Bytes of one copy: fp8 row with an fp32 scale per 128 elements (dispatch), bf16 row (combine).
double expert_all_to_all_payload_bytes(ExpertAllToAllPhase p, int hidden);
// SMs the kernel runs on: the caller's (normal); the low-latency kernel's own for `experts` on a
// GPU of `device_sms` SMs: ceil(E / ceil(E / device_sms)) (DeepEP internode_ll.cu).
int expert_all_to_all_sms(ExpertAllToAllKernel k, const ExpertExchange& x, int device_sms);

// Seconds of one phase on one rank (the formula above); throws std::invalid_argument when the
// costs are not fitted or the exchange is malformed (callers check their inputs first).
double expert_all_to_all_time(ExpertAllToAllKernel k, ExpertAllToAllPhase p, const ExpertExchange& x, int device_sms,
                              const ExpertAllToAllCosts& c);

}  // namespace exasim::models
