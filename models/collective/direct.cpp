// Direct (one-shot) algorithms: every member exchanges with every other member at once, as
// NCCL's all-to-all and send/recv do, and as one-shot all-reduce kernels do on meshes where
// each pair has its own link (xGMI): reduce-scatter then all-gather, one round each.
#include "models/collective/algorithm.hpp"

namespace exasim::models {

namespace {

// Member i sends fraction(i, j) of the op's bytes to member j, for every pair at once.
template <class F>
Phase all_pairs(int n, F fraction) {
  PhaseBuilder b;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) b.add(i, j, fraction(i, j));
  return b.take();
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
      if (r.split.empty()) s.phases.push_back(all_pairs(n, piece));
      else s.phases.push_back(all_pairs(n, [&](int i, int j) { return r.split[static_cast<std::size_t>(i) * n + j]; }));
      break;
    case Collective::kBroadcast: s.phases.push_back(star(n, r.root, false)); break;
    case Collective::kReduce: s.phases.push_back(star(n, r.root, true)); break;
    case Collective::kSendRecv: s.phases.push_back(star(2, 0, false)); break;
  }
  return s;
}

}  // namespace exasim::models
