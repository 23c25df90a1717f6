#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "ezpz/core/color.hpp"

using namespace ezpz;

TEST_CASE("--color: the user's word wins, auto asks the terminal, NO_COLOR and TERM", "[color]") {
  struct Row {
    ColorMode mode;
    Env env;
    bool terminal;
    bool coloured;
  };
  const std::vector<Row> rows = {
      {ColorMode::automatic, {}, true, true},
      {ColorMode::automatic, {}, false, false},
      {ColorMode::automatic, {{"NO_COLOR", "1"}}, true, false},
      {ColorMode::automatic, {{"NO_COLOR", ""}}, true, true},  // present but empty: no effect
      {ColorMode::automatic, {{"TERM", "dumb"}}, true, false},
      {ColorMode::automatic, {{"TERM", "xterm-256color"}}, true, true},
      {ColorMode::always, {{"NO_COLOR", "1"}}, false, true},
      {ColorMode::never, {}, true, false},
  };
  for (const Row& row : rows) {
    INFO("row " << (&row - rows.data()));
    CHECK(use_color(row.mode, row.env, row.terminal) == row.coloured);
  }
}

TEST_CASE("colour words parse, and paint wraps text in SGR only when on", "[color]") {
  CHECK(parse_color_mode("auto") == ColorMode::automatic);
  CHECK(parse_color_mode("always") == ColorMode::always);
  CHECK(parse_color_mode("never") == ColorMode::never);
  CHECK_FALSE(parse_color_mode("yes").has_value());
  CHECK(paint("ok", Paint::green, true) == "\033[32mok\033[0m");
  CHECK(paint("ERROR", Paint::bold_red, true) == "\033[1;31mERROR\033[0m");
  CHECK(paint("ok", Paint::green, false) == "ok");
}
