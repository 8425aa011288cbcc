// Memory formulas against the published closed forms: ZeRO (Rajbhandari et al., SC'20, Fig. 1)
// and activation memory (Korthikanti et al., MLSys'23, Table 2).
#include <doctest/doctest.h>

#include "approx.hpp"

#include "models/memory/activation_memory.hpp"
#include "models/memory/model_state_memory.hpp"

using namespace exasim::models;

TEST_CASE("ZeRO model states per GPU follow the paper's formulas") {
  // The paper's example: Psi = 7.5 B parameters, Nd = 64, K = 12.
  const double psi = 7.5e9;
  const int nd = 64;
  CHECK(model_state_bytes(psi, 0, nd).total() == exasim::testing::approx((2 + 2 + 12) * psi));      // 120 GB
  CHECK(model_state_bytes(psi, 1, nd).total() == exasim::testing::approx(2 * psi + 2 * psi + 12 * psi / nd));  // 31.4 GB
  CHECK(model_state_bytes(psi, 2, nd).total() == exasim::testing::approx(2 * psi + (2 + 12) * psi / nd));      // 16.6 GB
  CHECK(model_state_bytes(psi, 3, nd).total() == exasim::testing::approx((2 + 2 + 12) * psi / nd));            // 1.9 GB
  // The figure's rounded totals, in GB.
  CHECK(model_state_bytes(psi, 0, nd).total() / 1e9 == exasim::testing::approx(120.0));
  CHECK(model_state_bytes(psi, 1, nd).total() / 1e9 == exasim::testing::approx(31.4).epsilon(0.01));
  CHECK(model_state_bytes(psi, 2, nd).total() / 1e9 == exasim::testing::approx(16.6).epsilon(0.01));
  CHECK(model_state_bytes(psi, 3, nd).total() / 1e9 == exasim::testing::approx(1.9).epsilon(0.02));
}

TEST_CASE("activation memory per layer follows Korthikanti et al. Table 2") {
  // GPT-3 175B layer: s = 2048, b = 1, h = 12288, a = 96, t = 8.
  LayerShape x{2048, 1, 12288, 96, 96, 4 * 12288.0, false};
  const double s = x.seq, b = x.micro_batch, h = x.hidden, a = x.heads, t = 8;
  const double sbh = s * b * h;
  ActivationOptions o;
  o.tp = 1;
  CHECK(layer_activation_bytes(x, o) == exasim::testing::approx(sbh * (34 + 5 * a * s / h)));
  o.tp = 8;
  CHECK(layer_activation_bytes(x, o) == exasim::testing::approx(sbh * (10 + 24 / t + 5 * a * s / (h * t))));
  o.sequence_parallel = true;
  CHECK(layer_activation_bytes(x, o) == exasim::testing::approx(sbh / t * (34 + 5 * a * s / h)));
  o.recompute = Recompute::kSelective;
  CHECK(layer_activation_bytes(x, o) == exasim::testing::approx(sbh / t * 34));
  o.sequence_parallel = false;
  CHECK(layer_activation_bytes(x, o) == exasim::testing::approx(sbh * (10 + 24 / t)));
  o.recompute = Recompute::kFull;
  CHECK(layer_activation_bytes(x, o) == exasim::testing::approx(2 * sbh));
  o.sequence_parallel = true;
  CHECK(layer_activation_bytes(x, o) == exasim::testing::approx(2 * sbh / t));
}

TEST_CASE("flash attention stores no score matrix, GQA and gated MLPs scale their terms") {
  LayerShape x{4096, 1, 4096, 32, 32, 4 * 4096.0, false};
  ActivationOptions o;
  o.tp = 1;
  o.flash_attention = true;
  const double sbh = x.seq * x.micro_batch * x.hidden;
  CHECK(layer_activation_bytes(x, o) == exasim::testing::approx(34 * sbh));
  // 8 KV heads of 32: K and V (2 sbh each) shrink to a quarter.
  x.kv_heads = 8;
  CHECK(layer_activation_bytes(x, o) == exasim::testing::approx((34 - 4 + 1) * sbh));
  // SwiGLU with ffn = 4h stores gate, up and their product: 24 sbh instead of GeLU's 16.
  x.kv_heads = 32;
  x.gated_mlp = true;
  CHECK(layer_activation_bytes(x, o) == exasim::testing::approx((34 + 8) * sbh));
}

TEST_CASE("fp8 GEMMs keep their four projections' inputs at one byte") {
  // Of Korthikanti's 34 s b h: QKV input 2, attention-output input 2, MLP-up input 2 and MLP-down
  // input 8 halve (Transformer Engine saves the fp8 casts); 34 - 7 = 27.
  LayerShape x{4096, 1, 4096, 32, 32, 4 * 4096.0, false};
  ActivationOptions o;
  o.flash_attention = true;
  o.fp8_gemm_inputs = true;
  const double sbh = x.seq * x.micro_batch * x.hidden, t = 8;
  CHECK(layer_activation_bytes(x, o) == exasim::testing::approx(27 * sbh));
  // Tensor parallel without SP: the QKV and MLP-up inputs are the replicated ones (10 -> 8),
  // the other two are split (24 -> 19).
  o.tp = 8;
  CHECK(layer_activation_bytes(x, o) == exasim::testing::approx(sbh * (8 + 19 / t)));
  o.sequence_parallel = true;
  CHECK(layer_activation_bytes(x, o) == exasim::testing::approx(27 * sbh / t));
  // SwiGLU: gate and up outputs stay 16-bit (16), their product is the fp8 down input (4).
  x.gated_mlp = true;
  CHECK(layer_activation_bytes(x, o) == exasim::testing::approx((27 + 8) * sbh / t));
  // Full recompute keeps only the 16-bit layer input.
  o.recompute = Recompute::kFull;
  CHECK(layer_activation_bytes(x, o) == exasim::testing::approx(2 * sbh / t));
}
