#pragma once
// Activation memory of one transformer layer for one micro-batch, after Korthikanti et al.,
// "Reducing Activation Recomputation in Large Transformer Models" (MLSys'23), Section 4 and
// Table 2, for 16-bit activations with dropout masks:
//   no parallelism:                    s b h (34 + 5 a s / h)
//   tensor parallel t:                 s b h (10 + 24/t + 5 a s / (h t))
//   tensor + sequence parallel:        s b h / t (34 + 5 a s / h)
//   + selective recompute:             s b h / t  34          (without SP: s b h (10 + 24/t))
//   full recompute:                    2 s b h    (/ t with SP): only the layer input is kept
// A fused (flash) attention kernel never stores the a s^2 score and dropout tensors, which makes
// "none" equal to "selective". Extensions beyond the paper (stated): GQA shrinks the K and V
// tensors (4 s b h of the 34 scale by kv_heads/heads), and a gated MLP stores its extra
// projection (the 2 s b h of 4h-wide GeLU input and output become 2 s b ffn and a third).
// fp8 GEMMs (Transformer Engine): each fp8 Linear saves its input for the weight gradient as the
// fp8 cast it multiplied (te.pytorch Linear/LayerNormLinear/LayerNormMLP keep the quantized
// tensor, 1 byte per element), so the inputs of the QKV, attention-output, MLP-up and MLP-down
// GEMMs cost half: of the 34, 2 + 2 replicated and 2 + 8 split become 1 + 1 and 1 + 4 (a
// gated MLP's activation product likewise). The LayerNorm inputs and the MLP-up output (the
// activation function's input) stay 16-bit.
namespace exasim::models {

enum class Recompute { kNone, kSelective, kFull };

struct LayerShape {
  double seq = 0;         // s
  double micro_batch = 0; // b
  double hidden = 0;      // h
  double heads = 0;       // a
  double kv_heads = 0;    // GQA groups (= heads for MHA)
  double ffn = 0;         // MLP intermediate size (4h for GPT)
  bool gated_mlp = false;
};

struct ActivationOptions {
  int tp = 1;
  bool sequence_parallel = false;
  Recompute recompute = Recompute::kNone;
  bool flash_attention = false;
  bool fp8_gemm_inputs = false;  // the four projections' inputs kept as their fp8 casts
};

// Bytes stored for the backward pass by one layer, one micro-batch, on one GPU.
double layer_activation_bytes(const LayerShape& shape, const ActivationOptions& opt);

}  // namespace exasim::models
