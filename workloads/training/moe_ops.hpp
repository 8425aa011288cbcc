#pragma once
// The routed MLP of a mixture-of-experts layer in training (Megatron-Core, all-to-all
// dispatcher), forward and backward: router, permutes, all-to-alls, the grouped expert GEMMs,
// shared experts. Appended to a layer's ops (transformer_ops.cpp) in place of the dense MLP.
#include <vector>

#include "workloads/training/transformer_ops.hpp"

namespace exasim::workloads {

void moe_forward(std::vector<Op>& ops, const LayerDims& d);
void moe_backward(std::vector<Op>& ops, const LayerDims& d);

}  // namespace exasim::workloads
