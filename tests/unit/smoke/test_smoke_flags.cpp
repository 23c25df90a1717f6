#include <CLI/CLI.hpp>

#include "ezpz/core/error.hpp"
#include "ezpz/smoke/smoke_flags.hpp"
#include "tests/catch.hpp"

using namespace ezpz;
using Words = std::vector<std::string>;

namespace {

std::string parse_error(const Words& words) {
  try {
    smoke::parse_flags(words);
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::usage);
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("ezpz test checks the trainer's flags as the trainer would", "[smoke_flags]") {
  smoke::SmokeOptions debug = smoke::parse_flags({"--model", "debug", "--iters", "8"});
  CHECK(debug.layers == std::vector<int>{128, 64});  // the preset's
  CHECK(debug.batch_size == 16);
  CHECK(debug.iters == 8);  // given, so the preset's 20 does not apply
  CHECK(smoke::parse_flags({"--layers=32,16", "--output-dir", "/o"}).layers ==
        std::vector<int>{32, 16});
  CHECK(smoke::parse_flags({}).output_dir.empty());
}

TEST_CASE("a bad trainer flag is one line, word for word", "[smoke_flags]") {
  CHECK(parse_error({"--model", "huge"}) ==
        "--model huge: unknown preset; expected one of debug, s, m, l, xl");
  CHECK(parse_error({"--iters", "3"}) ==
        "--iters 3: must exceed --warmup 5 by at least 2 (the loss check compares steps after "
        "warm-up)");
  CHECK(parse_error({"--dtype", "fp8", "--lr", "0"}) ==
        "--lr 0: expected a positive number; --dtype fp8: unknown dtype; expected fp32 or bf16");
  CHECK(parse_error({"--bogus", "1"}) ==
        "--bogus: not a trainer flag (ezpz test --help lists them)");
  CHECK(parse_error({"stray"}) == "stray: not a trainer flag (ezpz test --help lists them)");
  // --probe prints and exits: never what `ezpz test` runs.
  CHECK(parse_error({"--probe"}) == "--probe: not a trainer flag (ezpz test --help lists them)");
  CHECK(parse_error({"--iters", "many"}) == "--iters: expected an integer, got \"many\"");
  CHECK(parse_error({"--lr", "fast"}) == "--lr: expected a number, got \"fast\"");
  CHECK(parse_error({"--seed", "x"}) == "--seed: expected a non-negative integer, got \"x\"");
  CHECK(parse_error({"--layers", "64,x"}) ==
        "--layers: expected integers, e.g. 512,256,128, got \"x\"");
  CHECK(parse_error({"--bucket-mb", "-1", "--sweep-max-mb", "0"}) ==
        "--bucket-mb -1: expected 0 or more; --sweep-max-mb 0: expected a positive number");
  CHECK(parse_error({"--collectives-only", "--no-collectives"}) ==
        "--collectives-only and --no-collectives: choose one");
}

TEST_CASE("the bucket size and the collectives sweep are trainer flags", "[smoke_flags]") {
  smoke::SmokeOptions defaults = smoke::parse_flags({});
  CHECK(defaults.bucket_mb == 25);
  CHECK_FALSE(defaults.collectives_only);
  CHECK_FALSE(defaults.no_collectives);
  CHECK(defaults.sweep_max_mb == 4);
  smoke::SmokeOptions given =
      smoke::parse_flags({"--bucket-mb", "0", "--collectives-only", "--sweep-max-mb", "0.25"});
  CHECK(given.bucket_mb == 0);
  CHECK(given.collectives_only);
  CHECK(given.sweep_max_mb == 0.25);
}

TEST_CASE("--hang-rank is a test-only trainer flag, off by default", "[smoke_flags]") {
  CHECK(smoke::SmokeOptions{}.hang_rank == -1);
  CHECK(smoke::parse_flags({"--hang-rank", "1"}).hang_rank == 1);
}

TEST_CASE("the flags given on ezpz test's command line go to the trainer as words",
          "[smoke_flags]") {
  smoke::SmokeOptions options;
  CLI::App app;
  smoke::declare_flags(app, options, smoke::FlagSet::ezpz_test, "Trainer");
  app.add_option("-n", options.input_size);  // an ezpz option: not the trainer's
  app.parse("-n 2 --layers 64,32 --model debug --perturb-rank 1", false);
  CHECK(smoke::given_flag_words(app) ==
        Words{"--model", "debug", "--layers", "64,32", "--perturb-rank", "1"});
  CHECK(app.get_option_no_throw("--probe") == nullptr);
}
