// NodeEffects' deferred run record against a real directory: nothing reaches the disk
// before write_deferred (the launcher's start does not wait for it), everything after, in
// order; a launcher that never starts still leaves its record.
#include "ezpz/sys/run_effects.hpp"

#include <filesystem>
#include <string>

#include "tests/catch.hpp"
#include "tests/support/files.hpp"

namespace fs = std::filesystem;
using ezpz::testing::read_text_file;
using ezpz::testing::TempDir;

TEST_CASE("a deferred run record is written once the launcher has started", "[records]") {
  TempDir dir;
  ezpz::sys::NodeEffects effects("20261125-020000-n01-1");
  effects.open_record(dir / "runs", {});
  REQUIRE(effects.recording());
  effects.defer_records();
  effects.record("run.json", "{}\n");
  const std::string output = effects.output_path(1);
  effects.record("attempt-1/plan.json", "plan\n");
  CHECK(output == effects.directory() + "/attempt-1/output.log");
  CHECK_FALSE(fs::exists(effects.directory() + "/run.json"));
  CHECK_FALSE(fs::exists(effects.directory() + "/attempt-1"));
  effects.write_deferred();
  CHECK(read_text_file(effects.directory() + "/run.json") == "{}\n");
  CHECK(read_text_file(effects.directory() + "/attempt-1/plan.json") == "plan\n");
  effects.record("attempt-1/verdict.json", "verdict\n");  // no longer deferred
  CHECK(read_text_file(effects.directory() + "/attempt-1/verdict.json") == "verdict\n");
}

TEST_CASE("a deferred run record is written even when no launcher starts", "[records]") {
  TempDir dir;
  std::string run_dir;
  {
    ezpz::sys::NodeEffects effects("20261125-020001-n01-1");
    effects.open_record(dir / "runs", {});
    effects.defer_records();
    effects.record("run.json", "{}\n");
    run_dir = effects.directory();
    CHECK_FALSE(fs::exists(run_dir + "/run.json"));
  }
  CHECK(read_text_file(run_dir + "/run.json") == "{}\n");
}
