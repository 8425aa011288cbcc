// The engine with a link-sharing network backend: comm tasks are handed to the backend when they
// start and end when it says so, interleaved with compute. Checked against a processor-sharing
// link whose schedule is computed by hand (equal shares of one link of capacity C).
#include <doctest/doctest.h>

#include "approx.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <vector>

#include "sim/engine.hpp"

using namespace exasim::sim;

namespace {

// One link of `capacity` B/s shared equally by the ops in flight.
class SharedLink final : public NetworkBackend {
 public:
  explicit SharedLink(double capacity) : capacity_(capacity) {}
  Time duration(const CommOp& op, Time) override { return op.bytes / capacity_; }
  bool shares_links() const override { return true; }
  void prepare(const std::vector<CommOp>& ops) override { prepared_ = ops.size(); }
  void run(const std::function<void()>& loop) override {
    ++runs_;
    loop();
  }
  void start(const CommOp& op, std::uint32_t token, Time now) override {
    progress(now);
    left_[token] = op.bytes;
  }
  Time advance(Time limit, std::vector<std::uint32_t>& done) override {
    if (left_.empty()) return limit;
    const double rate = capacity_ / static_cast<double>(left_.size());
    double least = left_.begin()->second;
    for (const auto& [token, bytes] : left_) least = std::min(least, bytes);
    const Time end = now_ + least / rate;
    if (end > limit) {
      progress(limit);
      return limit;
    }
    progress(end);
    for (auto it = left_.begin(); it != left_.end();) {
      if (it->second <= 1e-9) {
        done.push_back(it->first);
        it = left_.erase(it);
      } else {
        ++it;
      }
    }
    return end;
  }
  bool busy() const override { return !left_.empty(); }

  std::size_t prepared_ = 0;
  int runs_ = 0;

 private:
  void progress(Time to) {
    if (!left_.empty()) {
      const double moved = (to - now_) * capacity_ / static_cast<double>(left_.size());
      for (auto& [token, bytes] : left_) bytes -= moved;
    }
    now_ = to;
  }
  double capacity_;
  Time now_ = 0;
  std::map<std::uint32_t, double> left_;
};

TaskSpec task(std::string_view label, StreamId s, Time d, std::uint32_t op = kNone) {
  TaskSpec t;
  t.label = label;
  t.stream = s;
  t.duration = d;
  t.comm_op = op;
  if (op != kNone) t.kind = TaskKind::kCollective;
  return t;
}

}  // namespace

TEST_CASE("shared network: two transfers at once each take twice as long") {
  ExecGraph g;
  const StreamId a = g.add_stream(g.add_device("a"), StreamKind::kComm, "a");
  const StreamId b = g.add_stream(g.add_device("b"), StreamKind::kComm, "b");
  const std::vector<CommOp> ops{{CommKind::kSendRecv, 2.0, {0, 1}}, {CommKind::kSendRecv, 2.0, {2, 3}}};
  g.add_task(task("x", a, 0, 0));
  g.add_task(task("y", b, 0, 1));
  SharedLink link(1.0);
  Engine e(g, &ops, &link);
  const Timeline t = e.run();
  CHECK(t[0].start == 0);
  CHECK(t[0].end == exasim::testing::approx(4.0));
  CHECK(t[1].end == exasim::testing::approx(4.0));
  CHECK(link.prepared_ == 2);
  CHECK(link.runs_ == 1);
}

TEST_CASE("shared network: a transfer that starts later shares the link only while both run") {
  // Link 1 B/s. y (2 B) runs alone during [0, 1], then shares with x (2 B) until y ends at 3;
  // x has moved 1 B by then and finishes alone at 4. The compute after x starts at 4.
  ExecGraph g;
  const DeviceId d0 = g.add_device("gpu0");
  const StreamId comp = g.add_stream(d0, StreamKind::kCompute, "compute");
  const StreamId comm = g.add_stream(d0, StreamKind::kComm, "comm");
  const StreamId other = g.add_stream(g.add_device("gpu1"), StreamKind::kComm, "comm");
  const std::vector<CommOp> ops{{CommKind::kSendRecv, 2.0, {0, 1}}, {CommKind::kSendRecv, 2.0, {2, 3}}};
  const TaskId k = g.add_task(task("compute", comp, 1.0));
  const TaskId x = g.add_task(task("x", comm, 0, 0));
  const TaskId y = g.add_task(task("y", other, 0, 1));
  const TaskId after = g.add_task(task("after", comp, 0.5));
  g.add_dependency(k, x);
  g.add_dependency(x, after);
  SharedLink link(1.0);
  Engine e(g, &ops, &link);
  const Timeline t = e.run();
  CHECK(t[y].end == exasim::testing::approx(3.0));
  CHECK(t[x].start == exasim::testing::approx(1.0));
  CHECK(t[x].end == exasim::testing::approx(4.0));
  CHECK(t[after].start == exasim::testing::approx(4.0));
  CHECK(t.makespan() == exasim::testing::approx(4.5));
  CHECK(e.stats().events == 2 * g.task_count());
}

TEST_CASE("shared network: runs are deterministic and match the contention-free engine when alone") {
  ExecGraph g;
  const StreamId s = g.add_stream(g.add_device("gpu0"), StreamKind::kComm, "comm");
  const std::vector<CommOp> ops{{CommKind::kAllReduce, 3.0, {0, 1}}};
  for (int i = 0; i < 5; ++i) g.add_task(task("ar", s, 0, 0));
  SharedLink a(2.0), b(2.0);
  const Timeline t1 = Engine(g, &ops, &a).run();
  const Timeline t2 = Engine(g, &ops, &b).run();
  for (TaskId i = 0; i < g.task_count(); ++i) {
    CHECK(t1[i].start == t2[i].start);
    CHECK(t1[i].end == t2[i].end);
    CHECK(t1[i].end - t1[i].start == exasim::testing::approx(1.5));  // alone: bytes / capacity
  }
}

TEST_CASE("shared network: a dependency cycle is still reported as a deadlock") {
  ExecGraph g;
  const StreamId s = g.add_stream(g.add_device("gpu0"), StreamKind::kComm, "comm");
  const std::vector<CommOp> ops{{CommKind::kSendRecv, 1.0, {0, 1}}};
  const TaskId a = g.add_task(task("a", s, 0, 0));
  const TaskId b = g.add_task(task("b", s, 0, 0));
  g.add_dependency(b, a);
  SharedLink link(1.0);
  CHECK_THROWS_WITH_AS(Engine(g, &ops, &link).run(), doctest::Contains("deadlock"), std::runtime_error);
}

// A collective when every rank is simulated: its members meet at a stream-less barrier, then run
// the op as one. Member a is ready at 1, member b at 3: both start at 3; with joining on they are
// one 2 B op on the 1 B/s link (ends at 5), with it off two ops sharing the link (end at 7).
TEST_CASE("shared network: members of a collective meet at a barrier and move their data once") {
  for (bool join : {true, false}) {
    CAPTURE(join);
    ExecGraph g;
    const DeviceId da = g.add_device("a"), db = g.add_device("b");
    const StreamId ca = g.add_stream(da, StreamKind::kCompute, "a/compute");
    const StreamId cb = g.add_stream(db, StreamKind::kCompute, "b/compute");
    const StreamId ma = g.add_stream(da, StreamKind::kComm, "a/comm");
    const StreamId mb = g.add_stream(db, StreamKind::kComm, "b/comm");
    const std::vector<CommOp> ops{{CommKind::kAllReduce, 2.0, {0, 1}}};
    const TaskId ka = g.add_task(task("ka", ca, 1.0));
    const TaskId kb = g.add_task(task("kb", cb, 3.0));
    const TaskId xa = g.add_task(task("xa", ma, 0, 0));
    const TaskId xb = g.add_task(task("xb", mb, 0, 0));
    const TaskId meet = g.add_barrier("join x");
    CHECK(g.task(meet).stream == kNone);
    CHECK(g.task(meet).kind == TaskKind::kBarrier);
    g.add_dependency(ka, meet);
    g.add_dependency(kb, meet);
    g.add_dependency(meet, xa);
    g.add_dependency(meet, xb);
    SharedLink link(1.0);
    Engine e(g, &ops, &link);
    e.join_identical_collectives(join);
    const Timeline t = e.run();
    CHECK(t[meet].start == exasim::testing::approx(3.0));
    CHECK(t[meet].end == exasim::testing::approx(3.0));
    CHECK(t[xa].start == exasim::testing::approx(3.0));
    CHECK(t[xb].start == exasim::testing::approx(3.0));
    CHECK(t[xa].end == exasim::testing::approx(join ? 5.0 : 7.0));
    CHECK(t[xb].end == exasim::testing::approx(join ? 5.0 : 7.0));
  }
}

TEST_CASE("engine: a barrier with no dependencies runs at time zero, one left waiting is named in the deadlock") {
  ExecGraph g;
  const StreamId s = g.add_stream(g.add_device("a"), StreamKind::kCompute, "a/compute");
  const TaskId free_barrier = g.add_barrier("free");
  const TaskId k = g.add_task(task("k", s, 1.0));
  g.add_dependency(free_barrier, k);
  const Timeline t = Engine(g).run();
  CHECK(t[free_barrier].end == 0);
  CHECK(t[k].end == exasim::testing::approx(1.0));

  ExecGraph stuck;
  const StreamId s2 = stuck.add_stream(stuck.add_device("a"), StreamKind::kCompute, "a/compute");
  const TaskId first = stuck.add_task(task("first", s2, 1.0));
  const TaskId second = stuck.add_task(task("second", s2, 1.0));
  const TaskId b = stuck.add_barrier("join");
  stuck.add_dependency(second, b);  // the barrier waits for a later task of the stream
  stuck.add_dependency(b, first);
  CHECK_THROWS_WITH_AS(Engine(stuck).run(), doctest::Contains("(a barrier)"), std::runtime_error);
}
