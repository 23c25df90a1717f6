// `ezpz submit`'s batch scripts: rendering for PBS and Slurm, the quoting of
// hostile words, directive values refused word for word, the choice of
// scheduler, and the machine profile's `batch` key.
#include "ezpz/launch/batch_script.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ezpz/core/error.hpp"
#include "ezpz/profile/machine_profile.hpp"
#include "tests/catch.hpp"

namespace ezpz {
namespace {

BatchRequest full_request(SchedulerKind scheduler) {
  BatchRequest r;
  r.scheduler = scheduler;
  r.scheduler_rule = "machine profile aurora runs pbs";
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
        "# Scheduler: pbs (machine profile aurora runs pbs).\n"
        "# Environment: qsub passes the job none of the submitting shell's variables\n"
        "# (without -V). Activated here, as they were at submit time:\n"
        "#   nothing (no venv or conda env was active, no EZPZ_SETUP_ENV)\n"
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
        "# Scheduler: slurm (machine profile aurora runs pbs).\n"
        "# Environment: sbatch passes the job the submitting shell's variables, unless\n"
        "# --export=NONE (SBATCH_EXPORT) says not. Activated again, as at submit time:\n"
        "#   nothing (no venv or conda env was active, no EZPZ_SETUP_ENV)\n"
        "cd \"$SLURM_SUBMIT_DIR\" || exit\n"
        "exec '/opt/ezpz/bin/ezpz' launch '--machine' 'aurora' '--ppn=12' -- 'python3' "
        "'train.py' '--lr' '3e-4'\n");
}

TEST_CASE("options not given write no directive", "[batch]") {
  BatchRequest r;
  r.scheduler = SchedulerKind::pbs;
  r.scheduler_rule = "qsub is on PATH";
  r.job_name = "true";
  r.ezpz = std::string(
      "/e");  // assigning the bare literal trips GCC 12 -O3's false -Wmaybe-uninitialized
  r.command = {"true"};
  CHECK(render_batch_script(r) ==
        "#!/bin/bash\n#PBS -l select=1\n#PBS -N true\n\n"
        "# Written by ezpz submit: the job runs ezpz launch from the directory it was\n"
        "# submitted in, with the command exactly as it was given.\n"
        "# Scheduler: pbs (qsub is on PATH).\n"
        "# Environment: qsub passes the job none of the submitting shell's variables\n"
        "# (without -V). Activated here, as they were at submit time:\n"
        "#   nothing (no venv or conda env was active, no EZPZ_SETUP_ENV)\n"
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
      {[](BatchRequest& r) { r.walltime = "1:60:00"; },
       "--time: expected M, M:SS, H:MM:SS, D-H, D-H:MM or D-H:MM:SS (e.g. 30 for 30 minutes, "
       "1:30:00, 2-12), more than 0, got \"1:60:00\""},
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

struct Walltime {
  std::string text;
  std::string pbs;
  std::string slurm;
};

TEST_CASE("walltimes: sbatch's forms, written as each scheduler takes them", "[batch]") {
  const std::vector<Walltime> table = {
      {"30", "00:30:00", "00:30:00"},  // minutes, as sbatch reads a bare number
      {"90", "01:30:00", "01:30:00"},
      {"30:00", "00:30:00", "00:30:00"},  // minutes:seconds
      {"5:30", "00:05:30", "00:05:30"},
      {"1:00:00", "01:00:00", "01:00:00"},  // hours:minutes:seconds
      {"48:00:00", "48:00:00", "2-00:00:00"},
      {"100:59:59", "100:59:59", "4-04:59:59"},
      {"2-00:00:00", "48:00:00", "2-00:00:00"},  // days: PBS has none
      {"2-12", "60:00:00", "2-12:00:00"},        // days-hours
      {"1-2:30", "26:30:00", "1-02:30:00"},      // days-hours:minutes
      {"0-0:0:1", "00:00:01", "00:00:01"},
  };
  for (const Walltime& w : table) {
    INFO(w.text);
    long seconds = parse_walltime(w.text);
    CHECK(format_walltime(seconds, SchedulerKind::pbs) == w.pbs);
    CHECK(format_walltime(seconds, SchedulerKind::slurm) == w.slurm);
  }
  const std::string expected =
      "--time: expected M, M:SS, H:MM:SS, D-H, D-H:MM or D-H:MM:SS (e.g. 30 for 30 minutes, "
      "1:30:00, 2-12), more than 0, got ";
  for (const char* bad :
       {"",       "0",        "00:00:00",  "0-0",      "1:75:00", "1:00:60",  "1:2:3:4",   "2-24",
        "2-1:60", "1-",       "-1",        "-1:00:00", "1--2",    "a1:00:00", "01:00:00 ", "1h",
        "1.5",    "12345678", "1:00:00\n", "2-12-1",   ":30",     "30:"}) {
    INFO(bad);
    CHECK_THROWS_WITH(parse_walltime(bad), expected + fmt::format("{:?}", std::string(bad)));
  }
}

struct Named {
  std::vector<std::string> command;
  std::string pbs;
  std::string slurm;
};

TEST_CASE("the default job name: the script or module the command runs", "[batch]") {
  const std::vector<Named> table = {
      {{"python3", "train.py", "--lr", "1"}, "train", "train"},
      {{"/usr/bin/python3.11", "-u", "-W", "error", "src/train.py"}, "train", "train"},
      {{"python3", "-m", "pkg.mod"}, "pkg.mod", "pkg.mod"},
      {{"python", "-mpkg.mod"}, "pkg.mod", "pkg.mod"},
      {{"python3", "-m", "mypackage.training.main"}, "main", "mypackage.training.main"},
      {{"python3", "-c", "print(1)"}, "python3", "python3"},
      {{"python3"}, "python3", "python3"},
      {{"ezpz", "test", "--model", "debug"}, "ezpz-test", "ezpz-test"},
      {{"/opt/bin/ezpz"}, "ezpz", "ezpz"},
      {{"torchrun", "--nproc-per-node", "4", "ddp.py"}, "ddp", "ddp"},
      {{"torchrun", "--standalone", "-m", "pkg.train"}, "pkg.train", "pkg.train"},
      {{"bash", "-x", "run.sh"}, "run", "run"},
      {{"./run.sh", "--x"}, "run", "run"},
      {{"./a.out"}, "a.out", "a.out"},
      {{"/home/u/bin/train_a_very_long_model_name.py"},
       "train_a_very_lo",
       "train_a_very_long_model_name"},
      {{"python3", "3d_unet.py"}, "ezpz-3d_unet", "3d_unet"},
      {{"./my job$(x)"}, "my_job__x_", "my_job__x_"},
      {{"python3", "it's \"ok\".py"}, "it_s__ok_", "it_s__ok_"},
      {{""}, "ezpz", "ezpz"},
      {{}, "ezpz", "ezpz"},
  };
  for (const Named& n : table) {
    INFO(fmt::format("{}", fmt::join(n.command, " ")));
    CHECK(default_job_name(n.command, SchedulerKind::pbs) == n.pbs);
    CHECK(default_job_name(n.command, SchedulerKind::slurm) == n.slurm);
  }
}

struct Carried {
  Env env;
  std::string comment;  // the lines about what is carried
  std::string lines;    // the lines that activate it
};

TEST_CASE("the submitting environment is activated in the job, every path single-quoted",
          "[batch]") {
  const std::string hostile = "/home/u/my env's $(touch /tmp/pwn) `x` \"q\" *";
  const std::vector<Carried> table = {
      {{{"VIRTUAL_ENV", "/home/u/venv"}},
       "#   the venv /home/u/venv: VIRTUAL_ENV set, its bin first on PATH, as its bin/activate "
       "does\n",
       "export VIRTUAL_ENV='/home/u/venv' && export PATH=\"$VIRTUAL_ENV/bin:$PATH\" && unset "
       "PYTHONHOME || exit\n"},
      {{{"VIRTUAL_ENV", hostile}},
       "#   the venv " + hostile +
           ": VIRTUAL_ENV set, its bin first on PATH, as its bin/activate does\n",
       "export VIRTUAL_ENV='/home/u/my env'\\''s $(touch /tmp/pwn) `x` \"q\" *' && export "
       "PATH=\"$VIRTUAL_ENV/bin:$PATH\" && unset PYTHONHOME || exit\n"},
      {{{"CONDA_PREFIX", "/opt/conda/envs/ml"},
        {"CONDA_DEFAULT_ENV", "ml"},
        {"CONDA_EXE", "/opt/conda/bin/conda"}},
       "#   the conda env ml (/opt/conda/envs/ml): conda's shell hook (/opt/conda/bin/conda), then "
       "conda activate\n",
       "eval \"$('/opt/conda/bin/conda' shell.bash hook)\" && conda activate '/opt/conda/envs/ml' "
       "|| exit\n"},
      {{{"CONDA_PREFIX", "/p"}, {"CONDA_DEFAULT_ENV", "/p"}},
       "#   the conda env /p: CONDA_PREFIX set, its bin first on PATH (CONDA_EXE was unset: no "
       "conda activate)\n",
       "export CONDA_PREFIX='/p' && export PATH=\"$CONDA_PREFIX/bin:$PATH\" || exit\n"},
      // A venv made from a conda env's Python: conda first, so that the venv's bin leads PATH.
      {{{"CONDA_PREFIX", "/c"}, {"CONDA_EXE", "/c/bin/conda"}, {"VIRTUAL_ENV", "/v"}},
       "#   the conda env /c: conda's shell hook (/c/bin/conda), then conda activate\n"
       "#   the venv /v: VIRTUAL_ENV set, its bin first on PATH, as its bin/activate does\n",
       "eval \"$('/c/bin/conda' shell.bash hook)\" && conda activate '/c' || exit\n"
       "export VIRTUAL_ENV='/v' && export PATH=\"$VIRTUAL_ENV/bin:$PATH\" && unset PYTHONHOME "
       "|| exit\n"},
      // CONDA_EXE alone (conda initialised, nothing active) carries nothing.
      {{{"CONDA_EXE", "/c/bin/conda"}, {"CONDA_DEFAULT_ENV", "x"}},
       "#   nothing (no venv or conda env was active, no EZPZ_SETUP_ENV)\n",
       ""},
  };
  for (const Carried& c : table) {
    BatchRequest r;
    r.scheduler = SchedulerKind::pbs;
    r.scheduler_rule = "--scheduler pbs";
    r.job_name = "x";
    r.ezpz = std::string("/e");
    r.command = {"true"};
    r.environment = carried_environment(c.env);
    INFO(c.comment);
    CHECK(render_batch_script(r).ends_with(
        "# (without -V). Activated here, as they were at submit time:\n" + c.comment +
        "cd \"$PBS_O_WORKDIR\" || exit\n" + c.lines + "exec '/e' launch -- 'true'\n"));
  }
}

// Before: under sbatch --export=NONE the job had SLURM_EXPORT_ENV=NONE, and srun gave the ranks
// none of what the script activated: they ran the system's python3, not the venv's.
TEST_CASE("under Slurm, what the script activates reaches srun's ranks", "[batch]") {
  struct Row {
    SchedulerKind scheduler;
    Env env;
    std::string tail;  // the script from `cd` on
  };
  const std::string venv_line =
      "export VIRTUAL_ENV='/v' && export PATH=\"$VIRTUAL_ENV/bin:$PATH\" && unset PYTHONHOME "
      "|| exit\n";
  const std::vector<Row> rows = {
      {SchedulerKind::slurm,
       {{"VIRTUAL_ENV", "/v"}},
       "#   the venv /v: VIRTUAL_ENV set, its bin first on PATH, as its bin/activate does\n"
       "#   SLURM_EXPORT_ENV=ALL: srun gives the ranks all of it, under sbatch --export=NONE "
       "too\n"
       "cd \"$SLURM_SUBMIT_DIR\" || exit\n" +
           venv_line + "export SLURM_EXPORT_ENV=ALL\nexec '/e' launch -- 'true'\n"},
      {SchedulerKind::slurm,
       {},
       "#   nothing (no venv or conda env was active, no EZPZ_SETUP_ENV)\n"
       "cd \"$SLURM_SUBMIT_DIR\" || exit\nexec '/e' launch -- 'true'\n"},
      // PBS's launchers pass the ranks the script's environment themselves (--envall, Hydra).
      {SchedulerKind::pbs,
       {{"VIRTUAL_ENV", "/v"}},
       "#   the venv /v: VIRTUAL_ENV set, its bin first on PATH, as its bin/activate does\n"
       "cd \"$PBS_O_WORKDIR\" || exit\n" +
           venv_line + "exec '/e' launch -- 'true'\n"},
  };
  for (const Row& row : rows) {
    BatchRequest r;
    r.scheduler = row.scheduler;
    r.job_name = "x";
    r.ezpz = "/e";
    r.command = {"true"};
    r.environment = carried_environment(row.env);
    INFO(row.tail);
    CHECK(render_batch_script(r).ends_with(row.tail));
  }
}

TEST_CASE("modules are named, not loaded; a path that cannot be shown is refused", "[batch]") {
  BatchRequest r;
  r.job_name = "x";
  r.ezpz = std::string("/e");
  r.command = {"true"};
  r.environment = carried_environment({{"LOADEDMODULES", "gcc/12:cuda/12.2"}});
  r.scheduler = SchedulerKind::pbs;
  CHECK(render_batch_script(r).find(
            "# Not carried: the modules loaded at submit time (LOADEDMODULES=gcc/12:cuda/12.2); "
            "the job has the login defaults.\ncd ") != std::string::npos);
  r.scheduler = SchedulerKind::slurm;
  CHECK(render_batch_script(r).find(
            "# Not loaded again: the modules loaded at submit time "
            "(LOADEDMODULES=gcc/12:cuda/12.2); their variables come with sbatch's default "
            "--export=ALL, not under --export=NONE.\ncd ") != std::string::npos);
  // Only ever in a comment: escaped rather than refused.
  r.environment = carried_environment({{"LOADEDMODULES", "a\nb"}});
  CHECK(render_batch_script(r).find("(LOADEDMODULES=\"a\\nb\")") != std::string::npos);
  struct Bad {
    Env env;
    std::string message;
  };
  const std::vector<Bad> table = {
      {{{"VIRTUAL_ENV", "/v\nrm -rf ~"}},
       "VIRTUAL_ENV: a newline cannot go in the job script; deactivate that environment to "
       "submit without it"},
      {{{"CONDA_PREFIX", "/c\r"}},
       "CONDA_PREFIX: a carriage return cannot go in the job script; deactivate that environment "
       "to submit without it"},
      {{{"CONDA_PREFIX", "/c"}, {"CONDA_EXE", std::string("/c/\x1b", 4)}},
       "CONDA_EXE: a control character cannot go in the job script; deactivate that environment "
       "to submit without it"},
  };
  for (const Bad& bad : table) {
    INFO(bad.message);
    CHECK_THROWS_WITH(carried_environment(bad.env), bad.message);
  }
}

struct Nodes {
  NodeRequest request;
  long nodes;
};

TEST_CASE("the nodes requested: -N, else what -n needs at --ppn or the profile's GPUs", "[batch]") {
  const std::vector<Nodes> table = {
      {{}, 1},
      {{.nodes = 3}, 3},
      {{.nprocs = 8}, 1},  // ranks per node unknown: the job's launch decides, on one node
      {{.nprocs = 8, .ppn = 4}, 2},
      {{.nprocs = 8, .ppn = 4, .gpus_per_node = 12}, 2},  // --ppn wins
      {{.nprocs = 24, .gpus_per_node = 12, .profile_name = "aurora"}, 2},
      {{.nprocs = 12, .gpus_per_node = 12}, 1},
      {{.nodes = 4, .nprocs = 8, .ppn = 2}, 4},
      {{.ppn = 4}, 1},
      {{.nodes = 2, .ppn = 4}, 2},
  };
  for (const Nodes& n : table) {
    INFO(n.nodes);
    CHECK(nodes_to_request(n.request) == n.nodes);
  }
  // What the job's launch would refuse after waiting in the queue, refused now.
  CHECK_THROWS_WITH(nodes_to_request({.nodes = 1, .nprocs = 8, .ppn = 4}),
                    "-n 8 at --ppn 4 needs 2 hosts, but 1 is available");
  CHECK_THROWS_WITH(
      nodes_to_request({.nodes = 2, .nprocs = 30, .gpus_per_node = 12, .profile_name = "aurora"}),
      "-n 30 is more than the 24 slots of 2 hosts x 12 (machine profile aurora); pass --ppn to "
      "oversubscribe");
}

TEST_CASE("a profile's batch.required: one warning per missing value", "[batch][profile]") {
  BatchRequest r = full_request(SchedulerKind::pbs);
  const std::vector<std::string> all = {"account", "walltime", "queue"};
  CHECK(missing_requirements(r, all, "aurora").empty());
  r.account.reset();
  r.walltime.reset();
  r.queue.reset();
  CHECK(missing_requirements(r, {"walltime"}, "aurora") ==
        std::vector<std::string>{"submit: machine profile aurora requires walltime (-t/--time); "
                                 "qsub may refuse the job without it"});
  r.scheduler = SchedulerKind::slurm;
  CHECK(missing_requirements(r, all, "frontier") ==
        std::vector<std::string>{
            "submit: machine profile frontier requires account (-A/--account); sbatch may "
            "refuse the job without it",
            "submit: machine profile frontier requires walltime (-t/--time); sbatch may refuse "
            "the job without it",
            "submit: machine profile frontier requires queue (-q/--queue); sbatch may refuse the "
            "job without it"});
  CHECK(missing_requirements(r, {}, "x").empty());
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
  CHECK(choose_submit_scheduler(in).rule == "sbatch is on PATH");
  CHECK(choose_submit_scheduler(in).from_path);
  in.qsub_on_path = true;
  CHECK(choose_submit_scheduler(in).rule == "qsub is on PATH");
  CHECK(choose_submit_scheduler(in).from_path);
  in.profile = SchedulerKind::slurm;
  in.profile_name = "frontier";
  CHECK(choose_submit_scheduler(in).rule == "machine profile frontier runs slurm");
  CHECK_FALSE(choose_submit_scheduler(in).from_path);
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
  CHECK(p.batch == BatchDefaults{"home:flare", {"-l place=scatter"}, {}});
  CHECK(
      parse_machine_profile("launcher: srun\nbatch:\n  required: [account, walltime]\n", "m/f.yaml")
          .batch.required == std::vector<std::string>{"account", "walltime"});
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
      {"batch:\n  required: [acount]\n",
       "m/x.yaml:3: batch.required[0]: expected one of account, walltime, queue, got \"acount\""},
  };
  for (const Bad& bad : table) {
    INFO(bad.text);
    CHECK_THROWS_WITH(parse_machine_profile("launcher: pals\n" + bad.text, "m/x.yaml"),
                      bad.message);
  }
}

}  // namespace
}  // namespace ezpz
