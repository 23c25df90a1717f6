#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "ezpz/output/console.hpp"
#include "tests/support/dedup_lines.hpp"

using namespace ezpz::output;
using ezpz::output::Millis;

TEST_CASE("--output: each mode by its name, and the defaults", "[console]") {
  for (const ConsoleModeRow& row : k_console_modes) {
    CHECK(console_mode_named(row.name) == row.mode);
    CHECK(console_mode_name(row.mode) == row.name);
  }
  CHECK_FALSE(console_mode_named("labels").has_value());
  CHECK(default_console_mode(true) == ConsoleMode::dedup);
  CHECK(default_console_mode(false) == ConsoleMode::label);
}

TEST_CASE("rank ranges in hostlist form", "[console]") {
  struct Row {
    std::vector<long> ranks;
    std::string text;
  };
  const std::vector<Row> rows = {
      {{}, ""},
      {{3}, "3"},
      {{0, 1}, "0-1"},
      {{0, 1, 2, 3, 7, 9, 10}, "0-3,7,9-10"},
      {{10, 9, 7, 3, 2, 1, 0}, "0-3,7,9-10"},  // in any order
      {{5, 5, 6, 5}, "5-6"},                   // duplicates once
      {{5, 5}, "5"},
      {{7, 4, 5, 7, 4, 5}, "4-5,7"},
      {{0, 2, 4}, "0,2,4"},
  };
  for (const Row& row : rows) {
    INFO("row " << (&row - rows.data()));
    CHECK(rank_ranges(row.ranks) == row.text);
  }
  std::vector<long> many;
  for (long r = 0; r < 4096; ++r) {
    if (r < 1024 || r >= 2048) many.push_back(r);
  }
  CHECK(rank_ranges(many) == "0-1023,2048-4095");
}

TEST_CASE("a group's rank list: inline, then in the buffer it is given", "[console]") {
  RankList list;
  for (long rank = 0; rank < static_cast<long>(RankList::k_inline); ++rank) {
    CHECK_FALSE(list.full());
    list.push_back(10 - rank);
  }
  CHECK(list.full());
  CHECK(list.buffer_bytes() == 0);  // no heap block so far
  std::vector<long> spare;
  spare.reserve(64);
  spare.push_back(99);  // a shown group's: emptied when given
  list.spill(std::move(spare));
  CHECK_FALSE(list.full());
  list.push_back(3);
  CHECK(list.size() == RankList::k_inline + 1);
  CHECK(list.front() == 10);
  const std::span<long> ranks = list.ranks();
  CHECK(std::vector<long>(ranks.begin(), ranks.end()) == std::vector<long>{10, 9, 8, 7, 3});
  CHECK(list.buffer_bytes() == 64 * sizeof(long));  // the spare's own capacity, kept
  RankList unspilled;                               // no buffer given: it makes its own
  for (long rank = 0; rank < 6; ++rank) unspilled.push_back(rank);
  const std::span<long> all = unspilled.ranks();
  CHECK(std::vector<long>(all.begin(), all.end()) == std::vector<long>{0, 1, 2, 3, 4, 5});
}

TEST_CASE("rank ranges read back: whether a list holds a rank", "[console]") {
  struct Row {
    std::string ranges;
    long rank;
    bool holds;
  };
  const std::vector<Row> rows = {
      {"3", 3, true},           {"3", 4, false},          {"0-3,7,9-10", 0, true},
      {"0-3,7,9-10", 3, true},  {"0-3,7,9-10", 7, true},  {"0-3,7,9-10", 10, true},
      {"0-3,7,9-10", 4, false}, {"0-3,7,9-10", 8, false}, {"0-1023,2048-4095", 3000, true},
      {"", 0, false},           {"3-", 3, false},         {"-3", 3, false},
      {"3-1", 2, false},        {"3,", 3, false},         {",3", 3, false},
      {"3 ", 3, false},         {"a", 0, false},          {"+3", 3, false},
      {"1-+3", 2, false},       {"0-3", -1, false},
  };
  for (const Row& row : rows) {
    INFO(row.ranges << " " << row.rank);
    CHECK(ranges_hold(row.ranges, row.rank) == row.holds);
  }
}

namespace {

struct Line {
  long rank;
  std::string text;
  long at_ms;
};

// Feeds `lines` in order (each at its time, ticking first) and then ends the stream.
std::string shown(ConsoleMode mode, const std::vector<Line>& lines, DedupLimits limits = {}) {
  Console console(mode, limits);
  std::string out;
  for (const Line& l : lines) {
    console.tick(Millis(l.at_ms), out);
    console.line({.rank = l.rank, .text = l.text, .complete = true}, Millis(l.at_ms), out);
  }
  console.finish(out);
  return out;
}

}  // namespace

TEST_CASE("console modes: label, rank0, and the launcher's own lines as they came", "[console]") {
  const std::vector<Line> lines = {{0, "hello", 0},
                                   {1, "hello", 0},
                                   {-1, "srun: error: node1: task 1: Exited", 1},
                                   {1, "bye", 2}};
  CHECK(shown(ConsoleMode::label, lines) ==
        "[0] hello\n[1] hello\nsrun: error: node1: task 1: Exited\n[1] bye\n");
  CHECK(shown(ConsoleMode::rank0, lines) == "hello\nsrun: error: node1: task 1: Exited\n");
  CHECK(shown(ConsoleMode::dedup, lines) ==
        "[0-1] hello\nsrun: error: node1: task 1: Exited\n[1] bye\n");
}

TEST_CASE("dedup: the window in time, from the first copy", "[console]") {
  struct Row {
    std::vector<Line> lines;
    std::string out;
  };
  const std::vector<Row> rows = {
      // all copies inside the window: once
      {{{0, "a", 0}, {2, "a", 50}, {1, "a", 149}}, "[0-2] a\n"},
      // a copy after the window: the first is shown before it
      {{{0, "a", 0}, {1, "a", 150}}, "[0] a\n[1] a\n"},
      // lines unique to some ranks with their ranks; the first copy's order across texts
      {{{0, "a", 0}, {1, "a", 10}, {1, "b", 20}, {3, "a", 30}}, "[0-1,3] a\n[1] b\n"},
      // the same rank twice: two lines, never one
      {{{0, "a", 0}, {0, "a", 1}}, "[0] a\n[0] a\n"},
      // a line each rank repeats, one rank's copies all before the other's (as a 64 KiB read
      // brings them): each copy of rank 1 joins rank 0's next, not only its newest
      {{{0, "a", 0}, {0, "a", 1}, {0, "a", 2}, {1, "a", 3}, {1, "a", 4}, {1, "a", 5}},
       "[0-1] a\n[0-1] a\n[0-1] a\n"},
      // ... and past a line of its own in between, the first copy after it
      {{{0, "a", 0}, {0, "b", 1}, {0, "a", 2}, {1, "a", 3}, {1, "a", 4}},
       "[0-1] a\n[0] b\n[0-1] a\n"},
      {{{0, "a", 0}, {0, "b", 1}, {0, "a", 2}, {1, "b", 3}, {1, "a", 4}},
       "[0] a\n[0-1] b\n[0-1] a\n"},
  };
  for (const Row& row : rows) {
    INFO("row " << (&row - rows.data()));
    CHECK(shown(ConsoleMode::dedup, row.lines) == row.out);
  }
}

// 300 copies of one text wait at once (their queue is compacted as they leave); then the bound
// shows the oldest while copies still come.
TEST_CASE("dedup: many copies of one text, each joined in turn", "[console]") {
  std::vector<Line> lines;
  for (long rank : {0, 1}) {
    for (int i = 0; i < 300; ++i) lines.push_back({rank, "a", 0});
  }
  std::string all;
  for (int i = 0; i < 300; ++i) all += "[0-1] a\n";
  CHECK(shown(ConsoleMode::dedup, lines) == all);
  std::string bounded;
  for (int i = 0; i < 200; ++i) bounded += "[0] a\n";
  for (int i = 0; i < 100; ++i) bounded += "[0-1] a\n";
  for (int i = 0; i < 200; ++i) bounded += "[1] a\n";
  CHECK(shown(ConsoleMode::dedup, lines, {.max_lines = 100}) == bounded);
}

TEST_CASE("dedup: a silent rank never holds the console back", "[console]") {
  Console console(ConsoleMode::dedup, {.window = Millis(100)});
  std::string out;
  console.line({.rank = 0, .text = "step 1"}, Millis(0), out);
  console.line({.rank = 1, .text = "step 1"}, Millis(5), out);
  CHECK(out.empty());
  CHECK(console.due() == Millis(100));
  console.tick(Millis(99), out);
  CHECK(out.empty());
  console.tick(Millis(100), out);  // rank 2 never printed: shown anyway
  CHECK(out == "[0-1] step 1\n");
  CHECK_FALSE(console.due().has_value());
}

TEST_CASE("dedup: each rank's lines stay in its order", "[console]") {
  // Rank 1 prints b then a; rank 0's a came first. Joining rank 0's a would show rank 1's a
  // before its b: it waits as a line of its own instead.
  const std::vector<Line> lines = {{0, "a", 0}, {1, "b", 1}, {1, "a", 2}, {0, "b", 3}};
  CHECK(shown(ConsoleMode::dedup, lines) == "[0] a\n[0-1] b\n[1] a\n");
  // Synthetic: 64 ranks print 20 lines each, the ranks' lines interleaved in a scrambled order;
  // every rank's lines must come out in its order.
  std::vector<Line> many;
  for (int step = 0; step < 20; ++step) {
    for (long r = 0; r < 64; ++r) {
      const long rank = (r * 37 + step * 11) % 64;
      many.push_back({rank, "line " + std::to_string((step + rank) % 7), step});
    }
  }
  const std::string out = shown(ConsoleMode::dedup, many, {.window = Millis(3)});
  std::map<long, std::vector<std::string>> expected;
  for (const Line& l : many) expected[l.rank].push_back(l.text);
  CHECK(ezpz::testing::texts_per_rank(out) == expected);
}

TEST_CASE("dedup: past the bounds on waiting lines and bytes, the oldest are shown", "[console]") {
  // max_lines: the third distinct line pushes out the first, long before its window.
  CHECK(shown(ConsoleMode::dedup, {{0, "a", 0}, {0, "b", 0}, {1, "c", 0}, {1, "a", 0}},
              {.max_lines = 2}) == "[0] a\n[0] b\n[1] c\n[1] a\n");
  // max_bytes: a line bigger than the bound is shown at once.
  Console console(ConsoleMode::dedup, {.max_bytes = 4096});
  std::string out;
  console.line({.rank = 0, .text = "short"}, Millis(0), out);
  CHECK(out.empty());
  const std::string big(5000, 'x');
  console.line({.rank = 0, .text = big}, Millis(0), out);
  CHECK(out == "[0] short\n[0] " + big + "\n");
  CHECK(console.deduplicator().pending_bytes() == 0);
}

// A rank printing the same line over and over: the waiting copies hold the text once, and the
// groups their ranks (inline, up to RankList::k_inline; past that in a spare buffer).
TEST_CASE("dedup: copies of one text hold it once", "[console]") {
  const std::string text(1000, 'x');
  Console console(ConsoleMode::dedup);
  std::string out;
  for (int copy = 0; copy < 100; ++copy) console.line({.rank = 0, .text = text}, Millis(0), out);
  CHECK(console.deduplicator().pending_lines() == 100);
  CHECK(console.deduplicator().pending_bytes() < 2 * text.size() + 100 * 256);
  for (long rank = 1; rank < 8; ++rank) console.line({.rank = rank, .text = text}, Millis(0), out);
  console.finish(out);
  std::string expected = "[0-7] " + text + "\n";
  for (int copy = 1; copy < 100; ++copy) expected += "[0] " + text + "\n";
  CHECK(out == expected);
  CHECK(console.deduplicator().pending_bytes() == 0);
}

// The bound the README states: 4,096 ranks, each printing the same start-up lines and lines of
// its own, at once: a synthetic stream of rank records, read in 64 KiB chunks as the pump reads
// them, through the assembler into the console with the default limits. What waits never passes
// max_bytes, however many ranks print.
TEST_CASE("dedup: memory at 4,096 simulated ranks", "[console]") {
  const DedupLimits limits{};
  Console console(ConsoleMode::dedup, limits);
  std::string out;
  std::size_t peak = 0;
  Millis now(0);
  std::size_t spare_peak = 0;
  RecordAssembler assembler([&](const RankLine& line) {
    console.line(line, now, out);
    peak = std::max(peak, console.deduplicator().pending_bytes());
    spare_peak = std::max(spare_peak, console.deduplicator().spare_bytes());
  });
  for (int step = 0; step < 8; ++step) {
    std::string stream;
    for (long rank = 0; rank < 4096; ++rank) {
      stream += std::to_string(rank) + ": ";
      stream += step % 2 == 0 ? "loading checkpoint shard " + std::to_string(step)
                              : "rank " + std::to_string(rank) + ": loss 0.12345 at step " +
                                    std::to_string(step);
      stream += '\n';
    }
    now = Millis(step * 20);
    for (std::size_t at = 0; at < stream.size(); at += 64 * 1024) {
      assembler.feed(std::string_view(stream).substr(at, 64 * 1024));
    }
  }
  assembler.finish();
  console.finish(out);
  std::size_t shown_lines = 0;
  for (char c : out) shown_lines += c == '\n';
  CHECK(peak <= limits.max_bytes);
  CHECK(spare_peak > 0);                             // the shown lines' buffers are kept...
  CHECK(spare_peak <= Deduplicator::k_spare_bytes);  // ...within their bound
  CHECK(out.find("[0-4095] loading checkpoint shard 0\n") != std::string::npos);
  CHECK(shown_lines == 4 + 4 * 4096);
  WARN("dedup at 4096 ranks: peak waiting " << peak << " bytes (bound " << limits.max_bytes
                                            << "), spare buffers " << spare_peak << " (bound "
                                            << Deduplicator::k_spare_bytes << ")");
}
