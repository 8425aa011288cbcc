// Chrome trace output parsed back with nlohmann::json and compared to the graph and timeline.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "sim/engine.hpp"
#include "traces/chrome_trace.hpp"

using namespace exasim::sim;
using nlohmann::json;

namespace {

struct Fixture {
  ExecGraph g;
  Timeline tl;
  Fixture() {
    for (int d = 0; d < 2; ++d) {
      const DeviceId dev = g.add_device("gpu" + std::to_string(d));
      const StreamId comp = g.add_stream(dev, StreamKind::kCompute, "compute");
      const StreamId comm = g.add_stream(dev, StreamKind::kComm, "");  // unnamed: kind name used
      TaskSpec k;
      k.label = "layer0/\"fwd\"\n\x01";  // needs escaping
      k.stream = comp;
      k.duration = 1.5e-3 * (d + 1);
      k.flops = 2e12;
      k.bytes = 3e6;
      const TaskId kid = g.add_task(k);
      TaskSpec c;
      c.label = "allreduce";
      c.kind = TaskKind::kCollective;
      c.stream = comm;
      c.duration = 0.25e-3;
      c.bytes = 1e6;
      g.add_dependency(kid, g.add_task(c));
      TaskSpec h;
      h.label = "host";
      h.kind = TaskKind::kHost;
      h.stream = comp;
      h.duration = 1e-6;
      g.add_task(h);
    }
    tl = Engine(g).run();
  }
  std::string write() const {
    std::ostringstream out;
    exasim::traces::write_chrome_trace(g, tl, out);
    return out.str();
  }
};

}  // namespace

TEST_CASE("chrome trace parses back, one X event per task with the timeline's ts/dur") {
  const Fixture f;
  const json doc = json::parse(f.write());
  CHECK(doc.at("displayTimeUnit") == "ms");
  std::set<TaskId> seen;
  int x_events = 0;
  for (const json& ev : doc.at("traceEvents")) {
    if (ev.at("ph") != "X") continue;
    ++x_events;
    // Identify the task by stream (tid) and start time: both unique per task here.
    const auto stream = ev.at("tid").get<StreamId>();
    const double ts = ev.at("ts").get<double>();
    TaskId id = kNone;
    for (TaskId t : f.g.stream_tasks(stream)) {
      if (f.tl[t].start * 1e6 == ts) id = t;
    }
    REQUIRE(id != kNone);
    seen.insert(id);
    CHECK(ev.at("pid").get<DeviceId>() == f.g.streams()[stream].device);
    CHECK(ev.at("name").get<std::string>() == f.g.label_of(id));
    CHECK(ev.at("cat").get<std::string>() == task_kind_name(f.g.task(id).kind));
    CHECK(ev.at("dur").get<double>() == exasim::testing::approx((f.tl[id].end - f.tl[id].start) * 1e6));
    const Task& t = f.g.task(id);
    CHECK(ev.contains("args") == (t.flops != 0 || t.bytes != 0));
    if (t.flops != 0) CHECK(ev["args"]["flops"].get<double>() == t.flops);
    if (t.flops == 0 && ev.contains("args")) CHECK_FALSE(ev["args"].contains("flops"));
    if (t.bytes != 0) CHECK(ev["args"]["bytes"].get<double>() == t.bytes);
  }
  CHECK(x_events == static_cast<int>(f.g.task_count()));
  CHECK(seen.size() == f.g.task_count());
}

TEST_CASE("chrome trace names each device (pid) and stream (tid)") {
  const Fixture f;
  const json doc = json::parse(f.write());
  std::map<int, std::string> processes;
  std::map<int, std::pair<int, std::string>> threads;
  for (const json& ev : doc.at("traceEvents")) {
    if (ev.at("ph") != "M") continue;
    const std::string name = ev.at("args").at("name");
    if (ev.at("name") == "process_name") processes[ev.at("pid")] = name;
    if (ev.at("name") == "thread_name") threads[ev.at("tid")] = {ev.at("pid").get<int>(), name};
  }
  CHECK(processes == std::map<int, std::string>{{0, "gpu0"}, {1, "gpu1"}});
  REQUIRE(threads.size() == f.g.streams().size());
  CHECK(threads[0] == std::pair<int, std::string>{0, "compute"});
  CHECK(threads[1] == std::pair<int, std::string>{0, "comm"});
  CHECK(threads[3] == std::pair<int, std::string>{1, "comm"});
}

TEST_CASE("chrome trace output is deterministic") {
  const Fixture a;
  const Fixture b;
  CHECK(a.write() == b.write());
}

TEST_CASE("chrome trace rejects a timeline of another graph") {
  const Fixture f;
  std::ostringstream out;
  CHECK_THROWS_AS(exasim::traces::write_chrome_trace(f.g, Timeline(1), out), std::invalid_argument);
}

TEST_CASE("chrome trace of an empty graph is valid JSON") {
  ExecGraph g;
  std::ostringstream out;
  exasim::traces::write_chrome_trace(g, Timeline(), out);
  const json doc = json::parse(out.str());
  CHECK(doc.at("traceEvents").empty());
}
