// NodeEffects' deferred run record against a real directory: nothing reaches the disk
// before write_deferred (the launcher's start does not wait for it), everything after, in
// order; a launcher that never starts still leaves its record.
#include "ezpz/sys/run_effects.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tests/catch.hpp"
#include "tests/support/files.hpp"

namespace fs = std::filesystem;
using ezpz::testing::names_in;
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
  CHECK(ezpz::sys::lock_held(effects.directory()) == true);  // taken at open, and kept
  CHECK(read_text_file(effects.directory() + "/run.json") == "{}\n");
  CHECK(read_text_file(effects.directory() + "/attempt-1/plan.json") == "plan\n");
  effects.record("attempt-1/verdict.json", "verdict\n");  // no longer deferred
  CHECK(read_text_file(effects.directory() + "/attempt-1/verdict.json") == "verdict\n");
}

TEST_CASE("a lazily made record's text is made when it is written", "[records]") {
  TempDir dir;
  ezpz::sys::NodeEffects effects("20261129-020000-n01-1");
  effects.open_record(dir / "runs", {});
  effects.defer_records();
  int made = 0;
  effects.record_lazily("run.json", [&made] { return std::to_string(++made) + "\n"; });
  CHECK(made == 0);  // deferred: not even made, until the launcher has started
  effects.write_deferred();
  CHECK(made == 1);
  CHECK(read_text_file(effects.directory() + "/run.json") == "1\n");
  effects.record_lazily("run.json", [&made] { return std::to_string(++made) + "\n"; });
  CHECK(made == 2);  // no longer deferred: made and written at once
  CHECK(read_text_file(effects.directory() + "/run.json") == "2\n");
}

TEST_CASE("without a record, a lazily made text is never made", "[records]") {
  ezpz::sys::NodeEffects effects("20261129-020001-n01-1");
  effects.defer_records();
  int made = 0;
  effects.record_lazily("run.json", [&made] { return std::to_string(++made); });
  effects.write_deferred();
  CHECK(made == 0);
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

// Each is an inode creation, 0.3-0.5 ms on this VM's ext4 and a metadata round trip on Lustre:
// made while the launcher starts, none before it (but the run's directory, which claims the id)
// nor after it exits, when ezpz's exit waits.
TEST_CASE(
    "deferred, the lock and the next run.json and verdict.json are made at the launcher's "
    "start",
    "[records]") {
  TempDir dir;
  ezpz::sys::NodeEffects effects("20261127-020000-n01-1");
  effects.defer_records();
  effects.open_record(dir / "runs", {});
  effects.record("run.json", "{\"open\": true}\n");
  effects.output_path(1);
  const std::string run_dir = effects.directory();
  CHECK(names_in(run_dir).empty());  // not even the lock
  CHECK(ezpz::sys::lock_held(run_dir) == std::nullopt);
  effects.write_deferred();
  CHECK(ezpz::sys::lock_held(run_dir) == true);
  const std::vector<std::string> started = names_in(run_dir);
  REQUIRE(started.size() == 4);
  CHECK(started[0] == "attempt-1");
  CHECK(started[1] == "lock");
  CHECK(started[2] == "run.json");
  CHECK(started[3].starts_with("run.json."));
  const std::vector<std::string> attempt = names_in(run_dir + "/attempt-1");
  REQUIRE(attempt.size() == 1);
  CHECK(attempt[0].starts_with("verdict.json."));

  effects.record("attempt-1/verdict.json", "verdict\n");
  effects.record("run.json", "{}\n");
  CHECK(names_in(run_dir) == std::vector<std::string>{"attempt-1", "lock", "run.json"});
  CHECK(names_in(run_dir + "/attempt-1") == std::vector<std::string>{"verdict.json"});
  CHECK(read_text_file(run_dir + "/attempt-1/verdict.json") == "verdict\n");
  CHECK(read_text_file(run_dir + "/run.json") == "{}\n");
}
