// lib/ezpz/core/text.hpp: splitting at a separator, empties kept; lines without the final one.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/catch.hpp"

#include "ezpz/core/text.hpp"

using Pieces = std::vector<std::string_view>;

TEST_CASE("split keeps every piece, empty ones too", "[text]") {
  CHECK(ezpz::split("a.b", '.') == Pieces{"a", "b"});
  CHECK(ezpz::split("a..b", '.') == Pieces{"a", "", "b"});
  CHECK(ezpz::split(".a.", '.') == Pieces{"", "a", ""});
  CHECK(ezpz::split("", ':') == Pieces{""});
  CHECK(ezpz::split("/usr/bin::/bin", ':') == Pieces{"/usr/bin", "", "/bin"});
}

TEST_CASE("split_lines drops only the piece after a final newline", "[text]") {
  CHECK(ezpz::split_lines("a\nb\n") == Pieces{"a", "b"});
  CHECK(ezpz::split_lines("a\nb") == Pieces{"a", "b"});
  CHECK(ezpz::split_lines("a\n\nb\n\n") == Pieces{"a", "", "b", ""});
  CHECK(ezpz::split_lines("").empty());
  CHECK(ezpz::split_lines("\n") == Pieces{""});
}

// Issue 45: a rank's colours were reprinted raw in ezpz's own "last lines".
TEST_CASE("a rank's terminal escapes are left out of ezpz's own words", "[text]") {
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"\x1b[31mERROR\x1b[0m: loss is nan", "ERROR: loss is nan"},
      {"\x1b[1;38;5;196mbold red\x1b[m", "bold red"},
      {"progress\r\x1b[2K 50%", "progress 50%"},
      {"\x1b]0;my title\a"
       "after",
       "after"},
      {"\x1b]8;;https://x\x1b\\link\x1b]8;;\x1b\\", "link"},
      {"\x1b(Bplain", "plain"},
      {"tab\tkept", "tab\tkept"},
      {"cut at the end \x1b[", "cut at the end "},
      {"bell\a and nul", "bell and nul"},
  };
  for (const auto& [line, shown] : rows) {
    INFO(line);
    CHECK(ezpz::without_escapes(line) == shown);
  }
}
