#pragma once
// Per-layer costs for the closed-form estimate, measured with exasim's own lowering, kernel
// models and network: a two-stage pipeline with one micro-batch is built and simulated with one
// and with two layers per stage; the difference is one layer's forward and backward (with its
// recompute and the TP collectives it waits for), the rest is the embedding (first stage) and
// the LM head (last stage). Cached per (tp, sequence parallel, micro-batch, recompute, ep, cp),
// so the kernel models run a few hundred times per search instead of once per candidate. Each
// stage of a measuring run holds tp x cp GPUs (context parallelism: the ring attention's KV
// exchanges cross them) and, for a mixture-of-experts layer, the data-parallel replicas its
// expert-parallel group needs (ep etp / gcd(ep etp, tp x cp)), so the all-to-alls cross the
// same GPUs (and nodes) as in the plan. Cached per etp as well.
#include <map>
#include <memory>
#include <tuple>

#include "models/collective/collective_params.hpp"
#include "models/kernel/kernel_params.hpp"
#include "sim/net/network_options.hpp"
#include "sim/network_backend.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model/model_spec.hpp"
#include "workloads/training/training_config.hpp"

namespace exasim::workloads::planner {

// One pass of one micro-batch over a piece of the model on one GPU.
struct PassCost {
  double time = 0;        // s, wall time incl. the TP collectives it waits for
  double compute = 0;     // s, kernels only
  double flops = 0;       // executed (recompute included)
  double hbm_bytes = 0;   // kernel memory traffic
  double link_bytes = 0;  // bytes this GPU puts on its links for TP collectives
  PassCost& operator-=(const PassCost& o);
  PassCost& operator+=(const PassCost& o);
  PassCost scaled(double w) const;
  // (1 - w) x this + w x o, field by field.
  PassCost mixed_with(const PassCost& o, double w) const;
};

struct LayerCost {
  PassCost layer_fwd, layer_bwd;  // bwd includes recompute
  double layer_wgt = 0;           // s, of layer_bwd: the weight-gradient GEMMs' kernels (zero-bubble's W)
  PassCost embed_fwd, embed_bwd;  // first stage
  PassCost head_fwd, head_bwd;    // last stage: final norm, logits, loss
};

class LayerCostTable {
 public:
  LayerCostTable(const ModelSpec& model, const TrainingConfig& base, const topologies::Cluster& cluster,
                 const models::KernelParams& kernel, const models::CollectiveParams& collective,
                 const sim::NetworkOptions& network);
  const LayerCost& get(int tp, bool sequence_parallel, int micro_batch, models::Recompute recompute, int ep = 1,
                       int cp = 1, int etp = 1);
  std::size_t size() const { return cache_.size(); }

 private:
  LayerCost measure(int tp, bool sp, int micro_batch, models::Recompute recompute, int ep, int cp, int etp);
  LayerCost measure_model(const ModelSpec& model, int tp, bool sp, int micro_batch, models::Recompute recompute, int ep,
                          int cp, int etp);
  topologies::Cluster small_cluster(int gpus_per_stage) const;

  const ModelSpec& model_;
  TrainingConfig base_;
  const topologies::Cluster& cluster_;
  models::KernelParams kernel_;
  models::CollectiveParams collective_;
  sim::NetworkOptions network_;
  std::map<std::tuple<int, bool, int, int, int, int, int>, LayerCost> cache_;
  // One network per measuring cluster size, kept across runs: its routes and collective plans
  // are the expensive part of a run with a wide expert-parallel group.
  std::map<int, std::unique_ptr<sim::NetworkBackend>> networks_;
};

}  // namespace exasim::workloads::planner
