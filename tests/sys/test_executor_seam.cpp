// sys::ProcessExecutor through the seam the attempt loop uses (supervise/executor.hpp): each
// attempt of a run records its output in its own file, told before it runs.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "ezpz/supervise/executor.hpp"
#include "ezpz/sys/executor.hpp"
#include "tests/catch.hpp"
#include "tests/support/files.hpp"

using ezpz::testing::read_text_file;
using ezpz::testing::TempDir;
using namespace std::chrono_literals;

namespace {

ezpz::LaunchPlan shell(const std::string& script) {
  return {.argv = {"sh", "-c", script}, .env = {}, .files = {}};
}

ezpz::Env path_only() {
  const char* path = std::getenv("PATH");
  return {{"PATH", path != nullptr ? path : "/usr/bin:/bin"}};
}

}  // namespace

TEST_CASE("the process executor records each run's output where it was last told", "[executor]") {
  TempDir dir;
  ezpz::sys::ProcessOptions options;
  options.grace = 500ms;
  options.capture_output = true;
  ezpz::sys::ProcessExecutor process(path_only(), options);
  ezpz::Executor& executor = process;
  executor.record_output_to(dir.file("attempt-1.log"));
  CHECK(executor.run(shell("echo one >&2")) == 0);
  executor.record_output_to(dir.file("attempt-2.log"));
  const ezpz::RunOutcome second = executor.run_for_outcome(shell("echo two >&2; exit 3"));
  CHECK(second.exit_code == 3);
  CHECK(second.output_tail == "two\n");
  CHECK(read_text_file(dir.file("attempt-1.log")) == "one\n");
  CHECK(read_text_file(dir.file("attempt-2.log")) == "two\n");
  executor.record_output_to("");  // nowhere: the last file stays as it was
  CHECK(executor.run(shell("echo three >&2")) == 0);
  CHECK(read_text_file(dir.file("attempt-2.log")) == "two\n");
}

// The run record's files are written while the launcher starts (NodeEffects::write_deferred):
// the hook runs once the launcher exists, and the output's record opens only after it, so the
// hook may make its directory.
TEST_CASE("the started hook runs after the spawn, before the output's record opens", "[executor]") {
  TempDir dir;
  ezpz::sys::ProcessOptions options;
  options.capture_output = true;
  ezpz::sys::ProcessExecutor executor(path_only(), options);
  const std::string marker = dir.file("launcher-started");
  const std::string attempt = dir.file("attempt-1");
  std::vector<bool> launcher_was_there;
  executor.when_started([&] {
    // The launcher waits for this file: it can only exist if the launcher runs already.
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (!std::filesystem::exists(marker) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(5ms);
    }
    launcher_was_there.push_back(std::filesystem::exists(marker));
    std::filesystem::create_directory(attempt);
  });
  executor.record_output_to(attempt + "/output.log");
  CHECK(executor.run(shell("touch '" + marker + "'; echo hello")) == 0);
  CHECK(launcher_was_there == std::vector<bool>{true});
  CHECK(read_text_file(attempt + "/output.log") == "hello\n");
}
