// launch_overhead: a real 2-rank launch against mpiexec alone, ezpz's own cost, and the
// per-rank shim (bench/README.md).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <sstream>

#include "benchmarks.hpp"
#include "ezpz/sys/world.hpp"

namespace ezpz::bench {
namespace {

namespace fs = std::filesystem;

bool is_assignment(const std::string& word) {
  auto eq = word.find('=');
  return eq != std::string::npos && is_variable_name(std::string_view(word).substr(0, eq));
}

// The plan ezpz prints with --dry-run ("NAME=VALUE ... launcher args ..."), as a
// Command to run directly; nullopt when it needs a shell to read (quotes).
std::optional<Command> planned_command(const std::string& line, std::vector<std::string> env) {
  std::istringstream words(line);
  std::vector<std::string> argv;
  for (std::string word; words >> word;) {
    if (word.find_first_of("'\"\\$") != std::string::npos) return std::nullopt;
    if (argv.empty() && is_assignment(word)) {
      env = with(std::move(env), {word});
    } else {
      argv.push_back(word);
    }
  }
  if (argv.empty()) return std::nullopt;
  // Looked up on the case's PATH, as ezpz would: its mpi-bin link, not Debian's alternative.
  Env search{{"PATH", k_path}};
  for (const std::string& assignment : env) {
    if (assignment.starts_with("PATH=")) search["PATH"] = assignment.substr(5);
  }
  auto program = sys::find_program(argv[0], search);
  if (!program) return std::nullopt;
  argv[0] = *program;
  return Command{argv, env};
}

// What creating a file costs where the runs' records go (a launch creates about ten): median
// microseconds of 200 open(O_CREAT|O_EXCL) in a fresh directory there. On one filesystem it
// varies by 10x with the directory's place: ext4 without a journal scans past recently
// deleted inodes (bench/README.md).
std::string creation_cost(const std::string& dir) {
  const std::string probe = dir + "/creation-probe";
  fs::create_directories(probe);
  std::vector<double> us;
  for (int i = 0; i < 200; ++i) {
    const std::string path = probe + "/" + std::to_string(i);
    const auto start = std::chrono::steady_clock::now();
    const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                     .count());
    if (fd >= 0) ::close(fd);
  }
  fs::remove_all(probe);
  std::nth_element(us.begin(), us.begin() + 100, us.end());
  return std::to_string(static_cast<int>(us[100]));
}

// A real 2-rank launch: mpiexec alone, ezpz's plan run without ezpz, and ezpz launch.
Group real_launch(const Setup& s) {
  const std::vector<std::string> env = base_env(s);
  const std::vector<std::string> target = {"/bin/true"};
  const std::vector<std::string> launch = {s.ezpz, "launch", "-n", "2", "--"};
  const std::vector<std::string> dry_run = {s.ezpz, "launch", "--dry-run", "-n", "2", "--"};
  Group run{"launch_overhead", "a real 2-rank launch of /bin/true on this host", env, {}, {}};
  Case mpi{"mpiexec -n 2 /bin/true", {concat({s.mpiexec, "-n", "2"}, target), env}};
  mpi.baseline = true;
  run.cases.push_back(mpi);
  std::string plan_line = trim(capture({concat(dry_run, target), env}, s.scratch));
  run.notes.push_back("ezpz's plan: " + plan_line);
  if (auto planned = planned_command(plan_line, env)) {
    run.cases.push_back({"ezpz's plan run directly (launcher + shim)", *planned});
  } else {
    run.notes.push_back("(the plan needs a shell to read; its direct run is left out)");
  }
  run.notes.push_back("records: EZPZ_RUNS_DIR=<scratch>/runs, where creating a file takes " +
                      creation_cost(s.scratch + "/runs") + " us (median of 200)");
  Case real{"ezpz launch -n 2 -- /bin/true", {concat(launch, target), env}};
  real.max_added = 2.0;
  run.cases.push_back(real);
  // Its own runs directory: a launch prunes every sixth launch into its directory, and two cases
  // alternating into one made every pruning launch the first case's, every third of its runs.
  run.cases.push_back(
      {"  same, MASTER_PORT=29500 (no port probe)",
       {concat(launch, target),
        with(env, {"MASTER_PORT=29500", "EZPZ_RUNS_DIR=" + s.scratch + "/runs-port"})}});
  return run;
}

// ezpz's own cost: start-up, planning, and the launch path with a no-op launcher.
Group ezpz_alone(const Setup& s) {
  const std::vector<std::string> env = base_env(s);
  const std::vector<std::string> target = {"/bin/true"};
  const std::vector<std::string> dry_run =
      concat({s.ezpz, "launch", "--dry-run", "-n", "2", "--"}, target);
  Group alone{"ezpz_alone",
              "ezpz's own cost: start-up, planning, and the launch path with a no-op launcher",
              env,
              {},
              {}};
  Case true_case{"/bin/true", {target, env}};
  true_case.baseline = true;
  alone.cases.push_back(true_case);
  alone.cases.push_back({"ezpz --version", {{s.ezpz, "--version"}, env}});
  alone.cases.push_back({"ezpz launch --dry-run -n 2 -- /bin/true", {dry_run, env}});
  alone.cases.push_back(
      {"  same, MASTER_PORT=29500 (no port probe)", {dry_run, with(env, {"MASTER_PORT=29500"})}});
  // ezpz may cache its parsed machine profiles under XDG_CACHE_HOME or HOME: the
  // rows above find it warm. Here it is removed before every run (a first run)...
  std::string cold = s.scratch + "/cold-cache";
  Case first{"  same, profile cache removed before each run",
             {dry_run, with(env, {"XDG_CACHE_HOME=" + cold})}};
  first.remove_before = cold + "/ezpz/profiles.cache";
  alone.cases.push_back(first);
  // ... and here there is nowhere to keep one (EZPZ_RUN_DIR still names the run directory).
  std::vector<std::string> no_home = env;
  std::erase_if(no_home, [](const std::string& e) { return e.starts_with("HOME="); });
  alone.cases.push_back({"  same, HOME unset (no cache directory)", {dry_run, no_home}});
  // The whole real launch path (plan, write, spawn the launcher, supervise, reap) with
  // a launcher that does nothing: an `mpiexec` on PATH that is /bin/true.
  std::string fake_bin = s.scratch + "/fake-launcher-bin";
  fs::create_directories(fake_bin);
  fs::create_symlink("/bin/true", fake_bin + "/mpiexec");
  alone.cases.push_back({"ezpz launch -n 2 -- /bin/true, mpiexec = /bin/true",
                         {concat({s.ezpz, "launch", "-n", "2", "--"}, target),
                          with(env, {"PATH=" + fake_bin + ":" + k_path})}});
  return alone;
}

// What one rank pays: Hydra's per-rank variables plus what ezpz exports.
Group rankenv_shim(const Setup& s) {
  const std::vector<std::string> env = base_env(s);
  std::vector<std::string> rank_env =
      with(env, {"PMI_RANK=1", "PMI_SIZE=2", "MPI_LOCALRANKID=1", "MPI_LOCALNRANKS=2",
                 "MASTER_ADDR=127.0.0.1", "MASTER_PORT=29500", "WORLD_SIZE=2", "LOCAL_WORLD_SIZE=2",
                 "EZPZ_LAUNCHER=hydra"});
  Group shim{"rankenv_shim",
             "the per-rank env shim, under the variables one Hydra rank sees",
             env,
             {},
             {}};
  Case bare{"/bin/true", {{"/bin/true"}, rank_env}};
  bare.baseline = true;
  shim.cases.push_back(bare);
  shim.cases.push_back({"ezpz-rankenv /bin/true", {{s.rankenv, "/bin/true"}, rank_env}});
  return shim;
}

}  // namespace

std::vector<Group> launch_overhead_groups(const Setup& s) {
  return {real_launch(s), ezpz_alone(s), rankenv_shim(s)};
}

}  // namespace ezpz::bench
