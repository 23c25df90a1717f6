// `ezpz submit`'s batch scripts: rendering for PBS and Slurm, the quoting of
// hostile words, directive values refused word for word, the choice of
// scheduler, and the machine profile's `batch` key.
#include "ezpz/batch_script.hpp"

#include "ezpz/error.hpp"
#include "ezpz/machine_profile.hpp"
#include "tests/catch.hpp"

namespace ezpz {
namespace {

BatchRequest full_request(SchedulerKind scheduler) {
  BatchRequest r;
  r.scheduler = scheduler;
  r.nodes = 4;
  r.walltime = "01:30:00";
  r.queue = "debug";
  r.account = "myproj";
  r.job_name = "train";
  r.output = "logs/train.out";
  r.ezpz = "/opt/ezpz/bin/ezpz";
  r.launch_args = {"--machine", "aurora", "--ppn=12"};
  r.command = {"python3", "train.py", "--lr", "3e-4"};
  return r;
}

TEST_CASE("a PBS script: every directive, then cd and exec ezpz launch", "[batch]") {
  BatchRequest r = full_request(SchedulerKind::pbs);
  r.filesystems = "home:flare";
  r.extra_directives = {"-l place=scatter"};
  CHECK(render_batch_script(r) ==
        "#!/bin/bash\n"
        "#PBS -l select=4\n"
        "#PBS -l walltime=01:30:00\n"
        "#PBS -q debug\n"
        "#PBS -A myproj\n"
        "#PBS -N train\n"
        "#PBS -l filesystems=home:flare\n"
        "#PBS -o logs/train.out\n"
        "#PBS -j oe\n"
        "#PBS -l place=scatter\n"
        "\n"
        "# Written by ezpz submit: the job runs ezpz launch from the directory it was\n"
        "# submitted in, with the command exactly as it was given.\n"
        "cd \"$PBS_O_WORKDIR\" || exit\n"
        "exec '/opt/ezpz/bin/ezpz' launch '--machine' 'aurora' '--ppn=12' -- 'python3' "
        "'train.py' '--lr' '3e-4'\n");
}

TEST_CASE("a Slurm script: -N -t -p -A -J --output, cd to the submit directory", "[batch]") {
  CHECK(render_batch_script(full_request(SchedulerKind::slurm)) ==
        "#!/bin/bash\n"
        "#SBATCH -N 4\n"
        "#SBATCH -t 01:30:00\n"
        "#SBATCH -p debug\n"
        "#SBATCH -A myproj\n"
        "#SBATCH -J train\n"
        "#SBATCH --output=logs/train.out\n"
        "\n"
        "# Written by ezpz submit: the job runs ezpz launch from the directory it was\n"
        "# submitted in, with the command exactly as it was given.\n"
        "cd \"$SLURM_SUBMIT_DIR\" || exit\n"
        "exec '/opt/ezpz/bin/ezpz' launch '--machine' 'aurora' '--ppn=12' -- 'python3' "
        "'train.py' '--lr' '3e-4'\n");
}

TEST_CASE("options not given write no directive", "[batch]") {
  BatchRequest r;
  r.scheduler = SchedulerKind::pbs;
  r.job_name = "true";
  r.ezpz = std::string("/e");  // assigning the bare literal trips GCC 12 -O3's false -Wmaybe-uninitialized
  r.command = {"true"};
  CHECK(render_batch_script(r) ==
        "#!/bin/bash\n#PBS -l select=1\n#PBS -N true\n\n"
        "# Written by ezpz submit: the job runs ezpz launch from the directory it was\n"
        "# submitted in, with the command exactly as it was given.\n"
        "cd \"$PBS_O_WORKDIR\" || exit\nexec '/e' launch -- 'true'\n");
}

struct Quoted {
  std::string word;
  std::string quoted;
};

TEST_CASE("every word is single-quoted: nothing in it is expanded", "[batch]") {
  const std::vector<Quoted> table = {
      {"$(touch /tmp/pwn)", "'$(touch /tmp/pwn)'"},
      {"`touch /tmp/pwn`", "'`touch /tmp/pwn`'"},
      {"it's", "'it'\\''s'"},
      {"'", "''\\'''"},
      {"\"double\"", "'\"double\"'"},
      {"two\nlines", "'two\nlines'"},
      {"with spaces  here", "'with spaces  here'"},
      {"*", "'*'"},
      {"", "''"},
      {"$HOME ${PATH} \\ ; | & > <", "'$HOME ${PATH} \\ ; | & > <'"},
  };
  for (const Quoted& q : table) {
    INFO(q.word);
    CHECK(single_quote(q.word) == q.quoted);
  }
  BatchRequest r;
  r.scheduler = SchedulerKind::slurm;
  r.job_name = "x";
  r.ezpz = "/it's here/ezpz";
  r.command = {"echo", "$(touch /tmp/pwn)", ""};
  CHECK(render_batch_script(r).ends_with(
      "exec '/it'\\''s here/ezpz' launch -- 'echo' '$(touch /tmp/pwn)' ''\n"));
}

struct BadValue {
  void (*set)(BatchRequest&);
  std::string message;
};

TEST_CASE("a value that would break its directive line is refused", "[batch]") {
  const std::vector<BadValue> table = {
      {[](BatchRequest& r) { r.job_name = "a\nb"; },
       "--job-name: a newline cannot go in a #PBS directive"},
      {[](BatchRequest& r) { r.job_name = "my job"; },
       "--job-name: a space cannot go in a #PBS directive"},
      {[](BatchRequest& r) { r.job_name = ""; },
       "--job-name: an empty value cannot go in a #PBS directive"},
      {[](BatchRequest& r) { r.queue = "debug\r"; },
       "--queue: a carriage return cannot go in a #PBS directive"},
      {[](BatchRequest& r) { r.account = "a\tb"; },
       "--account: a tab cannot go in a #PBS directive"},
      {[](BatchRequest& r) { r.account = "\"proj\""; },
       "--account: a quote cannot go in a #PBS directive"},
      {[](BatchRequest& r) { r.filesystems = "home:flare\n#PBS -q prod"; },
       "--filesystems: a newline cannot go in a #PBS directive"},
      {[](BatchRequest& r) { r.output = std::string("out\x1b", 4); },
       "--output: a control character cannot go in a #PBS directive"},
      {[](BatchRequest& r) { r.walltime = "90"; },
       "--time: expected HH:MM:SS, more than 00:00:00 (e.g. 01:30:00), got \"90\""},
      {[](BatchRequest& r) { r.walltime = "1:60:00"; },
       "--time: expected HH:MM:SS, more than 00:00:00 (e.g. 01:30:00), got \"1:60:00\""},
      {[](BatchRequest& r) { r.walltime = "00:00:00"; },
       "--time: expected HH:MM:SS, more than 00:00:00 (e.g. 01:30:00), got \"00:00:00\""},
      {[](BatchRequest& r) { r.walltime = "01:00:00\n"; },
       "--time: expected HH:MM:SS, more than 00:00:00 (e.g. 01:30:00), got \"01:00:00\\n\""},
      {[](BatchRequest& r) { r.nodes = 0; }, "--nodes: expected at least 1, got 0"},
      {[](BatchRequest& r) { r.extra_directives = {"-l a\n-q b"}; },
       "machine profile directive \"-l a\\n-q b\": a newline cannot go in a #PBS directive"},
      {[](BatchRequest& r) { r.scheduler = SchedulerKind::local; },
       "submit: cannot submit to scheduler local; expected pbs or slurm"},
  };
  for (const BadValue& bad : table) {
    BatchRequest r = full_request(SchedulerKind::pbs);
    bad.set(r);
    INFO(bad.message);
    CHECK_THROWS_WITH(render_batch_script(r), bad.message);
  }
  BatchRequest r = full_request(SchedulerKind::slurm);
  r.job_name = "a\nb";
  CHECK_THROWS_WITH(render_batch_script(r),
                    "--job-name: a newline cannot go in a #SBATCH directive");
  r = full_request(SchedulerKind::slurm);
  r.filesystems = "home";
  CHECK_THROWS_WITH(render_batch_script(r),
                    "--filesystems: a PBS resource (-l filesystems=); Slurm has none");
}

TEST_CASE("walltimes: hours of any length, minutes and seconds below 60", "[batch]") {
  for (const char* ok : {"00:00:01", "1:00:00", "48:00:00", "100:59:59"}) {
    INFO(ok);
    CHECK_NOTHROW(check_walltime(ok));
  }
  for (const char* bad : {"", "1", "01:00", "01:00:60", "a1:00:00", "01:00:00 ", "-1:00:00"}) {
    INFO(bad);
    CHECK_THROWS_AS(check_walltime(bad), Error);
  }
}

TEST_CASE("the default job name is the command's file name, made directive-safe", "[batch]") {
  CHECK(default_job_name({"python3", "train.py"}) == "python3");
  CHECK(default_job_name({"/home/u/bin/train.sh", "--x"}) == "train.sh");
  CHECK(default_job_name({"./my job$(x)"}) == "my_job__x_");
  CHECK(default_job_name({""}) == "ezpz");
  CHECK(default_job_name({}) == "ezpz");
}

TEST_CASE("the job id: sbatch's number, else qsub's line", "[batch]") {
  CHECK(job_id_from_output("Submitted batch job 12345\n") == "12345");
  CHECK(job_id_from_output("Submitted batch job 7 on cluster c\n") == "7");
  CHECK(job_id_from_output("8123456.aurora-pbs-0001.hostmgmt.cm.aurora.alcf.anl.gov\n") ==
        "8123456.aurora-pbs-0001.hostmgmt.cm.aurora.alcf.anl.gov");
  CHECK(job_id_from_output("  \n") == "");
}

TEST_CASE("the scheduler: flag > job > profile > qsub > sbatch", "[batch]") {
  SubmitSchedulerInputs in;
  in.profile = SchedulerKind::local;
  in.profile_name = "local";
  CHECK_THROWS_WITH(choose_submit_scheduler(in),
                    "submit: no batch scheduler here (no PBS or Slurm job, machine profile local "
                    "names none, no qsub or sbatch on PATH); pass --scheduler pbs or --scheduler "
                    "slurm");
  in.sbatch_on_path = true;
  CHECK(choose_submit_scheduler(in).kind == SchedulerKind::slurm);
  in.qsub_on_path = true;
  CHECK(choose_submit_scheduler(in).rule == "qsub is on PATH");
  in.profile = SchedulerKind::slurm;
  in.profile_name = "frontier";
  CHECK(choose_submit_scheduler(in).rule == "machine profile frontier runs slurm");
  in.job = SchedulerKind::pbs;
  in.job_rule = "PBS_JOBID is set";
  CHECK(choose_submit_scheduler(in).kind == SchedulerKind::pbs);
  in.flag = "SLURM";
  CHECK(choose_submit_scheduler(in).kind == SchedulerKind::slurm);
  for (const char* bad : {"lsf", "local", ""}) {
    in.flag = bad;
    CHECK_THROWS_WITH(choose_submit_scheduler(in),
                      "--scheduler: \"" + std::string(bad) +
                          "\" is not a batch scheduler; expected pbs or slurm");
  }
}

TEST_CASE("a profile's batch key: filesystems and directives, checked", "[batch][profile]") {
  MachineProfile p = parse_machine_profile(
      "launcher: pals\nbatch:\n  filesystems: home:flare\n  directives: [\"-l place=scatter\"]\n",
      "m/a.yaml");
  CHECK(p.batch == BatchDefaults{"home:flare", {"-l place=scatter"}});
  struct Bad {
    std::string text;
    std::string message;
  };
  const std::vector<Bad> table = {
      {"batch:\n  filesystems: home flare\n",
       "m/x.yaml:3: batch.filesystems: a space cannot go in a batch directive"},
      {"batch:\n  filesystems: \"home\\nflare\"\n",
       "m/x.yaml:3: batch.filesystems: a newline cannot go in a batch directive"},
      {"batch:\n  directives:\n    - \"-l a\"\n    - \"-q b\\n#PBS -A x\"\n",
       "m/x.yaml:5: batch.directives[1]: a newline cannot go in a batch directive"},
      {"batch:\n  directives: [\"\"]\n",
       "m/x.yaml:3: batch.directives[0]: an empty value cannot go in a batch directive"},
      {"batch:\n  filesystem: home\n",
       "m/x.yaml:3: batch.filesystem: unknown key; did you mean \"filesystems\"?"},
      {"batch: [home]\n", "m/x.yaml:2: batch: expected a mapping, got a list"},
  };
  for (const Bad& bad : table) {
    INFO(bad.text);
    CHECK_THROWS_WITH(parse_machine_profile("launcher: pals\n" + bad.text, "m/x.yaml"),
                      bad.message);
  }
}

}  // namespace
}  // namespace ezpz
