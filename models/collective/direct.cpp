// Direct (one-shot) algorithms: every member exchanges with every other member at once, as
// NCCL's all-to-all and send/recv do, and as one-shot all-reduce kernels do on meshes where
// each pair has its own link (xGMI): reduce-scatter then all-gather, one round each.
#include "models/collective/algorithm.hpp"

namespace exasim::models {

namespace {

// Member i sends fraction(i, j) of the op's bytes to member j, for every pair at once, paying
// `latency_steps` step latencies.
template <class F>
Phase all_pairs(int n, F fraction, int latency_steps = 1) {
  PhaseBuilder b;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) b.add(i, j, fraction(i, j));
  return b.take(1, latency_steps);
}

Phase star(int n, int root, bool toward_root) {
  PhaseBuilder b;
  for (int i = 0; i < n; ++i) toward_root ? b.add(i, root, 1.0) : b.add(root, i, 1.0);
  return b.take();
}

}  // namespace

bool direct_supports(Collective op, const GroupLayout& g) {
  if (op == Collective::kSendRecv) return g.size() == 2;
  return g.size() >= 2;
}

Schedule direct_schedule(const ScheduleRequest& r) {
  const int n = r.layout->size();
  const double even = 1.0 / n;
  auto piece = [even](int, int) { return even; };
  Schedule s;
  s.algorithm = CollectiveAlgorithm::kDirect;
  switch (r.op) {
    case Collective::kAllReduce:
      s.phases.push_back(all_pairs(n, piece));
      s.phases.push_back(all_pairs(n, piece));
      break;
    case Collective::kReduceScatter:
    case Collective::kAllGather: s.phases.push_back(all_pairs(n, piece)); break;
    case Collective::kAllToAll:
      // NCCL's all-to-all is a send and a receive with each peer, each its own handshake: the
      // latency grows with the peers while the data moves at once. nccl-tests at 512 B on one
      // DGX A100: 10.5 / 12.4 / 15.8 us on 2 / 4 / 8 GPUs, ~0.9 us a peer (H100 6.3 / 6.9 / 7.9).
      if (r.split.empty()) s.phases.push_back(all_pairs(n, piece, n - 1));
      else s.phases.push_back(all_pairs(n, [&](int i, int j) { return r.split[static_cast<std::size_t>(i) * n + j]; }, n - 1));
      break;
    case Collective::kBroadcast: s.phases.push_back(star(n, r.root, false)); break;
    case Collective::kReduce: s.phases.push_back(star(n, r.root, true)); break;
    case Collective::kSendRecv: s.phases.push_back(star(2, 0, false)); break;
  }
  return s;
}

}  // namespace exasim::models
