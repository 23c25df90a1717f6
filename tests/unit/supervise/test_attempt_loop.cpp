// The retry and failover policy driven through a recording executor (ninja's CommandRunner
// and its fake twin): each row is what the launcher does on each attempt, and what ezpz then
// does: the hosts of each attempt, the swaps, the back-offs and the exit status.
#include <algorithm>
#include <csignal>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ezpz/launch/plan.hpp"
#include "ezpz/supervise/attempt_loop.hpp"
#include "tests/catch.hpp"

using namespace ezpz;
using Hosts = std::vector<std::string>;

namespace {

// Answers each run with the table's next outcome, and keeps what it was asked to run.
class RecordingExecutor final : public Executor {
 public:
  explicit RecordingExecutor(std::vector<RunOutcome> outcomes) : outcomes_(std::move(outcomes)) {}
  RunOutcome run_for_outcome(const LaunchPlan& plan) override {
    ran.push_back(plan);
    REQUIRE(ran.size() <= outcomes_.size());  // the loop ran more attempts than the row has
    return outcomes_[ran.size() - 1];
  }
  void record_output_to(std::string path) override { output_paths.push_back(std::move(path)); }

  std::vector<LaunchPlan> ran;
  std::vector<std::string> output_paths;

 private:
  std::vector<RunOutcome> outcomes_;
};

// The run record as files in memory; every back-off and every line kept.
class RecordingEffects final : public RunEffects {
 public:
  bool recording() const override { return true; }
  void record(const std::string& relative, const std::string& text) override {
    files[relative] = text;
  }
  std::string output_path(int attempt) override {
    return fmt::format("runs/r1/attempt-{}/output.log", attempt);
  }
  void running(const LaunchPlan&) override {}
  std::vector<std::string> stop_leftovers(bool launcher_failed) override {
    sweeps.push_back(launcher_failed);
    return leftovers;
  }
  AddressHosts hosts_at(const std::vector<std::string>& addresses,
                        const std::vector<std::string>& hosts) override {
    looked_up.push_back(addresses);
    AddressHosts found;
    for (const std::string& address : addresses) {
      auto host = addressed.find(address);
      if (host != addressed.end() && among_hosts(hosts, host->second)) found.insert(*host);
    }
    return found;
  }
  int wait(double seconds) override {
    waits.push_back(seconds);
    return signal_during_wait;
  }
  void say(const std::string& line) override { said.push_back(line); }

  nlohmann::json file(const std::string& relative) const {
    return nlohmann::json::parse(files.at(relative));
  }

  std::map<std::string, std::string> files;
  std::vector<double> waits;
  std::vector<std::string> said;
  std::vector<std::string> leftovers;
  std::vector<bool> sweeps;  // stop_leftovers' launcher_failed, attempt by attempt
  AddressHosts addressed;    // the fake resolver: address -> host
  std::vector<std::vector<std::string>> looked_up;
  int signal_during_wait = 0;
};

// What the launcher does on one attempt.
RunOutcome exited(int code, std::string output = "") {
  return {.exit_code = code, .output_tail = std::move(output)};
}
RunOutcome stopped_by(Watchdog watchdog, std::string output = "") {
  return {.exit_code = 143, .watchdog = watchdog, .output_tail = std::move(output)};
}
RunOutcome node_down(const std::string& host) {
  return exited(1, "node " + host + " is down\n");
}

// An allocation of n01..n0`allocated`, a plan on its first `nhosts`, one rank each.
PreparedLaunch prepared(int allocated, long nhosts) {
  PreparedLaunch p;
  for (int i = 1; i <= allocated; ++i) p.inputs.allocation.hosts.push_back(fmt::format("n0{}", i));
  p.inputs.allocation.job_id = "42";
  p.inputs.profile.launcher = "hydra";
  p.inputs.profile.bad_node_patterns = {{"test", R"(^node (\S+) is down$)"}};
  p.inputs.slots = {.count = 1, .source = "test", .known = true};
  p.inputs.rankenv = "ezpz-rankenv";
  p.inputs.run_dir = "/run";
  p.request.command = {"python3", "train.py"};
  p.request.topology = {.nprocs = std::nullopt, .ppn = 1, .nhosts = nhosts};
  p.planned = plan_launch(p.request, p.inputs);
  p.context = {.scheduler = "pbs", .machine = "test", .job_id = "42", .spares = {}};
  return p;
}

struct Driven {
  RecordingExecutor executor;
  RecordingEffects effects;
  SupervisedRun run;
  int exit_code = 0;
};

void drive(Driven& d, const RetryPolicy& policy, const PreparedLaunch& p) {
  d.run = {.id = "r1", .pool = initial_pool(p, policy.spares)};
  d.exit_code = supervise_attempts(policy, p, d.run, d.executor, d.effects);
}

// Each attempt's hosts (in the allocation's order, as planned), from its verdict.json; the
// swaps of all of them, in order.
std::vector<Hosts> attempt_hosts(const RecordingEffects& effects, int attempts) {
  std::vector<Hosts> hosts;
  for (int a = 1; a <= attempts; ++a) {
    hosts.push_back(effects.file(fmt::format("attempt-{}/verdict.json", a))["hosts"].get<Hosts>());
  }
  return hosts;
}
Hosts all_swaps(const RecordingEffects& effects, int attempts) {
  Hosts swaps;
  for (int a = 1; a <= attempts; ++a) {
    const nlohmann::json verdict = effects.file(fmt::format("attempt-{}/verdict.json", a));
    for (const auto& swap : verdict["swaps"]) swaps.push_back(swap.get<std::string>());
  }
  return swaps;
}

}  // namespace

TEST_CASE("attempt outcomes decide the next plan, the swaps, the back-off and the exit status",
          "[attempt_loop]") {
  struct Row {
    const char* name;
    RetryPolicy policy;
    int allocated;  // hosts in the allocation; the plan takes the first two
    std::vector<RunOutcome> outcomes;
    std::vector<Hosts> hosts;  // each attempt's
    Hosts swaps;
    std::vector<double> waits;
    int exit_code;
    const char* next;  // the last attempt's verdict
  };
  const RunOutcome ok = exited(0);
  const std::vector<Row> rows = {
      {"success at once", {}, 2, {ok}, {{"n01", "n02"}}, {}, {}, 0, ""},
      {"the job's own error is not retried",
       {.retries = 3, .spares = 1, .failover = true},
       3,
       {exited(1)},
       {{"n01", "n02"}},
       {},
       {},
       1,
       "stop: application_error is not retried"},
      {"--retries without spares: success on the 2nd attempt, on the same hosts",
       {.retries = 2, .failover = true},
       2,
       {node_down("n02"), ok},
       {{"n01", "n02"}, {"n01", "n02"}},
       {},
       {5},
       0,
       ""},
      {"retries exhausted: the last attempt's status",
       {.retries = 1, .retry_delay_s = 2, .failover = true},
       2,
       {node_down("n01"), exited(137, "Killed\n")},
       {{"n01", "n02"}, {"n01", "n02"}},
       {},
       {2},
       137,
       "stop: no retries left"},
      {"a named bad node is swapped for a spare",
       {.retries = 1, .spares = 1, .failover = true},
       3,
       {node_down("n02"), ok},
       {{"n01", "n02"}, {"n01", "n03"}},
       {"n02 -> n03"},
       {5},
       0,
       ""},
      // Before: exit 1, the last attempt's, as a crash would say.
      {"spares exhausted: exit 75",
       {.retries = 3, .spares = 1, .failover = true},
       3,
       {node_down("n02"), node_down("n01")},
       {{"n01", "n02"}, {"n01", "n03"}},
       {"n02 -> n03"},
       {5},
       75,
       "stop: spares exhausted: no spare host left for n01"},
      // Before: exit 137.
      {"retries exhausted in a run with spares: exit 75",
       {.retries = 1, .spares = 2, .failover = true},
       4,
       {node_down("n02"), node_down("n01")},
       {{"n01", "n02"}, {"n01", "n03"}},
       {"n02 -> n03"},
       {5},
       75,
       "stop: spares exhausted: no retries left"},
      // Before: n01 rotated out blind. A host is retired only on evidence against it.
      {"no node named: none retired, the same hosts again",
       {.retries = 1, .spares = 2, .failover = true},
       4,
       {exited(137, "Killed\n"), ok},
       {{"n01", "n02"}, {"n01", "n02"}},
       {},
       {5},
       0,
       ""},
      {"the watchdog's timeouts: 124, the back-off doubling",
       {.retries = 2, .retry_delay_s = 1, .failover = true},
       2,
       {stopped_by(Watchdog::timeout), stopped_by(Watchdog::timeout),
        stopped_by(Watchdog::timeout)},
       {{"n01", "n02"}, {"n01", "n02"}, {"n01", "n02"}},
       {},
       {1, 2},
       124,
       "stop: no retries left"},
      {"a hang, then a node named on stderr ends the attempt at once",
       {.retries = 2, .spares = 2, .retry_delay_s = 40, .failover = true},
       4,
       {stopped_by(Watchdog::idle), stopped_by(Watchdog::signature, "node n02 is down\n"), ok},
       {{"n01", "n02"}, {"n01", "n02"}, {"n01", "n03"}},
       {"n02 -> n03"},
       {40, 60},
       0,
       ""},
      // Before: the verdict named rank 1 on n02 and n01 was swapped.
      {"a rank's death swaps the host its report names",
       {.retries = 1, .spares = 2, .failover = true},
       4,
       {exited(137, "srun: error: n02: task 1: Killed\n"), ok},
       {{"n01", "n02"}, {"n01", "n03"}},
       {"n02 -> n03"},
       {5},
       0,
       ""},
      {"the same rank dying the same way on the new host is the program's",
       {.retries = 3, .spares = 2, .failover = true},
       4,
       {exited(137, "srun: error: n02: task 1: Killed\n"),
        exited(137, "srun: error: n03: task 1: Killed\n")},
       {{"n01", "n02"}, {"n01", "n03"}},
       {"n02 -> n03"},
       {5},
       137,
       "stop: application_error is not retried"},
      // Before: n02 swapped for a spare and the job run again.
      {"a segfault is the program's at once",
       {.retries = 3, .spares = 2, .failover = true},
       4,
       {exited(139, "srun: error: n02: task 1: Segmentation fault\n")},
       {{"n01", "n02"}},
       {},
       {},
       139,
       "stop: application_error is not retried"},
      // Before: bad_node, rank 0 on n01 (Terminated), n01 swapped, 3 runs of 3 (issue 44, 1).
      {"Slurm: a Python rank raises, srun stops the rest: the hosts kept, exit 1",
       {.retries = 1, .spares = 1, .failover = true},
       3,
       {{.exit_code = 143,
         .failed_rank_status = 1,
         .watchdog = Watchdog::rank_failed,
         .output_tail = "srun: error: n01: task 0: Terminated\n",
         .sent = {{.signal = SIGTERM, .at_s = 3, .why = "stop"}}}},
       {{"n01", "n02"}},
       {},
       {},
       1,
       "stop: application_error is not retried"},
      // Before: bad_node, the first stopped rank's host swapped (issue 44, 2).
      {"every rank Terminated, none failed first: not retried, no host retired",
       {.retries = 1, .spares = 1, .failover = true},
       3,
       {exited(143,
               "srun: error: n01: task 0: Terminated\nsrun: error: n02: task 1: Terminated\n")},
       {{"n01", "n02"}},
       {},
       {},
       143,
       "stop: walltime is not retried"},
      // Before: bad_node, n01 swapped and the job restarted (issue 44, 3).
      {"SIGUSR1 forwarded: neither swapped nor retried",
       {.retries = 1, .spares = 1, .failover = true},
       3,
       {{.exit_code = 138,
         .output_tail = "srun: error: n01: task 0: User defined signal 1\n",
         .sent = {{.signal = SIGUSR1, .at_s = 1, .why = "forwarded"}}}},
       {{"n01", "n02"}},
       {},
       {},
       138,
       "stop: interrupted is not retried"},
      // Before: success, exit 0 (issue 44, 4).
      {"a rank's reported failure under a launcher that exits 0",
       {.retries = 1, .spares = 1, .failover = true},
       3,
       {{.exit_code = 0,
         .failed_rank_status = 7,
         .output_tail = "ezpz-rankenv: rank 0 (pid 5) on n01: exited with code 7\n"}},
       {{"n01", "n02"}},
       {},
       {},
       7,
       "stop: application_error is not retried"},
      // Before: launcher_died, retried twice into the same failure (issue 44, 7).
      {"a deleted working directory is not retried",
       {.retries = 2, .failover = true},
       2,
       {{.exit_code = 139, .output_tail = "", .cwd_missing = true}},
       {{"n01", "n02"}},
       {},
       {},
       139,
       "stop: application_error is not retried"},
      {"out of disk space keeps the hosts and is not retried",
       {.retries = 1, .spares = 1, .failover = true},
       3,
       {exited(1, "OSError: [Errno 28] No space left on device: '/ckpt/step_9.pt'\n")},
       {{"n01", "n02"}},
       {},
       {},
       1,
       "stop: application_error is not retried"},
      {"a fatal line fails a run whose launcher exited 0",
       {.retries = 1, .spares = 1, .failover = true},
       3,
       {exited(0, "UR_RESULT_ERROR_OUT_OF_RESOURCES on rank 4\n")},
       {{"n01", "n02"}},
       {},
       {},
       1,
       "stop: application_error is not retried"},
      // Before: n01 -> n03, then n02 -> n04: healthy hosts retired blind.
      {"hangs with spares retry on the same hosts: nothing names a host",
       {.retries = 2, .spares = 2, .retry_delay_s = 1, .failover = true},
       4,
       {stopped_by(Watchdog::idle), stopped_by(Watchdog::idle), ok},
       {{"n01", "n02"}, {"n01", "n02"}, {"n01", "n02"}},
       {},
       {1, 2},
       0,
       ""},
      {"SIGTERM inside the job is walltime: never retried",
       {.retries = 3, .failover = true},
       2,
       {{.exit_code = 143, .forwarded_signal = SIGTERM}},
       {{"n01", "n02"}},
       {},
       {},
       143,
       "stop: walltime is not retried"},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    const PreparedLaunch p = prepared(row.allocated, 2);
    Driven d{RecordingExecutor(row.outcomes), {}, {}};
    drive(d, row.policy, p);
    const int attempts = static_cast<int>(row.hosts.size());
    CHECK(d.executor.ran.size() == row.hosts.size());
    CHECK(attempt_hosts(d.effects, attempts) == row.hosts);
    CHECK(all_swaps(d.effects, attempts) == row.swaps);
    CHECK(d.effects.waits == row.waits);
    CHECK(d.exit_code == row.exit_code);
    CHECK(d.effects.file(fmt::format("attempt-{}/verdict.json", attempts))["next"] == row.next);
    const nlohmann::json summary = d.effects.file("run.json");
    CHECK(summary["attempts"] == attempts);
    CHECK(summary["exit_code"] == row.exit_code);
  }
}

TEST_CASE("every attempt runs tagged with the run's id, its output recorded apart",
          "[attempt_loop]") {
  const PreparedLaunch p = prepared(3, 2);
  Driven d{RecordingExecutor({node_down("n02"), exited(0)}), {}, {}};
  drive(d, {.retries = 1, .spares = 1, .failover = true}, p);
  REQUIRE(d.executor.ran.size() == 2);
  CHECK(d.executor.ran[0].env.back() == EnvList::value_type{"EZPZ_RUN_ID", "r1"});
  CHECK(d.executor.ran[0].argv == p.planned.plan.argv);  // attempt 1: the plan as made
  CHECK(d.executor.ran[1].env.back() == EnvList::value_type{"EZPZ_RUN_ID", "r1"});
  CHECK(d.executor.output_paths ==
        Hosts{"runs/r1/attempt-1/output.log", "runs/r1/attempt-2/output.log"});
  CHECK(d.effects.file("plan.json")["hosts"].get<Hosts>() == Hosts{"n01", "n02"});
  CHECK(d.effects.file("attempt-2/plan.json")["hosts"].get<Hosts>() == Hosts{"n01", "n03"});
  CHECK(d.effects.files.count("attempt-1/plan.json") == 0);  // plan.json is attempt 1's
  CHECK(d.run.pool.retired == Hosts{"n02"});
}

TEST_CASE("what a failover says on stderr, word for word", "[attempt_loop]") {
  const PreparedLaunch p = prepared(3, 2);
  Driven d{RecordingExecutor({node_down("n02"), node_down("n01")}), {}, {}};
  d.effects.leftovers = {"4242 hydra_pmi_proxy"};
  drive(d, {.retries = 3, .spares = 1, .failover = true}, p);
  CHECK(d.effects.said == Hosts{"attempt 1 ended: bad_node: exit status 1; bad node: n02",
                                "retry on new hosts (n02 -> n03); attempt 2 in 5 s",
                                "attempt 2 on n01 n03",
                                "attempt 2 ended: bad_node: exit status 1; bad node: n01",
                                "stop: spares exhausted: no spare host left for n01",
                                "spares exhausted after 2 attempts: exit 75"});
  CHECK(d.exit_code == 75);
  CHECK(d.effects.file("run.json")["ending"] == "spares_exhausted");
  CHECK(d.effects.file("run.json")["reason"] ==
        "spares exhausted after 2 attempts; the last: bad_node: exit status 1; bad node: n01");
  CHECK(d.effects.file("attempt-1/verdict.json")["leftovers"].get<Hosts>() ==
        Hosts{"4242 hydra_pmi_proxy"});
  // Without retries or spares the ending alone is said: no "stop" line.
  Driven alone{RecordingExecutor({node_down("n02")}), {}, {}};
  drive(alone, {}, p);
  CHECK(alone.effects.said == Hosts{"attempt 1 ended: bad_node: exit status 1; bad node: n02"});
  CHECK(alone.exit_code == 1);
}

// A swap says how its host was chosen, in the verdict and on stderr; with no host named there is
// no swap (before: a blind guess).
TEST_CASE("the verdict says whether a swap was scraped or reported", "[attempt_loop]") {
  const PreparedLaunch p = prepared(5, 2);
  Driven d{RecordingExecutor({node_down("n02"), exited(137, "srun: error: n03: task 1: Killed\n"),
                              stopped_by(Watchdog::idle), exited(0)}),
           {},
           {}};
  drive(d, {.retries = 3, .spares = 3, .failover = true}, p);
  CHECK(d.exit_code == 0);
  const nlohmann::json first = d.effects.file("attempt-1/verdict.json");
  CHECK(first["failover"] == "scraped");
  CHECK(first["rule"] == "bad_node_patterns test");
  CHECK(first["line"] == "node n02 is down");
  CHECK(d.effects.file("attempt-2/verdict.json")["failover"] == "reported");
  CHECK(d.effects.file("attempt-2/verdict.json")["rule"] == "signal_death");
  CHECK(d.effects.file("attempt-3/verdict.json")["failover"].is_null());
  CHECK(d.effects.file("attempt-3/verdict.json")["swaps"].empty());
  CHECK(d.effects.file("attempt-4/verdict.json")["hosts"] == nlohmann::json::array({"n01", "n04"}));
  CHECK(std::count(d.effects.said.begin(), d.effects.said.end(),
                   "retry on the same hosts (no host named: none retired); attempt 4 in 20 s") ==
        1);
}

// gloo's lost peer names an address: the loop has it looked up among the attempt's hosts, and
// swaps the host it is (scraped), never the address.
TEST_CASE("a lost peer's address is looked up and its host swapped", "[attempt_loop]") {
  const PreparedLaunch p = prepared(3, 2);
  const std::string gloo = "RuntimeError: [pair.cc:598] Connection closed by peer [10.0.0.2]:41384";
  Driven d{RecordingExecutor({exited(1, gloo + "\n"), exited(0)}), {}, {}};
  d.effects.addressed = {{"10.0.0.2", "n02"}};
  drive(d, {.retries = 1, .spares = 1, .failover = true}, p);
  CHECK(d.exit_code == 0);
  CHECK(d.effects.looked_up == std::vector<Hosts>{{"10.0.0.2"}});
  const nlohmann::json first = d.effects.file("attempt-1/verdict.json");
  CHECK(first["rule"] == "peer_lost gloo-closed-by-peer");
  CHECK(first["swaps"] == nlohmann::json::array({"n02 -> n03"}));
  CHECK(first["failover"] == "scraped");
  // A clean attempt's output is not read for addresses.
  Driven clean{RecordingExecutor({exited(0, gloo + "\n")}), {}, {}};
  drive(clean, {}, p);
  CHECK(clean.effects.looked_up.empty());
}

// After a clean exit ezpz looks for leftovers only among its own descendants (cheap, on every
// launch's path); after anything else, on the whole node.
TEST_CASE("the leftover sweep covers the whole node only after a failed attempt",
          "[attempt_loop]") {
  const PreparedLaunch p = prepared(2, 2);
  Driven d{RecordingExecutor({node_down("n02"), stopped_by(Watchdog::timeout), exited(0)}), {}, {}};
  drive(d, {.retries = 2, .failover = true}, p);
  CHECK(d.exit_code == 0);
  CHECK(d.effects.sweeps == std::vector<bool>{true, true, false});
}

// srun ends the step with 143 for the tasks its --kill-on-bad-exit stopped; the job failed
// because a rank exited 6, and ezpz says so in its status, whether ezpz-rankenv's report reached
// it (failed_rank_status) or only srun's own line did.
TEST_CASE("ezpz exits with the failed rank's status, not the launcher's consequence",
          "[attempt_loop]") {
  struct Row {
    const char* name;
    RunOutcome outcome;
    int exit_code;
  };
  const std::string srun_lines =
      "srun: error: n02: task 1: Exited with exit code 6\n"
      "srun: error: n01: task 0: Terminated\n";
  const Row rows[] = {
      {"ezpz-rankenv's report", {.exit_code = 143, .failed_rank_status = 6}, 6},
      {"srun's words only", exited(143, srun_lines), 6},
      {"a killed rank", exited(143, "srun: error: n02: task 1: Killed\n"), 137},
      {"only a stopped rank: the launcher's status",
       exited(143, "srun: error: n01: task 0: Terminated\n"), 143},
      {"a signal of the user's",
       {.exit_code = 130, .forwarded_signal = SIGINT, .output_tail = srun_lines},
       130},
      {"a launcher that succeeded", exited(0, srun_lines), 0},
      {"a launcher that succeeded over ezpz-rankenv's report",
       {.exit_code = 0, .failed_rank_status = 6},
       6},
      {"no words at all", exited(9, "step 10\n"), 9},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    const PreparedLaunch p = prepared(2, 2);
    Driven d{RecordingExecutor({row.outcome}), {}, {}};
    drive(d, {}, p);
    CHECK(d.exit_code == row.exit_code);
    CHECK(d.effects.file("attempt-1/verdict.json")["launcher_exit"] == row.outcome.exit_code);
  }
}

TEST_CASE("a signal during the back-off ends the run as interrupted", "[attempt_loop]") {
  const PreparedLaunch p = prepared(2, 2);
  Driven d{RecordingExecutor({node_down("n02")}), {}, {}};
  d.effects.signal_during_wait = SIGINT;
  drive(d, {.retries = 2, .failover = true}, p);
  CHECK(d.exit_code == 130);
  CHECK(d.executor.ran.size() == 1);
  const nlohmann::json summary = d.effects.file("run.json");
  CHECK(summary["exit_code"] == 130);
  CHECK(summary["ending"] == "interrupted");
  CHECK(summary["reason"] == "signal 2 during the back-off");
}

TEST_CASE("the last lines before a failed rank are said with where the rest is", "[attempt_loop]") {
  const PreparedLaunch p = prepared(2, 2);
  Driven d{RecordingExecutor({exited(1,
                                     "step 1\nValueError: boom\n"
                                     "ezpz-rankenv: rank 1 (pid 7) on n02: exited with code 1\n")}),
           {},
           {}};
  drive(d, {}, p);
  CHECK(d.effects.said ==
        Hosts{"attempt 1 ended: application_error: exit status 1: rank 1 (pid 7) on n02: exited "
              "with code 1",
              "last lines before rank 1 on n02 failed (all in runs/r1/attempt-1/output.log):",
              "  step 1", "  ValueError: boom"});
}

TEST_CASE("a known error's hint is said once after a failed attempt, not after a success",
          "[attempt_loop]") {
  const PreparedLaunch p = prepared(2, 2);
  const std::string vni =
      "start failed on x4102c5s2b0n0: No VNIs available in internal allocator\n";
  Driven failed{RecordingExecutor({exited(1, vni + vni)}), {}, {}};
  drive(failed, {}, p);
  CHECK(failed.effects.said ==
        Hosts{"attempt 1 ended: application_error: exit status 1: the job's own failure",
              "hint: \"No VNIs available\" (ALCF Aurora, Known Issues: No VNIs available in "
              "internal allocator): pass --no-vni to PALS's mpiexec: ezpz launch --launcher-arg "
              "--no-vni ..."});
  Driven fine{RecordingExecutor({exited(0, vni)}), {}, {}};
  drive(fine, {}, p);
  CHECK(fine.effects.said.empty());
}

TEST_CASE("spares the allocation cannot hold are refused before any attempt", "[attempt_loop]") {
  CHECK_THROWS_WITH(initial_pool(prepared(1, 1), 1),
                    "--spares 1: the allocation has 1 host; at least one must stay active");
  CHECK(initial_pool(prepared(4, 2), 0).active == Hosts{"n01", "n02"});
  CHECK(initial_pool(prepared(4, 2), 1).spares == Hosts{"n03"});
}
