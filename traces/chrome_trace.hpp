#pragma once
// Chrome trace-event JSON (opens in Perfetto and chrome://tracing): one process per device, one
// thread per stream, one complete ("X") event per task with ts/dur in microseconds.
#include <ostream>

#include "sim/exec_graph.hpp"
#include "sim/timeline.hpp"

namespace exasim::traces {

// Writes `timeline` of `graph` as {"traceEvents":[...],"displayTimeUnit":"ms"}. Output is a pure
// function of the inputs (byte-identical across runs). Throws std::invalid_argument if the
// timeline does not belong to the graph (different task count).
void write_chrome_trace(const sim::ExecGraph& graph, const sim::Timeline& timeline, std::ostream& out);

}  // namespace exasim::traces
