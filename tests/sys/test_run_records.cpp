// lib/ezpz/sys/run_records.cpp against real directories, locks and processes:
// ids that stay unique when a launch finds its first choice taken, and the lock
// that tells a live run from a lost one.
#include "ezpz/sys/run_records.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "ezpz/core/error.hpp"
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
  // posix_spawn returns once the child's exec has replaced its memory, which Linux does before
  // it closes the close-on-exec descriptors: for a moment the child still shares the lock. An
  // inherited lock would be held for the child's 30 s; a closed one is free within moments.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (lock_held(run_dir) == true && std::chrono::steady_clock::now() < deadline) ::usleep(1000);
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

namespace {

// A record whose run ended (exit code 0), its lock free, written `age` ago.
void write_finished_run(const std::string& runs, const std::string& id,
                        std::chrono::seconds age = std::chrono::seconds(0),
                        std::int64_t started_ns = 0) {
  { RunRecorder made(runs, id); }  // made, locked, and released at once
  RunSummary r;
  r.id = id;
  r.started_ns = started_ns;
  r.launched_on = ezpz::sys::hostname();
  r.exit_code = 0;
  const std::string path = runs + "/" + id + "/run.json";
  std::ofstream(path) << ezpz::summary_json(r);
  fs::last_write_time(path, fs::file_time_type::clock::now() - age);
}

std::vector<std::string> names_in(const std::string& runs) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(runs)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("prune keeps the newest N records and every run still going", "[records]") {
  TempDir dir;
  const std::string runs = dir / "runs";
  for (const char* id : {"20261120-000000-n01-1", "20261121-000000-n01-1", "20261123-000000-n01-1"})
    write_finished_run(runs, id);
  // The oldest of all is still running: its ezpz holds the lock.
  std::optional<RunRecorder> running(std::in_place, runs, "20261119-000000-n01-1");
  write_open_summary(running->directory(), running->id(), ezpz::sys::hostname());
  fs::create_directories(runs + "/20261118-000000-n01-1");  // being created: no run.json yet

  ezpz::sys::PruneResult dry = ezpz::sys::prune_runs(runs, {1, std::nullopt}, true);
  CHECK(dry.removed == std::vector<std::string>{"20261121-000000-n01-1", "20261120-000000-n01-1"});
  CHECK(dry.total == 5);
  CHECK(names_in(runs).size() == 5);  // a dry run removes nothing

  ezpz::sys::PruneResult done = ezpz::sys::prune_runs(runs, {1, std::nullopt}, false);
  CHECK(done.removed == dry.removed);
  CHECK(names_in(runs) == std::vector<std::string>{"20261118-000000-n01-1", "20261119-000000-n01-1",
                                                   "20261123-000000-n01-1"});
  running.reset();  // its ezpz died without recording an end: lost, and now it may go
  CHECK(ezpz::sys::prune_runs(runs, {1, std::nullopt}, false).removed ==
        std::vector<std::string>{"20261119-000000-n01-1"});
}

// Two runs of one second whose pids wrapped: the one that started last (run.json's started_ns)
// is the one kept, as `ezpz runs` lists it first.
TEST_CASE("prune keeps the run of a second that started last, whatever its pid", "[records]") {
  TempDir dir;
  const std::string runs = dir / "runs";
  write_finished_run(runs, "20261120-000000-n01-99999", std::chrono::seconds(0), 100);
  write_finished_run(runs, "20261120-000000-n01-300", std::chrono::seconds(0), 200);
  CHECK(ezpz::sys::prune_runs(runs, {1, std::nullopt}, false).removed ==
        std::vector<std::string>{"20261120-000000-n01-99999"});
  CHECK(names_in(runs) == std::vector<std::string>{"20261120-000000-n01-300"});
}

TEST_CASE("prune --older-than removes only records that ended long enough ago", "[records]") {
  TempDir dir;
  const std::string runs = dir / "runs";
  write_finished_run(runs, "20261120-000000-n01-1", std::chrono::hours(24 * 8));
  write_finished_run(runs, "20261121-000000-n01-1", std::chrono::hours(24 * 6));
  write_finished_run(runs, "20261122-000000-n01-1", std::chrono::hours(24 * 9));
  const std::chrono::seconds week(7 * 86400);
  CHECK(ezpz::sys::prune_runs(runs, {1, week}, false).removed ==
        std::vector<std::string>{"20261120-000000-n01-1"});  // the newest is kept, old or not
  CHECK(ezpz::sys::prune_runs(runs, {std::nullopt, week}, false).removed ==
        std::vector<std::string>{"20261122-000000-n01-1"});
  CHECK(names_in(runs) == std::vector<std::string>{"20261121-000000-n01-1"});
}

TEST_CASE("the newest run, for runs show without an id", "[records]") {
  TempDir dir;
  const std::string runs = dir / "runs";
  CHECK_THROWS_WITH(ezpz::sys::newest_run(runs), "runs: no runs recorded in " + runs);
  write_finished_run(runs, "20261121-000000-n01-1");
  write_finished_run(runs, "20261122-000000-n01-1");
  CHECK(ezpz::sys::newest_run(runs) == runs + "/20261122-000000-n01-1");
  // Two more in one second, the later one's pid wrapped below the earlier's.
  write_finished_run(runs, "20261122-000001-n01-32000", std::chrono::seconds(0), 100);
  write_finished_run(runs, "20261122-000001-n01-300", std::chrono::seconds(0), 200);
  CHECK(ezpz::sys::newest_run(runs) == runs + "/20261122-000001-n01-300");
  std::vector<std::string> listed;
  for (const auto& run : ezpz::sys::list_runs(runs)) listed.push_back(run.summary.id);
  CHECK(listed == std::vector<std::string>{"20261122-000001-n01-300", "20261122-000001-n01-32000",
                                           "20261122-000000-n01-1", "20261121-000000-n01-1"});
}
