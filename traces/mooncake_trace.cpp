#include "traces/mooncake_trace.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "hw/config/json_text.hpp"
#include "hw/error.hpp"

namespace exasim::traces {

namespace {

using nlohmann::json;
using workloads::serving::Request;

struct RowContext {
  const LineReader& lines;
  [[noreturn]] void fail(const std::string& field, const std::string& what, const std::string& hint = {}) const {
    throw ConfigError(what, SourceLocation{lines.path(), static_cast<int>(lines.line_number()), field}, hint);
  }
};

const json& field(const json& row, const char* name, const RowContext& ctx) {
  const auto it = row.find(name);
  if (it == row.end()) ctx.fail(name, "missing field", "each line needs timestamp, input_length, output_length");
  return *it;
}

// A request's token count beyond what the serving model indexes (int): refused, not wrapped.
constexpr double kMaxTokens = 2147483647.0;
// Timestamps are milliseconds, from the trace's start or the Unix epoch; beyond 4e12 ms (the year
// 2096) they are refused before their nanoseconds overflow.
constexpr double kMaxTimestampMs = 4e12;

std::int64_t whole(const json& row, const char* name, const RowContext& ctx) {
  const json& v = field(row, name, ctx);
  if (v.is_number_integer() && !v.is_number_unsigned()) ctx.fail(name, "must not be negative, got " + v.dump());
  if (!v.is_number() || v.get<double>() < 0 || std::floor(v.get<double>()) != v.get<double>())
    ctx.fail(name, "expected a whole number >= 0, got " + v.dump());
  if (v.get<double>() > kMaxTokens)
    ctx.fail(name, "more tokens than a request can hold (2^31 - 1), got " + v.dump(), "a token count of this trace");
  return v.is_number_unsigned() ? static_cast<std::int64_t>(v.get<std::uint64_t>()) : static_cast<std::int64_t>(v.get<double>());
}

std::int64_t timestamp_ns(const json& row, const RowContext& ctx) {
  const json& v = field(row, "timestamp", ctx);
  if (!v.is_number() || v.get<double>() < 0) ctx.fail("timestamp", "expected milliseconds >= 0, got " + v.dump());
  if (v.get<double>() > kMaxTimestampMs)
    ctx.fail("timestamp", "later than 4e12 ms (the year 2096 from the Unix epoch), got " + v.dump(),
             "milliseconds from the trace's start or the Unix epoch");
  if (v.is_number_unsigned()) return static_cast<std::int64_t>(v.get<std::uint64_t>()) * 1'000'000;
  return std::llround(v.get<double>() * 1e6);
}

std::vector<std::uint64_t> prefix_hashes(const json& row, std::int64_t prompt, const RowContext& ctx) {
  std::vector<std::uint64_t> out;
  const auto it = row.find("hash_ids");
  if (it == row.end()) return out;  // no prefix information
  if (!it->is_array()) ctx.fail("hash_ids", "expected a list of block ids, got " + it->dump());
  out.reserve(it->size());
  for (const json& h : *it) {
    if (!h.is_number_unsigned()) ctx.fail("hash_ids", "expected whole numbers >= 0, found " + h.dump());
    out.push_back(h.get<std::uint64_t>());
  }
  const auto blocks = static_cast<std::size_t>((prompt + kMooncakeBlockTokens - 1) / kMooncakeBlockTokens);
  if (out.size() != blocks) {
    ctx.fail("hash_ids", std::to_string(out.size()) + " ids for input_length " + std::to_string(prompt) + ", which has " +
                             std::to_string(blocks) + " blocks of " + std::to_string(kMooncakeBlockTokens) + " tokens",
             "one id per 512-token block, the last one partial");
  }
  return out;
}

}  // namespace

MooncakeTraceSource::MooncakeTraceSource(const std::string& path, MooncakeOptions options)
    : lines_(path), options_(options), rng_(options.seed) {}

std::optional<Request> MooncakeTraceSource::read_row() {
  std::string_view line;
  do {
    if (!lines_.next(line)) return std::nullopt;
  } while (line.find_first_not_of(" \t") == std::string_view::npos);
  const RowContext ctx{lines_};
  const json row = config::parse_json_text(line, lines_.path(), static_cast<int>(lines_.line_number()), "one JSON object per line");
  if (!row.is_object()) ctx.fail("", "expected a JSON object, got " + row.dump().substr(0, 40));
  if (!clock_.accept(timestamp_ns(row, ctx))) ctx.fail("timestamp", clock_.backwards_message(), "sort the file by timestamp");
  Request r;
  r.arrival_s = clock_.arrival_s();
  r.prompt_tokens = whole(row, "input_length", ctx);
  r.output_tokens = whole(row, "output_length", ctx);
  r.prefix_blocks = prefix_hashes(row, r.prompt_tokens, ctx);
  if (!r.prefix_blocks.empty()) r.prefix_block_tokens = kMooncakeBlockTokens;
  return r;
}

bool MooncakeTraceSource::fill_bucket() {
  bucket_.clear();
  bucket_pos_ = 0;
  if (!ahead_) ahead_ = read_row();
  if (!ahead_) return false;
  const double t = ahead_->arrival_s;
  bucket_.push_back(std::move(*ahead_));
  ahead_.reset();
  while (auto row = read_row()) {
    if (row->arrival_s != t) {
      ahead_ = std::move(row);
      break;
    }
    bucket_.push_back(std::move(*row));
  }
  // Never past the next bucket, so arrivals stay in order across buckets.
  const double width = ahead_ ? std::min(options_.jitter_s, ahead_->arrival_s - t) : options_.jitter_s;
  for (auto& r : bucket_) r.arrival_s = t + width * workloads::serving::uniform01(rng_);
  std::stable_sort(bucket_.begin(), bucket_.end(), [](const Request& a, const Request& b) { return a.arrival_s < b.arrival_s; });
  return true;
}

std::optional<Request> MooncakeTraceSource::next() {
  std::optional<Request> r;
  if (options_.jitter_s <= 0) {
    r = read_row();
  } else if (bucket_pos_ < bucket_.size() || fill_bucket()) {
    r = std::move(bucket_[bucket_pos_++]);
  }
  if (r) r->id = next_id_++;
  return r;
}

std::string MooncakeTraceSource::describe() const {
  std::string d = "mooncake trace " + std::filesystem::path(lines_.path()).filename().string();
  if (options_.jitter_s <= 0) return d;
  std::ostringstream w;
  w << options_.jitter_s;
  return d + ", arrivals jittered over " + w.str() + " s buckets";
}

}  // namespace exasim::traces
