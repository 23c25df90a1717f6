// lib/ezpz/core/json_text.hpp: JSON text that never throws, whatever bytes its strings hold.
#include <string>

#include <nlohmann/json.hpp>

#include "tests/catch.hpp"

#include "ezpz/core/json_text.hpp"

namespace {

constexpr const char* k_replacement = "\xef\xbf\xbd";  // U+FFFD, in UTF-8

}  // namespace

TEST_CASE("json_text writes bytes that are not UTF-8 as U+FFFD, the rest kept", "[json_text]") {
  struct Row {
    const char* name;
    std::string in;
    std::string out;  // the string's JSON text
  };
  const std::string r = k_replacement;
  const Row rows[] = {
      {"ASCII", "caf", "\"caf\""},
      {"UTF-8 kept as it is", "caf\xc3\xa9 \xe2\x82\xac", "\"caf\xc3\xa9 \xe2\x82\xac\""},
      {"Latin-1's e-acute, the last byte", "caf\xe9", "\"caf" + r + "\""},
      {"a byte that is not UTF-8 inside",
       "a\xff"
       "b",
       "\"a" + r + "b\""},
      {"a sequence cut short, then ASCII", "\xe2\x82z", "\"" + r + "z\""},
      {"a lone continuation byte", "\x80", "\"" + r + "\""},
      {"control characters escaped as always", "a\tb\n", "\"a\\tb\\n\""},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    CHECK(ezpz::json_text(nlohmann::json(row.in)) == row.out);
    CHECK(ezpz::json_text(nlohmann::ordered_json(row.in)) == row.out);
  }
}

TEST_CASE("json_text indents as dump() does, and its text parses back", "[json_text]") {
  const nlohmann::ordered_json json = {{"command", {"/bin/echo", "caf\xe9"}}, {"n", 1}};
  const std::string text = ezpz::json_text(json, 2);
  CHECK(text == std::string("{\n  \"command\": [\n    \"/bin/echo\",\n    \"caf") + k_replacement +
                    "\"\n  ],\n  \"n\": 1\n}");
  CHECK(nlohmann::json::parse(text)["command"][1] == std::string("caf") + k_replacement);
  CHECK(ezpz::json_text(json) ==
        std::string("{\"command\":[\"/bin/echo\",\"caf") + k_replacement + "\"],\"n\":1}");
}
