// NodeEffects::stop_leftovers against real processes: a run's process that left the launcher's
// group is found among ezpz's adopted descendants after a clean exit, and on the whole node
// after a failed one. No mocks.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "ezpz/sys/executor.hpp"
#include "ezpz/sys/processes.hpp"
#include "ezpz/sys/run_effects.hpp"
#include "tests/catch.hpp"
#include "tests/support/files.hpp"

using ezpz::Env;
using ezpz::LaunchPlan;
using ezpz::testing::read_text_file;
using ezpz::testing::TempDir;
using namespace std::chrono_literals;

namespace {

std::string unique_run_id(const char* what) {
  return fmt::format("ezpz-test-{}-{}", what, ::getpid());
}

// Runs a launcher that leaves `sleep 30` behind in a session of its own, tagged with `run_id`,
// and returns the sleep's pid. The launcher waits until the sleep has left its group, or the
// executor's kill of that group would stop it first.
int leave_orphan(const std::string& run_id, const TempDir& dir) {
  const std::string pid_file = dir.file("orphan.pid");
  const char* path = std::getenv("PATH");
  ezpz::sys::ProcessExecutor executor(Env{{"PATH", path != nullptr ? path : "/usr/bin:/bin"}});
  const std::string script =
      R"(setsid sh -c 'echo $$ > "$1"; exec sleep 30' sh "$1" </dev/null >/dev/null 2>&1 &
         while [ ! -s "$1" ]; do sleep 0.01; done)";
  const LaunchPlan plan{.argv = {"sh", "-c", script, "sh", pid_file},
                        .env = {{"EZPZ_RUN_ID", run_id}},
                        .files = {},
                        .relay_stdin = false};
  REQUIRE(executor.run(plan) == 0);
  return std::stoi(read_text_file(pid_file));
}

// Gone and reaped: not even a zombie is left (with `zombie_ok`, a zombie whose reaping is up to
// a parent other than this process counts as gone).
bool gone(int pid, bool zombie_ok = false) {
  for (int i = 0; i < 100; ++i) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    const std::string stat = read_text_file(fmt::format("/proc/{}/stat", pid));
    if (zombie_ok && stat.find(") Z") != std::string::npos) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

}  // namespace

TEST_CASE("after a clean exit, the run's orphan is adopted, stopped and reaped", "[leftovers]") {
  TempDir dir;
  const std::string run_id = unique_run_id("adopted");
  ezpz::sys::NodeEffects effects(run_id);
  const int orphan = leave_orphan(run_id, dir);
  const std::optional<std::vector<int>> descendants = ezpz::sys::descendants_of_self();
  REQUIRE(descendants);
  CHECK(std::count(descendants->begin(), descendants->end(), orphan) == 1);
  CHECK(effects.stop_leftovers(false) ==
        std::vector<std::string>{fmt::format("{} sleep 30", orphan)});
  CHECK(gone(orphan));
}

TEST_CASE("a run's process outside ezpz's descendants is stopped only after a failed attempt",
          "[leftovers]") {
  TempDir dir;
  const std::string run_id = unique_run_id("elsewhere");
  ezpz::sys::NodeEffects effects(run_id);
  // Not ezpz's to adopt: orphaned while this process is no subreaper, it goes to another parent,
  // as a rank under a scheduler's daemon would be.
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  const int elsewhere = leave_orphan(run_id, dir);
  ezpz::sys::adopt_orphans();
  CHECK(effects.stop_leftovers(false).empty());
  CHECK(::kill(elsewhere, 0) == 0);
  CHECK(effects.stop_leftovers(true) ==
        std::vector<std::string>{fmt::format("{} sleep 30", elsewhere)});
  CHECK(gone(elsewhere, true));
}
