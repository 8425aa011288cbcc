#include "workloads/training/moe_ops.hpp"

#include "workloads/training/op_builders.hpp"

namespace exasim::workloads {

using namespace op_builders;

namespace {

// An all-to-all of the expert-parallel group; `bytes` each rank sends in all (its tokens' copies).
void ep_comm(std::vector<Op>& ops, std::string_view name, double bytes, int ep) {
  group_comm(ops, name, sim::CommKind::kAllToAll, bytes, CommGroup::kExpert, ep);
}

// The host's dispatch of the local experts' kernels, beside them (models::HostOverheads).
void expert_dispatch(std::vector<Op>& ops, std::string_view name, double units) {
  Op op;
  op.name = name;
  op.kind = OpKind::kHost;
  op.host_units = units;
  ops.push_back(op);
}

// A collective of the expert-tensor-parallel group over the tokens its ranks received.
void etp_comm(std::vector<Op>& ops, std::string_view name, sim::CommKind kind, double bytes, int etp) {
  group_comm(ops, name, kind, bytes, CommGroup::kExpertTensor, etp);
}

}  // namespace

// The routed MLP of a mixture-of-experts layer (Megatron-Core, all-to-all dispatcher): the GPU
// routes its own tokens (the sequence-parallel share under TP), sends each token's top_k copies
// to the experts' owners, runs its experts / ep experts as one grouped GEMM over the tokens they
// received (balanced routing: tokens x top_k x ep / experts each), sends the results back and
// sums them; shared experts run on the local tokens. With expert tensor parallelism the etp
// ranks holding slices of the same experts all-gather what they received, each runs its 1/etp
// of every expert's MLP on all of it, and reduce-scatter the outputs back (parallel folding).
void moe_forward(std::vector<Op>& ops, const LayerDims& d) {
  const double e = d.act_bytes, Tl = d.replicated_tokens(), h = d.hidden, F = d.expert_ffn;
  // The busiest rank receives `imbalance` times the mean: its experts' work and its all-to-all
  // share set the pace of the whole expert-parallel group.
  const double routed = Tl * d.top_k * d.imbalance, per_expert = routed * d.ep / d.experts, local = d.experts / d.ep;
  const double Fs = F / d.etp, up = Fs * (d.gated ? 2 : 1), group = d.etp;  // this GPU's slice; tokens of its ETP group
  const auto act = d.gated ? models::MemoryOp::kSiluMul : models::MemoryOp::kGelu;
  ops.push_back(sixteen_bit(gemm("moe.router", Tl, d.experts, h, e)));
  ops.push_back(memory("moe.router_topk", Tl * d.experts * (e + 4), 5 * Tl * d.experts));
  // Every rank's token count per expert, gathered over the expert-parallel group (int64 each):
  // the all-to-all's split sizes, which the host then reads (the sync of expert_dispatch).
  group_comm(ops, "ep.token_counts", sim::CommKind::kAllGather, d.ep * d.experts * 8, CommGroup::kExpert, d.ep);
  ops.push_back(gather("moe.permute", 2 * routed * h * e));
  ep_comm(ops, "ep.dispatch", routed * h * e, d.ep);
  etp_comm(ops, "etp.allgather", sim::CommKind::kAllGather, group * routed * h * e, d.etp);
  // The received tokens arrive grouped by source rank; with several local experts they are
  // re-ordered by expert before the grouped GEMM and back after it (sort_chunks_by_idxs).
  if (local > 1) ops.push_back(gather("moe.sort_chunks", 2 * group * routed * h * e));
  ops.push_back(gemm("moe.experts_up", group * per_expert, up, h, e, local));
  ops.push_back(memory("moe.experts_act", act, d, group * routed, Fs));
  ops.push_back(gemm("moe.experts_down", group * per_expert, h, Fs, e, local));
  expert_dispatch(ops, "moe.host_dispatch", local);
  if (local > 1) ops.push_back(gather("moe.unsort_chunks", 2 * group * routed * h * e));
  etp_comm(ops, "etp.reducescatter", sim::CommKind::kReduceScatter, group * routed * h * e, d.etp);
  ep_comm(ops, "ep.combine", routed * h * e, d.ep);
  ops.push_back(gather("moe.unpermute", 2 * routed * h * e + Tl * h * e));
  if (d.shared_experts > 0) {
    const double sf = d.shared_experts * F;
    ops.push_back(gemm("moe.shared_up", Tl, sf * (d.gated ? 2 : 1), h, e));
    ops.push_back(memory("moe.shared_act", act, d, Tl, sf));
    ops.push_back(gemm("moe.shared_down", Tl, h, sf, e));
  }
}

void moe_backward(std::vector<Op>& ops, const LayerDims& d) {
  const double e = d.act_bytes, Tl = d.replicated_tokens(), h = d.hidden, F = d.expert_ffn;
  // The busiest rank receives `imbalance` times the mean: its experts' work and its all-to-all
  // share set the pace of the whole expert-parallel group.
  const double routed = Tl * d.top_k * d.imbalance, per_expert = routed * d.ep / d.experts, local = d.experts / d.ep;
  const double Fs = F / d.etp, up = Fs * (d.gated ? 2 : 1), group = d.etp;
  const auto act = d.gated ? models::MemoryOp::kSiluMulBackward : models::MemoryOp::kGeluBackward;
  if (d.shared_experts > 0) {
    const double sf = d.shared_experts * F;
    ops.push_back(gemm("moe.shared_down_dgrad", Tl, sf, h, e));
    ops.push_back(weight_gradient("moe.shared_down_wgrad", h, sf, Tl, e));
    ops.push_back(memory("moe.shared_act_bwd", act, d, Tl, sf));
    ops.push_back(gemm("moe.shared_up_dgrad", Tl, h, sf * (d.gated ? 2 : 1), e));
    ops.push_back(weight_gradient("moe.shared_up_wgrad", sf * (d.gated ? 2 : 1), h, Tl, e));
  }
  ops.push_back(gather("moe.unpermute_bwd", 2 * routed * h * e + Tl * h * e));
  ep_comm(ops, "ep.combine_bwd", routed * h * e, d.ep);
  etp_comm(ops, "etp.allgather_bwd", sim::CommKind::kAllGather, group * routed * h * e, d.etp);
  if (local > 1) ops.push_back(gather("moe.unsort_chunks_bwd", 2 * group * routed * h * e));
  ops.push_back(gemm("moe.experts_down_dgrad", group * per_expert, Fs, h, e, local));
  Op down_w = gemm("moe.experts_down_wgrad", h, Fs, group * per_expert, e, local);
  down_w.weight_grad = true;
  ops.push_back(down_w);
  ops.push_back(memory("moe.experts_act_bwd", act, d, group * routed, Fs));
  ops.push_back(gemm("moe.experts_up_dgrad", group * per_expert, h, up, e, local));
  Op up_w = gemm("moe.experts_up_wgrad", up, h, group * per_expert, e, local);
  up_w.weight_grad = true;
  ops.push_back(up_w);
  expert_dispatch(ops, "moe.host_dispatch_bwd", 2 * local);
  if (local > 1) ops.push_back(gather("moe.sort_chunks_bwd", 2 * group * routed * h * e));
  etp_comm(ops, "etp.reducescatter_bwd", sim::CommKind::kReduceScatter, group * routed * h * e, d.etp);
  ep_comm(ops, "ep.dispatch_bwd", routed * h * e, d.ep);
  ops.push_back(gather("moe.permute_bwd", 2 * routed * h * e));
  ops.push_back(sixteen_bit(gemm("moe.router_dgrad", Tl, h, d.experts, e)));
  ops.push_back(sixteen_bit(weight_gradient("moe.router_wgrad", d.experts, h, Tl, e)));
}

}  // namespace exasim::workloads
