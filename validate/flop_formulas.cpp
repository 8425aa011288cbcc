#include "validate/flop_formulas.hpp"

namespace exasim::validate {

namespace {

// Narayanan et al., SC'21, Section 5.1: F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)); counts the
// recompute forward pass (4 passes of 24 B s l h^2 each).
double megatron_sc21(const FlopInputs& x) {
  const double h = x.hidden, l = x.layers, s = x.seq;
  return 96 * x.global_batch * s * l * h * h * (1 + s / (6 * h) + x.vocab / (16 * l * h));
}

// The same model FLOPs without recompute: 72 B s l h^2 (1 + s/(6h) + V/(12 l h)).
double megatron_no_recompute(const FlopInputs& x) {
  const double h = x.hidden, l = x.layers, s = x.seq;
  return 72 * x.global_batch * s * l * h * h * (1 + s / (6 * h) + x.vocab / (12 * l * h));
}

}  // namespace

const std::vector<FlopFormula>& flop_formulas() {
  static const std::vector<FlopFormula> table = {
      {"megatron-sc21", "96 B s l h^2 (1 + s/6h + V/16lh), recompute included (SC'21 Sec. 5.1)", megatron_sc21},
      {"megatron-model", "72 B s l h^2 (1 + s/6h + V/12lh), no recompute", megatron_no_recompute},
  };
  return table;
}

const FlopFormula* find_flop_formula(const std::string& name) {
  for (const auto& f : flop_formulas())
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace exasim::validate
