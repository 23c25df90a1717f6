#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "ezpz/output/console.hpp"
#include "ezpz/output/rank_index.hpp"
#include "ezpz/output/rank_log.hpp"

using namespace ezpz::output;

namespace {

// The labelled console of `lines` and its index, as the output pump writes them.
struct Labelled {
  std::string log;
  std::string index{k_rank_index_header};
};

Labelled labelled(const std::vector<RankLine>& lines) {
  Console console(ConsoleMode::label);
  Labelled out;
  for (const RankLine& line : lines) {
    const std::size_t before = out.log.size();
    console.line(line, Millis(0), out.log);
    append_index_entry(out.index, line, out.log.size() - before);
  }
  return out;
}

const std::vector<RankLine> k_lines = {
    {.rank = 0, .text = "hello"},
    {.rank = 1, .text = "[0] looks like a label"},
    {.rank = -1, .text = "[proxy:0] the launcher's"},
    {.rank = 1, .text = "half ", .complete = false},
    {.rank = 0, .text = "50%\r", .complete = false},
    {.rank = 1, .text = "a line"},
    {.rank = -1, .text = "no newline ", .complete = false},
    {.rank = 0, .text = "crlf\r"},
    {.rank = 12, .text = ""},
    {.rank = 1, .text = "no newline at the end", .complete = false},
};

}  // namespace

TEST_CASE("ranks.idx: each rank's output, byte for byte, from the labelled console",
          "[rank_index]") {
  const Labelled rec = labelled(k_lines);
  CHECK(rec.log ==
        "[0] hello\n[1] [0] looks like a label\n[proxy:0] the launcher's\n[1] half \n[0] 50%\n"
        "[1] a line\nno newline [0] crlf\n[12] \n[1] no newline at the end\n");
  CHECK(indexed_rank_output(rec.log, rec.index, 0) == "hello\n50%\rcrlf\r\n");
  CHECK(indexed_rank_output(rec.log, rec.index, 1) ==
        "[0] looks like a label\nhalf a line\nno newline at the end");
  CHECK(indexed_rank_output(rec.log, rec.index, 12) == "\n");
  CHECK(indexed_rank_output(rec.log, rec.index, 2).empty());
  CHECK(indexed_rank_output(rec.log, rec.index, -1).empty());  // the launcher's is nobody's
}

TEST_CASE("ranks.idx: a record cut at --record-limit gives what it holds", "[rank_index]") {
  const Labelled rec = labelled(k_lines);
  const std::string entries = rec.index.substr(k_rank_index_header.size());
  struct Row {
    std::size_t cut;
    std::string rank0, rank1;
  };
  const std::vector<Row> rows = {
      {0, "", ""},
      {3, "", ""},   // inside the label: nothing yet
      {5, "h", ""},  // inside rank 0's first line: its bytes so far
      {10, "hello\n", ""},
      {18, "hello\n", "[0] "},
      {rec.log.size(), "hello\n50%\rcrlf\r\n",
       "[0] looks like a label\nhalf a line\nno newline at the end"},
  };
  for (const Row& row : rows) {
    INFO("cut at " << row.cut);
    const std::string index = std::string(k_rank_index_header) + cut_index(entries, row.cut);
    const std::string log = rec.log.substr(0, row.cut);
    CHECK(indexed_rank_output(log, index, 0) == row.rank0);
    CHECK(indexed_rank_output(log, index, 1) == row.rank1);
  }
}

namespace {

// The de-duplicated console of `lines` (each at its time, in ms) and its index, as the output
// pump writes them.
Labelled deduplicated(const std::vector<std::pair<RankLine, long>>& lines) {
  Console console(ConsoleMode::dedup, {.window = Millis(100)});
  Labelled out{.log = {}, .index = std::string(k_rank_index_header_groups)};
  console.index_into(&out.index);
  for (const auto& [line, at] : lines) {
    console.tick(Millis(at), out.log);
    console.line(line, Millis(at), out.log);
  }
  console.finish(out.log);
  return out;
}

}  // namespace

TEST_CASE("ranks.idx: each rank's output, byte for byte, from the de-duplicated console",
          "[rank_index]") {
  const Labelled rec = deduplicated({
      {{.rank = 0, .text = "loading"}, 0},
      {{.rank = 1, .text = "loading"}, 1},
      {{.rank = 2, .text = "loading"}, 2},
      {{.rank = 2, .text = "50%\r", .complete = false}, 3},
      {{.rank = 0, .text = "50%\r", .complete = false}, 3},
      {{.rank = 1, .text = "50%\r"}, 4},  // the same text, but ended: not the same line
      {{.rank = -1, .text = "[proxy:0] the launcher's"}, 5},
      {{.rank = 1, .text = "half ", .complete = false}, 6},
      {{.rank = 10, .text = "[0] looks like a label"}, 7},
      {{.rank = 1, .text = "loading"}, 300},  // the window has passed: a line of its own
  });
  CHECK(rec.log ==
        "[0-2] loading\n[0,2] 50%\n[1] 50%\n[proxy:0] the launcher's\n[1] half \n"
        "[10] [0] looks like a label\n[1] loading\n");
  CHECK(indexed_rank_output(rec.log, rec.index, 0) == "loading\n50%\r");
  CHECK(indexed_rank_output(rec.log, rec.index, 1) == "loading\n50%\r\nhalf loading\n");
  CHECK(indexed_rank_output(rec.log, rec.index, 2) == "loading\n50%\r");
  CHECK(indexed_rank_output(rec.log, rec.index, 10) == "[0] looks like a label\n");
  CHECK(indexed_rank_output(rec.log, rec.index, 3).empty());
  CHECK(indexed_rank_output(rec.log, rec.index, -1).empty());
  // Cut at --record-limit: inside the first line's label nothing yet, inside its text the part.
  const std::string entries = rec.index.substr(k_rank_index_header_groups.size());
  for (const auto& [cut, rank1] : std::vector<std::pair<std::size_t, std::string>>{
           {4, ""},
           {8, "lo"},
           {14, "loading\n"},
           {rec.log.size(), "loading\n50%\r\nhalf loading\n"}}) {
    INFO("cut at " << cut);
    const std::string index = std::string(k_rank_index_header_groups) + cut_index(entries, cut);
    CHECK(indexed_rank_output(rec.log.substr(0, cut), index, 1) == rank1);
  }
}

TEST_CASE("ranks.idx: not an index, or one cut short, gives what it covers", "[rank_index]") {
  const Labelled rec = labelled(k_lines);
  CHECK(indexed_rank_output(rec.log, "0: hello\n", 0).empty());  // ranks.log's format
  CHECK(indexed_rank_output(rec.log, "", 0).empty());
  const std::string first_two = rec.index.substr(0, k_rank_index_header.size() + 6);
  CHECK(indexed_rank_output(rec.log, first_two, 0) == "hello\n");
  CHECK(indexed_rank_output(rec.log, std::string(k_rank_index_header) + "\xff\xff", 0).empty());
}
