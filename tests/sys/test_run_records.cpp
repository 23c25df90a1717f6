// lib/ezpz/sys/run_records.cpp against real directories: ids that stay unique
// when a launch finds its first choice taken.
#include "ezpz/sys/run_records.hpp"

#include <filesystem>
#include <string>

#include "ezpz/error.hpp"
#include "tests/catch.hpp"
#include "tests/support/files.hpp"

namespace fs = std::filesystem;
using ezpz::sys::RunRecorder;
using ezpz::testing::TempDir;

namespace {

constexpr const char* k_base = "20261122-095931-n01-1";

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
