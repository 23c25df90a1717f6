#include "ezpz/core/error.hpp"
#include "schedulers/scheduler.hpp"
#include "tests/catch.hpp"
#include "tests/support/fake_files.hpp"

using namespace ezpz;
using ezpz::testing::FakeCommands;
using ezpz::testing::FakeFiles;

TEST_CASE("scheduler precedence: flag, EZPZ_SCHEDULER, Flux, PBS, Slurm, local", "[scheduler]") {
  struct Row {
    std::optional<std::string> flag;
    Env env;
    SchedulerKind kind;
    std::string rule;
  };
  const Env both = {{"PBS_JOBID", "1.pbs"}, {"SLURM_JOB_ID", "2"}};
  const std::vector<Row> rows = {
      {"slurm", both, SchedulerKind::slurm, "--scheduler slurm"},
      {"LOCAL", both, SchedulerKind::local, "--scheduler LOCAL"},
      {std::nullopt,
       {{"EZPZ_SCHEDULER", "slurm"}, {"PBS_JOBID", "1"}},
       SchedulerKind::slurm,
       "EZPZ_SCHEDULER=slurm"},
      {std::nullopt, both, SchedulerKind::pbs, "PBS_JOBID is set"},
      // A Flux instance started inside a PBS job: its own launcher reaches the hosts.
      {std::nullopt,
       {{"FLUX_URI", "local:///tmp/flux-1/local-0"}, {"PBS_JOBID", "1.pbs"}},
       SchedulerKind::flux,
       "FLUX_URI is set"},
      {"flux", {}, SchedulerKind::flux, "--scheduler flux"},
      {std::nullopt,
       {{"FLUX_URI", ""}, {"SLURM_JOB_ID", "2"}},
       SchedulerKind::slurm,
       "SLURM_JOB_ID is set"},
      {std::nullopt, {{"SLURM_JOBID", "2"}}, SchedulerKind::slurm, "SLURM_JOBID is set"},
      {std::nullopt,
       {{"SLURM_JOB_ID", ""}},
       SchedulerKind::local,
       "no PBS or Slurm job variables are set"},
      {std::nullopt, {}, SchedulerKind::local, "no PBS or Slurm job variables are set"},
  };
  for (const Row& row : rows) {
    SchedulerChoice choice = choose_scheduler(row.flag, row.env);
    CHECK(choice.kind == row.kind);
    CHECK(choice.rule == row.rule);
  }
  CHECK_THROWS_WITH(choose_scheduler(std::string("lsf"), {}),
                    "--scheduler: unknown scheduler \"lsf\"; expected pbs, slurm, flux or local");
  CHECK_THROWS_WITH(
      choose_scheduler(std::nullopt, {{"EZPZ_SCHEDULER", "sge"}}),
      "EZPZ_SCHEDULER: unknown scheduler \"sge\"; expected pbs, slurm, flux or local");
}

TEST_CASE("pbs nodefile with repeated hosts yields unique hosts in order", "[scheduler]") {
  FakeFiles files{{"/aux/1.pbs", "n02.x\nn02.x\nn01.x\nn01.x\n"}};
  Allocation allocation =
      read_allocation(SchedulerKind::pbs, {{"PBS_JOBID", "1.pbs"}, {"PBS_NODEFILE", "/aux/1.pbs"}},
                      files, FakeCommands{}, "me");
  CHECK(allocation.hosts == std::vector<std::string>{"n02.x", "n01.x"});
  CHECK(allocation.job_id == "1.pbs");
  CHECK(allocation.slots_per_host == 2);
  CHECK(allocation.slots_source == "PBS_NODEFILE lists each host 2 times");
  CHECK(allocation.nodefile.empty());  // it repeats hosts: ezpz writes its own
}

TEST_CASE("pbs nodefile listing each host once is handed to the launcher as is", "[scheduler]") {
  FakeFiles files{{"/aux/1.pbs", "n01\nn02\n"}};
  Allocation allocation =
      read_allocation(SchedulerKind::pbs, {{"PBS_JOBID", "1.pbs"}, {"PBS_NODEFILE", "/aux/1.pbs"}},
                      files, FakeCommands{}, "me");
  CHECK(allocation.nodefile == "/aux/1.pbs");
  CHECK_FALSE(allocation.slots_per_host);
}

TEST_CASE("uneven pbs slot counts give no slots per host", "[scheduler]") {
  FakeFiles files{{"/nf", "n01\nn01\nn02\n"}};
  Allocation allocation = read_allocation(
      SchedulerKind::pbs, {{"PBS_JOBID", "1"}, {"PBS_NODEFILE", "/nf"}}, files, FakeCommands{}, "");
  CHECK(allocation.hosts.size() == 2);
  CHECK_FALSE(allocation.slots_per_host);
}

TEST_CASE("broken pbs environments fail naming the variable or file", "[scheduler]") {
  FakeFiles files{{"/empty", "\n# nothing\n"}};
  CHECK_THROWS_WITH(
      read_allocation(SchedulerKind::pbs, {{"PBS_JOBID", "9.pbs"}}, files, FakeCommands{}, ""),
      "PBS_JOBID is set (9.pbs) but PBS_NODEFILE is not: run inside the PBS job, "
      "or set --scheduler local");
  CHECK_THROWS_WITH(
      read_allocation(SchedulerKind::pbs, {{"PBS_JOBID", "9"}, {"PBS_NODEFILE", "/missing"}}, files,
                      FakeCommands{}, ""),
      "PBS_NODEFILE: /missing: No such file or directory");
  CHECK_THROWS_WITH(
      read_allocation(SchedulerKind::pbs, {{"PBS_JOBID", "9"}, {"PBS_NODEFILE", "/empty"}}, files,
                      FakeCommands{}, ""),
      "PBS_NODEFILE /empty: no hosts in file");
}

TEST_CASE("slurm allocation comes from the nodelist and the tasks asked for", "[scheduler]") {
  Env env = {{"SLURM_JOB_ID", "42"},
             {"SLURM_JOB_NODELIST", "n[01-03],login1"},
             {"SLURM_NTASKS_PER_NODE", "2"}};
  Allocation allocation =
      read_allocation(SchedulerKind::slurm, env, FakeFiles{}, FakeCommands{}, "");
  CHECK(allocation.hosts == std::vector<std::string>{"n01", "n02", "n03", "login1"});
  CHECK(allocation.job_id == "42");
  CHECK(allocation.slots_per_host == 2);
  Env old_names = {{"SLURM_JOBID", "43"}, {"SLURM_NODELIST", "nid[001-002]"}};
  CHECK(read_allocation(SchedulerKind::slurm, old_names, FakeFiles{}, FakeCommands{}, "")
            .hosts.size() == 2);
}

TEST_CASE("broken slurm environments fail naming the variable", "[scheduler]") {
  CHECK_THROWS_WITH(
      read_allocation(SchedulerKind::slurm, {{"SLURM_JOB_ID", "42"}}, FakeFiles{}, FakeCommands{},
                      ""),
      "SLURM_JOB_ID is set (42) but neither SLURM_JOB_NODELIST nor SLURM_NODELIST is");
  CHECK_THROWS_WITH(
      read_allocation(SchedulerKind::slurm, {{"SLURM_JOB_ID", "1"}, {"SLURM_JOB_NODELIST", "n[1-"}},
                      FakeFiles{}, FakeCommands{}, ""),
      "hostlist \"n[1-\": unclosed '['");
  CHECK_THROWS_WITH(
      read_allocation(
          SchedulerKind::slurm,
          {{"SLURM_JOB_ID", "1"}, {"SLURM_NODELIST", "n1"}, {"SLURM_NTASKS_PER_NODE", "x"}},
          FakeFiles{}, FakeCommands{}, ""),
      "SLURM_NTASKS_PER_NODE=x: expected a positive integer");
}

TEST_CASE("a flux allocation's hosts are what flux hostlist local prints", "[scheduler]") {
  const Env env = {{"FLUX_URI", "local:///tmp/flux-1/local-0"}, {"FLUX_ENCLOSING_ID", "f2x5"}};
  const FakeCommands flux{{"flux hostlist local", "tuolumne[1001-1002],tuolumne1010\n"}};
  Allocation allocation = read_allocation(SchedulerKind::flux, env, FakeFiles{}, flux, "");
  CHECK(allocation.scheduler == SchedulerKind::flux);
  CHECK(allocation.hosts ==
        std::vector<std::string>{"tuolumne1001", "tuolumne1002", "tuolumne1010"});
  // In the instance's shell FLUX_JOB_ID is unset and the instance's own id is enclosing.
  CHECK(allocation.job_id == "f2x5");
  CHECK_FALSE(allocation.slots_per_host);
  Env in_a_job = env;
  in_a_job["FLUX_JOB_ID"] = "f3Ab";
  CHECK(read_allocation(SchedulerKind::flux, in_a_job, FakeFiles{}, flux, "").job_id == "f3Ab");
}

TEST_CASE("broken flux environments fail naming the variable or the program", "[scheduler]") {
  const Env env = {{"FLUX_URI", "local:///tmp/f"}};
  CHECK_THROWS_WITH(
      read_allocation(SchedulerKind::flux, {}, FakeFiles{}, FakeCommands{}, ""),
      "FLUX_URI is not set: run inside a Flux instance (flux alloc, flux batch), or set "
      "--scheduler local");
  CHECK_THROWS_WITH(
      read_allocation(SchedulerKind::flux, env, FakeFiles{}, FakeCommands{}, ""),
      "FLUX_URI is set (local:///tmp/f) but flux hostlist local failed: flux is not on PATH; run "
      "inside the Flux instance, or set --scheduler local");
  CHECK_THROWS_WITH(read_allocation(SchedulerKind::flux, env, FakeFiles{},
                                    FakeCommands{{"flux hostlist local", "\n"}}, ""),
                    "flux hostlist local: no hosts");
  CHECK_THROWS_WITH(read_allocation(SchedulerKind::flux, env, FakeFiles{},
                                    FakeCommands{{"flux hostlist local", "n[1-\n"}}, ""),
                    "flux hostlist local: hostlist \"n[1-\": unclosed '['");
  CHECK_THROWS_WITH(read_allocation(SchedulerKind::flux, env, FakeFiles{},
                                    FakeCommands{{"flux hostlist local", "n1,a;b"}}, ""),
                    "flux hostlist local: \"a;b\" is not a host name: it holds \";\" (letters, "
                    "digits, '-', '_' and '.' only)");
}

TEST_CASE("no scheduler means this host alone", "[scheduler]") {
  Allocation allocation =
      read_allocation(SchedulerKind::local, {}, FakeFiles{}, FakeCommands{}, "laptop");
  CHECK(allocation.hosts == std::vector<std::string>{"laptop"});
  CHECK(allocation.scheduler == SchedulerKind::local);
}

TEST_CASE("host names follow RFC 1123, and the _ of some schedulers", "[scheduler]") {
  for (const char* host :
       {"n01", "x4102c5s2b0n0.hostmgmt.cm.aurora", "nid001234", "node_7", "10.0.0.1", "A-b.C"}) {
    INFO(host);
    CHECK_FALSE(host_name_problem(host));
  }
  struct Row {
    std::string host, problem;
  };
  const std::vector<Row> rows = {
      {std::string("n0\0x", 4), "it holds \"\\x00\" (letters, digits, '-', '_' and '.' only)"},
      {"n01;rm", "it holds \";\" (letters, digits, '-', '_' and '.' only)"},
      {"a..b", "an empty label (two dots, or a dot at either end)"},
      {".a", "an empty label (two dots, or a dot at either end)"},
      {"-a", "a label that starts or ends with '-'"},
      {std::string(64, 'a'), "a label of 64 characters (at most 63)"},
      {std::string(5000, 'a'), "5000 characters (at most 253)"},
  };
  for (const Row& row : rows) {
    INFO(row.host.substr(0, 20));
    CHECK(host_name_problem(row.host) == row.problem);
  }
}

TEST_CASE("a hostfile line that is not a host name is refused with its line", "[scheduler]") {
  CHECK_THROWS_WITH(parse_hostfile("n01\n\nn0\x01x slots=2\n", "PBS_NODEFILE /var/spool/1.pbs"),
                    "PBS_NODEFILE /var/spool/1.pbs:3: \"n0\\x01x\" is not a host name: it holds "
                    "\"\\x01\" (letters, digits, '-', '_' and '.' only)");
  CHECK_THROWS_WITH(parse_hostfile(std::string(300, 'a') + "\n", "--hostfile h"),
                    "--hostfile h:1: \"" + std::string(40, 'a') +
                        "\"... (300 characters) is not a host name: 300 characters (at most 253)");
  CHECK_THROWS_WITH(read_allocation(SchedulerKind::slurm,
                                    {{"SLURM_JOB_ID", "1"}, {"SLURM_JOB_NODELIST", "n[1-2],a;b"}},
                                    FakeFiles{}, FakeCommands{}, ""),
                    "SLURM_JOB_NODELIST: \"a;b\" is not a host name: it holds \";\" (letters, "
                    "digits, '-', '_' and '.' only)");
}

// Issue 45: only the host was checked, and Hydra read the rest ("user=" reached ssh's argv as
// "-F/path/evilcfg@n01"); a PBS nodefile's "n01 -x" was passed on too.
TEST_CASE("every word of a host line is checked, not only the host", "[scheduler]") {
  struct Row {
    const char* text;
    const char* source;
    const char* where_word;  // "SOURCE:LINE: \"WORD\"" of the message
  };
  const std::vector<Row> rows = {
      {"n01\nn02 user=-F/path/evilcfg\n", "--hostfile h",
       "--hostfile h:2: \"user=-F/path/evilcfg\""},
      {"n01 -x\n", "PBS_NODEFILE /var/spool/1.pbs", "PBS_NODEFILE /var/spool/1.pbs:1: \"-x\""},
      {"n01:2:ib0\n", "h", "h:1: \":2:ib0\""},
      {"n01 slots=4\tuser=x\n", "h", "h:1: \"slots=4\\tuser=x\""},
  };
  for (const Row& row : rows) {
    INFO(row.text);
    CHECK_THROWS_WITH(parse_hostfile(row.text, row.source),
                      std::string(row.where_word) +
                          " is not a host's slot count (host, host:N, host slots=N, host "
                          "max_slots=N, host N)");
  }
  CHECK(parse_hostfile("n01 slots=4 max_slots=8 # rack 1\nn02\t4\nn03:2 max-slots=2\n") ==
        std::vector<std::string>{"n01", "n02", "n03"});
}

TEST_CASE("hostfiles accept comments, slots and hydra's host:n form", "[scheduler]") {
  CHECK(parse_hostfile("# head\nn01 slots=4\nn02:2\n\n  n03  \r\n") ==
        std::vector<std::string>{"n01", "n02", "n03"});
  CHECK(unique_hosts({"a.x", "b", "a.y", "b"}) == std::vector<std::string>{"a.x", "b"});
}

TEST_CASE("a host's short name is the text before its first dot; an IP address is whole",
          "[scheduler]") {
  struct Row {
    std::string host, short_name;
  };
  const std::vector<Row> rows = {
      {"x4102c5s2b0n0.hostmgmt.cm.aurora", "x4102c5s2b0n0"},
      {"n01", "n01"},
      {"192.0.2.1", "192.0.2.1"},  // was "192": 192.0.2.1 and 192.0.2.2 one host
      {"10.0.0.255", "10.0.0.255"},
      {"::1", "::1"},
      {"::ffff:192.0.2.1", "::ffff:192.0.2.1"},
      {"256.0.0.1", "256"},  // not an address: a name whose first label is a number
      {"1.2.3", "1"},
      {"1.2.3.4.5", "1"},
      {"123.example.org", "123"},
  };
  for (const Row& row : rows) {
    INFO(row.host);
    CHECK(short_host_name(row.host) == row.short_name);
  }
  CHECK(unique_hosts({"192.0.2.1", "192.0.2.2", "192.0.2.1"}) ==
        std::vector<std::string>{"192.0.2.1", "192.0.2.2"});
  FakeFiles files{{"/nf", "192.0.2.1\n192.0.2.1\n192.0.2.2\n192.0.2.2\n"}};
  Allocation allocation = read_allocation(
      SchedulerKind::pbs, {{"PBS_JOBID", "1"}, {"PBS_NODEFILE", "/nf"}}, files, FakeCommands{}, "");
  CHECK(allocation.hosts == std::vector<std::string>{"192.0.2.1", "192.0.2.2"});
  CHECK(allocation.slots_per_host == 2);
}

namespace {
const std::function<void(double)> k_no_pause = [](double) {};
}  // namespace

TEST_CASE("the job holding this node, from qstat or squeue", "[scheduler]") {
  const auto on_path = [](std::string_view) { return true; };
  const FakeCommands both{{"qstat -fn1wru me",
                           "7.pbs me debug a 1 1 64 -- 01:00 R 00:01 x9/0*64\n"
                           "8.pbs me debug b 1 2 128 -- 01:00 R 00:01 x1/0*64+x2/0*64\n"
                           "9.pbs me debug c -- 2 128 -- 01:00 Q -- --\n"},
                          {"squeue -h -t R -o %i %N -u me", "41 n[01-02]\n42 n[03-04]\n"}};
  const Env me = {{"USER", "me"}};
  JobLookup pbs = find_job_holding("x2.cm.site", me, both, on_path, k_no_pause);
  REQUIRE(pbs.job);
  CHECK(pbs.job->kind == SchedulerKind::pbs);
  CHECK(pbs.job->job_id == "8.pbs");
  CHECK(pbs.job->hosts == std::vector<std::string>{"x1", "x2"});
  JobLookup slurm = find_job_holding("n04", me, both, on_path, k_no_pause);
  REQUIRE(slurm.job);
  CHECK(slurm.job->job_id == "42");
  CHECK(slurm.job->hosts == std::vector<std::string>{"n03", "n04"});
  CHECK(slurm.asked == std::vector<std::string>{"qstat", "squeue"});
  // A queued job's host column is "--": never a match. No job: both asked, none found.
  JobLookup none = find_job_holding("elsewhere", me, both, on_path, k_no_pause);
  CHECK_FALSE(none.job);
  CHECK(none.asked == std::vector<std::string>{"qstat", "squeue"});
  // A client that cannot answer (no server) is not an error: said, and skipped.
  JobLookup failing = find_job_holding("n04", {}, both, on_path, k_no_pause);
  CHECK_FALSE(failing.job);
  CHECK(failing.asked.empty());
  CHECK(failing.failed.size() == 2);
  // Neither on PATH: nothing asked.
  JobLookup absent = find_job_holding(
      "n04", me, both, [](std::string_view) { return false; }, k_no_pause);
  CHECK(absent.asked.empty());
  CHECK(absent.failed.empty());
}

// qstat for a moment without its server (Issue 44): asked again, 5 times in all with a growing
// pause, then said with qstat's words; any other failure is said at once.
TEST_CASE("a scheduler client's failure of the moment is asked again", "[scheduler]") {
  class Flaky final : public CommandReader {
   public:
    Flaky(std::vector<std::string> failures, std::string answer)
        : failures_(std::move(failures)), answer_(std::move(answer)) {}
    std::string output(const std::vector<std::string>&) const override {
      if (calls_ < failures_.size()) throw Error(failures_[calls_++]);
      ++calls_;
      return answer_;
    }
    mutable std::size_t calls_ = 0;

   private:
    std::vector<std::string> failures_;
    std::string answer_;
  };
  const std::string job = "8.pbs me debug b 1 2 128 -- 01:00 R 00:01 x1/0*64+x2/0*64\n";
  const auto qstat_only = [](std::string_view program) { return program == "qstat"; };
  struct Row {
    const char* name;
    std::vector<std::string> failures;
    std::size_t calls;
    std::vector<double> pauses;
    bool found;
    std::vector<std::string> failed;
  };
  const std::string comm = "it failed: Communication failure.";
  const std::string conn = "it failed: cannot connect to server pbs01 (errno=111)";
  const std::vector<Row> rows = {
      {"answers at once", {}, 1, {}, true, {}},
      {"Communication failure twice, then an answer", {comm, comm}, 3, {0.2, 0.4}, true, {}},
      {"cannot connect, 5 times: given up with qstat's words",
       {conn, conn, conn, conn, conn},
       5,
       {0.2, 0.4, 0.8, 1.6},
       false,
       {"qstat: " + conn + " (5 tries)"}},
      {"another failure: said at once",
       {"it failed: qstat: Unknown Job Id"},
       1,
       {},
       false,
       {"qstat: it failed: qstat: Unknown Job Id"}},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    Flaky qstat(row.failures, job);
    std::vector<double> pauses;
    JobLookup lookup = find_job_holding("x2", {{"USER", "me"}}, qstat, qstat_only,
                                        [&](double s) { pauses.push_back(s); });
    CHECK(qstat.calls_ == row.calls);
    CHECK(pauses == row.pauses);
    CHECK(lookup.job.has_value() == row.found);
    CHECK(lookup.failed == row.failed);
  }
  CHECK(transient_lookup_failure("qstat: Communication failure."));
  CHECK_FALSE(transient_lookup_failure("qstat: Unknown Job Id 8.pbs"));
}
