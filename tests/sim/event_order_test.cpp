// Order in which the engine processes completions: by time, then by start sequence. Observed
// through a recording network backend: comm tasks start (and ask the backend) in the order in
// which the completions that release them are processed.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/engine.hpp"

using namespace exasim::sim;

namespace {

// Returns the op index as its duration's tag so the call log tells which task asked.
struct RecordingNetwork : NetworkBackend {
  Time duration(const CommOp& op, Time now) override {
    order.push_back(static_cast<int>(op.bytes));
    times.push_back(now);
    return 0.125;
  }
  std::vector<int> order;
  std::vector<Time> times;
};

TaskSpec task(std::string_view label, StreamId s, Time d, std::uint32_t comm_op = kNone) {
  TaskSpec t;
  t.label = label;
  t.stream = s;
  t.duration = d;
  t.comm_op = comm_op;
  if (comm_op != kNone) t.kind = TaskKind::kCollective;
  return t;
}

}  // namespace

TEST_CASE("equal-time completions are processed in start order, not id or stream order") {
  ExecGraph g;
  const DeviceId dev = g.add_device("gpu0");
  const StreamId s0 = g.add_stream(dev, StreamKind::kCompute, "s0");
  const StreamId s1 = g.add_stream(dev, StreamKind::kCompute, "s1");
  const StreamId c0 = g.add_stream(dev, StreamKind::kComm, "c0");
  const StreamId c1 = g.add_stream(dev, StreamKind::kComm, "c1");
  // b has the lower id and the lower stream, but starts later (t=0.5) than a (t=0); both end at 1.
  g.add_task(task("x", s0, 0.5));
  const TaskId b = g.add_task(task("b", s0, 0.5));
  const TaskId a = g.add_task(task("a", s1, 1.0));
  const TaskId cb = g.add_task(task("after_b", c0, 0, 0));
  const TaskId ca = g.add_task(task("after_a", c1, 0, 1));
  g.add_dependency(b, cb);
  g.add_dependency(a, ca);
  const std::vector<CommOp> ops{{CommKind::kAllReduce, 0.0, {}}, {CommKind::kAllReduce, 1.0, {}}};
  RecordingNetwork net;
  const Timeline tl = Engine(g, &ops, &net).run();
  REQUIRE(tl[a].end == tl[b].end);
  CHECK(net.order == std::vector<int>{1, 0});  // a's successor first: a started first
  CHECK(tl[ca].start == 1.0);
  CHECK(tl[cb].start == 1.0);
}

TEST_CASE("completions are processed in time order, whatever the start order") {
  ExecGraph g;
  const DeviceId dev = g.add_device("gpu0");
  std::vector<CommOp> ops;
  // Stream i runs one task of duration (8 - i) started at t=0 in stream order; its comm successor
  // asks the backend when the task ends, so the backend must see ends in increasing time.
  for (int i = 0; i < 8; ++i) {
    const StreamId s = g.add_stream(dev, StreamKind::kCompute, "s" + std::to_string(i));
    const StreamId c = g.add_stream(dev, StreamKind::kComm, "c" + std::to_string(i));
    const TaskId k = g.add_task(task("k", s, 8.0 - i));
    ops.push_back(CommOp{CommKind::kSendRecv, static_cast<double>(i), {}});
    const TaskId m = g.add_task(task("m", c, 0, static_cast<std::uint32_t>(i)));
    g.add_dependency(k, m);
  }
  RecordingNetwork net;
  Engine(g, &ops, &net).run();
  CHECK(net.order == std::vector<int>{7, 6, 5, 4, 3, 2, 1, 0});
  for (std::size_t i = 1; i < net.times.size(); ++i) CHECK(net.times[i - 1] < net.times[i]);
}

TEST_CASE("zero-duration chains resolve at one instant in release order") {
  ExecGraph g;
  const DeviceId dev = g.add_device("gpu0");
  const StreamId s0 = g.add_stream(dev, StreamKind::kCompute, "s0");
  const StreamId s1 = g.add_stream(dev, StreamKind::kCompute, "s1");
  const StreamId c = g.add_stream(dev, StreamKind::kComm, "c");
  // Two zero-length chains of different lengths; their comm successors queue on one stream in
  // program order regardless of which chain finishes "first" at t=0.
  TaskId prev0 = g.add_task(task("z0", s0, 0));
  for (int i = 0; i < 5; ++i) {
    const TaskId t = g.add_task(task("z0", s0, 0));
    g.add_dependency(prev0, t);
    prev0 = t;
  }
  const TaskId z1 = g.add_task(task("z1", s1, 0));
  const TaskId m1 = g.add_task(task("m1", c, 0, 1));
  const TaskId m0 = g.add_task(task("m0", c, 0, 0));
  g.add_dependency(z1, m1);
  g.add_dependency(prev0, m0);
  const std::vector<CommOp> ops{{CommKind::kAllReduce, 0.0, {}}, {CommKind::kAllReduce, 1.0, {}}};
  RecordingNetwork net;
  const Timeline tl = Engine(g, &ops, &net).run();
  CHECK(net.order == std::vector<int>{1, 0});  // stream order: m1 before m0
  CHECK(tl[m1].start == 0.0);
  CHECK(tl[m0].start == 0.125);  // m0 waits for m1 on the comm stream
  CHECK(tl.makespan() == 0.25);
}

TEST_CASE("the backend never sees time go backwards") {
  ExecGraph g;
  std::vector<StreamId> comp, comm;
  for (int d = 0; d < 4; ++d) {
    const DeviceId dev = g.add_device("gpu" + std::to_string(d));
    comp.push_back(g.add_stream(dev, StreamKind::kCompute, "compute"));
    comm.push_back(g.add_stream(dev, StreamKind::kComm, "comm"));
  }
  std::vector<CommOp> ops(1);
  std::vector<TaskId> last(4, kNone);
  for (int step = 0; step < 50; ++step) {
    for (int d = 0; d < 4; ++d) {
      const TaskId k = g.add_task(task("k", comp[d], 0.001 * ((step * 7 + d * 3) % 5)));
      const TaskId m = g.add_task(task("m", comm[d], 0, 0));
      g.add_dependency(k, m);
      if (last[(d + 1) % 4] != kNone) g.add_dependency(last[(d + 1) % 4], k);
      last[d] = m;
    }
  }
  RecordingNetwork net;
  Engine(g, &ops, &net).run();
  REQUIRE(net.times.size() == 200);
  for (std::size_t i = 1; i < net.times.size(); ++i) REQUIRE(net.times[i - 1] <= net.times[i]);
}
