// Engine::slow_compute_during_comm: a compute task keeps the work it has done and runs the rest
// at 1 - (summed shares of the comm tasks running on its device). Checked against schedules
// worked out by hand, with the contention-free and the link-sharing engine loops.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <vector>

#include "sim/engine.hpp"

using namespace exasim::sim;

namespace {

// Every op takes `bytes` seconds, alone or not; with `sharing` the engine runs its
// link-sharing loop (ops handed over at their start, reported when they end).
class FixedNetwork final : public NetworkBackend {
 public:
  explicit FixedNetwork(bool sharing) : sharing_(sharing) {}
  Time duration(const CommOp& op, Time) override { return op.bytes; }
  bool shares_links() const override { return sharing_; }
  void start(const CommOp& op, std::uint32_t token, Time now) override { ends_[token] = now + op.bytes; }
  Time advance(Time limit, std::vector<std::uint32_t>& done) override {
    Time next = limit;
    for (const auto& [token, end] : ends_) next = std::min(next, end);
    for (auto it = ends_.begin(); it != ends_.end();) {
      if (it->second <= next) {
        done.push_back(it->first);
        it = ends_.erase(it);
      } else {
        ++it;
      }
    }
    return next;
  }
  bool busy() const override { return !ends_.empty(); }

 private:
  bool sharing_;
  std::map<std::uint32_t, Time> ends_;
};

TaskSpec task(std::string_view label, StreamId s, TaskKind kind, Time d, std::uint32_t op = kNone) {
  TaskSpec t;
  t.label = label;
  t.stream = s;
  t.kind = kind;
  t.duration = d;
  t.comm_op = op;
  return t;
}

}  // namespace

TEST_CASE("compute beside a collective: done work kept, the rest at the reduced rate") {
  // Kernel of 10 s from 0; from 2 to 6 a collective holding a quarter of the GPU. The kernel does
  // 2 s of work by 2, 4 x 0.75 = 3 s more by 6, and its last 5 s alone: it ends at 11.
  for (bool sharing : {false, true}) {
    CAPTURE(sharing);
    ExecGraph g;
    const DeviceId d = g.add_device("gpu0");
    const StreamId compute = g.add_stream(d, StreamKind::kCompute, "compute");
    const StreamId comm = g.add_stream(d, StreamKind::kComm, "comm");
    const TaskId k = g.add_task(task("gemm", compute, TaskKind::kCompute, 10));
    g.add_task(task("host", comm, TaskKind::kHost, 2));  // host work holds no SMs
    const TaskId c = g.add_task(task("all-gather", comm, TaskKind::kCollective, 0, 0));
    const std::vector<CommOp> ops{{CommKind::kAllGather, 4.0, {0, 1}}};
    FixedNetwork net(sharing);
    Engine e(g, &ops, &net);
    e.slow_compute_during_comm({0.25});
    const Timeline t = e.run();
    CHECK(t[c].start == exasim::testing::approx(2));
    CHECK(t[c].end == exasim::testing::approx(6));
    CHECK(t[k].start == 0);
    CHECK(t[k].end == exasim::testing::approx(11));
    CHECK(e.stats().events == 2 * g.task_count());  // rescheduled completions are not events
  }
}

TEST_CASE("shares of concurrent comm tasks add up to a capped total, while other devices and non-compute tasks keep their rate") {
  // gpu0: a 6 s kernel beside three 2 s collectives at once holding 0.3 each: 0.9, capped at
  // 0.75, so 0.5 s of work by 2 and the remaining 5.5 s alone: ends at 7.5. gpu1's kernel and
  // gpu0's host task, which hold no SMs and are not kernels, are not slowed.
  ExecGraph g;
  const DeviceId d0 = g.add_device("gpu0");
  const DeviceId d1 = g.add_device("gpu1");
  const StreamId compute = g.add_stream(d0, StreamKind::kCompute, "compute");
  const StreamId host = g.add_stream(d0, StreamKind::kCopy, "host");
  std::vector<TaskId> comms;
  for (int i = 0; i < 3; ++i) {
    const StreamId s = g.add_stream(d0, StreamKind::kComm, "comm" + std::to_string(i));
    comms.push_back(g.add_task(task("ar", s, TaskKind::kCollective, 0, 0)));
  }
  const TaskId k0 = g.add_task(task("gemm", compute, TaskKind::kCompute, 6));
  const TaskId h = g.add_task(task("python", host, TaskKind::kHost, 3));
  const TaskId k1 = g.add_task(task("gemm", g.add_stream(d1, StreamKind::kCompute, "compute"), TaskKind::kCompute, 6));
  const std::vector<CommOp> ops{{CommKind::kAllReduce, 2.0, {0, 1}}};
  FixedNetwork net(false);
  Engine e(g, &ops, &net);
  e.slow_compute_during_comm({0.3});
  const Timeline t = e.run();
  CHECK(t[k0].end == exasim::testing::approx(2 + 5.5));
  CHECK(t[k1].end == exasim::testing::approx(6));
  CHECK(t[h].end == exasim::testing::approx(3));
  for (TaskId c : comms) CHECK(t[c].end == exasim::testing::approx(2));
}

TEST_CASE("zero shares leave the timeline bit for bit as without them, and runs repeat exactly") {
  ExecGraph g;
  const DeviceId d = g.add_device("gpu0");
  const StreamId compute = g.add_stream(d, StreamKind::kCompute, "compute");
  const StreamId comm = g.add_stream(d, StreamKind::kComm, "comm");
  for (int i = 0; i < 40; ++i) {
    const TaskId a = g.add_task(task("k", compute, TaskKind::kCompute, 0.1 + 0.01 * (i % 7)));
    const TaskId b = g.add_task(task("c", comm, TaskKind::kCollective, 0, static_cast<std::uint32_t>(i % 2)));
    g.add_dependency(a, b);
  }
  const std::vector<CommOp> ops{{CommKind::kAllReduce, 0.13, {0, 1}}, {CommKind::kReduceScatter, 0.07, {0, 1}}};
  FixedNetwork n0(false), n1(false), n2(false), n3(false);
  const Timeline plain = Engine(g, &ops, &n0).run();
  Engine zero(g, &ops, &n1);
  zero.slow_compute_during_comm({0.0, 0.0});
  const Timeline z = zero.run();
  Engine a(g, &ops, &n2), b(g, &ops, &n3);
  a.slow_compute_during_comm({0.15, 0.02});
  b.slow_compute_during_comm({0.15, 0.02});
  const Timeline ta = a.run(), tb = b.run();
  for (TaskId i = 0; i < g.task_count(); ++i) {
    CHECK(z[i].start == plain[i].start);
    CHECK(z[i].end == plain[i].end);
    CHECK(ta[i].start == tb[i].start);
    CHECK(ta[i].end == tb[i].end);
  }
  CHECK(ta.makespan() > plain.makespan());
}

TEST_CASE("a share below 0, of 1 or more, or NaN is refused") {
  ExecGraph g;
  Engine e(g);
  CHECK_THROWS_AS(e.slow_compute_during_comm({-0.1}), std::invalid_argument);
  CHECK_THROWS_AS(e.slow_compute_during_comm({1.0}), std::invalid_argument);
  CHECK_THROWS_AS(e.slow_compute_during_comm({std::numeric_limits<double>::quiet_NaN()}), std::invalid_argument);
}
