#include "traces/line_reader.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "hw/error.hpp"

using exasim::traces::LineReader;

namespace {

// A file in the temp folder holding `text`, removed at the end of the test.
struct TempFile {
  explicit TempFile(const std::string& text, const std::string& name) {
    path = (std::filesystem::temp_directory_path() / ("exasim_line_reader_" + name)).string();
    std::ofstream(path, std::ios::binary) << text;
  }
  ~TempFile() { std::filesystem::remove(path); }
  std::string path;
};

std::vector<std::string> all_lines(const std::string& path) {
  LineReader r(path);
  std::vector<std::string> out;
  std::string_view line;
  while (r.next(line)) {
    out.emplace_back(line);
    CHECK(r.line_number() == static_cast<long long>(out.size()));
  }
  return out;
}

}  // namespace

TEST_CASE("line reader: LF, CRLF, a missing final newline and a byte-order mark") {
  const TempFile f("\xEF\xBB\xBFhead\r\nrow 1\n\nrow 3\r\nlast", "endings.txt");
  CHECK(all_lines(f.path) == std::vector<std::string>{"head", "row 1", "", "row 3", "last"});
  const TempFile g("a\nb\n", "final_newline.txt");
  CHECK(all_lines(g.path) == std::vector<std::string>{"a", "b"});
  const TempFile e("", "empty.txt");
  CHECK(all_lines(e.path).empty());
}

TEST_CASE("line reader: lines longer than the buffer and many buffer refills") {
  const std::string longest(3'000'000, 'x');  // longer than the 1 MiB initial buffer
  std::string text = "short\n" + longest + "\n";
  for (int i = 0; i < 200'000; ++i) text += std::to_string(i) + "\n";  // crosses buffer boundaries
  const TempFile f(text, "long.txt");
  const auto lines = all_lines(f.path);
  REQUIRE(lines.size() == 200'002);
  CHECK(lines[1] == longest);
  CHECK(lines[2] == "0");
  CHECK(lines.back() == "199999");
}

TEST_CASE("line reader: a missing file is an IoError naming it") {
  try {
    LineReader r("/nonexistent/exasim/trace.csv");
    FAIL("expected an IoError");
  } catch (const exasim::IoError& e) {
    CHECK(e.where().file == "/nonexistent/exasim/trace.csv");
  }
}

TEST_CASE("line reader: a small file's buffer (sized to the file) still refills and grows") {
  // The buffer is sized when the file opens (4 KiB for this one); the file then grows to many
  // buffers' worth, with a line longer than the buffer: every line still comes back whole.
  const TempFile f("first\n", "grows.txt");
  LineReader r(f.path);
  const std::string wide(10'000, 'y');
  {
    std::ofstream more(f.path, std::ios::binary | std::ios::app);
    more << wide << "\n";
    for (int i = 0; i < 20'000; ++i) more << i << "\n";
  }
  std::vector<std::string> lines;
  std::string_view line;
  while (r.next(line)) lines.emplace_back(line);
  REQUIRE(lines.size() == 20'002);
  CHECK(lines[0] == "first");
  CHECK(lines[1] == wide);
  CHECK(lines.back() == "19999");
}
