#include "models/memory/activation_memory.hpp"

namespace exasim::models {

double layer_activation_bytes(const LayerShape& x, const ActivationOptions& o) {
  const double sbh = x.seq * x.micro_batch * x.hidden;
  const double t = o.tp;
  if (o.recompute == Recompute::kFull) return 2 * sbh / (o.sequence_parallel ? t : 1.0);

  // Korthikanti's 34 s b h, term by term (bytes per s b h):
  //  replicated across TP without SP: 2 LayerNorm inputs (2+2), attention and MLP dropout masks (1+1),
  //  QKV input (2) and MLP input (2) -> 10
  //  split by TP: Q, K, V (2+2+2), attention output (2), MLP 4h input of GeLU (8) and its output (8)  -> 24
  const double kv = x.kv_heads > 0 && x.heads > 0 ? x.kv_heads / x.heads : 1.0;
  const double ffn_ratio = x.ffn > 0 ? x.ffn / (4 * x.hidden) : 1.0;
  // fp8: the attention-output and MLP-down inputs (2 and 8 of the split terms) and the QKV and
  // MLP-up inputs (2 + 2 of the replicated ones) are kept at one byte.
  const double narrow = o.fp8_gemm_inputs ? 0.5 : 1.0;
  const double mlp = ((x.gated_mlp ? 16.0 : 8.0) + 8.0 * narrow) * ffn_ratio;  // activation input(s), then its output
  const double split = 2 + 4 * kv + 2 * narrow + mlp;
  const double replicated = 6 + 4 * narrow;
  const double score = x.heads * x.seq / x.hidden * 5;  // softmax output (2), its dropout output (2), mask (1) per a s^2
  const bool keep_scores = !o.flash_attention && o.recompute == Recompute::kNone;
  const double attn_core = keep_scores ? score : 0;

  if (o.sequence_parallel) return sbh / t * (replicated + split + attn_core);
  return sbh * (replicated + (split + attn_core) / t);
}

}  // namespace exasim::models
