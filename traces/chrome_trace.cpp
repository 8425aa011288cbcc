#include "traces/chrome_trace.hpp"

#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>
#include <string_view>

namespace exasim::traces {
namespace {

// JSON string literal, escaping quotes, backslashes and control characters (RFC 8259).
void put_string(std::ostream& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.put('"');
  std::size_t run = 0;  // start of the pending run of characters that need no escape
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.write(s.data() + run, static_cast<std::streamsize>(i - run));
    run = i + 1;
    switch (c) {
      case '"': out << "\\\""; break;
      case '\\': out << "\\\\"; break;
      case '\n': out << "\\n"; break;
      case '\r': out << "\\r"; break;
      case '\t': out << "\\t"; break;
      default: {
        const char esc[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xf]};
        out.write(esc, sizeof esc);
      }
    }
  }
  out.write(s.data() + run, static_cast<std::streamsize>(s.size() - run));
  out.put('"');
}

// Shortest round-trip representation: deterministic and exact. JSON has no NaN/Inf, so those
// become null.
void put_number(std::ostream& out, double v) {
  if (!std::isfinite(v)) {
    out << "null";
    return;
  }
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.write(buf, res.ptr - buf);
}

void put_metadata(std::ostream& out, std::string_view what, std::uint32_t pid, std::uint32_t tid,
                  std::string_view name) {
  out << "{\"ph\":\"M\",\"name\":\"" << what << "\",\"pid\":" << pid << ",\"tid\":" << tid
      << ",\"args\":{\"name\":";
  put_string(out, name);
  out << "}}";
}

void put_task(std::ostream& out, const sim::ExecGraph& g, const sim::Timeline& tl, sim::TaskId id) {
  const sim::Task& t = g.task(id);
  const sim::TaskRecord& r = tl[id];
  out << "{\"ph\":\"X\",\"name\":";
  put_string(out, g.label_of(id));
  out << ",\"cat\":";
  put_string(out, sim::task_kind_name(t.kind));
  out << ",\"pid\":" << g.streams()[t.stream].device << ",\"tid\":" << t.stream << ",\"ts\":";
  put_number(out, r.start * 1e6);
  out << ",\"dur\":";
  put_number(out, (r.end - r.start) * 1e6);
  if (t.flops != 0 || t.bytes != 0) {
    out << ",\"args\":{";
    if (t.flops != 0) {
      out << "\"flops\":";
      put_number(out, t.flops);
    }
    if (t.bytes != 0) {
      out << (t.flops != 0 ? ",\"bytes\":" : "\"bytes\":");
      put_number(out, t.bytes);
    }
    out << '}';
  }
  out << '}';
}

}  // namespace

void write_chrome_trace(const sim::ExecGraph& graph, const sim::Timeline& timeline, std::ostream& out) {
  if (timeline.size() != graph.task_count()) {
    throw std::invalid_argument("write_chrome_trace: timeline has " + std::to_string(timeline.size()) +
                                " tasks but the graph has " + std::to_string(graph.task_count()));
  }
  out << "{\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&] {
    if (!first) out << ",\n";
    first = false;
  };
  for (sim::DeviceId d = 0; d < graph.devices().size(); ++d) {
    sep();
    put_metadata(out, "process_name", d, 0, graph.devices()[d].name);
  }
  for (sim::StreamId s = 0; s < graph.streams().size(); ++s) {
    const sim::Stream& st = graph.streams()[s];
    sep();
    put_metadata(out, "thread_name", st.device, s, st.name.empty() ? sim::stream_kind_name(st.kind) : st.name);
  }
  // Tasks grouped by stream in program order, so each thread's events are already sorted by time.
  for (sim::StreamId s = 0; s < graph.streams().size(); ++s) {
    for (sim::TaskId id : graph.stream_tasks(s)) {
      sep();
      put_task(out, graph, timeline, id);
    }
  }
  out << "\n],\"displayTimeUnit\":\"ms\"}\n";
}

}  // namespace exasim::traces
