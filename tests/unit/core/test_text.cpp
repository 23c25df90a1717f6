// lib/ezpz/core/text.hpp: splitting at a separator, empties kept; lines without the final one.
#include <string_view>
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
