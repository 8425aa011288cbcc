// Timeline queries: makespan and per-stream busy time, checked against hand-computed values.
#include <doctest/doctest.h>

#include <stdexcept>

#include "sim/engine.hpp"
#include "sim/timeline.hpp"

using namespace exasim::sim;

namespace {

TaskSpec task(StreamId s, Time d) {
  TaskSpec t;
  t.label = "t";
  t.stream = s;
  t.duration = d;
  return t;
}

}  // namespace

TEST_CASE("makespan is the latest end, 0 when empty") {
  CHECK(Timeline().makespan() == 0.0);
  Timeline tl(3);
  CHECK(tl.makespan() == 0.0);
  tl.record(0, 1.0, 4.0);
  tl.record(1, 0.0, 2.0);
  tl.record(2, 5.0, 5.0);  // zero-length task at the end still counts
  CHECK(tl.makespan() == 5.0);
  CHECK(tl[1].end == 2.0);
  CHECK(tl.size() == 3);
}

TEST_CASE("stream_busy sums the durations of the stream's tasks, gaps excluded") {
  ExecGraph g;
  const DeviceId d = g.add_device("gpu0");
  const StreamId comp = g.add_stream(d, StreamKind::kCompute, "compute");
  const StreamId comm = g.add_stream(d, StreamKind::kComm, "comm");
  const StreamId idle = g.add_stream(d, StreamKind::kCopy, "copy");
  const TaskId k1 = g.add_task(task(comp, 1.0));
  const TaskId c1 = g.add_task(task(comm, 4.0));
  const TaskId k2 = g.add_task(task(comp, 2.0));
  g.add_dependency(k1, c1);
  g.add_dependency(c1, k2);  // compute idles from t=1 to t=5
  const Timeline tl = Engine(g).run();
  CHECK(tl[k2].start == 5.0);
  CHECK(tl.makespan() == 7.0);
  CHECK(tl.stream_busy(g, comp) == 3.0);
  CHECK(tl.stream_busy(g, comm) == 4.0);
  CHECK(tl.stream_busy(g, idle) == 0.0);
  CHECK_THROWS_AS(tl.stream_busy(g, 3), std::invalid_argument);
  CHECK_THROWS_AS(Timeline(1).stream_busy(g, comp), std::invalid_argument);  // not this graph's
}
