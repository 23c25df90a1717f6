// The fixture corpus (tests/fixtures/verdicts, README.md there): one real-format log per
// incident type, each with the verdict, the rule, the bad hosts and the victim it must give,
// with the bundled profile of the machine it comes from.
#include "ezpz/supervise/explain.hpp"

#include "ezpz/supervise/run_record.hpp"
#include "tests/catch.hpp"
#include "tests/support/files.hpp"

using namespace ezpz;

namespace {

std::vector<BadNodePattern> bundled_patterns(const std::string& machine) {
  for (const MachineProfile& p : load_profiles(ezpz::testing::bundled_profile_files())) {
    if (p.name == machine) return p.bad_node_patterns;
  }
  FAIL("no bundled profile " << machine);
  return {};
}

std::string fixture(const std::string& name) {
  return ezpz::testing::read_text_file(EZPZ_SOURCE_DIR "/tests/fixtures/verdicts/" + name);
}

}  // namespace

TEST_CASE("each fixture log gives its verdict, rule, bad hosts and victim", "[explain]") {
  struct Row {
    const char* file;
    const char* machine;
    int exit_status;
    std::vector<std::string> hosts;
    int world_size;
    const char* ending;
    const char* rule;
    std::vector<std::string> bad_hosts;
    const char* victim;  // the first victim, as describe() says it; "" when none
    std::size_t innocent;
  };
  const Row rows[] = {
      {"pals-victim-teardown.ER",
       "aurora",
       137,
       {},
       0,
       "bad_node",
       "signal_death",
       {"x4102c5s3b0n0.hostmgmt2102.cm.aurora.alcf.anl.gov"},
       "rank 12 on x4102c5s3b0n0.hostmgmt2102.cm.aurora.alcf.anl.gov: died from signal 9",
       3},
      {"pals-rpc-child.ER",
       "polaris",
       1,
       {},
       0,
       "bad_node",
       "bad_node_patterns pals-rpc-child",
       {"x3104c0s31b0n0"},
       "",
       0},
      {"pals-shepherd.ER",
       "aurora",
       1,
       {},
       0,
       "bad_node",
       "bad_node_patterns pals-shepherd",
       {"x4102c5s2b0n0"},
       "rank 12 on x4102c5s2b0n0.hsn.cm.aurora.alcf.anl.gov: died from signal 9",
       1},
      {"pals-all-exited-0.ER", "polaris", 1, {}, 0, "application_error", "", {}, "", 0},
      {"ur-out-of-resources.ER",
       "aurora",
       0,
       {},
       0,
       "application_error",
       "job_faults ur-out-of-resources",
       {},
       "",
       0},
      {"slurm-srun-killed.out",
       "perlmutter",
       137,
       {},
       0,
       "bad_node",
       "signal_death",
       {"nid001235"},
       "ranks 4-7 on nid001235: Killed",
       1},
      {"slurm-node-failure.out",
       "perlmutter",
       1,
       {},
       0,
       "bad_node",
       "bad_node_patterns node-failure",
       {"nid001236"},
       "ranks 8-11 on nid001236: Killed",
       0},
      {"slurm-oom-killer.out",
       "perlmutter",
       137,
       {},
       0,
       "application_error",
       "job_faults out-of-memory",
       {},
       "rank 3 on nid001234: Out Of Memory",
       1},
      {"enospc-checkpoint.out",
       "perlmutter",
       1,
       {},
       0,
       "application_error",
       "job_faults no-space",
       {},
       "rank 0 on nid001234: Exited with exit code 1",
       1},
      {"cuda-out-of-memory.out",
       "polaris",
       1,
       {},
       0,
       "application_error",
       "job_faults out-of-memory",
       {},
       "rank 0 on x3104c0s1b0n0: exited with code 1",
       0},
      {"nccl-unhandled-cuda-error.out",
       "perlmutter",
       1,
       {},
       4,
       "application_error",
       "job_faults nccl-cuda-error",
       {},
       "ranks 0-3 on nid001234: Exited with exit code 1",
       0},
      {"tracebacks-most-ranks.out",
       "perlmutter",
       1,
       {},
       4,
       "application_error",
       "job_faults traceback",
       {},
       "ranks 0-2 on nid001234: Exited with exit code 1",
       1},
      // Before: bad_node, n02 retired for the program's own segfault.
      {"hydra-bad-termination.ER",
       "generic-pbs",
       139,
       {"n01", "n02"},
       2,
       "application_error",
       "program_signal",
       {},
       "rank 1 (pid 18592) on n02: KILLED BY SIGNAL: 11 (Segmentation fault)",
       0},
      {"ssh-unresolved.ER",
       "generic-pbs",
       255,
       {"n01", "n02"},
       2,
       "bad_node",
       "bad_node_patterns ssh-unresolved",
       {"n02"},
       "",
       0},
      // A saved log cannot tell a rank's line from the launcher's: the job's hosts can.
      {"rank-prints-ssh-error.ER",
       "generic-pbs",
       1,
       {"n01", "n02"},
       2,
       "application_error",
       "",
       {},
       "",
       0},
      {"openmpi-lost-daemon.ER",
       "sophia",
       1,
       {},
       0,
       "bad_node",
       "bad_node_patterns lost-daemon",
       {"sophia-gpu-05"},
       "",
       0},
      {"pals-ping-failed.ER",
       "aurora",
       137,
       {},
       0,
       "bad_node",
       "bad_node_patterns pals-ping",
       {"x4307c2s6b0n0"},
       "rank 12 on x4307c2s6b0n0.hostmgmt2307.cm.aurora.alcf.anl.gov: died from signal 9",
       1},
      {"flux-node-failure.out",
       "generic-flux",
       1,
       {},
       0,
       "bad_node",
       "bad_node_patterns flux-node-failure",
       {"n03"},
       "",
       0},
      {"flux-task-exit.out",
       "generic-flux",
       3,
       {},
       0,
       "application_error",
       "",
       {},
       "rank 1 (pid 7304) on n02: exited with code 3",
       0},
      {"flux-timeout.out", "generic-flux", 142, {}, 0, "walltime", "allocation_expired", {}, "", 0},
  };
  for (const Row& row : rows) {
    INFO(row.file);
    const Explanation e = explain({.output = fixture(row.file),
                                   .exit_status = row.exit_status,
                                   .hosts = row.hosts,
                                   .world_size = row.world_size,
                                   .patterns = bundled_patterns(row.machine)});
    CHECK(to_string(e.classification.ending) == row.ending);
    CHECK(e.classification.rule == row.rule);
    CHECK(e.classification.bad_hosts == row.bad_hosts);
    CHECK((e.victims.empty() ? std::string() : describe(e.victims.front())) == row.victim);
    CHECK(e.innocent.size() == row.innocent);
  }
}

// gloo's lost peer names an address: resolved to one of the job's hosts (as the attempt loop
// resolves it), that host is the bad node; in a saved log, where nothing resolves, the address
// is never blamed.
TEST_CASE("the gloo fixture: the address's host is the victim, never the address", "[explain]") {
  ExplainInput in{.output = fixture("gloo-peer-lost.out"),
                  .exit_status = 1,
                  .hosts = {"nid001234", "nid001235"},
                  .world_size = 4,
                  .patterns = bundled_patterns("perlmutter")};
  const Explanation saved = explain(in);
  CHECK(to_string(saved.classification.ending) == "application_error");
  CHECK(saved.classification.bad_hosts.empty());
  in.address_hosts = {{"10.249.0.12", "nid001235"}};
  const Explanation resolved = explain(in);
  CHECK(to_string(resolved.classification.ending) == "bad_node");
  CHECK(resolved.classification.rule == "peer_lost gloo-closed-by-peer");
  CHECK(resolved.classification.bad_hosts == std::vector<std::string>{"nid001235"});
}

TEST_CASE("an explanation reads as a ticket wants it, in text and JSON", "[explain]") {
  const Explanation e = explain({.output = fixture("slurm-srun-killed.out"),
                                 .exit_status = 137,
                                 .hosts = {},
                                 .world_size = 0,
                                 .patterns = bundled_patterns("perlmutter")});
  CHECK(explanation_text(e) ==
        "verdict: bad_node\n"
        "reason: exit status 137: ranks 4-7 on nid001235: Killed\n"
        "rule: signal_death\n"
        "bad host: nid001235: ranks 4-7 on nid001235: Killed\n"
        "exit status: 137\n"
        "victim: ranks 4-7 on nid001235: Killed\n"
        "innocent: ranks 0-3 on nid001234: Terminated\n");
  const std::string json = explanation_json(e, "slurm-2718281.out");
  CHECK(json.find("\"source\": \"slurm-2718281.out\"") != std::string::npos);
  CHECK(json.find("\"classification\": \"bad_node\"") != std::string::npos);
  CHECK(json.find("\"innocent\": [") != std::string::npos);
}
