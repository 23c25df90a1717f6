#include "bench/step_line.hpp"
#include "tests/catch.hpp"

using ezpz::bench::is_step_line;

// The training benchmarks find rank 0's progress in what `ezpz launch` passes on, which
// prefixes each rank's line with "[rank] ": without the prefix skipped, "ranks of" stayed
// empty and first_step never saw its line.
TEST_CASE("is_step_line: a trainer's step line, with or without ezpz launch's rank prefix",
          "[bench]") {
  struct Row {
    const char* text;
    int step;
    bool expected;
  };
  const Row rows[] = {
      {"step    1/300 loss 2.3 | 21.45 ms", 1, true},
      {"[0] step    1/300 loss 2.3 | 21.45 ms", 1, true},
      {"[12] step    2/300 loss 2.3", 2, true},
      {"[0] step    2/300 loss 2.3", 1, false},
      {"[0] step   12/300 loss 2.3", 1, false},
      {"[0] first step done 631 ms after start", 1, false},
      {"[x] step    1/300", 1, false},
      {"[] step    1/300", 1, false},
      {"[0]step    1/300", 1, false},
      {"[0] ", 1, false},
      {"", 1, false},
  };
  for (const Row& row : rows) {
    INFO(row.text);
    CHECK(is_step_line(row.text, row.step) == row.expected);
  }
}
