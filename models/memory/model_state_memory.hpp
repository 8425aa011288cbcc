#pragma once
// Memory of model states per GPU under mixed-precision Adam and ZeRO sharding
// (Rajbhandari et al., "ZeRO", SC'20, Section 3.1 and Figure 1): with Psi parameters on the GPU,
// 16-bit weights 2 Psi, 16-bit gradients 2 Psi, optimizer states K Psi with K = 12 (fp32 master
// weights, momentum, variance). Stage 1 shards the optimizer states over the data-parallel group,
// stage 2 also the gradients, stage 3 also the weights.
namespace exasim::models {

struct ModelStateBytes {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double total() const { return weights + gradients + optimizer; }
};

struct PrecisionBytes {
  double weight = 2;      // bytes per parameter of the working weights (bf16/fp16)
  double gradient = 2;    // bytes per parameter of the gradients
  double optimizer = 12;  // bytes per parameter of optimizer states (K in the ZeRO paper)
};

// params: parameters held by this GPU before data-parallel sharding (already split by TP and PP).
ModelStateBytes model_state_bytes(double params, int zero_stage, int dp, const PrecisionBytes& bytes = {});

}  // namespace exasim::models
