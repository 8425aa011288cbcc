#pragma once
// Shared set-up for training tests: a GPT-like model and a cluster from the real catalog.
#include <string>

#include "hw/catalog.hpp"
#include "hw/config/node.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model/model_spec.hpp"
#include "workloads/training/training_config.hpp"

namespace exasim::testing {

inline hw::Catalog catalog() { return hw::Catalog::load(std::string(EXASIM_SOURCE_DIR) + "/configs"); }

inline workloads::ModelSpec gpt(int layers, std::int64_t hidden, int heads, std::int64_t vocab = 51200) {
  workloads::ModelSpec m;
  m.name = "test-gpt";
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.ffn = 4 * hidden;
  m.vocab = vocab;
  m.max_seq_len = 2048;
  return m;
}

// A DGX A100-like cluster whose network is so fast that communication takes no time, so that
// pipeline timing can be compared with closed forms.
inline topologies::Cluster ideal_cluster(int nodes, int gpus_per_node = 8) {
  const hw::Catalog cat = catalog();
  topologies::Cluster c;
  c.gpu = cat.gpu(std::string("A100-SXM4-80GB"));
  c.gpus_per_node = gpus_per_node;
  c.nodes = nodes;
  c.intra.name = "ideal";
  c.intra.kind = "nvswitch";
  c.intra.bandwidth = 1e30;
  c.intra.latency = 0;
  if (nodes > 1) {
    topologies::InterNode in;
    in.nic.bandwidth = 1e30;
    in.nic.latency = 0;
    in.nics_per_node = gpus_per_node;
    c.inter = in;
  }
  return c;
}

// One DGX A100 node: 8 GPUs on the catalog's NVSwitch fabric (real link rates).
inline topologies::Cluster dgx_a100_node() {
  const hw::Catalog cat = catalog();
  topologies::Cluster c;
  c.gpu = cat.gpu(std::string("A100-SXM4-80GB"));
  c.gpus_per_node = 8;
  c.nodes = 1;
  c.intra = cat.fabric(config::load_string("nvswitch-a100", "test"));
  return c;
}

inline workloads::TrainingConfig config(int tp, int pp, int dp, int global_batch, int micro_batch = 1) {
  workloads::TrainingConfig c;
  c.seq_len = 2048;
  c.global_batch = global_batch;
  c.micro_batch = micro_batch;
  c.parallelism.tp = tp;
  c.parallelism.pp = pp;
  c.parallelism.dp = dp;
  return c;
}

}  // namespace exasim::testing
