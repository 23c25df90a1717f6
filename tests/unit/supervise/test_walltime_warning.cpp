#include <csignal>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>

#include "ezpz/core/error.hpp"
#include "ezpz/supervise/run_record.hpp"
#include "ezpz/supervise/walltime_warning.hpp"
#include "tests/catch.hpp"

using namespace ezpz;
using namespace ezpz::walltime;

namespace {

// The schedulers print local time: these tables are read in UTC, the zone restored after.
class UtcZone {
 public:
  UtcZone() {
    if (const char* tz = std::getenv("TZ")) saved_ = tz;
    ::setenv("TZ", "UTC", 1);
    ::tzset();
  }
  ~UtcZone() {
    if (saved_)
      ::setenv("TZ", saved_->c_str(), 1);
    else
      ::unsetenv("TZ");
    ::tzset();
  }
  UtcZone(const UtcZone&) = delete;
  UtcZone& operator=(const UtcZone&) = delete;

 private:
  std::optional<std::string> saved_;
};

std::string error_of(auto&& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// 2026-11-25T04:00:00Z.
constexpr std::int64_t k_four_am = 1795579200;

// PBS Pro's `qstat -f` of a running job, as printed (continuation lines start with a tab).
constexpr const char* k_qstat =
    "Job Id: 4242.pbs-sim\n"
    "    Job_Name = STDIN\n"
    "    Job_Owner = user@login1\n"
    "    resources_used.cput = 00:00:00\n"
    "    resources_used.walltime = 00:10:05\n"
    "    job_state = R\n"
    "    queue = workq\n"
    "    ctime = Wed Nov 25 03:58:10 2026\n"
    "    exec_host = n01/0*2+n02/0*2\n"
    "    mtime = Wed Nov 25 04:00:01 2026\n"
    "    Resource_List.ncpus = 4\n"
    "    Resource_List.nodect = 2\n"
    "    Resource_List.select = 2:ncpus=2\n"
    "    Resource_List.walltime = 01:00:00\n"
    "    stime = Wed Nov 25 04:00:00 2026\n"
    "    session_id = 12345\n"
    "    substate = 42\n"
    "    Variable_List = PBS_O_HOME=/home/user,PBS_O_LANG=en_US.UTF-8,\n"
    "\tPBS_O_LOGNAME=user,PBS_O_WORKDIR=/home/user,PBS_O_QUEUE=workq\n"
    "    comment = Job run at Wed Nov 25 at 04:00 on (n01:ncpus=2)+(n02:ncpus=2)\n"
    "    etime = Wed Nov 25 03:58:10 2026\n"
    "    run_count = 1\n";

std::string qstat_with(const std::string& from, const std::string& to) {
  std::string text = k_qstat;
  text.replace(text.find(from), from.size(), to);
  return text;
}

}  // namespace

TEST_CASE("--signal takes SIG[@SECONDS], as srun and flux spell it", "[walltime]") {
  struct Row {
    const char* text;
    WarnSpec spec;
  };
  const Row rows[] = {
      {"USR1@600", {.signal = SIGUSR1, .seconds = 600}},
      {"SIGUSR1@600", {.signal = SIGUSR1, .seconds = 600}},
      {"10@90", {.signal = 10, .seconds = 90}},
      {"USR2", {.signal = SIGUSR2, .seconds = 60}},  // srun's default TIME
      {"TERM@1", {.signal = SIGTERM, .seconds = 1}},
  };
  for (const Row& row : rows) {
    INFO(row.text);
    CHECK(parse_spec(row.text) == row.spec);
  }
  CHECK(describe(parse_spec("SIGUSR1@600")) == "USR1@600");
  CHECK(describe({.signal = 40, .seconds = 5}) == "40@5");
}

TEST_CASE("a bad --signal names itself and says what is wanted", "[walltime]") {
  const std::string wanted =
      ": expected SIG[@SECONDS]: a signal name or number (USR1, SIGUSR1, 10), then the seconds "
      "before the walltime ends (default 60)";
  CHECK(error_of([] { parse_spec("FOO@600"); }) == "--signal FOO@600" + wanted);
  CHECK(error_of([] { parse_spec("B:USR1@600"); }) == "--signal B:USR1@600" + wanted);
  CHECK(error_of([] { parse_spec("65@600"); }) == "--signal 65@600" + wanted);
  CHECK(error_of([] { parse_spec(""); }) == "--signal " + wanted);
  const std::string seconds = ": expected whole seconds from 1 to 65535 after '@'";
  CHECK(error_of([] { parse_spec("USR1@"); }) == "--signal USR1@" + seconds);
  CHECK(error_of([] { parse_spec("USR1@0"); }) == "--signal USR1@0" + seconds);
  CHECK(error_of([] { parse_spec("USR1@1.5"); }) == "--signal USR1@1.5" + seconds);
  CHECK(error_of([] { parse_spec("USR1@-5"); }) == "--signal USR1@-5" + seconds);
  CHECK(error_of([] { parse_spec("USR1@65536"); }) == "--signal USR1@65536" + seconds);
}

TEST_CASE("Slurm's end time from SLURM_JOB_END_TIME or squeue -o %e", "[walltime]") {
  UtcZone utc;
  CHECK(end_from_epoch_variable("1795579200") == k_four_am);
  CHECK(end_from_epoch_variable("1795579200\n") == k_four_am);
  CHECK(end_from_squeue("2026-11-25T05:00:00\n") == k_four_am + 3600);
  CHECK(error_of([] { end_from_epoch_variable("soon"); }) ==
        "SLURM_JOB_END_TIME=\"soon\" is not a time in seconds");
  CHECK(error_of([] { end_from_epoch_variable("0"); }) ==
        "SLURM_JOB_END_TIME=\"0\" is not a time in seconds");
  // A job without a time limit, and a job squeue no longer knows (empty output).
  CHECK(error_of([] { end_from_squeue("N/A\n"); }) == "squeue gave \"N/A\" for the job's end time");
  CHECK(error_of([] { end_from_squeue("Unknown\n"); }) ==
        "squeue gave \"Unknown\" for the job's end time");
  CHECK(error_of([] { end_from_squeue(""); }) == "squeue gave \"\" for the job's end time");
  CHECK(error_of([] { end_from_squeue("2026-11-25T05:00:00 extra"); }) ==
        "squeue gave \"2026-11-25T05:00:00 extra\" for the job's end time");
}

TEST_CASE("PBS's end time is qstat -f's stime plus its walltime", "[walltime]") {
  UtcZone utc;
  CHECK(end_from_qstat(k_qstat) == k_four_am + 3600);
  CHECK(end_from_qstat(qstat_with("01:00:00", "72:00:00")) == k_four_am + 72 * 3600);
  CHECK(end_from_qstat(qstat_with("01:00:00", "30:00")) == k_four_am + 1800);
  CHECK(end_from_qstat(qstat_with("01:00:00", "90")) == k_four_am + 90);
  CHECK(end_from_qstat(qstat_with("01:00:00", "00:01:30.500")) == k_four_am + 90);
  // ctime's day of the month is padded with a space.
  CHECK(end_from_qstat(qstat_with("stime = Wed Nov 25", "stime = Thu Nov  5")) ==
        k_four_am - 20 * 86400 + 3600);
}

TEST_CASE("qstat -f output without a usable end says why", "[walltime]") {
  UtcZone utc;
  CHECK(error_of([] {
          end_from_qstat(qstat_with("    Resource_List.walltime = 01:00:00\n", ""));
        }) == "qstat -f gives the job no Resource_List.walltime");
  CHECK(error_of([] {
          end_from_qstat(qstat_with("    stime = Wed Nov 25 04:00:00 2026\n", ""));
        }) == "qstat -f gives the job no stime (it has not started)");
  CHECK(error_of([] { end_from_qstat(qstat_with("01:00:00", "1:00:00:00")); }) ==
        "qstat -f: Resource_List.walltime \"1:00:00:00\" is not [[HH:]MM:]SS");
  CHECK(error_of([] { end_from_qstat(qstat_with("01:00:00", "one hour")); }) ==
        "qstat -f: Resource_List.walltime \"one hour\" is not [[HH:]MM:]SS");
  CHECK(error_of([] {
          end_from_qstat(qstat_with("Wed Nov 25 04:00:00 2026\n    session", "soon\n    session"));
        }) == "qstat -f: stime \"soon\" is not a time");
  CHECK(error_of([] { end_from_qstat(""); }) == "qstat -f gives the job no Resource_List.walltime");
}

TEST_CASE("walltimes as PBS writes them", "[walltime]") {
  CHECK(walltime_seconds("01:00:00") == 3600);
  CHECK(walltime_seconds("00:00:59") == 59);
  CHECK(walltime_seconds("5") == 5);
  CHECK_FALSE(walltime_seconds(""));
  CHECK_FALSE(walltime_seconds("1::0"));
  CHECK_FALSE(walltime_seconds("-1:00"));
}

TEST_CASE("the signal is due SECONDS before the end; an attempt that starts later gets none",
          "[walltime]") {
  const WarnSpec spec{.signal = SIGUSR1, .seconds = 600};
  CHECK(seconds_until_warning(k_four_am + 3600, k_four_am, spec) == 3000);
  CHECK(seconds_until_warning(k_four_am + 600, k_four_am, spec) == 0);
  CHECK(seconds_until_warning(k_four_am + 300, k_four_am, spec) == 0);
  CHECK(seconds_until_warning(k_four_am - 5, k_four_am, spec) == 0);
  CHECK_FALSE(too_late_warning(spec, k_four_am + 601, k_four_am));
  CHECK(too_late_warning(spec, k_four_am + 600, k_four_am) ==
        "--signal USR1@600: the job ends in 600 s, within 600 s already; no SIGUSR1 will be sent "
        "(ranks that have only started cannot have caught it yet)");
  CHECK(too_late_warning(spec, k_four_am + 300, k_four_am) ==
        "--signal USR1@600: the job ends in 300 s, within 600 s already; no SIGUSR1 will be sent "
        "(ranks that have only started cannot have caught it yet)");
  CHECK(too_late_warning(spec, k_four_am - 5, k_four_am) ==
        "--signal USR1@600: the job ends in 0 s, within 600 s already; no SIGUSR1 will be sent "
        "(ranks that have only started cannot have caught it yet)");
}

TEST_CASE("what ezpz says and records of the warning", "[walltime]") {
  const WarnSpec spec{.signal = SIGUSR1, .seconds = 600};
  CHECK(unknown_end_warning(spec, "not inside a Slurm or PBS job") ==
        "--signal USR1@600: the job's end time is unknown (not inside a Slurm or PBS job); no "
        "SIGUSR1 will be sent");
  CHECK(sending_line(spec) ==
        "600 s before the job's walltime ends: sending SIGUSR1 to every rank (--signal USR1@600)");
  CHECK(verdict_words(spec, Delivery::launcher) ==
        "warned at T-600 s with SIGUSR1 through the launcher");
  CHECK(verdict_words(spec, Delivery::node_step) ==
        "warned at T-600 s with SIGUSR1 through a step on each node");
  CHECK(node_step_note({.signal = SIGUSR2, .seconds = 30}, "hydra") ==
        "--signal USR2@30: the hydra launcher is not known to pass SIGUSR2 on to the ranks; a "
        "step on each node will send it to them");
  CHECK(no_rank_warning(SIGUSR1, "r1") ==
        "--signal: the step on each node found no rank of run r1 to send SIGUSR1 to");
  CHECK(step_failed_warning(SIGUSR1, "srun: not found") ==
        "--signal: no SIGUSR1 sent: the step on each node failed: srun: not found");
}

// Each row, and what lies off it: the launcher only where its row verifiably forwards.
TEST_CASE("the launcher where it verifiably passes the signal on, else the node step",
          "[walltime]") {
  struct Row {
    std::string_view dialect;
    int signal;
    Delivery delivery;
  };
  const Row rows[] = {
      {"hydra", SIGUSR1, Delivery::launcher},     {"hydra", SIGUSR2, Delivery::node_step},
      {"srun", SIGUSR2, Delivery::launcher},      {"openmpi", SIGUSR2, Delivery::launcher},
      {"openmpi", SIGTERM, Delivery::node_step},  {"aprun", SIGUSR1, Delivery::launcher},
      {"pals", SIGUSR1, Delivery::node_step},  // its row is unverified
      {"torchrun", SIGUSR1, Delivery::node_step}, {"flux", SIGUSR1, Delivery::node_step},
  };
  for (const Row& row : rows) {
    INFO(row.dialect << " " << row.signal);
    CHECK(delivery_for(row.dialect, row.signal) == row.delivery);
  }
}

TEST_CASE("the verdict keeps the warning, and ezpz runs show says it", "[walltime]") {
  AttemptVerdict v;
  v.exit_code = 143;
  v.classification = {Ending::walltime, {}, {}, "SIGTERM inside the job"};
  v.total_s = 60;
  v.warning = verdict_words({.signal = SIGUSR1, .seconds = 40}, Delivery::launcher);
  CHECK(verdict_json(v).find("\"warning\": \"warned at T-40 s with SIGUSR1 through the "
                             "launcher\"") != std::string::npos);
  RunSummary run;
  run.id = "r1";
  const std::string text = run_details({run, RunState::finished}, {verdict_json(v)}, "runs/r1");
  CHECK(text.find("attempt 1: exit 143, walltime: SIGTERM inside the job (60.0 s)\n"
                  "  warned at T-40 s with SIGUSR1 through the launcher\n") != std::string::npos);
  v.warning.clear();
  CHECK(verdict_json(v).find("\"warning\": null") != std::string::npos);
  CHECK(run_details({run, RunState::finished}, {verdict_json(v)}, "runs/r1").find("warned") ==
        std::string::npos);
}
