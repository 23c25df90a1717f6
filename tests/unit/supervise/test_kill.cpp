#include <csignal>

#include "ezpz/supervise/kill.hpp"
#include "tests/catch.hpp"

using namespace ezpz::kill;
using namespace std::string_literals;

TEST_CASE("the run id is read from an environ block", "[kill]") {
  const std::string block = "PATH=/bin\0EZPZ_RUN_IDX=no\0EZPZ_RUN_ID=r1\0HOME=/h\0"s;
  CHECK(environ_value(block, "EZPZ_RUN_ID") == "r1");
  CHECK(environ_value(block, "HOME") == "/h");
  CHECK(environ_value(block, "PATH") == "/bin");
  CHECK_FALSE(environ_value(block, "EZPZ_RUN").has_value());
  CHECK_FALSE(environ_value("", "EZPZ_RUN_ID").has_value());
  CHECK(environ_value("EZPZ_RUN_ID=last"s, "EZPZ_RUN_ID") == "last");  // no trailing NUL
}

TEST_CASE("only tagged processes of the chosen run, never ours", "[kill]") {
  const std::vector<Process> all = {
      {10, "", "sleep 60"},  // untagged: a stranger, even with the same command
      {11, "r1", "mpiexec ..."}, {12, "r1", "sleep 60"},
      {13, "r2", "sleep 60"},    {14, "own", "ezpz kill --on-node"},
      {15, "r1", "ezpz kill"},  // ourselves
  };
  auto pids = [](const std::vector<Process>& ps) {
    std::vector<int> out;
    for (const Process& p : ps) out.push_back(p.pid);
    return out;
  };
  CHECK(pids(select_targets(all, "", 15, "own")) == std::vector<int>{11, 12, 13});
  CHECK(pids(select_targets(all, "r1", 15, "own")) == std::vector<int>{11, 12});
  CHECK(pids(select_targets(all, "r2", 15, "")) == std::vector<int>{13});
  CHECK(pids(select_targets(all, "", 99, "")) == std::vector<int>{11, 12, 13, 14, 15});
  CHECK(select_targets(all, "r9", 15, "").empty());
}

TEST_CASE("signals by name or number", "[kill]") {
  CHECK(parse_signal("TERM") == SIGTERM);
  CHECK(parse_signal("SIGINT") == SIGINT);
  CHECK(parse_signal("KILL") == SIGKILL);
  CHECK(parse_signal("USR1") == SIGUSR1);
  CHECK(parse_signal("9") == 9);
  CHECK_FALSE(parse_signal("0").has_value());
  CHECK_FALSE(parse_signal("65").has_value());
  CHECK_FALSE(parse_signal("term").has_value());
  CHECK_FALSE(parse_signal("SIGFOO").has_value());
  // Named in the table, but sent by number only: --signal's list is kill's own.
  CHECK_FALSE(parse_signal("SEGV").has_value());
  CHECK(parse_signal("11") == SIGSEGV);
}

TEST_CASE("report lines name the pid, the run and the command", "[kill]") {
  CHECK(describe({42, "r1", "sleep 60"}, "sent SIGTERM to") ==
        "sent SIGTERM to 42 (run r1): sleep 60");
  std::string long_command(200, 'x');
  CHECK(describe({1, "r", long_command}, "would signal") ==
        "would signal 1 (run r): " + std::string(117, 'x') + "...");
}

TEST_CASE("the launching ezpz is signalled first", "[kill]") {
  // ezpz (100, untagged) -> mpiexec (101) -> proxy (102) -> ranks (103, 104);
  // a remote node's proxy (201) under sshd (200).
  const std::vector<Process> targets = {
      {101, "r1", "mpiexec -n 2", 100},     {102, "r1", "hydra_pmi_proxy", 101},
      {103, "r1", "python3 train.py", 102}, {104, "r1", "python3 train.py", 102},
      {201, "r1", "hydra_pmi_proxy", 200},
  };
  auto parent_command = [](int pid) -> std::string {
    if (pid == 100) return "/opt/ezpz/bin/ezpz launch -- python3 train.py";
    if (pid == 200) return "sshd: user@notty";
    return "";
  };
  std::vector<Process> found = controllers(targets, parent_command, 999);
  REQUIRE(found.size() == 1);
  CHECK(found[0].pid == 100);
  CHECK(found[0].run_id == "r1");
  CHECK(found[0].command == "/opt/ezpz/bin/ezpz launch -- python3 train.py");
  CHECK(controllers(targets, parent_command, 100).empty());  // never ourselves
}

TEST_CASE("a process's job: PBS_JOBID, else SLURM_JOB_ID, else SLURM_JOBID", "[kill]") {
  auto job_in = [](const std::string& block) {
    return job_id_of([&](std::string_view name) { return environ_value(block, name); });
  };
  CHECK(job_in("PBS_JOBID=4242.pbs\0SLURM_JOB_ID=7\0"s) == "4242.pbs");
  CHECK(job_in("SLURM_JOBID=8\0SLURM_JOB_ID=7\0"s) == "7");
  CHECK(job_in("PBS_JOBID=\0SLURM_JOBID=8\0"s) == "8");  // empty is unset, as schedulers/ reads it
  CHECK(job_in("HOME=/h\0"s).empty());
}

TEST_CASE("a job's runs, and one line per run", "[kill]") {
  const std::vector<Process> all = {
      {.pid = 11,
       .run_id = "r1",
       .command = "mpiexec -n 2 sleep 9",
       .parent = 0,
       .job_id = "4242.pbs"},
      {.pid = 12, .run_id = "r2", .command = "sleep 9", .parent = 0, .job_id = "4243.pbs"},
      {.pid = 13, .run_id = "r1", .command = "sleep 9", .parent = 0, .job_id = "4242.pbs"},
      {.pid = 14, .run_id = "r3", .command = "sleep 8", .parent = 0, .job_id = ""},
  };
  std::vector<Process> job = of_job(all, "4242.pbs");
  REQUIRE(job.size() == 2);
  CHECK(job[0].pid == 11);
  CHECK(job[1].pid == 13);
  CHECK(of_job(all, "4242").empty());  // a job id is matched whole
  CHECK(describe_runs(all) == std::vector<std::string>{
                                  "r1 (job 4242.pbs): 2 processes: mpiexec -n 2 sleep 9",
                                  "r2 (job 4243.pbs): 1 process: sleep 9",
                                  "r3: 1 process: sleep 8",
                              });
}
