#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ezpz/core/error.hpp"
#include "ezpz/supervise/run_record.hpp"
#include "tests/catch.hpp"

using namespace ezpz;

namespace {

RunSummary sample_run() {
  RunSummary r;
  r.id = "20261122-095931-n01-4242";
  r.started = "2026-11-22T09:59:31+0000";
  r.started_ns = 1795859971123456789;
  r.cwd = "/home/me/job";
  r.command = {"python3", "train.py", "--note", "it's $(fine)"};
  r.machine = "generic-pbs";
  r.scheduler = "pbs";
  r.job_id = "4242.pbs";
  r.hosts = {"n01", "n02"};
  r.spares = {"n03"};
  r.attempts = 2;
  r.exit_code = 0;
  r.ending = "success";
  r.reason = "exit status 0";
  r.launched_on = "login1";
  return r;
}

ListedRun finished(RunSummary r) {
  return {std::move(r), RunState::finished};
}

}  // namespace

TEST_CASE("a run summary reads back as written", "[record]") {
  const RunSummary run = sample_run();
  CHECK(parse_summary(summary_json(run), "run.json") == run);
  RunSummary running = run;
  running.exit_code.reset();
  CHECK(parse_summary(summary_json(running), "run.json") == running);
}

TEST_CASE("a record from before the lock, with no launched_on, still reads", "[record]") {
  auto json = nlohmann::ordered_json::parse(summary_json(sample_run()));
  json.erase("launched_on");
  RunSummary expected = sample_run();
  expected.launched_on.clear();
  CHECK(parse_summary(json.dump(), "run.json") == expected);
}

TEST_CASE("a record from before started_ns reads with 0 there", "[record]") {
  auto json = nlohmann::ordered_json::parse(summary_json(sample_run()));
  json.erase("started_ns");
  RunSummary expected = sample_run();
  expected.started_ns = 0;
  CHECK(parse_summary(json.dump(), "run.json") == expected);
}

TEST_CASE("started_ns reads alone as the whole summary reads it", "[record]") {
  const std::string text = summary_json(sample_run());
  CHECK(summary_started_ns(text) == parse_summary(text, "run.json").started_ns);
  auto moved = nlohmann::ordered_json::parse(text);
  moved.erase("started_ns");
  moved["started_ns"] = 42;  // last, not third
  CHECK(summary_started_ns(moved.dump()) == 42);
  moved.erase("started_ns");
  CHECK(summary_started_ns(moved.dump()) == 0);
}

TEST_CASE("started_ns is read without the rest: damage after it does not matter", "[record]") {
  CHECK(summary_started_ns(R"({"id": "x", "started_ns": 17, "cwd": )") == 17);
  CHECK(summary_started_ns(R"({"id": "x", "started_ns": 17 garbage)") == 17);
}

TEST_CASE("a started_ns that is not a top-level integer reads as 0", "[record]") {
  const std::vector<std::string> texts = {
      R"({"started_ns": "17"})",
      R"({"started_ns": 1.5})",
      R"({"started_ns": null})",
      R"({"started_ns": [17]})",
      R"({"started_ns": {"ns": 17}})",
      R"({"started_ns": 18446744073709551615})",
      R"({"inner": {"started_ns": 17}})",
      R"([{"started_ns": 17}])",
      R"({"id": "x", "cwd": )",
      "not json",
      "",
  };
  for (const std::string& text : texts) {
    CAPTURE(text);
    CHECK(summary_started_ns(text) == 0);
  }
}

TEST_CASE("a damaged summary is named", "[record]") {
  CHECK_THROWS_WITH(parse_summary("{\"id\": 3}", "runs/x/run.json"),
                    Catch::StartsWith("runs/x/run.json: not an ezpz run record: "));
  CHECK_THROWS_WITH(parse_summary("not json", "runs/x/run.json"),
                    Catch::StartsWith("runs/x/run.json: not an ezpz run record: "));
}

TEST_CASE("a verdict holds the ending, the failed ranks, the swaps and the timings", "[record]") {
  AttemptVerdict v;
  v.attempt = 1;
  v.hosts = {"n01", "n02"};
  v.launcher_exit = 233;
  v.exit_code = 233;
  v.watchdog = Watchdog::signature;
  v.classification = {Ending::bad_node,
                      {"n02"},
                      {{"n02", "1", "", "Killed", true}},
                      "exit status 233; bad node: n02"};
  v.swaps = {"n02 -> n03"};
  v.next = "retry on new hosts (n02 -> n03)";
  v.leftovers = {"4242 hydra_pmi_proxy --proxy-id 2"};
  v.to_spawn_s = 0.0123;
  v.total_s = 11.5;
  const auto json = nlohmann::json::parse(verdict_json(v));
  CHECK(json["attempt"] == 1);
  CHECK(json["exit_code"] == 233);
  CHECK(json["stopped_by"] == "bad_node_signature");
  CHECK(json["classification"] == "bad_node");
  CHECK(json["bad_hosts"] == nlohmann::json::array({"n02"}));
  CHECK(json["failed_ranks"][0]["ranks"] == "1");
  CHECK(json["failed_ranks"][0]["host"] == "n02");
  CHECK(json["failed_ranks"][0]["died_of_signal"] == true);
  CHECK(json["swaps"] == nlohmann::json::array({"n02 -> n03"}));
  CHECK(json["leftovers"] == nlohmann::json::array({"4242 hydra_pmi_proxy --proxy-id 2"}));
  CHECK(json["timings"]["to_spawn_s"] == 0.012);
  CHECK(json["timings"]["to_first_output_s"].is_null());
  CHECK(json["timings"]["total_s"] == 11.5);
  CHECK(json["ranks_started"].is_null());  // without rank records: not known
  v.ranks_started = 0;
  CHECK(nlohmann::json::parse(verdict_json(v))["ranks_started"] == 0);
}

// `ezpz runs explain` classifies again from what the verdict kept.
TEST_CASE("a recorded verdict gives explain its launcher status, hosts and started ranks",
          "[record]") {
  AttemptVerdict v;
  v.hosts = {"n01", "n02"};
  v.launcher_exit = 255;
  v.ranks_started = 0;
  ExplainInput in = recorded_attempt(verdict_json(v), "attempt-1/verdict.json");
  CHECK(in.exit_status == 255);
  CHECK(in.hosts == std::vector<std::string>{"n01", "n02"});
  CHECK(in.ranks_started == 0u);
  in.output = "[mpiexec@n01] HYDU_create_process: execvp error\n";
  CHECK(explain(in).classification.reason ==
        "exit status 255: the launcher failed before any rank started: [mpiexec@n01] "
        "HYDU_create_process: execvp error");
  v.ranks_started = std::nullopt;
  CHECK(!recorded_attempt(verdict_json(v), "v").ranks_started);
  // A record written before the field: not known.
  CHECK(!recorded_attempt(R"({"launcher_exit": 1, "hosts": []})", "v").ranks_started);
}

TEST_CASE("the runs table quotes commands and says where a run without an end stands", "[record]") {
  RunSummary open = sample_run();
  open.exit_code.reset();
  auto with = [&](std::string id, RunState state) {
    RunSummary r = open;
    r.id = std::move(id);
    return ListedRun{r, state};
  };
  const std::string table =
      runs_table({with("20261122-100004-n01-5", RunState::running),
                  with("20261122-100003-n01-4", RunState::lost),
                  with("20261122-100002-n01-3", RunState::elsewhere),
                  with("20261122-100001-n01-2", RunState::unknown), finished(sample_run())});
  auto line = [](std::string_view id_ending_exit) {
    return std::string(id_ending_exit) + "  python3 train.py --note 'it'\\''s $(fine)'\n";
  };
  CHECK(
      table ==
      "ID                        STARTED              ATTEMPTS  ENDING             EXIT  "
      "COMMAND\n" +
          line("20261122-100004-n01-5     2026-11-22T09:59:31         2  running               -") +
          line("20261122-100003-n01-4     2026-11-22T09:59:31         2  lost                  -") +
          line("20261122-100002-n01-3     2026-11-22T09:59:31         2  unknown               -") +
          line("20261122-100001-n01-2     2026-11-22T09:59:31         2  unknown               -") +
          line("20261122-095931-n01-4242  2026-11-22T09:59:31         2  success               0"));
  CHECK(runs_table({}) == "no runs recorded\n");
}

TEST_CASE("a run's state: its exit code, else its lock, judged only on the host it ran on",
          "[record]") {
  struct Row {
    std::optional<int> exit_code;
    std::string launched_on;
    std::optional<bool> lock_held;
    RunState state;
    bool probed;
  };
  const Row rows[] = {
      {0, "login1", std::nullopt, RunState::finished, false},
      {143, "n07", true, RunState::finished, false},
      {std::nullopt, "login1", true, RunState::running, true},
      {std::nullopt, "login1", false, RunState::lost, true},
      {std::nullopt, "login1", std::nullopt, RunState::unknown, true},
      {std::nullopt, "n07", false, RunState::elsewhere, false},
      {std::nullopt, "n07", true, RunState::elsewhere, false},
      {std::nullopt, "", false, RunState::lost, true},  // an older record that has a lock
      {std::nullopt, "", std::nullopt, RunState::unknown, true},
  };
  for (const Row& row : rows) {
    RunSummary r = sample_run();
    r.exit_code = row.exit_code;
    r.launched_on = row.launched_on;
    bool probed = false;
    auto probe = [&] {
      probed = true;
      return row.lock_held;
    };
    INFO(r.launched_on << " " << to_string(row.state));
    CHECK(run_state(r, "login1", probe) == row.state);
    CHECK(probed == row.probed);
  }
}

TEST_CASE("run details say why a run without an end is lost, running or unknown", "[record]") {
  RunSummary open = sample_run();
  open.exit_code.reset();
  open.launched_on = "n07";
  auto result_line = [&](RunState state) {
    const std::string text = run_details({open, state}, {}, "runs/x");
    const std::size_t at = text.find("  result    ");
    return text.substr(at, text.find('\n', at) - at);
  };
  CHECK(result_line(RunState::running) == "  result    still running");
  CHECK(result_line(RunState::lost) ==
        "  result    lost: ezpz ended without recording an exit (killed, or its node went down); "
        "ranks it left may still run: ezpz kill 20261122-095931-n01-4242");
  CHECK(result_line(RunState::elsewhere) ==
        "  result    unknown: launched on n07; whether it still runs can only be told there");
  CHECK(result_line(RunState::unknown) ==
        "  result    unknown: no lock to tell whether its ezpz still runs (an older ezpz's "
        "record, or a filesystem without flock)");
}

TEST_CASE("a run id is given whole or by any unique start of it", "[record]") {
  const std::vector<std::string> ids = {"20261122-095931-n01-1", "20261122-095931-n01-1-2",
                                        "20261122-100000-n01-7", "20261122-100000-n01-7"};
  CHECK(match_run_id(ids, "20261122-095931-n01-1", "runs", "in d") == "20261122-095931-n01-1");
  CHECK(match_run_id(ids, "20261122-095931-n01-1-", "runs", "in d") == "20261122-095931-n01-1-2");
  CHECK(match_run_id(ids, "20261122-1000", "kill", "on n01") == "20261122-100000-n01-7");
  CHECK(match_run_id(ids, "2025", "runs", "in d") == std::nullopt);
  CHECK(match_run_id({}, "2026", "runs", "in d") == std::nullopt);
  CHECK_THROWS_WITH(match_run_id(ids, "20261122-0959", "runs", "in .ezpz/runs"),
                    "runs: 20261122-0959 matches 2 runs in .ezpz/runs; give more of the id");
  CHECK_THROWS_WITH(match_run_id(ids, "2026", "kill", "on n01"),
                    "kill: 2026 matches 3 runs on n01; give more of the id");
}

TEST_CASE("a taken run id gives way to the next choice, which sorts after it", "[record]") {
  CHECK(run_id_choice("20261122-095931-n01-1", 1) == "20261122-095931-n01-1");
  CHECK(run_id_choice("20261122-095931-n01-1", 2) == "20261122-095931-n01-1-2");
  CHECK(run_id_choice("20261122-095931-n01-1", 17) == "20261122-095931-n01-1-17");
  CHECK(run_id_choice("20261122-095931-n01-1", 2) > "20261122-095931-n01-1");
}

TEST_CASE("runs order by when they started, not by their pids", "[record]") {
  const auto run = [](std::string id, std::int64_t started_ns) {
    RunSummary r;
    r.id = std::move(id);
    r.started_ns = started_ns;
    return r;
  };
  struct Row {
    RunSummary later, earlier;
  };
  const Row rows[] = {
      // Seconds apart: the id says it, whatever the pids and started_ns.
      {run("20261122-095932-n01-100", 5), run("20261122-095931-n01-30000", 9)},
      {run("20261122-100000-n01-1", 0), run("20261122-095959-n01-2", 0)},
      // One second: the later launch's pid wrapped below the earlier's, or is shorter.
      {run("20261122-095931-n01-300", 2'000), run("20261122-095931-n01-30000", 1'000)},
      {run("20261122-095931-n01-12", 2'000), run("20261122-095931-n01-9", 1'000)},
      // Records older than started_ns (0) fall back to the id; so do equal instants.
      {run("20261122-095931-n01-2", 0), run("20261122-095931-n01-1", 0)},
      {run("20261122-095931-n01-1-2", 7), run("20261122-095931-n01-1", 7)},
  };
  for (const Row& row : rows) {
    CAPTURE(row.later.id, row.earlier.id);
    CHECK(started_after(row.later, row.earlier));
    CHECK_FALSE(started_after(row.earlier, row.later));
    CHECK_FALSE(started_after(row.later, row.later));
  }
}

TEST_CASE("run details list each attempt from its verdict", "[record]") {
  AttemptVerdict first;
  first.attempt = 1;
  first.exit_code = 233;
  first.classification = {Ending::bad_node, {"n02"}, {}, "exit status 233; bad node: n02"};
  first.next = "retry on new hosts (n02 -> n03)";
  first.total_s = 11.46;
  AttemptVerdict second;
  second.attempt = 2;
  second.classification = {Ending::success, {}, {}, "exit status 0"};
  second.total_s = 3.2;
  const std::string text =
      run_details(finished(sample_run()), {verdict_json(first), verdict_json(second)},
                  ".ezpz/runs/20261122-095931-n01-4242");
  CHECK(
      text ==
      "run 20261122-095931-n01-4242\n"
      "  started   2026-11-22T09:59:31+0000\n"
      "  command   python3 train.py --note 'it'\\''s $(fine)'\n"
      "  directory /home/me/job\n"
      "  machine   generic-pbs (pbs, job 4242.pbs)\n"
      "  hosts     n01 n02\n"
      "  spares    n03\n"
      "  result    exit 0: success: exit status 0\n"
      "attempt 1: exit 233, bad_node: exit status 233; bad node: n02 (11.5 s); retry on new hosts "
      "(n02 -> n03)\n"
      "attempt 2: exit 0, success: exit status 0 (3.2 s)\n"
      "records in .ezpz/runs/20261122-095931-n01-4242\n");
}

// A verdict another version wrote, or one edited by hand: `ezpz runs show` ended in nlohmann's
// type_error (abort()) on a verdict without "timings" or with an attempt that was a string.
TEST_CASE("run details say what they can of a verdict with fields missing or of another type",
          "[record]") {
  const std::string text = run_details(
      finished(sample_run()),
      {R"({"attempt": 1, "exit_code": 0})", R"({"attempt": "two", "exit_code": 3, "timings": 7,
          "classification": 4, "reason": "gone", "next": null, "warning": [], "startup": 1})",
       R"(["not", "an", "object"])", "not JSON at all", R"({"timings": {"total_s": "x"}})"},
      "runs/r");
  CHECK(text.substr(text.find("attempt ")) ==
        "attempt 1: exit 0, ?:  (0.0 s)\n"
        "attempt 0: exit 3, ?: gone (0.0 s)\n"
        "attempt 0: exit 0, ?:  (0.0 s)\n"
        "records in runs/r\n");
}

// `ezpz runs explain` takes an attempt's ranks from its plan.json: before, a recorded run had
// no world size, and "a Python traceback in most ranks" never spoke.
TEST_CASE("runs explain reads an attempt's world size and ranks per host from its plan",
          "[run_record]") {
  ExplainInput in;
  read_recorded_plan(R"({"hosts": ["n01", "n02"], "ppn": 4, "world_size": 7})", "plan.json", in);
  CHECK(in.world_size == 7);
  CHECK(in.ppn == 4);
  CHECK_THROWS_WITH(read_recorded_plan("{}", "runs/x/plan.json", in),
                    "runs/x/plan.json: not a launch plan: [json.exception.out_of_range.403] key "
                    "'world_size' not found");
}

TEST_CASE("a run record's layout: attempt directories and each attempt's plan", "[run_record]") {
  CHECK(attempt_dir_name(1) == "attempt-1");
  CHECK(attempt_dir_name(12) == "attempt-12");
  CHECK(attempt_plan_file(1) == "plan.json");
  CHECK(attempt_plan_file(2) == "attempt-2/plan.json");
}
