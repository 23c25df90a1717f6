#include "ezpz/smoke/smoke_test.hpp"
#include "tests/catch.hpp"

using namespace ezpz;

TEST_CASE("the trainer gets the default output dir unless the user chose one", "[smoke_test]") {
  using Words = std::vector<std::string>;
  SmokeCommand plain = smoke_command("/b/ezpz-smoke", {"--model", "debug"}, "/o/t1");
  CHECK(plain.argv == Words{"/b/ezpz-smoke", "--model", "debug", "--output-dir", "/o/t1"});
  CHECK(plain.output_dir == "/o/t1");
  SmokeCommand chosen = smoke_command("/b/ezpz-smoke", {"--output-dir", "/mine"}, "/o/t1");
  CHECK(chosen.argv == Words{"/b/ezpz-smoke", "--output-dir", "/mine"});
  CHECK(chosen.output_dir == "/mine");
  CHECK(smoke_command("s", {"--output-dir=/eq"}, "/o").output_dir == "/eq");
  // The user's directory equal to the default is still said once.
  CHECK(smoke_command("s", {"--output-dir", "/o"}, "/o").argv == Words{"s", "--output-dir", "/o"});
}

TEST_CASE("the verdict is PASS only when the summary passed and the launch exited 0",
          "[smoke_test]") {
  const std::string passed =
      R"({"status":"pass","world_size":2,"samples_per_s":51234.4,"final_loss":0.01234,)"
      R"("report":"/o/report.md"})";
  Verdict ok = judge_smoke_run(passed, 0, "/o");
  CHECK(ok.passed);
  CHECK(ok.line ==
        "ezpz test: PASS: 2 ranks, 51234 samples/s, final loss 0.01234, report /o/report.md");
  CHECK(judge_smoke_run(passed, 1, "/o").line ==
        "ezpz test: FAIL: the trainer passed its checks but the launch exited 1");
  CHECK(judge_smoke_run(passed, 1, "/o",
                        "application_error: exit status 1: rank 3 on n02: "
                        "exited with code 1")
            .line ==
        "ezpz test: FAIL: the trainer passed its checks but the launch exited 1 (the "
        "run: application_error: exit status 1: rank 3 on n02: exited with code 1)");
}

TEST_CASE("every failing run names why", "[smoke_test]") {
  const std::string diverged =
      R"({"status":"fail","reason":"parameters differ across ranks","report":"/o/report.md"})";
  CHECK(judge_smoke_run(diverged, 1, "/o").line ==
        "ezpz test: FAIL: parameters differ across ranks (trainer exit 1; report /o/report.md)");
  CHECK(judge_smoke_run(std::nullopt, 137, "/o").line ==
        "ezpz test: FAIL: the trainer exited 137 without writing /o/summary.json");
  // A rank dead at start: what the launch saw of it, as the attempt line says it.
  const std::string ended =
      "bad_node: exit status 11: rank 1 (pid 7304) on n02: killed by signal 11 (SIGSEGV)";
  CHECK(judge_smoke_run(std::nullopt, 139, "/o", ended).line ==
        "ezpz test: FAIL: the trainer exited 139 without writing /o/summary.json (the run: " +
            ended + ")");
  // The trainer's own reason is the verdict's; the launch's is not added to it.
  CHECK(judge_smoke_run(diverged, 1, "/o", ended).line ==
        "ezpz test: FAIL: parameters differ across ranks (trainer exit 1; report /o/report.md)");
  CHECK(judge_smoke_run(std::string("{trunc"), 0, "/o").line ==
        "ezpz test: FAIL: /o/summary.json is not a JSON object (trainer exit 0)");
  CHECK_FALSE(
      judge_smoke_run(std::string(R"({"status":"pass","world_size":"x"})"), 0, "/o").passed);
}

TEST_CASE("outputs default to outputs/ezpz-test/<local timestamp>", "[smoke_test]") {
  std::string dir = smoke_output_dir(std::time(nullptr));
  REQUIRE(dir.size() == std::string("outputs/ezpz-test/2026-11-22-031852").size());
  CHECK(dir.rfind("outputs/ezpz-test/20", 0) == 0);
  CHECK(dir[22] == '-');
  CHECK(dir[25] == '-');
  CHECK(dir[28] == '-');
}

TEST_CASE("one rank is a rank in the verdict", "[smoke_test]") {
  const std::string passed =
      R"({"status":"pass","world_size":1,"samples_per_s":100.0,"final_loss":0.5,"report":"/o/r.md"})";
  CHECK(judge_smoke_run(passed, 0, "/o").line ==
        "ezpz test: PASS: 1 rank, 100 samples/s, final loss 0.5, report /o/r.md");
}

TEST_CASE("a collectives-only run's verdict gives the all-reduce bandwidth", "[smoke_test]") {
  const std::string passed =
      R"({"status":"pass","world_size":2,"trained":false,"report":"/o/r.md",)"
      R"("collectives":{"all_reduce":{"peak_busbw_gbs":1.25}}})";
  CHECK(judge_smoke_run(passed, 0, "/o").line ==
        "ezpz test: PASS: 2 ranks, collectives only, all_reduce peak bus bandwidth 1.250 GB/s, "
        "report /o/r.md");
}
