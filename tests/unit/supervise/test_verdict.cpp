// One verdict (issue 44): what the live supervisor and `ezpz runs explain` both decide from an
// attempt's facts, row by row: the kind, the hosts retired and the evidence against each, the
// innocent ranks and the exit status. Each row is an incident as its launcher reports it; the
// rows marked "Before:" retired a healthy node or hid a failure on 5a6d034.
#include <csignal>
#include <string>
#include <vector>

#include "ezpz/core/error.hpp"
#include "ezpz/supervise/attempt_facts.hpp"
#include "ezpz/supervise/attempts.hpp"
#include "tests/catch.hpp"

using namespace ezpz;
using Strings = std::vector<std::string>;

namespace {

const std::vector<BadNodePattern> k_slurm = {
    {"node-failure", R"(^srun: error: Node failure on (\S+)$)"}};

AttemptFacts on_three(AttemptFacts f) {
  f.hosts = {"n01", "n02", "n03"};
  f.ppn = 1;
  f.scheduler_job = true;
  return f;
}

}  // namespace

TEST_CASE("one verdict: evidence before retirement, the first failed rank's status", "[verdict]") {
  struct Row {
    const char* name;
    AttemptFacts facts;
    Ending ending;
    const char* rule;
    Strings bad_hosts;
    Strings evidence;
    std::size_t innocent;
    int exit_code;
  };
  const SentSignal stop{.signal = SIGTERM, .at_s = 5, .why = "stop"};
  const SentSignal kill{.signal = SIGKILL, .at_s = 15, .why = "kill"};
  const std::vector<Row> rows = {
      // Before: bad_node, rank 0 on n01 (Terminated), n01 swapped for a spare.
      {"Slurm: rank 1 raises, ezpz stops the step, srun reports rank 0 Terminated",
       {.exit_status = 143,
        .watchdog = Watchdog::rank_failed,
        .output = "",
        .launcher_output = "srun: error: n01: task 0: Terminated\n"
                           "ezpz-rankenv: rank 1 (pid 9) on n02: exited with code 1\n",
        .sent = {stop},
        .failed_rank_status = 1},
       Ending::application_error,
       "",
       {},
       {},
       1,
       1},
      {"the same with the rank's own report lost from the tail",
       {.exit_status = 143,
        .watchdog = Watchdog::rank_failed,
        .output = "",
        .launcher_output = "srun: error: n01: task 0: Terminated\n",
        .sent = {stop},
        .failed_rank_status = 1},
       Ending::application_error,
       "rank_failed",
       {},
       {},
       1,
       1},
      // Before: bad_node, the first teardown rank's host swapped.
      {"srun: every rank Terminated, none failed first",
       {.exit_status = 143,
        .output = "srun: error: n01: task 0: Terminated\nsrun: error: n02: task 1: Terminated\n"},
       Ending::walltime,
       "teardown_only",
       {},
       {},
       2,
       143},
      {"PALS: rank 0 died from signal 15, rank 1 exited 0",
       {.exit_status = 143,
        .output = "x1001c0s0b0n0: rank 0 died from signal 15\n"
                  "x1001c0s0b0n0: rank 1 exited with code 0\n"},
       Ending::walltime,
       "teardown_only",
       {},
       {},
       1,
       143},
      {"no report, the launcher's 143, nothing sent",
       {.exit_status = 143, .output = ""},
       Ending::walltime,
       "teardown_only",
       {},
       {},
       0,
       143},
      // Before: bad_node ... rank 0 on n01, n01 swapped, the job restarted.
      {"SIGUSR1 forwarded, every rank dies of it",
       {.exit_status = 138,
        .output = "=   PID 7 RUNNING AT n01\n=   KILLED BY SIGNAL: 10 (User defined signal 1)\n",
        .sent = {{.signal = SIGUSR1, .at_s = 2, .why = "forwarded"}}},
       Ending::interrupted,
       "forwarded_signal",
       {},
       {},
       1,
       138},
      {"SIGUSR1 forwarded, a rank catches it and exits 7 on its own: its status",
       {.exit_status = 7,
        .output = "",
        .launcher_output = "ezpz-rankenv: rank 1 (pid 5) on n02: exited with code 7\n",
        .sent = {{.signal = SIGUSR1, .at_s = 2, .why = "forwarded"}},
        .failed_rank_status = 7},
       Ending::interrupted,
       "forwarded_signal",
       {},
       {},
       0,
       7},
      // Before: launcher_died, retried.
      {"SIGUSR2 forwarded kills Hydra 4.0 itself",
       {.exit_status = 140,
        .output = "",
        .launcher_signal = SIGUSR2,
        .sent = {{.signal = SIGUSR2, .at_s = 2, .why = "forwarded"}}},
       Ending::interrupted,
       "forwarded_signal",
       {},
       {},
       0,
       140},
      {"--signal's warning, and the ranks die of it",
       {.exit_status = 138,
        .output = "srun: error: n01: task 0: User defined signal 1\n",
        .sent = {{.signal = SIGUSR1, .at_s = 3, .why = "warning"}}},
       Ending::interrupted,
       "warning_signal",
       {},
       {},
       1,
       138},
      // Before: success, exit 0.
      {"ezpz-rankenv reports exit 7, the launcher exits 0",
       {.exit_status = 0,
        .output = "",
        .launcher_output = "ezpz-rankenv: rank 0 (pid 5) on n01: exited with code 7\n",
        .failed_rank_status = 7},
       Ending::application_error,
       "",
       {},
       {},
       0,
       7},
      // Before (explain): bad_node, bad hosts: vm, from Hydra's EXIT CODE: 9 banner.
      {"an idle timeout ezpz stopped, Hydra's banner after its SIGKILL",
       {.exit_status = 143,
        .watchdog = Watchdog::idle,
        .output = "step=1\n=   PID 7 RUNNING AT n01\n=   EXIT CODE: 9\n",
        .sent = {stop, kill}},
       Ending::hang,
       "",
       {},
       {},
       1,
       124},
      {"Ctrl-C",
       {.exit_status = 130, .interrupted = true, .forwarded_signal = SIGINT, .output = ""},
       Ending::interrupted,
       "",
       {},
       {},
       0,
       130},
      // Before: launcher_died, retried into the same failure.
      {"the working directory deleted: Hydra crashes",
       {.exit_status = 139, .output = "", .ranks_started = 0, .cwd_missing = true},
       Ending::application_error,
       "cwd_missing",
       {},
       {},
       0,
       139},
      {"a rank SIGKILLed by nobody ezpz knows: its host",
       {.exit_status = 137, .output = "srun: error: n02: task 1: Killed\n"},
       Ending::bad_node,
       "signal_death",
       {"n02"},
       {"rank 1 on n02: Killed"},
       0,
       137},
      {"a bus error: its host",
       {.exit_status = 135, .output = "srun: error: n03: task 2: Bus error\n"},
       Ending::bad_node,
       "signal_death",
       {"n03"},
       {"rank 2 on n03: Bus error"},
       0,
       135},
      {"a rank SIGKILLed by ezpz's grace after another's failure",
       {.exit_status = 137,
        .watchdog = Watchdog::rank_failed,
        .output = "",
        .launcher_output = "srun: error: n01: task 0: Killed\n"
                           "ezpz-rankenv: rank 2 (pid 4) on n03: exited with code 3\n",
        .sent = {stop, kill},
        .failed_rank_status = 3},
       Ending::application_error,
       "",
       {},
       {},
       1,
       3},
      // Before: bad_node, the segfaulting rank's host swapped.
      {"a segfault is the program's",
       {.exit_status = 139, .output = "srun: error: n02: task 1: Segmentation fault\n"},
       Ending::application_error,
       "program_signal",
       {},
       {},
       0,
       139},
      {"a node failure line names its node",
       {.exit_status = 1,
        .output = "srun: error: Node failure on n03\nsrun: error: n01: task 0: Terminated\n"},
       Ending::bad_node,
       "bad_node_patterns node-failure",
       {"n03"},
       {"srun: error: Node failure on n03"},
       1,
       1},
      {"out of disk space is the job's",
       {.exit_status = 1,
        .output = "OSError: [Errno 28] No space left on device\n"
                  "srun: error: n02: task 1: Exited with exit code 1\n"},
       Ending::application_error,
       "job_faults no-space",
       {},
       {},
       0,
       1},
      // Before: Slurm's and PBS's own walltime kill was a SIGTERM'd rank's or a node's.
      {"slurmstepd ends the step at the time limit",
       {.exit_status = 143,
        .output = "slurmstepd: error: *** STEP 42.0 ON n01 CANCELLED AT 2026-12-07T10:00:00 DUE "
                  "TO TIME LIMIT ***\nsrun: error: n01: task 0: Terminated\n"},
       Ending::walltime,
       "allocation_expired",
       {},
       {},
       0,
       143},
      {"PBS's MoM kills the job at its walltime, a rank SIGKILLed",
       {.exit_status = 137,
        .output = "=>> PBS: job killed: walltime 3630 exceeded limit 3600\n"
                  "x1: rank 0 died from signal 9\n"},
       Ending::walltime,
       "allocation_expired",
       {},
       {},
       0,
       137},
      {"exit 137 with nothing named: a node's, none retired",
       {.exit_status = 137, .output = "Killed\n"},
       Ending::bad_node,
       "signal_death",
       {},
       {},
       0,
       137},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    const Classification c = classify_attempt(on_three(row.facts), k_slurm);
    CHECK(to_string(c.ending) == to_string(row.ending));
    CHECK(c.rule == row.rule);
    CHECK(c.bad_hosts == row.bad_hosts);
    CHECK(c.evidence == row.evidence);
    CHECK(c.innocent.size() == row.innocent);
    CHECK(c.exit_code == row.exit_code);
  }
}

TEST_CASE("a rank that failed is named first, the ranks stopped after it innocent", "[verdict]") {
  const Classification c = classify_attempt(
      on_three({.exit_status = 143,
                .watchdog = Watchdog::rank_failed,
                .output = "",
                .launcher_output = "srun: error: n01: task 0: Terminated\n"
                                   "ezpz-rankenv: rank 1 (pid 9) on n02: exited with code 1\n",
                .sent = {{.signal = SIGTERM, .at_s = 5, .why = "stop"}},
                .failed_rank_status = 1}),
      k_slurm);
  REQUIRE(c.failed.size() == 2);
  CHECK(describe(c.failed.front()) == "rank 1 (pid 9) on n02: exited with code 1");
  REQUIRE(c.innocent.size() == 1);
  CHECK(describe(c.innocent.front()) == "rank 0 on n01: Terminated");
  CHECK(c.reason == "exit status 143: rank 1 (pid 9) on n02: exited with code 1");
  const Classification torn =
      classify_attempt(on_three({.exit_status = 143,
                                 .output = "srun: error: n01: task 0: Terminated\n"
                                           "srun: error: n02: task 1: Terminated\n"}),
                       k_slurm);
  CHECK(torn.reason ==
        "exit status 143: every rank was stopped (SIGTERM) and none failed first: the job was "
        "torn down from outside (walltime, scancel, qdel), not by a node");
  const Classification sent =
      classify_attempt(on_three({.exit_status = 138,
                                 .output = "",
                                 .sent = {{.signal = SIGUSR1, .at_s = 2.04, .why = "forwarded"}}}),
                       k_slurm);
  CHECK(sent.reason ==
        "ezpz forwarded SIGUSR1 (2.0 s in) and the job ended: the signal's doing, not a node's");
  const Classification cwd =
      classify_attempt(on_three({.exit_status = 139, .output = "", .cwd_missing = true}), k_slurm);
  CHECK(cwd.reason ==
        "exit status 139: the working directory was deleted under the job: no launch can start "
        "there again");
  CHECK(!worth_retrying(cwd.ending));
}

// torchrun's ChildFailedError block, as torch 1.13 (Debian's) printed it here: the rank's own
// status, and its host from the line before. Before: exit 1 (torchrun's) for a rank that exited 3.
TEST_CASE("torchrun's root cause names the rank, its host and its status", "[verdict]") {
  const auto block = [](const char* host, const char* rank, const char* exitcode) {
    return std::string("Failures:\n  <NO_OTHER_FAILURES>\n") +
           "Root Cause (first observed failure):\n[0]:\n  time      : 2026-12-07_23:22:35\n" +
           "  host      : " + host + "\n  rank      : " + rank + "\n  exitcode  : " + exitcode +
           "\n  error_file: <N/A>\n";
  };
  const Classification exited = classify_attempt(
      on_three({.exit_status = 1, .output = block("n02", "1 (local_rank: 0)", "3 (pid: 24084)")}),
      k_slurm);
  CHECK(to_string(exited.ending) == "application_error");
  REQUIRE(exited.failed.size() == 1);
  CHECK(describe(exited.failed.front()) == "rank 1 on n02: exitcode 3");
  CHECK(exited.exit_code == 3);
  CHECK(exited.bad_hosts.empty());
  const Classification killed = classify_attempt(
      on_three({.exit_status = 1, .output = block("n03", "2 (local_rank: 0)", "-9 (pid: 24096)")}),
      k_slurm);
  CHECK(to_string(killed.ending) == "bad_node");
  CHECK(killed.bad_hosts == Strings{"n03"});
  CHECK(killed.exit_code == 137);
  const Classification segv = classify_attempt(
      on_three({.exit_status = 1, .output = block("n03", "2 (local_rank: 0)", "-11 (pid: 24096)")}),
      k_slurm);
  CHECK(segv.rule == "program_signal");
  CHECK(segv.bad_hosts.empty());
  CHECK(segv.exit_code == 139);
  AttemptFacts alone{.exit_status = 1,
                     .output = block("localhost", "1 (local_rank: 1)", "-9 (pid: 24096)")};
  alone.hosts = {"vm"};
  alone.ppn = 2;
  CHECK(classify_attempt(alone, k_slurm).bad_hosts == Strings{"vm"});
}

// Before: the gloo line on rank 0 named rank 0's own host as the lost peer (an address every
// host of a one-machine cluster shares), and rank 0's teardown report came first.
TEST_CASE("a peer lost to a rank's own failure convicts no host", "[verdict]") {
  AttemptFacts facts = on_three(
      {.exit_status = 143,
       .output = "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer "
                 "[127.0.0.1]:3486\n"
                 "srun: error: n02: task 1: Exited with exit code 1\n"
                 "srun: error: n01: task 0: Terminated\n",
       .address_hosts = {{"127.0.0.1", "n01"}},
       .failed_rank_status = 1});
  Classification c = classify_attempt(facts, k_slurm);
  CHECK(to_string(c.ending) == "application_error");
  CHECK(c.bad_hosts.empty());
  CHECK(c.exit_code == 1);
  REQUIRE(!c.failed.empty());
  CHECK(describe(c.failed.front()) == "rank 1 on n02: Exited with exit code 1");
  // No report reached ezpz of any rank but the stopped one: still no host convicted.
  facts.output =
      "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer "
      "[127.0.0.1]:3486\nsrun: error: n01: task 0: Terminated\n";
  c = classify_attempt(facts, k_slurm);
  CHECK(c.rule == "rank_failed");
  CHECK(c.bad_hosts.empty());
  CHECK(c.exit_code == 1);
}

TEST_CASE("an attempt's facts read back as they were written", "[verdict]") {
  const AttemptFacts facts{.exit_status = 143,
                           .interrupted = false,
                           .forwarded_signal = 0,
                           .scheduler_job = true,
                           .watchdog = Watchdog::rank_failed,
                           .output = "caf\xc3\xa9\nstep=1\n",
                           .hosts = {"n01", "n02"},
                           .ppn = 2,
                           .launcher_signal = 0,
                           .launcher_part = "hydra_pmi_proxy (pid 7)",
                           .world_size = 3,
                           .launcher_output = "srun: error: n01: task 0: Terminated\n",
                           .ranks_started = 3,
                           .previous_death = {.ranks = "1", .host = "n02", .signal = SIGKILL},
                           .progress_pattern = "epoch",
                           .address_hosts = {{"10.0.0.2", "n02"}},
                           .sent = {{.signal = SIGTERM, .at_s = 1.25, .why = "stop"},
                                    {.signal = SIGKILL, .at_s = 11.5, .why = "kill"}},
                           .failed_rank_status = 6,
                           .cwd_missing = true};
  const RecordedFacts back = parse_facts(facts_json(facts, k_slurm), "f");
  const AttemptFacts& b = back.facts;
  CHECK(back.patterns == k_slurm);
  CHECK(b.exit_status == facts.exit_status);
  CHECK(b.scheduler_job);
  CHECK(b.watchdog == facts.watchdog);
  CHECK(b.output == facts.output);
  CHECK(b.hosts == facts.hosts);
  CHECK(b.ppn == 2);
  CHECK(b.launcher_part == facts.launcher_part);
  CHECK(b.world_size == 3);
  CHECK(b.launcher_output == facts.launcher_output);
  CHECK(b.ranks_started == facts.ranks_started);
  CHECK(b.previous_death == facts.previous_death);
  CHECK(b.progress_pattern == "epoch");
  CHECK(b.address_hosts == facts.address_hosts);
  CHECK(b.sent == facts.sent);
  CHECK(b.failed_rank_status == 6);
  CHECK(b.cwd_missing);
  // Nothing optional known: nulls, read back as not known.
  const RecordedFacts bare = parse_facts(facts_json({.exit_status = 1, .output = ""}, {}), "f");
  CHECK(!bare.facts.launcher_output);
  CHECK(!bare.facts.ranks_started);
  CHECK(!bare.facts.failed_rank_status);
  CHECK(bare.facts.watchdog == Watchdog::none);
}

TEST_CASE("facts that are not an attempt's are refused, naming the file", "[verdict]") {
  struct Row {
    const char* text;
    const char* error;
  };
  const Row rows[] = {
      {"[]", "a/facts.json: not an attempt's facts (not a JSON object)"},
      {"{", "a/facts.json: not an attempt's facts (not a JSON object)"},
      {R"({"version": 2})", "a/facts.json: not an attempt's facts (version 1 expected)"},
      {R"({"version": 1})",
       "a/facts.json: not an attempt's facts ([json.exception.out_of_range.403] key "
       "'previous_death' not found)"},
  };
  for (const Row& row : rows) {
    INFO(row.text);
    CHECK_THROWS_WITH(parse_facts(row.text, "a/facts.json"), row.error);
  }
}
