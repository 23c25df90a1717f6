#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "ezpz/output/rank_log.hpp"

using namespace ezpz::output;

TEST_CASE("ranks.log: one rank's output, byte for byte", "[rank_log]") {
  // Pieces joined, a line without its newline at the end, another rank's and the launcher's
  // lines left out.
  const std::string log =
      "0: hello\n1: hello\n1+ half \n0: bye\n1: a line\n[proxy] not a record\n1+ no newline\n";
  CHECK(rank_output(log, 0) == "hello\nbye\n");
  CHECK(rank_output(log, 1) == "hello\nhalf a line\nno newline");
  CHECK(rank_output(log, 2).empty());
}

TEST_CASE("runs show --grep and --tail", "[rank_log]") {
  struct Row {
    std::string grep;
    std::optional<std::size_t> tail;
    std::string out;
  };
  const std::string text = "step 1 loss 3\nsaved\nstep 2 loss 2\nstep 3 loss 1";
  const std::vector<Row> rows = {
      {"", std::nullopt, text},
      {"loss", std::nullopt, "step 1 loss 3\nstep 2 loss 2\nstep 3 loss 1"},
      {"", 2, "step 2 loss 2\nstep 3 loss 1"},
      {"loss", 1, "step 3 loss 1"},
      {"saved", 5, "saved\n"},
      {"nothing", std::nullopt, ""},
      {"", 0, ""},
  };
  for (const Row& row : rows) {
    INFO("row " << (&row - rows.data()));
    CHECK(pick_lines(text, row.grep, row.tail) == row.out);
  }
}
