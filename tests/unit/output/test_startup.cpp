// lib/ezpz/output/stamp_line.hpp and startup.hpp: the ranks' start-up stamps, from the line a
// program prints to the table `ezpz runs show` prints.
#include <nlohmann/json.hpp>

#include "tests/catch.hpp"

#include "ezpz/output/rank_records.hpp"
#include "ezpz/output/startup.hpp"

using ezpz::output::control_record;
using ezpz::output::has_stamp_prefix;
using ezpz::output::parse_stamp_line;
using ezpz::output::program_stamp_text;
using ezpz::output::read_stamp;
using ezpz::output::RecordEncoder;
using ezpz::output::Stamp;
using ezpz::output::stamp_text;
using ezpz::output::stamps_from_json;
using ezpz::output::startup_json;
using ezpz::output::startup_table;
using ezpz::output::summarize;

namespace {
constexpr std::int64_t k_start = 1'700'000'000'000'000'000;  // ezpz's start, ns
constexpr std::int64_t k_second = 1'000'000'000;
}  // namespace

TEST_CASE("stamp lines: the two documented forms", "[startup]") {
  const auto bare = parse_stamp_line("EZPZ_STAMP import_torch");
  REQUIRE(bare);
  CHECK(bare->phase == "import_torch");
  CHECK_FALSE(bare->unix_ns);
  const auto timed = parse_stamp_line("EZPZ_STAMP first_step 1700000000.25");
  REQUIRE(timed);
  CHECK(timed->phase == "first_step");
  CHECK(timed->unix_ns == 1'700'000'000'250'000'000);
  CHECK(parse_stamp_line("EZPZ_STAMP a 1700000000")->unix_ns == 1'700'000'000'000'000'000);
  CHECK(parse_stamp_line("EZPZ_STAMP a 1700000000.1234567891")->unix_ns ==
        1'700'000'000'123'456'789);
  CHECK(parse_stamp_line("EZPZ_STAMP process_group\r"));  // a "\r\n" line end
}

TEST_CASE("stamp lines: anything else is not a stamp, and stays in the output", "[startup]") {
  for (const char* line : {"EZPZ_STAMP",
                           "EZPZ_STAMP ",
                           "EZPZ_STAMP Import_Torch",
                           "EZPZ_STAMP import-torch",
                           "EZPZ_STAMP a b",
                           "EZPZ_STAMP a 12x",
                           "EZPZ_STAMP a -1",
                           "EZPZ_STAMP a nan",
                           "EZPZ_STAMP a 1.",
                           "EZPZ_STAMP a .5",
                           "EZPZ_STAMP a 1e9",
                           "EZPZ_STAMP a 1.2.3",
                           "EZPZ_STAMP a +1",
                           "EZPZ_STAMP a 0",
                           "EZPZ_STAMP a 1 2",
                           "EZPZ_STAMP  a",
                           "ezpz_stamp a",
                           " EZPZ_STAMP a",
                           "EZPZ_STAMP abcdefghijabcdefghijabcdefghijabc",
                           "loss 0.5"}) {
    INFO(line);
    CHECK_FALSE(parse_stamp_line(line));
  }
  CHECK(parse_stamp_line("EZPZ_STAMP abcdefghijabcdefghijabcdefghijab"));  // 32: the most
}

TEST_CASE("stamp lines: as a control record's text, the line's time or now", "[startup]") {
  CHECK(program_stamp_text("EZPZ_STAMP first_step 1700000000.25", 7) ==
        "first_step 1700000000250000000");
  CHECK(program_stamp_text("EZPZ_STAMP import_torch", 7) == "import_torch 7");
  CHECK_FALSE(program_stamp_text("EZPZ_STAMP a b", 7));
  CHECK_FALSE(program_stamp_text("loss 0.5", 7));
  // The prefix alone: the cheap first test on every line, true of some lines that are no stamp.
  CHECK(has_stamp_prefix("EZPZ_STAMP a b"));
  CHECK(has_stamp_prefix("EZPZ_STAMP "));
  for (const char* line : {"", "E", "EZPZ_STAMP", "EZPZ_STAMPa", " EZPZ_STAMP a", "loss"}) {
    INFO(line);
    CHECK_FALSE(has_stamp_prefix(line));
  }
}

TEST_CASE("stamps: measured from ezpz's start, clamped to when ezpz read them", "[startup]") {
  const auto exec =
      read_stamp(3, stamp_text("exec", k_start + k_second / 4, "n01"), k_start, k_start + k_second);
  CHECK(exec == Stamp{.rank = 3, .phase = "exec", .at_s = 0.25, .host = "n01"});
  // A node whose clock runs ahead: never after ezpz heard of it; behind: never before the start.
  CHECK(read_stamp(1, stamp_text("exec", k_start + 5 * k_second, ""), k_start, k_start + k_second)
            ->at_s == 1.0);
  CHECK(read_stamp(1, stamp_text("exec", k_start - k_second, ""), k_start, k_start + k_second)
            ->at_s == 0.0);
  for (const char* text : {"", "exec", "exec x", "Exec 5", "exec 5 n01 extra", "exec 5.5"}) {
    INFO(text);
    CHECK_FALSE(read_stamp(0, text, k_start, k_start));
  }
}

TEST_CASE("control records: '!' marks them, never joined with a rank's pieces", "[startup]") {
  CHECK(control_record(7, "exec 12 n01") == "7! exec 12 n01\n");
  std::vector<ezpz::output::RankLine> lines;
  std::vector<std::string> texts;
  ezpz::output::RecordAssembler assembler([&](const ezpz::output::RankLine& line) {
    lines.push_back(line);
    texts.emplace_back(line.text);
  });
  assembler.feed("7+ half \n7! first_output 12\n7: line\n3!nospace\n");
  assembler.finish();
  REQUIRE(lines.size() == 3);
  CHECK((lines[0].rank == 7 && lines[0].control && texts[0] == "first_output 12"));
  CHECK((lines[1].rank == 7 && !lines[1].control && texts[1] == "half line"));
  CHECK((lines[2].rank == -1 && !lines[2].control && texts[2] == "3!nospace"));
}

TEST_CASE("the encoder hands stamp lines over, whole lines only", "[startup]") {
  std::string out;
  std::vector<std::string> stamped;
  RecordEncoder encoder(2, [&](std::string_view record) { out.append(record); });
  encoder.take_stamps([&](std::string_view line) {
    stamped.emplace_back(line);
    return parse_stamp_line(line).has_value();
  });
  encoder.feed("a\nEZPZ_STAMP import_torch\nEZPZ_ST");
  encoder.feed("AMP first_step\nEZPZ_STAMP Bad\nEZPZ_STAMP partial");
  encoder.flush();
  CHECK(stamped == std::vector<std::string>{"EZPZ_STAMP import_torch", "EZPZ_STAMP first_step",
                                            "EZPZ_STAMP Bad"});
  CHECK(out == "2: a\n2: EZPZ_STAMP Bad\n2+ EZPZ_STAMP partial\n");
}

namespace {
// Four ranks on two hosts; rank 3 is slow to import torch.
std::vector<Stamp> four_ranks() {
  std::vector<Stamp> stamps;
  const char* hosts[] = {"n01", "n01", "n02", "n02"};
  for (long rank = 0; rank < 4; ++rank) {
    const double r = static_cast<double>(rank);
    stamps.push_back(
        {.rank = rank, .phase = "exec", .at_s = 0.010 + r / 1000, .host = hosts[rank]});
    stamps.push_back(
        {.rank = rank, .phase = "import_torch", .at_s = rank == 3 ? 9.0 : 2.0 + r, .host = ""});
    stamps.push_back({.rank = rank, .phase = "first_step", .at_s = 10.0 + r / 10, .host = ""});
  }
  stamps.push_back(
      {.rank = 0, .phase = "first_step", .at_s = 99.0, .host = ""});  // a second stamp: ignored
  return stamps;
}
}  // namespace

TEST_CASE("summaries: percentiles per phase, in the order of their medians", "[startup]") {
  const auto phases = summarize(four_ranks());
  REQUIRE(phases.size() == 3);
  CHECK(phases[0].phase == "exec");
  CHECK(phases[1].phase == "import_torch");
  CHECK((phases[1].ranks == 4 && phases[1].min == 2.0 && phases[1].p50 == 3.0 &&
         phases[1].p90 == 9.0 && phases[1].max == 9.0));
  CHECK((phases[1].slowest_rank == 3 && phases[1].slowest_host == "n02"));
  CHECK(phases[1].histogram == "###      #");
  CHECK(phases[2].max == 10.3);
}

TEST_CASE("the start-up table of `ezpz runs show`", "[startup]") {
  CHECK(startup_table({}).empty());
  CHECK(
      startup_table(four_ranks()) ==
      "start-up, seconds from the launch (4 ranks):\n"
      "  phase            ranks      min      p50      p90      max  histogram     slowest\n"
      "  exec                 4    0.010    0.011    0.013    0.013  [#  #  #  #]  rank 3 on n02\n"
      "  import_torch         4    2.000    3.000    9.000    9.000  [###      #]  rank 3 on n02\n"
      "  first_step           4   10.000   10.100   10.300   10.300  [#  #  #  #]  rank 3 on n02\n"
      "slowest to first_step: rank 3 on n02 (10.300 s), rank 2 on n02 (10.200 s), rank 1 on "
      "n01 (10.100 s)\n"
      "slowest host: n02 (10.300 s to first_step)\n");
}

TEST_CASE("the verdict's JSON holds the numbers and reads back", "[startup]") {
  const nlohmann::ordered_json json = startup_json(four_ranks());
  CHECK(json["phases"][1]["phase"] == "import_torch");
  CHECK(json["phases"][1]["p90_s"] == 9.0);
  CHECK(json["phases"][1]["slowest_host"] == "n02");
  CHECK(json["ranks"][3]["host"] == "n02");
  CHECK(json["ranks"][0]["phases"]["first_step"] == 10.0);
  CHECK(startup_table(stamps_from_json(json)) == startup_table(four_ranks()));
  CHECK(
      stamps_from_json(nlohmann::ordered_json::parse(R"({"ranks": [1, {"rank": "x"}]})")).empty());
  CHECK(stamps_from_json(nullptr).empty());
}
