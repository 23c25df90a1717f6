// lib/ezpz/sys/run_records.cpp against real directories, locks and processes:
// ids that stay unique when a launch finds its first choice taken, and the lock
// that tells a live run from a lost one.
#include "ezpz/sys/run_records.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "ezpz/error.hpp"
#include "ezpz/sys/world.hpp"
#include "tests/catch.hpp"
#include "tests/support/files.hpp"

namespace fs = std::filesystem;
using ezpz::RunState;
using ezpz::RunSummary;
using ezpz::sys::lock_held;
using ezpz::sys::RunRecorder;
using ezpz::testing::TempDir;

namespace {

constexpr const char* k_base = "20261122-095931-n01-1";

// A run.json with no exit code yet, launched on `host`.
void write_open_summary(const std::string& run_dir, const std::string& id,
                        const std::string& host) {
  RunSummary r;
  r.id = id;
  r.launched_on = host;
  std::ofstream(run_dir + "/run.json") << ezpz::summary_json(r);
}

}  // namespace

TEST_CASE("a launch whose run id is taken creates the next choice, never shares a record",
          "[records]") {
  TempDir dir;
  const std::string runs = dir / "runs";
  fs::create_directories(runs + "/" + k_base);  // another launch, same second, same pid
  fs::create_directories(runs + "/" + k_base + "-2");
  RunRecorder recorder(runs, k_base);
  CHECK(recorder.id() == std::string(k_base) + "-3");
  CHECK(recorder.directory() == runs + "/" + k_base + "-3");
  CHECK((fs::status(recorder.directory()).permissions() & fs::perms::all) == fs::perms(0700));
  CHECK(fs::is_empty(runs + "/" + k_base));  // the first launch's record is left alone

  RunRecorder free(runs, "20261122-095932-n01-1");
  CHECK(free.id() == "20261122-095932-n01-1");
}

TEST_CASE("a launch gives up after a bounded number of taken ids, naming the record", "[records]") {
  TempDir dir;
  const std::string runs = dir / "runs";
  fs::create_directories(runs + "/" + k_base);
  for (int n = 2; n <= 100; ++n)
    fs::create_directories(runs + "/" + k_base + "-" + std::to_string(n));
  CHECK_THROWS_WITH(RunRecorder(runs, k_base),
                    runs + "/" + k_base +
                        ": cannot create the run record: it exists, and so do -2 to -100 after it");
}

TEST_CASE("the run's lock is held while its recorder lives, and only then", "[records]") {
  TempDir dir;
  CHECK(lock_held(dir / "nothing") == std::nullopt);
  std::optional<RunRecorder> recorder(std::in_place, dir / "runs", k_base);
  const std::string run_dir = recorder->directory();
  CHECK(lock_held(run_dir) == true);
  CHECK(lock_held(run_dir) == true);  // probing takes nothing away
  std::optional<RunRecorder> moved(std::move(*recorder));
  recorder.reset();
  CHECK(lock_held(run_dir) == true);  // the lock went with the move
  moved.reset();
  CHECK(lock_held(run_dir) == false);
}

TEST_CASE("the lock is not inherited by the processes the run starts", "[records]") {
  TempDir dir;
  std::optional<RunRecorder> recorder(std::in_place, dir / "runs", k_base);
  const std::string run_dir = recorder->directory();
  pid_t child = 0;
  char sleep_path[] = "/bin/sleep", seconds[] = "30";
  char* argv[] = {sleep_path, seconds, nullptr};
  REQUIRE(::posix_spawn(&child, sleep_path, nullptr, nullptr, argv, environ) == 0);
  recorder.reset();  // ezpz gone, its rank still running: the run is lost, not running
  CHECK(lock_held(run_dir) == false);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}

TEST_CASE("read_run tells a running run from a lost one, on this host only", "[records]") {
  TempDir dir;
  std::optional<RunRecorder> recorder(std::in_place, dir / "runs", k_base);
  const std::string run_dir = recorder->directory();
  write_open_summary(run_dir, k_base, ezpz::sys::hostname());
  CHECK(ezpz::sys::read_run(run_dir).state == RunState::running);
  CHECK(ezpz::sys::list_runs(dir / "runs").at(0).state == RunState::running);
  recorder.reset();
  CHECK(ezpz::sys::read_run(run_dir).state == RunState::lost);
  write_open_summary(run_dir, k_base, ezpz::sys::hostname() + "-elsewhere");
  CHECK(ezpz::sys::read_run(run_dir).state == RunState::elsewhere);
  fs::remove(run_dir + "/lock");
  write_open_summary(run_dir, k_base, ezpz::sys::hostname());
  CHECK(ezpz::sys::read_run(run_dir).state == RunState::unknown);
}

TEST_CASE("find_run takes the whole id or a unique start of it", "[records]") {
  TempDir dir;
  const std::string runs = dir / "runs";
  fs::create_directories(runs + "/" + k_base);
  fs::create_directories(runs + "/" + k_base + "-2");
  CHECK(ezpz::sys::find_run(runs, k_base) == runs + "/" + k_base);
  CHECK(ezpz::sys::find_run(runs, std::string(k_base) + "-") == runs + "/" + k_base + "-2");
  CHECK_THROWS_WITH(ezpz::sys::find_run(runs, "20261122"),
                    "runs: 20261122 matches 2 runs in " + runs + "; give more of the id");
  CHECK_THROWS_WITH(ezpz::sys::find_run(runs, "2025"), "runs: no run 2025 in " + runs);
}
