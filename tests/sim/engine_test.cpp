// Engine semantics checked against independent truth: hand-computed schedules and an ASAP
// longest-path DP over dependencies plus implicit stream-order edges.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/engine.hpp"

using namespace exasim::sim;

namespace {

TaskSpec spec(std::string_view label, StreamId s, Time d) {
  TaskSpec t;
  t.label = label;
  t.stream = s;
  t.duration = d;
  return t;
}

// Earliest start of every task, computed without the engine: a task starts when its dependencies
// and its stream predecessor have finished. Requires every edge to go from a lower to a higher id
// (then ascending id order is a topological order, since stream order is also by id).
std::vector<Time> asap_ends(const ExecGraph& g) {
  std::vector<std::vector<TaskId>> preds(g.task_count());
  for (std::size_t e = 0; e < g.edge_count(); ++e) preds[g.edge_to()[e]].push_back(g.edge_from()[e]);
  for (StreamId s = 0; s < g.streams().size(); ++s) {
    const auto& prog = g.stream_tasks(s);
    for (std::size_t i = 1; i < prog.size(); ++i) preds[prog[i]].push_back(prog[i - 1]);
  }
  std::vector<Time> end(g.task_count(), 0);
  for (TaskId t = 0; t < g.task_count(); ++t) {
    Time start = 0;
    for (TaskId p : preds[t]) {
      REQUIRE(p < t);
      start = std::max(start, end[p]);
    }
    end[t] = start + g.task(t).duration;
  }
  return end;
}

ExecGraph random_dag(std::uint32_t seed, int devices, int tasks, int edges) {
  std::mt19937 rng(seed);
  ExecGraph g;
  std::vector<StreamId> streams;
  for (int d = 0; d < devices; ++d) {
    const DeviceId dev = g.add_device("gpu" + std::to_string(d));
    streams.push_back(g.add_stream(dev, StreamKind::kCompute, "compute"));
    streams.push_back(g.add_stream(dev, StreamKind::kComm, "comm"));
  }
  std::uniform_int_distribution<std::size_t> pick_stream(0, streams.size() - 1);
  std::uniform_real_distribution<double> dur(0.0, 1e-3);
  for (int i = 0; i < tasks; ++i) {
    // Some zero durations to exercise equal-time events.
    const Time d = (i % 7 == 0) ? 0.0 : dur(rng);
    g.add_task(spec("t" + std::to_string(i % 50), streams[pick_stream(rng)], d));
  }
  std::uniform_int_distribution<TaskId> pick(0, static_cast<TaskId>(tasks - 1));
  for (int e = 0; e < edges; ++e) {
    TaskId a = pick(rng), b = pick(rng);
    if (a == b) continue;
    g.add_dependency(std::min(a, b), std::max(a, b));
  }
  return g;
}

struct FakeNetwork : NetworkBackend {
  // 1 GB/s plus a start-time term, so the test can tell that the start time was passed.
  Time duration(const CommOp& op, Time now) override {
    calls.push_back(now);
    return op.bytes * 1e-9 + 0.25 * now;
  }
  std::vector<Time> calls;
};

}  // namespace

TEST_CASE("tasks on one stream run in program order, back to back") {
  ExecGraph g;
  const StreamId s = g.add_stream(g.add_device("gpu0"), StreamKind::kCompute, "compute");
  const TaskId a = g.add_task(spec("a", s, 1.0));
  const TaskId b = g.add_task(spec("b", s, 2.0));
  const TaskId c = g.add_task(spec("c", s, 0.5));
  Engine engine(g);
  const Timeline tl = engine.run();
  CHECK(tl[a].start == 0.0);
  CHECK(tl[a].end == 1.0);
  CHECK(tl[b].start == 1.0);
  CHECK(tl[b].end == 3.0);
  CHECK(tl[c].start == 3.0);
  CHECK(tl[c].end == 3.5);
  CHECK(tl.makespan() == 3.5);
  CHECK(engine.stats().events == 6);
}

TEST_CASE("two streams on one device overlap") {
  ExecGraph g;
  const DeviceId d = g.add_device("gpu0");
  const StreamId comp = g.add_stream(d, StreamKind::kCompute, "compute");
  const StreamId comm = g.add_stream(d, StreamKind::kComm, "comm");
  const TaskId k1 = g.add_task(spec("gemm", comp, 3.0));
  const TaskId k2 = g.add_task(spec("gemm", comp, 3.0));
  const TaskId ar = g.add_task(spec("allreduce", comm, 4.0));
  g.add_dependency(k1, ar);  // the all-reduce of k1's output overlaps k2
  const Timeline tl = Engine(g).run();
  CHECK(tl[k2].start == 3.0);
  CHECK(tl[ar].start == 3.0);
  CHECK(tl[ar].end == 7.0);
  CHECK(tl.makespan() == 7.0);  // not 10: the streams ran concurrently
}

TEST_CASE("diamond DAG: makespan is the critical path") {
  ExecGraph g;
  const DeviceId d = g.add_device("gpu0");
  const StreamId s0 = g.add_stream(d, StreamKind::kCompute, "s0");
  const StreamId s1 = g.add_stream(d, StreamKind::kCompute, "s1");
  const TaskId top = g.add_task(spec("top", s0, 1.0));
  const TaskId left = g.add_task(spec("left", s0, 2.0));
  const TaskId right = g.add_task(spec("right", s1, 5.0));
  const TaskId bottom = g.add_task(spec("bottom", s1, 1.0));
  g.add_dependency(top, left);
  g.add_dependency(top, right);
  g.add_dependency(left, bottom);
  g.add_dependency(right, bottom);
  const Timeline tl = Engine(g).run();
  CHECK(tl[right].start == 1.0);
  CHECK(tl[left].end == 3.0);
  CHECK(tl[bottom].start == 6.0);
  CHECK(tl.makespan() == 7.0);  // top + right + bottom
}

TEST_CASE("random DAG: every task starts as soon as possible and makespan equals the longest path") {
  for (std::uint32_t seed : {1u, 2u, 3u, 42u}) {
    CAPTURE(seed);
    const ExecGraph g = random_dag(seed, 4, 3000, 6000);
    Engine engine(g);
    const Timeline tl = engine.run();
    const std::vector<Time> end = asap_ends(g);
    for (TaskId t = 0; t < g.task_count(); ++t) {
      REQUIRE(tl[t].end == end[t]);
      REQUIRE(tl[t].end - tl[t].start == exasim::testing::approx(g.task(t).duration));
    }
    CHECK(tl.makespan() == *std::max_element(end.begin(), end.end()));
    CHECK(engine.stats().events == 2 * g.task_count());
  }
}

TEST_CASE("identical graphs give bit-identical timelines") {
  const ExecGraph g1 = random_dag(7, 3, 2000, 4000);
  const ExecGraph g2 = random_dag(7, 3, 2000, 4000);
  const Timeline a = Engine(g1).run();
  const Timeline b = Engine(g2).run();
  Engine again(g1);
  const Timeline c = again.run();
  const Timeline d = again.run();  // an engine can run twice
  REQUIRE(a.size() == b.size());
  for (TaskId t = 0; t < a.size(); ++t) {
    REQUIRE(a[t].start == b[t].start);
    REQUIRE(a[t].end == b[t].end);
    REQUIRE(a[t].end == c[t].end);
    REQUIRE(c[t].start == d[t].start);
  }
  CHECK(again.stats().events == 2 * g1.task_count());  // stats are per run, not cumulative
}

TEST_CASE("empty graph and graph without tasks") {
  ExecGraph g;
  Engine e0(g);
  CHECK(e0.run().makespan() == 0.0);
  CHECK(e0.stats().events == 0);
  g.add_stream(g.add_device("gpu0"), StreamKind::kCompute, "idle");
  CHECK(Engine(g).run().size() == 0);
}

TEST_CASE("a comm task takes the backend's duration at its start time") {
  ExecGraph g;
  const DeviceId d = g.add_device("gpu0");
  const StreamId comp = g.add_stream(d, StreamKind::kCompute, "compute");
  const StreamId comm = g.add_stream(d, StreamKind::kComm, "comm");
  const TaskId k = g.add_task(spec("gemm", comp, 2.0));
  TaskSpec ar = spec("allreduce", comm, 99.0);  // duration is ignored for comm tasks
  ar.kind = TaskKind::kCollective;
  ar.comm_op = 1;
  const TaskId c = g.add_task(ar);
  g.add_dependency(k, c);
  const std::vector<CommOp> ops{{CommKind::kAllGather, 1e9, {0, 1}}, {CommKind::kAllReduce, 4e9, {0, 1, 2, 3}}};
  FakeNetwork net;
  const Timeline tl = Engine(g, &ops, &net).run();
  REQUIRE(net.calls.size() == 1);
  CHECK(net.calls[0] == 2.0);
  CHECK(tl[c].start == 2.0);
  CHECK(tl[c].end == exasim::testing::approx(2.0 + 4.0 + 0.5));
}

TEST_CASE("comm task errors") {
  ExecGraph g;
  const StreamId s = g.add_stream(g.add_device("gpu0"), StreamKind::kComm, "comm");
  TaskSpec t = spec("ar", s, 0);
  t.comm_op = 3;
  g.add_task(t);
  const std::vector<CommOp> ops(2);
  FakeNetwork net;
  CHECK_THROWS_AS(Engine(g).run(), std::invalid_argument);            // no backend
  CHECK_THROWS_AS(Engine(g, &ops, &net).run(), std::invalid_argument);  // index out of range
  struct Broken : NetworkBackend {
    Time duration(const CommOp&, Time) override { return std::numeric_limits<double>::quiet_NaN(); }
  } broken;
  const std::vector<CommOp> four(4);
  CHECK_THROWS_AS(Engine(g, &four, &broken).run(), std::runtime_error);
}

TEST_CASE("a dependency cycle throws, naming the stuck tasks") {
  ExecGraph g;
  const DeviceId d = g.add_device("gpu0");
  const StreamId s0 = g.add_stream(d, StreamKind::kCompute, "s0");
  const StreamId s1 = g.add_stream(d, StreamKind::kComm, "s1");
  g.add_task(spec("ok", s0, 1.0));
  const TaskId a = g.add_task(spec("alpha", s0, 1.0));
  const TaskId b = g.add_task(spec("beta", s1, 1.0));
  g.add_dependency(a, b);
  g.add_dependency(b, a);
  try {
    Engine(g).run();
    FAIL("expected a deadlock");
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("deadlock") != std::string::npos);
    CHECK(msg.find("2 of 3") != std::string::npos);
    CHECK(msg.find("'alpha'") != std::string::npos);
    CHECK(msg.find("'beta'") != std::string::npos);
    CHECK(msg.find("cycle") != std::string::npos);
  }
}

TEST_CASE("a dependency on a later task of the same stream throws") {
  ExecGraph g;
  const StreamId s = g.add_stream(g.add_device("gpu0"), StreamKind::kCompute, "compute");
  const TaskId first = g.add_task(spec("first", s, 1.0));
  const TaskId second = g.add_task(spec("second", s, 1.0));
  g.add_dependency(second, first);
  try {
    Engine(g).run();
    FAIL("expected a deadlock");
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("'first'") != std::string::npos);
    CHECK(msg.find("'second'") != std::string::npos);
    CHECK(msg.find("later task of its own stream") != std::string::npos);
  }
}

TEST_CASE("deadlock message names at most five tasks") {
  ExecGraph g;
  const DeviceId d = g.add_device("gpu0");
  for (int i = 0; i < 8; ++i) {
    const StreamId s = g.add_stream(d, StreamKind::kCompute, "s" + std::to_string(i));
    const TaskId a = g.add_task(spec("head" + std::to_string(i), s, 1.0));
    const TaskId b = g.add_task(spec("tail" + std::to_string(i), s, 1.0));
    g.add_dependency(b, a);
  }
  try {
    Engine(g).run();
    FAIL("expected a deadlock");
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("'head4'") != std::string::npos);
    CHECK(msg.find("'head5'") == std::string::npos);
  }
}

TEST_CASE("invalid graph inputs throw std::invalid_argument") {
  ExecGraph g;
  CHECK_THROWS_AS(g.add_stream(0, StreamKind::kCompute, "x"), std::invalid_argument);  // no device
  const StreamId s = g.add_stream(g.add_device("gpu0"), StreamKind::kCompute, "compute");
  CHECK_THROWS_AS(g.add_task(spec("x", s + 1, 1.0)), std::invalid_argument);
  CHECK_THROWS_AS(g.add_task(spec("x", s, -1.0)), std::invalid_argument);
  CHECK_THROWS_AS(g.add_task(spec("x", s, std::nan(""))), std::invalid_argument);
  CHECK_THROWS_AS(g.add_task(spec("x", s, std::numeric_limits<double>::infinity())), std::invalid_argument);
  const TaskId a = g.add_task(spec("a", s, 0.0));
  CHECK_THROWS_AS(g.add_dependency(a, a), std::invalid_argument);
  CHECK_THROWS_AS(g.add_dependency(a, 5), std::invalid_argument);
  CHECK_THROWS_AS(g.add_dependency(kNone, a), std::invalid_argument);
  CHECK(g.task_count() == 1);  // rejected tasks were not added
  CHECK(g.edge_count() == 0);
  CHECK(g.stream_tasks(s).size() == 1);
}

TEST_CASE("labels are interned, and kinds have names") {
  ExecGraph g;
  const StreamId s = g.add_stream(g.add_device("gpu0"), StreamKind::kCompute, "compute");
  std::string buf = "layer0/fwd";
  const TaskId a = g.add_task(spec(buf, s, 1.0));
  buf = "layer1/fwd";  // the graph must own its copy
  const TaskId b = g.add_task(spec(buf, s, 1.0));
  const TaskId c = g.add_task(spec("layer0/fwd", s, 1.0));
  CHECK(g.label_of(a) == "layer0/fwd");
  CHECK(g.label_of(b) == "layer1/fwd");
  CHECK(g.task(a).label == g.task(c).label);
  CHECK(g.task(a).label != g.task(b).label);
  CHECK(stream_kind_name(StreamKind::kComm) == "comm");
  CHECK(task_kind_name(TaskKind::kCollective) == "collective");
  CHECK(task_kind_name(TaskKind::kSendRecv) == "sendrecv");
}

TEST_CASE("copies share their source task's cost entry, and the copy keeps label, kind, rates and takes its own stream and op") {
  ExecGraph src;
  const StreamId s = src.add_stream(src.add_device("gpu0"), StreamKind::kCompute, "compute");
  TaskSpec a = spec("gemm", s, 0.5);
  a.flops = 3e12, a.bytes = 2e9, a.category = 7, a.kind = TaskKind::kCollective, a.comm_op = 1;
  const TaskId x = src.add_task(a);
  src.add_barrier("join");

  ExecGraph copy;
  const DeviceId d = copy.add_device("rank0");
  copy.add_stream(d, StreamKind::kCompute, "rank0/compute");
  const StreamId s1 = copy.add_stream(d, StreamKind::kComm, "rank0/comm");
  copy.share_tables(src);
  const std::size_t costs = copy.costs().size();
  const TaskId c0 = copy.add_copy(src, x, s1, 9);
  const TaskId c1 = copy.add_task_like(src.task(x), s1, 0.75, 4);  // a straggler's copy: its own duration
  CHECK(copy.costs().size() == costs + 1);                           // only the second one added a cost
  const Task t0 = copy.task(c0), t1 = copy.task(c1);
  CHECK(copy.label_of(c0) == "gemm");
  CHECK(t0.kind == TaskKind::kCollective);
  CHECK(t0.category == 7);
  CHECK(t0.stream == s1);
  CHECK(t0.comm_op == 9);
  CHECK(t0.duration == 0.5);
  CHECK(t0.flops == 3e12);
  CHECK(t0.bytes == 2e9);
  CHECK(t1.duration == 0.75);
  CHECK(t1.flops == 3e12);
  CHECK(t1.comm_op == 4);
  CHECK(copy.stream_tasks(s1) == std::vector<TaskId>{c0, c1});
  CHECK(copy.stream_first(s1) == c0);
  CHECK(copy.stream_last(s1) == c1);
  CHECK(copy.next_in_stream()[c0] == c1);
  CHECK(copy.next_in_stream()[c1] == kNone);
  CHECK(copy.stream_first(0) == kNone);  // the compute stream has no task
  CHECK(copy.stream_tasks(0).empty());
  // Barriers share one zero-cost entry.
  const TaskId b0 = copy.add_barrier("j0"), b1 = copy.add_barrier("j1");
  CHECK(copy.packed_tasks()[b0].cost == copy.packed_tasks()[b1].cost);
  CHECK(copy.task(b0).duration == 0);
  CHECK(copy.next_in_stream()[b0] == kNone);  // barriers belong to no stream
  CHECK(copy.stream_last(s1) == c1);
  // Copying from a graph whose tables were not taken, or taking tables after adding tasks, is refused.
  ExecGraph other;
  other.add_stream(other.add_device("g"), StreamKind::kCompute, "c");
  CHECK_THROWS_AS(other.add_copy(src, x, 0, kNone), std::invalid_argument);
  other.add_barrier("b");
  CHECK_THROWS_AS(other.share_tables(src), std::logic_error);
  // Range-for over the tasks yields every task, in id order.
  std::vector<double> durations;
  for (const Task& t : copy.tasks()) durations.push_back(t.duration);
  CHECK(durations == std::vector<double>{0.5, 0.75, 0.0, 0.0});
}
