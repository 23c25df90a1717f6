// --signal's timer in lib/ezpz/sys/executor.cpp, against real processes and real signals.
#include "ezpz/sys/walltime_warner.hpp"

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "ezpz/sys/executor.hpp"
#include "ezpz/sys/job_end.hpp"
#include "tests/catch.hpp"
#include "tests/support/files.hpp"

using ezpz::Env;
using ezpz::LaunchPlan;
using ezpz::sys::ProcessExecutor;
using ezpz::sys::ProcessOptions;
using ezpz::testing::TempDir;
using namespace std::chrono_literals;

namespace {

Env path_env() {
  const char* path = std::getenv("PATH");
  return Env{{"PATH", path != nullptr ? path : "/usr/bin:/bin"}};
}

// A launcher that writes `file` when SIGUSR1 comes, and otherwise runs `tenths` tenths of a
// second (sleep by sleep, so a trap runs between them), with SIGTERM ignored.
LaunchPlan warned_launcher(const std::string& file, int tenths) {
  return LaunchPlan{{"sh", "-c",
                     "trap 'echo warned >\"$0\"; exit 0' USR1; trap '' TERM; i=0; "
                     "while [ $i -lt $1 ]; do sleep 0.1; i=$((i+1)); done; exit 7",
                     file, std::to_string(tenths)},
                    {},
                    {}};
}

// USR1@30 due `in` seconds from now.
ezpz::walltime::Schedule due_in(int in) {
  return {.spec = {.signal = SIGUSR1, .seconds = 30}, .end = ezpz::sys::epoch_now() + 30 + in};
}

}  // namespace

TEST_CASE("--signal reaches the launcher at its time and the outcome records it", "[warner]") {
  TempDir dir;
  ProcessExecutor executor(path_env(), ProcessOptions{.warning = due_in(1)});
  const ezpz::RunOutcome outcome = executor.run_for_outcome(warned_launcher(dir.file("w"), 50));
  CHECK(outcome.exit_code == 0);
  CHECK(outcome.warning == "warned at T-30 s with SIGUSR1 through the launcher");
  CHECK(std::filesystem::exists(dir.file("w")));
  CHECK(outcome.total < 3s);
}

TEST_CASE("--signal by the node step: the launcher is not signalled, the step is asked",
          "[warner]") {
  TempDir dir;
  ezpz::walltime::Schedule schedule = due_in(1);
  schedule.delivery = ezpz::walltime::Delivery::node_step;
  int asked = 0;
  ProcessExecutor executor(
      path_env(), ProcessOptions{.warning = schedule, .signal_ranks = [&asked](int signal) {
                                   asked = signal;
                                   return true;
                                 }});
  const ezpz::RunOutcome outcome = executor.run_for_outcome(warned_launcher(dir.file("w"), 20));
  CHECK(outcome.exit_code == 7);  // ran to its end: no SIGUSR1 reached it
  CHECK(asked == SIGUSR1);
  CHECK(outcome.warning == "warned at T-30 s with SIGUSR1 through a step on each node");
  CHECK_FALSE(std::filesystem::exists(dir.file("w")));
}

TEST_CASE("a node step that reached no rank records no warning", "[warner]") {
  TempDir dir;
  ezpz::walltime::Schedule schedule = due_in(1);
  schedule.delivery = ezpz::walltime::Delivery::node_step;
  ProcessExecutor executor(
      path_env(), ProcessOptions{.warning = schedule, .signal_ranks = [](int) { return false; }});
  const ezpz::RunOutcome outcome = executor.run_for_outcome(warned_launcher(dir.file("w"), 15));
  CHECK(outcome.exit_code == 7);
  CHECK(outcome.warning.empty());
}

TEST_CASE("a launcher already being stopped gets no warning", "[warner]") {
  TempDir dir;
  // --timeout's SIGTERM at 0.2 s (ignored), the warning due at 1 s, the launcher done at 2 s.
  ProcessExecutor executor(path_env(),
                           ProcessOptions{.grace = 5s, .timeout = 200ms, .warning = due_in(1)});
  const ezpz::RunOutcome outcome = executor.run_for_outcome(warned_launcher(dir.file("w"), 20));
  CHECK(outcome.watchdog == ezpz::Watchdog::timeout);
  CHECK(outcome.warning.empty());
  CHECK_FALSE(std::filesystem::exists(dir.file("w")));
}

TEST_CASE("an attempt that starts too late for the warning gets none", "[warner]") {
  TempDir dir;
  ProcessExecutor executor(path_env(), ProcessOptions{.warning = due_in(-5)});
  const ezpz::RunOutcome outcome = executor.run_for_outcome(warned_launcher(dir.file("w"), 5));
  CHECK(outcome.exit_code == 7);
  CHECK(outcome.warning.empty());
  CHECK_FALSE(std::filesystem::exists(dir.file("w")));
}
