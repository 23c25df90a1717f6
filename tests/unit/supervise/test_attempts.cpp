#include <csignal>
#include <optional>
#include <regex>
#include <string>

#include "ezpz/core/error.hpp"
#include "ezpz/launchers/rank_env.hpp"
#include "ezpz/supervise/attempts.hpp"
#include "ezpz/supervise/job_faults.hpp"
#include "tests/catch.hpp"
#include "tests/support/files.hpp"

using namespace ezpz;

namespace {
const std::vector<BadNodePattern> k_patterns = {
    {"shepherd",
     R"(^([a-z0-9.-]+\.hsn\.cm\.aurora\.alcf\.anl\.gov):\s+shepherd\s+died\s+from\s+signal\s+9\b)"},
    {"hydra", R"(^=\s+PID \d+ RUNNING AT (\S+)$)"},
};
}  // namespace

TEST_CASE("an attempt's ending comes from signals, the watchdog, its status and its output",
          "[attempts]") {
  struct Row {
    const char* name;
    AttemptFacts facts;
    Ending ending;
    std::vector<std::string> hosts;
    const char* reason;
  };
  const Row rows[] = {
      {"clean exit",
       {.exit_status = 0, .scheduler_job = true, .output = ""},
       Ending::success,
       {},
       "exit status 0"},
      {"the job's own error",
       {.exit_status = 1, .scheduler_job = true, .output = "Traceback ...\nValueError\n"},
       Ending::application_error,
       {},
       "exit status 1: the job's own failure"},
      {"SIGTERM in a job is walltime",
       {.exit_status = 143,
        .interrupted = true,
        .forwarded_signal = SIGTERM,
        .scheduler_job = true,
        .output = ""},
       Ending::walltime,
       {},
       "SIGTERM inside the job: walltime (or the job was cancelled)"},
      {"SIGTERM outside a job",
       {.exit_status = 143, .interrupted = true, .forwarded_signal = SIGTERM, .output = ""},
       Ending::interrupted,
       {},
       "interrupted by signal 15"},
      {"Ctrl-C",
       {.exit_status = 130,
        .interrupted = true,
        .forwarded_signal = SIGINT,
        .scheduler_job = true,
        .output = ""},
       Ending::interrupted,
       {},
       "interrupted by signal 2"},
      {"wall-clock limit",
       {.exit_status = 124, .scheduler_job = true, .watchdog = Watchdog::timeout, .output = ""},
       Ending::timeout,
       {},
       "the --time-limit passed"},
      {"silent ranks, after training had started",
       {.exit_status = 124,
        .scheduler_job = true,
        .watchdog = Watchdog::idle,
        .output = "step=3\n"},
       Ending::hang,
       {},
       "no output from any rank for --idle-timeout"},
      // Before: both were "hang", with the same words.
      {"silent before any progress line",
       {.exit_status = 124, .scheduler_job = true, .watchdog = Watchdog::idle, .output = "up\n"},
       Ending::never_started,
       {},
       "no output for --idle-timeout and no progress line before it: the job never started "
       "training (look at its start-up: imports, the rendezvous, data loading)"},
      {"a rank killed, nobody named",
       {.exit_status = 137, .scheduler_job = true, .output = "Killed\n"},
       Ending::bad_node,
       {},
       "exit status 137: a rank died of signal 9; no node named"},
      {"the launcher itself killed: no rank blamed",
       {.exit_status = 141,
        .scheduler_job = true,
        .output = "rank 0 up\n",
        .launcher_signal = SIGPIPE},
       Ending::launcher_died,
       {},
       "exit status 141: the launcher itself died of signal 13 (SIGPIPE); the ranks' statuses "
       "were lost with it"},
      // `ezpz launch ... | head`: the user's pipeline ended, no node's fault, never retried.
      {"ezpz's own stdout closed",
       {.exit_status = 141,
        .scheduler_job = true,
        .watchdog = Watchdog::stdout_closed,
        .output = "y\ny\n"},
       Ending::interrupted,
       {},
       "ezpz's stdout was closed by its reader (SIGPIPE)"},
      {"a rank's stdout closed, with no record in between",
       {.exit_status = 141, .scheduler_job = true, .output = "y\n"},
       Ending::application_error,
       {},
       "exit status 141: a rank wrote to a closed pipe (SIGPIPE): the reader of the job's output "
       "went away"},
      {"the launcher SIGKILLed by someone else (the OOM killer)",
       {.exit_status = 137, .scheduler_job = true, .output = "", .launcher_signal = SIGKILL},
       Ending::launcher_died,
       {},
       "exit status 137: the launcher itself died of signal 9 (SIGKILL); the ranks' statuses "
       "were lost with it"},
      {"Aurora's shepherd names the node",
       {.exit_status = 1,
        .scheduler_job = true,
        .output = "step=3\nx4102c5s2b0n0.hsn.cm.aurora.alcf.anl.gov: shepherd died from signal 9\n"
                  "x4102c5s2b0n0.hsn.cm.aurora.alcf.anl.gov: shepherd died from signal 9\n"},
       Ending::bad_node,
       {"x4102c5s2b0n0.hsn.cm.aurora.alcf.anl.gov"},
       "exit status 1; bad node: x4102c5s2b0n0.hsn.cm.aurora.alcf.anl.gov"},
      {"Hydra names where a rank died",
       {.exit_status = 9,
        .scheduler_job = true,
        .output = "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   PID 18592 RUNNING "
                  "AT n03\n"
                  "=   EXIT CODE: 9\n"},
       Ending::bad_node,
       {"n03"},
       "exit status 9; bad node: n03"},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    Classification c = classify_attempt(row.facts, k_patterns);
    CHECK(c.ending == row.ending);
    CHECK(c.bad_hosts == row.hosts);
    CHECK(c.reason == row.reason);
  }
  CHECK(to_string(Ending::bad_node) == "bad_node");
  CHECK(to_string(Ending::walltime) == "walltime");
}

TEST_CASE("a broken signature is named", "[attempts]") {
  CHECK_THROWS_WITH(classify_attempt({.exit_status = 1, .output = "x"}, {{"mine", "(["}}),
                    Catch::StartsWith("bad_node_patterns mine: invalid regular expression: "));
}

TEST_CASE("only node trouble is worth another attempt", "[attempts]") {
  CHECK(worth_retrying(Ending::bad_node));
  CHECK(worth_retrying(Ending::hang));
  CHECK(worth_retrying(Ending::timeout));
  CHECK_FALSE(worth_retrying(Ending::success));
  CHECK_FALSE(worth_retrying(Ending::application_error));
  CHECK_FALSE(worth_retrying(Ending::walltime));
  CHECK_FALSE(worth_retrying(Ending::interrupted));
}

TEST_CASE("back-off doubles and is capped", "[attempts]") {
  CHECK(backoff_seconds(1) == 0);
  CHECK(backoff_seconds(2) == 5);
  CHECK(backoff_seconds(3) == 10);
  CHECK(backoff_seconds(5) == 40);
  CHECK(backoff_seconds(6) == 60);
  CHECK(backoff_seconds(30) == 60);
  CHECK(backoff_seconds(3, 0.5, 1) == 1);
}

TEST_CASE("spares replace named bad nodes only", "[attempts]") {
  NodePool pool = split_pool({"n1", "n2", "n3", "n4", "n5"}, 2);
  CHECK(pool.active == std::vector<std::string>{"n1", "n2", "n3"});
  CHECK(pool.spares == std::vector<std::string>{"n4", "n5"});
  CHECK(replace_bad_nodes(pool, {"n2"}) == std::vector<std::string>{"n2 -> n4"});
  CHECK(pool.active == std::vector<std::string>{"n1", "n4", "n3"});
  CHECK(pool.retired == std::vector<std::string>{"n2"});
  // Before: n1 -> n5, a blind guess. No evidence against an active host: nothing retired.
  CHECK(replace_bad_nodes(pool, {"gone"}).empty());
  CHECK(replace_bad_nodes(pool, {}).empty());
  CHECK(pool.active == std::vector<std::string>{"n1", "n4", "n3"});
  CHECK(replace_bad_nodes(pool, {"n3"}) == std::vector<std::string>{"n3 -> n5"});
  CHECK(replace_bad_nodes(pool, {"n1"}).empty());  // no spare left
  CHECK(pool.active == std::vector<std::string>{"n1", "n4", "n5"});

  NodePool two = split_pool({"a", "b", "c", "d"}, 2);
  CHECK(replace_bad_nodes(two, {"b", "a"}) == std::vector<std::string>{"b -> c", "a -> d"});
  CHECK(two.active == std::vector<std::string>{"d", "c"});

  CHECK_THROWS_WITH(split_pool({"a", "b"}, 2),
                    "--spares 2: the allocation has 2 hosts; at least one must stay active");
  CHECK_THROWS_WITH(split_pool({"a"}, 1),
                    "--spares 1: the allocation has 1 host; at least one must stay active");
}

// Launchers' failure reports, as they print them (srun 22.05 and MPICH 4.0.2 seen here; newer
// Hydra, Open MPI and PALS as published).
TEST_CASE("failed ranks are read from each launcher's report", "[attempts]") {
  struct Row {
    const char* name;
    const char* output;
    std::vector<FailedRank> failed;
  };
  const Row rows[] = {
      {"srun: killed, then the rest torn down",
       "srun: error: n02: task 1: Killed\n"
       "srun: launch/slurm: _step_signal: Terminating StepId=405.1\n"
       "srun: error: n01: task 0: Terminated\n",
       {{"n02", "1", "", "Killed", true}, {"n01", "0", "", "Terminated", true}}},
      {"srun: an exit code, tasks as a list",
       "srun: error: n02: tasks 4-7,9: Exited with exit code 3\n",
       {{"n02", "4-7,9", "", "Exited with exit code 3", false}}},
      {"Hydra 4.0: pid and host only",
       "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n"
       "=   PID 7304 RUNNING AT n02\n=   EXIT CODE: 9\n=   CLEANING UP REMAINING PROCESSES\n",
       {{"n02", "", "7304", "EXIT CODE: 9", true}}},
      {"Hydra 4.1: the rank too",
       "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n"
       "=   RANK 3 PID 1234 RUNNING AT c001-001\n=   KILLED BY SIGNAL: 9 (Killed)\n",
       {{"c001-001", "3", "1234", "KILLED BY SIGNAL: 9 (Killed)", true}}},
      {"Open MPI",
       "mpirun noticed that process rank 1 with PID 1234 on node n02 exited on signal 9 "
       "(Killed).\n",
       {{"n02", "1", "1234", "exited on signal 9 (Killed)", true}}},
      {"PALS, a signal and an exit code",
       "x1000c0s0b0n0: rank 3 died from signal 9\nx1000c0s0b0n1: rank 7 exited with code 1\n",
       {{"x1000c0s0b0n0", "3", "", "died from signal 9", true},
        {"x1000c0s0b0n1", "7", "", "exited with code 1", false}}},
      {"ezpz-rankenv: an exit code, a signal",
       "ezpz-rankenv: rank 1 (pid 7304) on n02: exited with code 1\n"
       "ezpz-rankenv: rank 3 (pid 7310) on n02.cluster: killed by signal 11 (SIGSEGV)\n",
       {{"n02", "1", "7304", "exited with code 1", false, true},
        {"n02.cluster", "3", "7310", "killed by signal 11 (SIGSEGV)", true, true}}},
      {"Open MPI: an exit code, no host",
       "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
       "the job to be terminated. The first process to do so was:\n\n"
       "  Process name: [[10246,1],1]\n  Exit code:    4\n",
       {{"", "1", "", "exited with code 4", false}}},
      {"nothing to report", "step 10 loss 0.1\nTraceback (most recent call last):\n", {}},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    CHECK(failed_ranks(row.output) == row.failed);
  }
}

TEST_CASE("a failed rank's status is read from each launcher's words", "[attempts]") {
  struct Row {
    FailedRank rank;
    std::optional<int> status;
  };
  const Row rows[] = {
      {{"n02", "4-7", "", "Exited with exit code 3", false}, 3},  // srun
      {{"n02", "1", "", "Killed", true}, 137},
      {{"n01", "0", "", "Terminated", true}, 143},
      {{"n02", "1", "", "Segmentation fault", true}, 139},
      {{"n02", "", "7304", "EXIT CODE: 9", true}, 137},  // Hydra 4.0: the signal as a code
      {{"n02", "", "7304", "EXIT CODE: 4", false}, 4},
      {{"c1", "3", "1234", "KILLED BY SIGNAL: 11 (Segmentation fault)", true}, 139},
      {{"n02", "1", "1234", "exited on signal 6 (Aborted)", true}, 134},  // Open MPI
      {{"x1", "3", "", "died from signal 9", true}, 137},                 // PALS
      {{"x1", "7", "", "exited with code 1", false}, 1},
      {{"n02", "1", "7304", "killed by signal 11 (SIGSEGV)", true, true}, 139},  // ezpz-rankenv
      {{"n02", "1", "", "exited with code 0", false}, std::nullopt},
      {{"n02", "1", "", "Something else", true}, std::nullopt},
      {{"n02", "1", "", "exited with code 99999999999", false}, std::nullopt},
  };
  for (const Row& row : rows) {
    INFO(row.rank.what);
    CHECK(rank_status(row.rank) == row.status);
  }
}

TEST_CASE("a failed rank is named with its host", "[attempts]") {
  CHECK(describe(FailedRank{"n02", "1", "", "Killed", true}) == "rank 1 on n02: Killed");
  CHECK(describe(FailedRank{"n02", "4-7", "", "Exited with exit code 3", false}) ==
        "ranks 4-7 on n02: Exited with exit code 3");
  CHECK(describe(FailedRank{"n02", "", "7304", "EXIT CODE: 9", true}) ==
        "a rank (pid 7304) on n02: EXIT CODE: 9");
  CHECK(describe(FailedRank{"n02", "1", "7304", "EXIT CODE: 9", true}) ==
        "rank 1 (pid 7304) on n02: EXIT CODE: 9");
}

TEST_CASE("a block placement says which ranks a host holds", "[attempts]") {
  const std::vector<std::string> hosts = {"n01.cluster", "n02.cluster", "n03.cluster"};
  CHECK(ranks_on_host(hosts, 1, "n02") == "1");
  CHECK(ranks_on_host(hosts, 4, "n03.cluster") == "8-11");
  CHECK(ranks_on_host(hosts, 4, "n09").empty());
  // -n 10 at 4 per host: the last host holds 2, and -n 5 at 4 leaves n03 empty.
  CHECK(ranks_on_host(hosts, 4, "n03", 10) == "8-9");
  CHECK(ranks_on_host(hosts, 4, "n02", 5) == "4");
  CHECK(ranks_on_host(hosts, 4, "n03", 5).empty());
  CHECK(host_of_rank(hosts, 4, "9") == "n03.cluster");
  CHECK(host_of_rank(hosts, 2, "1") == "n01.cluster");
  CHECK(host_of_rank(hosts, 4, "12").empty());
  CHECK(host_of_rank(hosts, 4, "0-3").empty());
}

// Before: MPICH's Hydra says nothing of a rank that exits 1, so `exit status 1: the job's own
// failure` and "failed_ranks": []. ezpz-rankenv's line names it, with the host and the pid Hydra
// names when the rank dies of a signal.
TEST_CASE("ezpz-rankenv's report names the failed rank for every launcher", "[attempts]") {
  AttemptFacts facts{
      .exit_status = 1,
      .output = "rank 0 step 1\nTraceback (most recent call last):\nValueError: boom\n" +
                exit_report("1", 7304, "n02", 1 << 8) + "\n"};
  facts.hosts = {"n01", "n02"};
  facts.ppn = 1;
  Classification c = classify_attempt(facts, {});
  CHECK(c.ending == Ending::application_error);
  CHECK(c.reason == "exit status 1: rank 1 (pid 7304) on n02: exited with code 1");
  CHECK(lines_before_failure(facts.output, 2) ==
        std::vector<std::string>{"Traceback (most recent call last):", "ValueError: boom"});
  CHECK(lines_before_failure(facts.output, 10).size() == 3);
  CHECK(lines_before_failure("step 1\nstep 2\n", 10).empty());

  // Hydra's own block for the same process adds nothing: one entry per rank and host.
  facts.exit_status = 139;
  facts.output = exit_report("1", 7304, "n02", SIGSEGV) +
                 "\n=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n"
                 "=   PID 7304 RUNNING AT n02\n=   EXIT CODE: 11\n";
  c = classify_attempt(facts, {});
  CHECK(c.ending == Ending::application_error);  // a segfault is the program's, not its node's
  CHECK(c.reason ==
        "exit status 139: rank 1 (pid 7304) on n02: killed by signal 11 (SIGSEGV): "
        "the program's own fault (signal 11), not its node's");
  CHECK(c.failed.size() == 1);
  // ... in whichever order the two reach ezpz: ezpz-rankenv's words are kept, in the first's place.
  facts.output =
      "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n"
      "=   PID 7304 RUNNING AT n02\n=   EXIT CODE: 11\n" +
      exit_report("1", 7304, "n02", SIGSEGV) + "\n";
  c = classify_attempt(facts, {});
  CHECK(c.reason ==
        "exit status 139: rank 1 (pid 7304) on n02: killed by signal 11 (SIGSEGV): "
        "the program's own fault (signal 11), not its node's");
  CHECK(c.failed.size() == 1);

  // Open MPI's exit-code report names no host: the placement does (-n 3 at 2 per host).
  facts = AttemptFacts{.exit_status = 4,
                       .output = "  Process name: [[10246,1],2]\n  Exit code:    4\n"};
  facts.hosts = {"n01", "n02"};
  facts.ppn = 2;
  facts.world_size = 3;
  c = classify_attempt(facts, {});
  CHECK(c.reason == "exit status 4: rank 2 on n02: exited with code 4");
}

TEST_CASE("the launcher's report decides between the job's error and the machine's", "[attempts]") {
  // srun exits 143 for both: its own report tells them apart.
  Classification exited =
      classify_attempt({.exit_status = 143,
                        .scheduler_job = true,
                        .output = "srun: error: n02: task 1: Exited with exit code 3\nsrun: error: "
                                  "n01: task 0: Terminated\n"},
                       {});
  CHECK(exited.ending == Ending::application_error);
  CHECK(exited.reason == "exit status 143: rank 1 on n02: Exited with exit code 3");
  CHECK(exited.failed.size() == 2);
  Classification killed = classify_attempt(
      {.exit_status = 143, .scheduler_job = true, .output = "srun: error: n02: task 1: Killed\n"},
      {});
  CHECK(killed.ending == Ending::bad_node);
  // Before: no host, and the blind rotation swapped n01. The report names the host: swap it.
  CHECK(killed.bad_hosts == std::vector<std::string>{"n02"});
  CHECK(killed.rule == "signal_death");
  CHECK(killed.death == SignalDeath{.ranks = "1", .host = "n02", .signal = SIGKILL});
  CHECK(killed.reason == "exit status 143: rank 1 on n02: Killed");
  // SIGPIPE is the pipeline's end, in every launcher's words: the job's, never a node's.
  for (const char* report :
       {"srun: error: n02: task 1: Broken pipe\n",
        "=   PID 7304 RUNNING AT n02\n=   KILLED BY SIGNAL: 13 (Broken pipe)\n",
        "mpirun noticed that process rank 1 with PID 7 on node n02 exited on signal 13 (Broken "
        "pipe).\n",
        "x1000c0s0b0n0: rank 1 died from signal 13\n"}) {
    INFO(report);
    CHECK(classify_attempt({.exit_status = 141, .scheduler_job = true, .output = report}, {})
              .ending == Ending::application_error);
  }
}

TEST_CASE("a bad-node signature explains a hang, and stops one early", "[attempts]") {
  const std::vector<BadNodePattern> ssh = {
      {"ssh-unreachable", R"(^ssh: Could not resolve hostname ([^:\s]+):)"}};
  const std::string output =
      "hi 0\nssh: Could not resolve hostname n03: Name or service not known\n";
  for (Watchdog watchdog : {Watchdog::idle, Watchdog::timeout, Watchdog::signature}) {
    Classification c = classify_attempt(
        {.exit_status = 143, .scheduler_job = true, .watchdog = watchdog, .output = output}, ssh);
    CHECK(c.ending == Ending::bad_node);
    CHECK(c.bad_hosts == std::vector<std::string>{"n03"});
    CHECK(c.reason == "exit status 143; bad node: n03");
  }
  BadNodeMatcher matcher(ssh);
  CHECK(matcher.hosts_in("ssh: Could not resolve hostname n03: Name or service not known") ==
        std::vector<std::string>{"n03"});
  CHECK(matcher.hosts_in("ssh: connect to host n03 port 22: Connection refused").empty());
  CHECK(BadNodeMatcher({}).empty());
  // A watchdog with no signature is its own ending; so is a success it did not stop.
  CHECK(
      classify_attempt(
          {.exit_status = 143, .scheduler_job = true, .watchdog = Watchdog::idle, .output = "hi\n"},
          ssh)
          .ending == Ending::never_started);
  CHECK(classify_attempt({.exit_status = 0, .scheduler_job = true, .output = output}, ssh).ending ==
        Ending::success);
}

TEST_CASE("spares match bad hosts by short name", "[attempts]") {
  NodePool pool = split_pool({"n01.cluster", "n02.cluster", "n03.cluster"}, 1);
  CHECK(replace_bad_nodes(pool, {"n02"}) == std::vector<std::string>{"n02.cluster -> n03.cluster"});
}

TEST_CASE("spares come from the hosts the plan leaves unused first", "[attempts]") {
  const std::vector<std::string> all = {"a", "b", "c", "d", "e"};
  NodePool unused = plan_pool({"a", "b"}, all, 2);  // --nhosts 2 --spares 2
  CHECK(unused.active == std::vector<std::string>{"a", "b"});
  CHECK(unused.spares == std::vector<std::string>{"c", "d"});
  NodePool taken = plan_pool(all, all, 1);  // every host planned: the last becomes the spare
  CHECK(taken.active == std::vector<std::string>{"a", "b", "c", "d"});
  CHECK(taken.spares == std::vector<std::string>{"e"});
  NodePool some = plan_pool({"a", "b", "c", "d"}, all, 2);  // one unused, one taken from the plan
  CHECK(some.active == std::vector<std::string>{"a", "b", "c"});
  CHECK(some.spares == std::vector<std::string>{"d", "e"});
  CHECK_THROWS_WITH(plan_pool({"a"}, {"a"}, 1),
                    "--spares 1: the allocation has 1 host; at least one must stay active");
}

TEST_CASE("a report without the rank is given it from the placement", "[attempts]") {
  AttemptFacts facts{.exit_status = 255,
                     .scheduler_job = true,
                     .output =
                         "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n"
                         "=   PID 7304 RUNNING AT n02\n=   EXIT CODE: 9\n"};
  facts.hosts = {"n01", "n02", "n03"};
  facts.ppn = 1;
  Classification c = classify_attempt(facts, {});
  CHECK(c.ending == Ending::bad_node);
  CHECK(c.reason == "exit status 255: rank 1 (pid 7304) on n02: EXIT CODE: 9");
}

// The bundled profiles' signatures against the lines they are for (the reference's Aurora and
// SunSpot examples; srun 22.05 and OpenSSH as seen here).
TEST_CASE("bundled bad-node patterns name the node in their machine's words", "[attempts]") {
  std::vector<MachineProfile> profiles = load_profiles(ezpz::testing::bundled_profile_files());
  auto patterns_of = [&](const std::string& name) {
    for (const MachineProfile& p : profiles) {
      if (p.name == name) return p.bad_node_patterns;
    }
    FAIL("no bundled profile " << name);
    return std::vector<BadNodePattern>{};
  };
  struct Row {
    const char* machine;
    const char* line;
    const char* host;
  };
  const Row rows[] = {
      {"aurora", "x4102c5s2b0n0.hsn.cm.aurora.alcf.anl.gov: shepherd died from signal 9",
       "x4102c5s2b0n0"},
      {"aurora", "x4102c5s2b0n0.hostmgmt2102.cm.aurora.alcf.anl.gov:  shepherd died from signal 9",
       "x4102c5s2b0n0"},
      {"sunspot", "x1921c0s3b0n0-hsn0.hsn.cm.sunspot.alcf.anl.gov: shepherd died from signal 9",
       "x1921c0s3b0n0"},
      {"generic-pbs", "ssh: Could not resolve hostname n02: Name or service not known", "n02"},
      {"generic-pbs", "ssh: connect to host n03 port 22: Connection refused", "n03"},
      {"generic-slurm",
       "srun: error: Task launch for StepId=405.0 failed on node n03: Communication connection "
       "failure",
       "n03"},
      {"perlmutter", "srun: error: Task launch for StepId=9.0 failed on node nid001234: Zero Bytes",
       "nid001234"},
      {"perlmutter", "srun: error: Node failure on nid001234", "nid001234"},
      {"frontier", "srun: error: Node failure on frontier01234", "frontier01234"},
      // Slurm's src/api/step_launch.c: "Task launch for %ps failed on node %s: %s", the reason
      // slurm_strerror's (SLURM_COMMUNICATIONS_CONNECTION_ERROR on a node that does not answer).
      {"frontier",
       "srun: error: Task launch for StepId=1234567.0 failed on node frontier01234: "
       "Communication connection failure",
       "frontier01234"},
      {"perlmutter",
       "srun: error: Task launch for StepId=1234567.0 failed on node nid001234: Communication "
       "connection failure",
       "nid001234"},
      {"generic-slurm", "srun: error: Node failure on n03", "n03"},
      {"polaris", "x3104c0s1b0n0.hsn.cm.polaris.alcf.anl.gov: shepherd died from signal 9",
       "x3104c0s1b0n0"},
      // The child PALS could not reach, not the node that printed the line (ALCF's Known Issues).
      {"polaris",
       "launch failed on x3104c0s1b0n0: Couldn't forward RPC launch("
       "ab751d77-e80a-4c54-b1c2-4e881f7e8c90) to child x3104c0s31b0n0.hsn.cm.polaris.alcf.anl.gov: "
       "Resource temporarily unavailable",
       "x3104c0s31b0n0"},
      {"aurora",
       "launch failed on x4102c5s2b0n0: Couldn't forward RPC launch(ab751d77) to child "
       "x4102c5s3b0n0.hsn.cm.aurora.alcf.anl.gov: Resource temporarily unavailable",
       "x4102c5s3b0n0"},
      {"sophia", "  Remote daemon: [[64415,0],1] on node sophia-gpu-05", "sophia-gpu-05"},
      // PALS's pings (ALCF Aurora, Known Issues, "Ping Failures"): the node that did not
      // answer, never the one that printed the line.
      {"aurora",
       "ping failed on x4304c1s6b0n0: No reply from "
       "x4307c2s6b0n0.hostmgmt2307.cm.aurora.alcf.anl.gov after 87s",
       "x4307c2s6b0n0"},
      {"aurora",
       "ping failed on x4707c6s4b0n0: Couldn't forward RPC "
       "ping(24c93b8c-3434-4fb5-a8f0-53cff4cbbe42) to child "
       "x4707c7s6b0n0.hostmgmt2707.cm.aurora.alcf.anl.gov: Resource temporarily unavailable",
       "x4707c7s6b0n0"},
      {"aurora",
       "ping RPC timeout from x4212c7s0b0n0.hostmgmt2212.cm.aurora.alcf.anl.gov after 120s",
       "x4212c7s0b0n0"},
      {"polaris",
       "ping failed on x3104c0s1b0n0: No reply from x3104c0s31b0n0.hsn.cm.polaris.alcf.anl.gov "
       "after 60s",
       "x3104c0s31b0n0"},
      {"sunspot", "ping RPC timeout from x1921c0s3b0n0.hostmgmt.cm.sunspot.alcf.anl.gov after 120s",
       "x1921c0s3b0n0"},
  };
  for (const Row& row : rows) {
    INFO(row.machine << ": " << row.line);
    CHECK(BadNodeMatcher(patterns_of(row.machine)).hosts_in(row.line) ==
          std::vector<std::string>{row.host});
  }
  CHECK(BadNodeMatcher(patterns_of("aurora"))
            .hosts_in("x4102c5s2b0n0.hsn.cm.aurora.alcf.anl.gov: shepherd died from signal 15")
            .empty());
  // "Application ... not found" names no node that failed.
  CHECK(BadNodeMatcher(patterns_of("aurora"))
            .hosts_in("ping failed on x4616c0s4b0n0: Application "
                      "047a3c9f-fb41-4595-a2ad-4a4d0ec1b6c1 not found")
            .empty());
}

// Before: a rank's own line matched the profile's ssh patterns: "bad node: github.com", n01
// swapped for a spare, every spare spent.
TEST_CASE("a bad-node line counts only from the launcher, and only for the job's hosts",
          "[attempts]") {
  const std::vector<BadNodePattern> ssh = {
      {"ssh-unreachable", R"(^ssh: connect to host (\S+) port \d+: )"},
      {"ssh-unresolved", R"(^ssh: Could not resolve hostname ([^:\s]+):)"}};
  const std::string rank_line = "ssh: connect to host github.com port 22: Connection timed out\n";
  AttemptFacts facts{
      .exit_status = 143, .scheduler_job = true, .watchdog = Watchdog::idle, .output = rank_line};
  facts.hosts = {"n01", "n02", "n03"};
  facts.ppn = 1;
  // A host outside the allocation, even in a launcher's line.
  CHECK(classify_attempt(facts, ssh).ending == Ending::never_started);
  // One of the job's hosts, printed by a rank (records tell): not the launcher's.
  facts.output = "ssh: Could not resolve hostname n02: Name or service not known\n";
  facts.launcher_output = "";
  CHECK(classify_attempt(facts, ssh).ending == Ending::never_started);
  // The same line from the launcher: scraped, with the pattern and the line.
  facts.launcher_output = facts.output;
  Classification c = classify_attempt(facts, ssh);
  CHECK(c.ending == Ending::bad_node);
  CHECK(c.bad_hosts == std::vector<std::string>{"n02"});
  CHECK(c.rule == "bad_node_patterns ssh-unresolved");
  CHECK(c.line == "ssh: Could not resolve hostname n02: Name or service not known");
  CHECK(among_hosts({"n01.cluster", "n02.cluster"}, "n02"));
  CHECK_FALSE(among_hosts({"n01"}, "github.com"));
  CHECK(among_hosts({}, "anything"));  // the hosts not known
}

// Before: SIGSEGV, SIGABRT and SIGKILL were all bad_node, every time: a program that crashes
// the same way burnt every spare.
TEST_CASE("a signal death is the node's once, the program's when it repeats", "[attempts]") {
  struct Row {
    const char* name;
    const char* report;
    SignalDeath previous;
    Ending ending;
    std::vector<std::string> bad_hosts;
    const char* rule;
  };
  const Row rows[] = {
      {"SIGKILL, first time: the host is suspect",
       "srun: error: n02: task 1: Killed\n",
       {},
       Ending::bad_node,
       {"n02"},
       "signal_death"},
      {"the same rank, the same signal, on the new host: the program's",
       "srun: error: n04: task 1: Killed\n",
       {.ranks = "1", .host = "n02", .signal = SIGKILL},
       Ending::application_error,
       {},
       "same_death_twice"},
      {"the same on the same host (no spare to move to): still the node's",
       "srun: error: n02: task 1: Killed\n",
       {.ranks = "1", .host = "n02", .signal = SIGKILL},
       Ending::bad_node,
       {"n02"},
       "signal_death"},
      {"another rank: another death",
       "srun: error: n04: task 3: Killed\n",
       {.ranks = "1", .host = "n02", .signal = SIGKILL},
       Ending::bad_node,
       {"n04"},
       "signal_death"},
      // Before: the node's the first time (signal_death, its host swapped).
      {"a segfault is the program's at once",
       "ezpz-rankenv: rank 1 (pid 7) on n04: killed by signal 11 (SIGSEGV)\n",
       {},
       Ending::application_error,
       {},
       "program_signal"},
      {"an abort is the program's at once",
       "ezpz-rankenv: rank 1 (pid 7) on n02: killed by signal 6 (SIGABRT)\n",
       {},
       Ending::application_error,
       {},
       "abort"},
      {"Hydra's words",
       "=   PID 7 RUNNING AT n02\n=   KILLED BY SIGNAL: 6 (Aborted)\n",
       {},
       Ending::application_error,
       {},
       "abort"},
      {"a host outside the job is not swapped",
       "srun: error: elsewhere: task 1: Killed\n",
       {},
       Ending::bad_node,
       {},
       "signal_death"},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    AttemptFacts facts{.exit_status = 137, .scheduler_job = true, .output = row.report};
    facts.hosts = {"n01", "n02", "n03", "n04"};
    facts.ppn = 1;
    facts.previous_death = row.previous;
    Classification c = classify_attempt(facts, {});
    CHECK(c.ending == row.ending);
    CHECK(c.bad_hosts == row.bad_hosts);
    CHECK(c.rule == row.rule);
  }
  AttemptFacts again{.exit_status = 137,
                     .scheduler_job = true,
                     .output = "srun: error: n04: task 1: Killed\n",
                     .previous_death = {.ranks = "1", .host = "n02", .signal = SIGKILL}};
  CHECK(classify_attempt(again, {}).reason ==
        "exit status 137: rank 1 on n04: Killed: it died the same way on n02 in the attempt "
        "before: the program's doing");
  again.output = "ezpz-rankenv: rank 1 (pid 7) on n02: killed by signal 6 (SIGABRT)\n";
  CHECK(classify_attempt(again, {}).reason ==
        "exit status 137: rank 1 (pid 7) on n02: killed by signal 6 (SIGABRT): the program "
        "aborted itself (an assertion, abort(), an uncaught exception)");
}

TEST_CASE("a killed launcher is named as the launcher's death, its ranks' reports the teardown",
          "[attempts]") {
  // mpiexec SIGKILLed: its proxies' ranks die after it, in whatever order.
  Classification c = classify_attempt(
      {.exit_status = 137,
       .scheduler_job = true,
       .output = "ezpz-rankenv: rank 1 (pid 7) on n02: killed by signal 9 (SIGKILL)\n",
       .launcher_signal = SIGKILL},
      {});
  CHECK(c.ending == Ending::launcher_died);
  CHECK(c.reason ==
        "exit status 137: the launcher itself died of signal 9 (SIGKILL); the ranks' statuses "
        "were lost with it");
  CHECK(worth_retrying(Ending::launcher_died));
  CHECK(to_string(Ending::launcher_died) == "launcher_died");
  // One of its proxies SIGKILLed on this node (the executor saw it and stopped the launcher).
  c = classify_attempt({.exit_status = 137,
                        .scheduler_job = true,
                        .output = "",
                        .launcher_signal = SIGKILL,
                        .launcher_part = "hydra_pmi_proxy (pid 7304)"},
                       {});
  CHECK(c.ending == Ending::launcher_died);
  CHECK(c.rule == "launcher_part_signal");
  CHECK(c.reason ==
        "exit status 137: the launcher's hydra_pmi_proxy (pid 7304) died of signal 9 (SIGKILL); "
        "the ranks' statuses were lost with it");
}

// The job's own faults: no spare, no retry, the rule and the line said.
TEST_CASE("the job's own faults are read from every line and never blame a node", "[attempts]") {
  struct Row {
    const char* name;
    int exit_status;
    std::string output;
    int world_size;
    Ending ending;
    const char* rule;
  };
  const Row rows[] = {
      {"ENOSPC on a checkpoint write", 1,
       "step 100\nOSError: [Errno 28] No space left on device: '/lus/ckpt/step_100.pt'\n"
       "ezpz-rankenv: rank 0 (pid 7) on n01: exited with code 1\n",
       2, Ending::application_error, "job_faults no-space"},
      {"CUDA out of memory", 1,
       "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n", 2,
       Ending::application_error, "job_faults out-of-memory"},
      {"std::bad_alloc, then SIGABRT", 134,
       "terminate called after throwing an instance of 'std::bad_alloc'\n"
       "srun: error: n02: task 1: Aborted\n",
       2, Ending::application_error, "job_faults out-of-memory"},
      {"the OOM killer's SIGKILL, its message visible", 137,
       "slurmstepd: error: Detected 1 oom_kill event in StepId=12.0. Some of the step tasks have "
       "been OOM Killed.\nsrun: error: n02: task 1: Out Of Memory\n",
       2, Ending::application_error, "job_faults out-of-memory"},
      {"a SIGKILL without it is the node's", 137, "srun: error: n02: task 1: Killed\n", 2,
       Ending::bad_node, "signal_death"},
      {"a launcher's fatal line fails a run that exited 0", 0,
       "step 3\nUR_RESULT_ERROR_OUT_OF_RESOURCES on rank 4\n", 8, Ending::application_error,
       "job_faults ur-out-of-resources"},
      {"NCCL's unhandled cuda error on every rank", 1,
       "NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled cuda error\n"
       "NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled cuda error\n",
       2, Ending::application_error, "job_faults nccl-cuda-error"},
      {"... on one rank of two: not the whole job's", 139,
       "NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled cuda error\n"
       "srun: error: n02: task 1: Segmentation fault\n",
       2, Ending::application_error, "program_signal"},
      {"a traceback in most ranks", 137,
       "Traceback (most recent call last):\nTraceback (most recent call last):\n"
       "srun: error: n02: task 1: Killed\n",
       3, Ending::application_error, "job_faults traceback"},
      {"a traceback in one rank of three", 137,
       "Traceback (most recent call last):\nsrun: error: n02: task 1: Killed\n", 3,
       Ending::bad_node, "signal_death"},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    AttemptFacts facts{.exit_status = row.exit_status, .scheduler_job = true, .output = row.output};
    facts.hosts = {"n01", "n02", "n03"};
    facts.ppn = 1;
    facts.world_size = row.world_size;
    Classification c = classify_attempt(facts, {});
    CHECK(c.ending == row.ending);
    CHECK(c.rule == row.rule);
    CHECK(c.bad_hosts.size() == (row.ending == Ending::bad_node ? 1u : 0u));
  }
  AttemptFacts full{.exit_status = 1,
                    .output = "OSError: [Errno 28] No space left on device: '/ckpt'\n"};
  Classification c = classify_attempt(full, {});
  CHECK(c.reason ==
        "exit status 1: out of disk space: \"OSError: [Errno 28] No space left on device: "
        "'/ckpt'\"");
  CHECK(c.line == "OSError: [Errno 28] No space left on device: '/ckpt'");
  // A clean exit's output is read only for the lines that fail even a status of 0.
  CHECK(classify_attempt({.exit_status = 0, .output = "OSError: No space left on device\n"}, {})
            .ending == Ending::success);
  CHECK(find_job_fault("OSError: No space left on device\n", 1, true).fault == nullptr);
  // A line that needs a share of the ranks says nothing when the world size is not known.
  CHECK(find_job_fault("Traceback (most recent call last):\n", 0).fault == nullptr);
}

// Before: PALS reports every rank's end; with all of them 0 (and the job failed on a fatal
// line), "rank 0 on x1: exited with code 0" was named as the application's error.
// MPICH 4.0.2's Hydra, run through a symlink whose directory has no hydra_pmi_proxy (seen here).
TEST_CASE("a launcher that failed before any rank started says so with its first line",
          "[attempts]") {
  const std::string hydra =
      "\n[mpiexec@vm] HYDU_create_process (utils/launch/launch.c:73): execvp error on file "
      "/opt/h/hydra_pmi_proxy (No such file or directory)\n"
      "[mpiexec@vm] main (ui/mpich/mpiexec.c:325): process manager error waiting for completion\n";
  AttemptFacts facts{.exit_status = 255, .output = hydra, .launcher_output = hydra};
  facts.ranks_started = 0;
  Classification c = classify_attempt(facts, {});
  CHECK(c.ending == Ending::application_error);
  CHECK(c.reason ==
        "exit status 255: the launcher failed before any rank started: [mpiexec@vm] "
        "HYDU_create_process (utils/launch/launch.c:73): execvp error on file "
        "/opt/h/hydra_pmi_proxy (No such file or directory)");
  CHECK(c.rule == "no_rank_started");
  CHECK(!worth_retrying(c.ending));
  facts.launcher_output = "";
  facts.output = "";
  CHECK(classify_attempt(facts, {}).reason ==
        "exit status 255: the launcher failed before any rank started");
  // Ranks started, or nobody knows: the job's own failure, as before.
  facts.ranks_started = 2;
  CHECK(classify_attempt(facts, {}).reason == "exit status 255: the job's own failure");
  facts.ranks_started = std::nullopt;
  CHECK(classify_attempt(facts, {}).reason == "exit status 255: the job's own failure");
}

TEST_CASE("a rank that exited 0 is never the failed rank", "[attempts]") {
  AttemptFacts facts{.exit_status = 1,
                     .scheduler_job = true,
                     .output =
                         "x1000c0s0b0n0: rank 0 exited with code 0\n"
                         "x1000c0s0b0n0: rank 1 exited with code 0\n"};
  Classification c = classify_attempt(facts, {});
  CHECK(c.failed.empty());
  CHECK(c.reason == "exit status 1: the job's own failure");
  facts.output += "x1000c0s0b1n0: rank 2 exited with code 3\n";
  CHECK(classify_attempt(facts, {}).reason ==
        "exit status 1: rank 2 on x1000c0s0b1n0: exited with code 3");
}

// Before: whichever report came first was the cause, a SIGTERMed bystander included.
TEST_CASE("the victim is blamed, not the ranks torn down after it", "[attempts]") {
  AttemptFacts facts{.exit_status = 137,
                     .scheduler_job = true,
                     .output =
                         "x1000c0s0b0n0: rank 0 died from signal 15\n"
                         "x1000c0s1b0n0: rank 1 died from signal 9\n"
                         "x1000c0s0b0n0: rank 2 died from signal 15\n"};
  Classification c = classify_attempt(facts, {});
  CHECK(c.ending == Ending::bad_node);
  CHECK(c.bad_hosts == std::vector<std::string>{"x1000c0s1b0n0"});
  CHECK(c.reason == "exit status 137: rank 1 on x1000c0s1b0n0: died from signal 9");
  REQUIRE(c.failed.size() == 3);
  CHECK(c.failed[1].ranks == "0");  // the innocent, after the victim, in their order
  CHECK(c.failed[2].ranks == "2");
  // srun's words: a task Killed among the Terminated.
  facts.output = "srun: error: n01: task 0: Terminated\nsrun: error: n03: tasks 4-7: Killed\n";
  c = classify_attempt(facts, {});
  CHECK(c.bad_hosts == std::vector<std::string>{"n03"});
  CHECK(c.reason == "exit status 137: ranks 4-7 on n03: Killed");
  // Only SIGTERMs: before, rank 0 on n01 was the victim and its host swapped. Nothing names a
  // node: the shape of a walltime, or of a job torn down from outside.
  facts.output = "srun: error: n01: task 0: Terminated\n";
  c = classify_attempt(facts, {});
  CHECK(c.ending == Ending::walltime);
  CHECK(c.bad_hosts.empty());
  CHECK(c.innocent.size() == 1);
}

TEST_CASE("the progress pattern tells a start-up hang from a mid-training one", "[attempts]") {
  struct Row {
    const char* line;
    Ending ending;
  };
  const Row rows[] = {{"step=10 loss=2.3", Ending::hang},
                      {"[rank0] iter: 4", Ending::hang},
                      {"Epoch 2", Ending::never_started},
                      {"epoch = 2", Ending::hang},
                      {"iteration:7", Ending::hang},
                      {"stepping up", Ending::never_started},
                      {"loading shards", Ending::never_started}};
  for (const Row& row : rows) {
    INFO(row.line);
    AttemptFacts facts{.exit_status = 124, .watchdog = Watchdog::idle, .output = row.line};
    CHECK(classify_attempt(facts, {}).ending == row.ending);
  }
  AttemptFacts mine{.exit_status = 124, .watchdog = Watchdog::idle, .output = "batch 7 done\n"};
  mine.progress_pattern = R"(^batch \d+)";
  CHECK(classify_attempt(mine, {}).ending == Ending::hang);
  CHECK(worth_retrying(Ending::never_started));
  // A launch does not compile the default: it must compile, and match the forms it names.
  const std::regex by_default{std::string(k_default_progress)};
  for (const char* line : {"step=3 loss=1.2", "iter: 10", "epoch=2", "iteration: 7"}) {
    INFO(line);
    CHECK(std::regex_search(line, by_default));
  }
  CHECK_NOTHROW(check_progress_pattern(std::string(k_default_progress)));
  CHECK_THROWS_WITH(check_progress_pattern("(step"),
                    Catch::StartsWith("--progress-pattern (step: invalid regular expression: "));
}
