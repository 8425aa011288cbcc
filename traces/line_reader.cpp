#include "traces/line_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "hw/error.hpp"

namespace exasim::traces {

namespace {
// Large enough that a refill costs little per line; grows only for a longer line. A smaller
// file gets a buffer of its size: a trace of a few lines (tests, fuzzing, a user's sample) does
// not allocate and clear a MiB for each source (under ASan that was ~6 ms per source).
constexpr std::size_t kInitialBuffer = 1 << 20;
constexpr std::size_t kSmallestBuffer = 4096;
}  // namespace

LineReader::LineReader(std::string path) : path_(std::move(path)) {
  file_.reset(std::fopen(path_.c_str(), "rb"));
  if (!file_) {
    throw IoError("cannot open \"" + path_ + "\": " + std::strerror(errno), SourceLocation{path_, 0, ""},
                  "check the path (relative paths are resolved against the scenario's folder)");
  }
  std::error_code ec;  // no size (a pipe): the full buffer
  const std::uintmax_t size = std::filesystem::file_size(path_, ec);
  buffer_.resize(ec ? kInitialBuffer : static_cast<std::size_t>(std::clamp<std::uintmax_t>(size + 1, kSmallestBuffer, kInitialBuffer)));
}

bool LineReader::fill() {
  if (eof_) return false;
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);  // one line fills the buffer
  const std::size_t got = std::fread(buffer_.data() + end_, 1, buffer_.size() - end_, file_.get());
  if (got == 0) {
    if (std::ferror(file_.get())) throw IoError("read error in \"" + path_ + "\"", SourceLocation{path_, 0, ""});
    eof_ = true;
    return false;
  }
  end_ += got;
  return true;
}

bool LineReader::next(std::string_view& line) {
  std::size_t scanned = 0;  // bytes already searched for '\n', so a refill does not rescan them
  for (;;) {
    const char* start = buffer_.data() + begin_;
    std::size_t avail = end_ - begin_;
    const void* nl = std::memchr(start + scanned, '\n', avail - scanned);
    std::size_t len = 0;
    if (nl != nullptr) {
      len = static_cast<std::size_t>(static_cast<const char*>(nl) - start);
      begin_ += len + 1;
    } else {
      scanned = avail;
      if (fill()) continue;
      start = buffer_.data() + begin_;  // fill() may have moved the tail before finding EOF
      avail = end_ - begin_;
      if (avail == 0) return false;  // end of file after a final newline
      len = avail;                   // last line without a newline
      begin_ = end_;
    }
    if (len > 0 && start[len - 1] == '\r') --len;
    line = std::string_view(start, len);
    if (++line_number_ == 1 && line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);
    return true;
  }
}

}  // namespace exasim::traces
