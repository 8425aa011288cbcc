#pragma once
// Streams a text file line by line through a fixed buffer, so memory stays flat however long the
// file is (a 27 M-row trace is never held whole). Counts 1-based line numbers for error messages.
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace exasim::traces {

class LineReader {
 public:
  // Opens `path`; IoError naming it if that fails.
  explicit LineReader(std::string path);

  // The next line without its line ending ("\n" or "\r\n"; a UTF-8 byte-order mark at the start
  // of the file is dropped). The view stays valid until the next call. False at end of file.
  bool next(std::string_view& line);
  // 1-based number of the line last returned.
  long long line_number() const { return line_number_; }
  const std::string& path() const { return path_; }

 private:
  bool fill();  // reads more bytes after moving the unread tail to the front; false at EOF

  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::string path_;
  std::unique_ptr<std::FILE, Closer> file_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0, end_ = 0;  // unread bytes are buffer_[begin_, end_)
  bool eof_ = false;
  long long line_number_ = 0;
};

}  // namespace exasim::traces
