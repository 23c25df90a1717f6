// sys::ProcessExecutor through the seam the attempt loop uses (supervise/executor.hpp): each
// attempt of a run records its output in its own file, told before it runs.
#include <chrono>
#include <cstdlib>

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
