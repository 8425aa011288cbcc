// Engine throughput on large graphs: events (task starts + completions) per second, and the rate
// at which an ExecGraph is built. Prints one line per graph; always exits 0.
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "sim/engine.hpp"

using namespace exasim::sim;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

TaskSpec make_task(std::string_view label, TaskKind kind, StreamId s, Time d) {
  TaskSpec t;
  t.label = label;
  t.kind = kind;
  t.stream = s;
  t.duration = d;
  t.flops = 1e12;
  t.bytes = 1e6;
  return t;
}

// Pipeline-like: each device has a compute and a comm stream. Per step, every device runs a
// compute task that waits for the previous device's send of the same step, then sends its result.
ExecGraph pipeline_graph(int devices, int steps) {
  ExecGraph g;
  g.reserve(static_cast<std::size_t>(devices) * steps * 2, static_cast<std::size_t>(devices) * steps * 2);
  std::vector<StreamId> comp, comm;
  for (int d = 0; d < devices; ++d) {
    const DeviceId dev = g.add_device("stage" + std::to_string(d));
    comp.push_back(g.add_stream(dev, StreamKind::kCompute, "compute"));
    comm.push_back(g.add_stream(dev, StreamKind::kComm, "comm"));
  }
  std::vector<TaskId> prev_send(devices, kNone);
  for (int step = 0; step < steps; ++step) {
    const bool fwd = step % 2 == 0;
    for (int d = 0; d < devices; ++d) {
      const Time dur = 1e-3 * (1.0 + 0.1 * ((step + d) % 3));
      const TaskId k = g.add_task(make_task(fwd ? "fwd" : "bwd", TaskKind::kCompute, comp[d], dur));
      const TaskId s = g.add_task(make_task(fwd ? "send_act" : "send_grad", TaskKind::kSendRecv, comm[d], 2e-4));
      g.add_dependency(k, s);
      if (d > 0 && prev_send[d - 1] != kNone) g.add_dependency(prev_send[d - 1], k);
      prev_send[d] = s;
    }
  }
  return g;
}

// Random layered DAG: `layers` layers of `width` tasks on random streams of `devices` devices;
// each task depends on `fan_in` random tasks of the previous layer.
ExecGraph layered_graph(int layers, int width, int devices, int fan_in, std::uint32_t seed) {
  std::mt19937 rng(seed);
  ExecGraph g;
  g.reserve(static_cast<std::size_t>(layers) * width, static_cast<std::size_t>(layers) * width * fan_in);
  std::vector<StreamId> ids;
  for (int d = 0; d < devices; ++d) {
    const DeviceId dev = g.add_device("gpu" + std::to_string(d));
    ids.push_back(g.add_stream(dev, StreamKind::kCompute, "compute"));
    ids.push_back(g.add_stream(dev, StreamKind::kComm, "comm"));
  }
  std::uniform_real_distribution<double> dur(1e-6, 1e-3);
  std::uniform_int_distribution<int> pick(0, width - 1);
  std::uniform_int_distribution<std::size_t> pick_stream(0, ids.size() - 1);
  std::vector<TaskId> prev(width), cur(width);
  for (int l = 0; l < layers; ++l) {
    for (int w = 0; w < width; ++w) {
      cur[w] = g.add_task(make_task("op", TaskKind::kCompute, ids[pick_stream(rng)], dur(rng)));
      if (l == 0) continue;
      for (int f = 0; f < fan_in; ++f) g.add_dependency(prev[pick(rng)], cur[w]);
    }
    prev.swap(cur);
  }
  return g;
}

template <typename Build>
void bench(const char* name, Build build) {
  auto t0 = Clock::now();
  const ExecGraph g = build();
  const double build_s = seconds_since(t0);
  std::printf("build:  %-16s tasks=%zu edges=%zu time=%.3f s  rate=%.2f M tasks/s\n", name, g.task_count(),
              g.edge_count(), build_s, static_cast<double>(g.task_count()) / build_s / 1e6);
  Engine engine(g);
  t0 = Clock::now();
  const Timeline tl = engine.run();
  const double run_s = seconds_since(t0);
  const auto events = engine.stats().events;
  std::printf("engine: %-16s tasks=%zu events=%llu time=%.3f s  rate=%.2f M events/s  makespan=%.6g s\n", name,
              g.task_count(), static_cast<unsigned long long>(events), run_s,
              static_cast<double>(events) / run_s / 1e6, tl.makespan());
}

}  // namespace

int main() {
  bench("pipeline graph", [] { return pipeline_graph(64, 16384); });          // 2.1 M tasks
  bench("layered DAG", [] { return layered_graph(2000, 1000, 32, 3, 1); });   // 2 M tasks, 6 M edges
  return 0;
}
