#pragma once
// The expert-parallel all-to-all kernels of MoE layers inside one NVLink domain: an MoE layer's
// dispatch (each token to the GPUs holding its routed experts) and combine (the experts' outputs
// back, summed), not a generic all-to-all of equal buffers.
//
// - DeepEP normal (github deepseek-ai/DeepEP; prefill, training): a token goes once to each GPU
//   holding one of its top-k experts (expected distinct destinations under uniform routing,
//   expected_destination_ranks), over `sms` SMs the caller gives the kernel (Buffer.set_num_sms).
// - DeepEP low-latency (decode): a token goes once per routed expert (top-k copies, no
//   deduplication), sent by as many SMs as the kernel takes for the experts (one warp group an
//   expert, up to the GPU's SMs).
//   Both DeepEP kernels dispatch fp8 rows with one fp32 scale per 128 elements (their default)
//   and combine bf16 rows. The measured tables show it: a bf16 dispatch would put H100's 24-SM
//   dispatch at 700 GB/s, beyond its 450 GB/s of NVLink a direction.
// - TensorRT-LLM's NVLink all-to-all of NVL72 racks (two-sided: a prepare kernel exchanges the
//   per-GPU counts, then dispatch and combine; one-sided: dispatch and combine write straight
//   into the peers' memory): a token goes once to each other GPU holding one of its experts, the
//   copies to the G - 1 peers in parallel. Dispatch in bf16, fp8 or nvfp4; combine in bf16, or
//   nvfp4 (TensorRT-LLM's low-precision combine).
//
// One phase's time on a GPU, with U the units that share the per-item work (DeepEP: its SMs;
// NVLink kernels: one, their SMs being fixed) and P the parallel senders of the payload (DeepEP:
// its SMs; NVLink kernels: the peers):
//   floor + experts x expert_cost + row / row_bandwidth + (tokens x token_time + copies x copy_time
//        + tokens x row_bytes / token_bandwidth) / U + link bytes / min(P x unit_bandwidth, link_bandwidth)
// floor: launch, the count handshake and the closing barrier; expert_cost: each expert's count
// signal and receive flag; token_time and the bf16 row (2 x hidden bytes, read for the cast,
// written by the sum) at token_bandwidth: the work per token; row / row_bandwidth: a per-call cost
// that grows with the row (one row of the phase's format), however few the tokens, as the kernels
// stage and flag rows in chunks (H100's normal combine of one token: 30 us at hidden 2048, 47 us
// at 7168; fitted 0.5-10 GB/s: an effective rate, not a link's); copy_time: per copy (address math,
// flags); link bytes: the copies to other GPUs times the payload (DeepEP's copies to the GPU
// itself stay in its memory: (R - 1) / R of them leave).
// Every constant is fitted per GPU and phase on AIConfigurator's tables
// (models/calibration/expert_all_to_all_fit.hpp).
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace exasim::models {

enum class ExpertAllToAllKernel { kDeepEpNormal, kDeepEpLowLatency, kNvlinkTwoSided, kNvlinkOneSided };
enum class ExpertAllToAllPhase { kPrepare, kDispatch, kCombine };
// The format of the rows a phase moves.
enum class ExpertPayload { kBf16, kFp8, kNvfp4 };

std::string_view expert_all_to_all_kernel_name(ExpertAllToAllKernel k);  // "deepep-normal", "deepep-ll", "nvlink-two-sided", "nvlink-one-sided"
std::optional<ExpertAllToAllKernel> parse_expert_all_to_all_kernel(std::string_view name);
std::string_view expert_all_to_all_phase_name(ExpertAllToAllPhase p);  // "prepare", "dispatch", "combine"
std::string_view expert_payload_name(ExpertPayload f);                  // "bf16", "fp8", "nvfp4"
std::optional<ExpertPayload> parse_expert_payload(std::string_view name);
bool is_deepep(ExpertAllToAllKernel k);

// SMs DeepEP's normal kernels run on unless told otherwise (Buffer.num_sms = 20).
inline constexpr int kDeepEpDefaultSms = 20;

// One rank's side of one MoE layer's exchange.
struct ExpertExchange {
  double tokens = 0;  // tokens this rank routes
  int hidden = 0;     // elements of a token's row
  int topk = 0;       // experts each token is routed to
  int experts = 0;    // routed experts of the layer, spread evenly over the ranks
  int ranks = 0;      // GPUs of the expert-parallel group
  int sms = 0;        // DeepEP normal: SMs given to it (kDeepEpDefaultSms); others: unused
};

// A phase's constants on one GPU (the formula above). The rates are 0 for a phase that moves no
// rows (prepare).
struct ExpertAllToAllCosts {
  double floor_s = 0;
  double expert_s = 0;
  double token_s = 0;
  double copy_s = 0;
  double token_bandwidth = 0;  // B/s per unit, 0: no per-token byte cost
  double row_bandwidth = 0;    // B/s of one row on the call's critical path, 0: none
  double unit_bandwidth = 0;   // B/s per parallel sender
  double link_bandwidth = 0;   // B/s out of one GPU
};

// Which constants: a kernel's phase moving rows of one format.
struct ExpertAllToAllKey {
  ExpertAllToAllKernel kernel = ExpertAllToAllKernel::kDeepEpNormal;
  ExpertAllToAllPhase phase = ExpertAllToAllPhase::kDispatch;
  ExpertPayload payload = ExpertPayload::kFp8;
  auto operator<=>(const ExpertAllToAllKey&) const = default;
};
// Every phase a kernel has, with the formats it moves: DeepEP dispatch fp8 and combine bf16;
// NVLink two-sided prepare (no rows: keyed bf16), dispatch in each format, combine bf16 or nvfp4;
// one-sided dispatch in each format, combine bf16 or nvfp4.
const std::vector<ExpertAllToAllKey>& expert_all_to_all_keys();
// The calibration key of the constants: deepep_normal_dispatch, deepep_ll_combine,
// nvlink_two_sided_prepare, nvlink_two_sided_dispatch_fp8, nvlink_one_sided_combine_nvfp4, ...
std::string expert_all_to_all_key_name(const ExpertAllToAllKey& k);

// The fitted constants of one node (CollectiveParams::expert_all_to_all): a phase is fitted when
// present.
using ExpertAllToAllParams = std::map<ExpertAllToAllKey, ExpertAllToAllCosts>;

// Expected GPUs a token's top-k experts land on, of `ranks` holding experts / ranks each, when
// the k experts are drawn uniformly without replacement: ranks x (1 - C(E - E/R, k) / C(E, k)).
double expected_destination_ranks(int experts, int topk, int ranks);
// Copies a rank sends: tokens x expected destinations (DeepEP normal), tokens x topk (DeepEP
// low-latency), tokens x expected destinations x (R - 1) / R (NVLink kernels: the peers only).
double expert_all_to_all_copies(ExpertAllToAllKernel k, const ExpertExchange& x);
// Bytes of one row of `hidden` elements: bf16 2 B an element; fp8 1 B and an fp32 scale per 128;
// nvfp4 half a byte and an fp8 scale per 16.
double expert_payload_bytes(ExpertPayload f, int hidden);
// The units sharing the per-item work (U above) and the payload's parallel senders (P): DeepEP
// normal its `sms`; DeepEP low-latency ceil(E / ceil(E / device_sms)) (internode_ll.cu); NVLink
// kernels 1 and the G - 1 peers.
int expert_all_to_all_work_units(ExpertAllToAllKernel k, const ExpertExchange& x, int device_sms);
int expert_all_to_all_senders(ExpertAllToAllKernel k, const ExpertExchange& x, int device_sms);

// Bytes of one copy of the phase: its format's row; none for prepare.
double expert_all_to_all_payload(const ExpertAllToAllKey& key, int hidden);

// The formula's parts for one exchange: what multiplies each linear cost (floor, expert_cost,
// token_time, copy_time, 1 / token_bandwidth, 1 / row_bandwidth, in that order), the bytes a
// rank's copies put on its links and the payload's parallel senders. The time model sums them; the fit solves for the costs.
struct ExpertAllToAllTerms {
  static constexpr int kLinear = 6;
  double linear[kLinear] = {};
  double link_bytes = 0;
  int senders = 0;
};
// Throws std::invalid_argument on a malformed exchange (no units or senders, no row, negative tokens).
ExpertAllToAllTerms expert_all_to_all_terms(const ExpertAllToAllKey& key, const ExpertExchange& x, int device_sms);

// Seconds of one phase on one rank (the formula above); throws std::invalid_argument on a
// malformed exchange or a phase that moves rows without rates (callers check their inputs first).
double expert_all_to_all_time(const ExpertAllToAllKey& key, const ExpertExchange& x, int device_sms,
                              const ExpertAllToAllCosts& c);

}  // namespace exasim::models
