#pragma once
// FLOP formulas that publications use to turn their runs into TFLOP/s, so that a reported
// TFLOP/s figure can be converted back into iteration time with the source's own convention.
#include <string>
#include <vector>

namespace exasim::validate {

struct FlopInputs {
  double global_batch = 0;  // B, sequences per iteration
  double seq = 0;           // s
  double layers = 0;        // l
  double hidden = 0;        // h
  double vocab = 0;         // V
};

struct FlopFormula {
  std::string name;
  std::string help;
  double (*flops)(const FlopInputs&);  // FLOPs per iteration
};

const std::vector<FlopFormula>& flop_formulas();
const FlopFormula* find_flop_formula(const std::string& name);

}  // namespace exasim::validate
