// `ezpz doctor`: probe this node (sys), judge the snapshot (pure checks),
// print the report; with --deep, launch ezpz-probe on every node through the
// launch plan and judge the nodes too.
#include "cmd_doctor.hpp"

#include <unistd.h>

#include <array>
#include <chrono>
#include <future>

#include <fmt/format.h>

#include "attempt_loop.hpp"
#include "bundled.hpp"
#include "ezpz/core/error.hpp"
#include "ezpz/core/log.hpp"
#include "ezpz/core/text.hpp"
#include "ezpz/doctor/doctor.hpp"
#include "ezpz/doctor/doctor_deep.hpp"
#include "ezpz/doctor/doctor_report.hpp"
#include "ezpz/sys/doctor_probes.hpp"
#include "ezpz/sys/world.hpp"
#include "schedulers/scheduler.hpp"

namespace ezpz {
namespace {

using Clock = std::chrono::steady_clock;

const CLI::Validator k_positive_seconds(
    [](std::string& text) {
      char* end = nullptr;
      double value = std::strtod(text.c_str(), &end);
      if (!text.empty() && *end == '\0' && value > 0) return std::string();
      return fmt::format("expected a positive number of seconds, got \"{}\"", text);
    },
    "");

}  // namespace

CLI::App* setup_doctor(CLI::App& app, DoctorOptions& o, GlobalOptions& globals) {
  CLI::App* cmd =
      app.add_subcommand("doctor", "Check what would break a job, before it is submitted");
  add_verbosity_flags(*cmd, globals);
  add_plan_options(*cmd, o.plan, /*rank_options=*/false);
  CLI::Option* deep =
      cmd->add_flag("--deep", o.deep, "Also launch a probe on every node of the allocation");
  cmd->add_option("--timeout", o.timeout_s, "With --deep: stop the probes after SECONDS (60)")
      ->type_name("SECONDS")
      ->check(k_positive_seconds)
      ->needs(deep);
  cmd->add_option("--failed-nodes", o.failed_nodes,
                  "With --deep: write the nodes that failed here (default: the run directory)")
      ->type_name("FILE")
      ->needs(deep);
  // The plan options' --json needs --dry-run; doctor's prints the report.
  CLI::Option* dry_run = cmd->get_option("--dry-run");
  dry_run->description("With --deep: print the probes' launch command instead of running it");
  dry_run->needs(deep);
  CLI::Option* json = cmd->get_option("--json");
  json->remove_needs(dry_run);
  json->description("Print the report as one JSON object (with --dry-run: the probes' plan)");
  cmd->footer(
      "Examples:\n"
      "  ezpz doctor                  # this node, the job's variables, the machine profile\n"
      "  ezpz doctor --json\n"
      "  ezpz doctor --deep           # and one probe per node: devices, space, all-reduce\n"
      "  ezpz launch --exclude-file FILE -- python3 train.py   # FILE: what --deep wrote\n"
      "Exit status: 0 when no check is an error, 1 otherwise.");
  return cmd;
}

namespace {

// ---- The snapshot ---------------------------------------------------------------

// ezpz-smoke --probe, started before anything else: loading libtorch is the
// slowest probe, and every other one runs while it loads.
std::future<doctor::ProgramRun> start_trainer_probe(const Context& context, doctor::Snapshot& s) {
  try {
    s.trainer_path = find_bundled_program(context, "ezpz-smoke",
                                          "build it with libtorch (cmake -DEZPZ_WITH_SMOKE=ON)");
  } catch (const Error& error) {
    s.trainer_error = error.what();
    return {};
  }
  return sys::start_program({*s.trainer_path, "--probe"}, context.env, std::chrono::seconds(20));
}

// Where each scheduler's hosts come from: a file, a hostlist variable, or what a program
// prints where no variable names them (Flux: schedulers/flux.cpp).
struct HostSource {
  SchedulerKind kind;
  std::vector<std::string_view> variables;  // the first set one names it
  bool is_file;
  std::string_view program = {};
};
const std::array<HostSource, 3> k_host_sources = {{
    {SchedulerKind::pbs, {"PBS_NODEFILE"}, true},
    {SchedulerKind::slurm, {"SLURM_JOB_NODELIST", "SLURM_NODELIST"}, false},
    {SchedulerKind::flux, {}, false, "flux hostlist local"},
}};

// The hosts as listed, repeats kept, and where from (for doctor's duplicate count).
void list_hosts(const DoctorOptions& o, doctor::Snapshot& s, const FileReader& files) {
  s.hosts_source = "this host";
  if (o.plan.hostfile) {
    s.hosts_source = "--hostfile " + *o.plan.hostfile;
    return;  // read with the allocation, which reports its errors
  }
  for (const HostSource& source : k_host_sources) {
    if (source.kind != *s.scheduler) continue;
    if (!source.program.empty()) s.hosts_source = source.program;
    auto found = first_nonempty(s.env, source.variables);
    if (!found) return;
    s.hosts_source =
        source.is_file ? fmt::format("{} {}", found->first, found->second) : found->first;
    if (!source.is_file) return;
    try {
      s.listed_hosts =
          parse_hostfile(read_naming(files, found->second, found->first), s.hosts_source);
    } catch (const Error& error) {
      s.hosts_error = error.what();
    }
  }
}

// --hostfile replaces the scheduler's hosts, as in `ezpz launch`.
void apply_hostfile(const std::string& path, doctor::Snapshot& s, const FileReader& files) {
  s.listed_hosts = parse_hostfile(read_naming(files, path, "--hostfile"), "--hostfile " + path);
  if (s.listed_hosts.empty()) throw Error(fmt::format("--hostfile {}: no hosts in file", path));
  s.allocation->hosts = unique_hosts(s.listed_hosts);
  s.allocation->slots_per_host.reset();
}

// The scheduler and the allocation, read exactly as `ezpz launch` reads them.
void read_scheduler(const DoctorOptions& o, doctor::Snapshot& s) {
  try {
    SchedulerChoice choice = choose_scheduler(o.plan.scheduler, s.env);
    s.scheduler = choice.kind;
    s.scheduler_rule = choice.rule;
  } catch (const Error& error) {
    s.scheduler_error = error.what();
    return;
  }
  sys::RealFileReader files;
  list_hosts(o, s, files);
  try {
    s.allocation =
        read_allocation(*s.scheduler, s.env, files, sys::RealCommandReader(s.env), s.hostname);
    if (o.plan.hostfile) apply_hostfile(*o.plan.hostfile, s, files);
  } catch (const Error& error) {
    s.allocation.reset();
    s.allocation_error = error.what();
  }
}

doctor::Snapshot take_snapshot(const DoctorOptions& o, const Context& context) {
  doctor::Snapshot s;
  s.env = context.env;
  s.python_hook = python_hook_dir(context);
  std::future<doctor::ProgramRun> trainer = start_trainer_probe(context, s);
  s.hostname = sys::hostname();
  s.user = sys::current_user(s.env);
  s.ezpz_version = fmt::format("{} ({})", EZPZ_VERSION, EZPZ_GIT_HASH);
  s.machine_flag = o.plan.machine;
  s.launcher_flag = o.plan.launcher;
  s.launcher_program_flag = o.plan.launcher_program;
  s.root = ::geteuid() == 0;
  read_scheduler(o, s);
  sys::probe_node(s);
  if (trainer.valid()) s.trainer_probe = trainer.get();
  return s;
}

// ---- --deep -----------------------------------------------------------------------

// One ezpz-probe per node; plan_one_rank_per_host adds what the profile says
// an MPI program needs from the launcher (mpi_launcher_args).
PreparedLaunch prepare_probes(const DoctorOptions& o, const Context& context) {
  PlanOptions plan = o.plan;
  plan_one_rank_per_host(plan);
  std::vector<std::string> command = {
      find_bundled_program(context, "ezpz-probe",
                           "build it with MPI (apt-get install libmpich-dev)"),
      "--target", doctor::yeet_target(context.env).directory};
  return prepare_launch(plan, command, context);
}

std::string failed_nodes_path(const DoctorOptions& o, const Context& context,
                              const std::string& job_id) {
  if (o.failed_nodes) return *o.failed_nodes;
  if (auto path = doctor::default_failed_nodes_path(context.env, job_id)) return *path;
  throw Error(
      "cannot choose where to write the failed nodes: pass --failed-nodes FILE, or set "
      "EZPZ_RUN_DIR or HOME");
}

doctor::DeepVerdict judge_probes(const DoctorOptions& o, const Context& context,
                                 const doctor::Snapshot& s, std::string& failed_path) {
  PreparedLaunch prepared = prepare_probes(o, context);
  check_launcher_program(prepared, context);
  failed_path = failed_nodes_path(o, context, prepared.context.job_id);
  auto timeout = std::chrono::milliseconds(static_cast<long>(o.timeout_s * 1000));
  log::info("probing {}, at most {:g} s",
            plural(static_cast<long>(prepared.planned.hosts.size()), "node"), o.timeout_s);
  sys::ProbeLaunch launch =
      sys::run_probe_launch(prepared.planned.plan, context.env, timeout, failed_path + ".out");
  doctor::DeepRun run{prepared.planned.hosts,
                      prepared.planned.launcher,
                      launch.status,
                      launch.timed_out,
                      o.timeout_s,
                      s.storage.source_bytes,
                      failed_path};
  doctor::DeepVerdict verdict = doctor::judge_nodes(run, doctor::parse_probe_output(launch.output));
  sys::write_files(
      {{failed_path, doctor::failed_nodes_text(verdict.failed, prepared.context.job_id)}});
  return verdict;
}

// A --deep that cannot even start (no probe binary, no allocation) is the
// nodes check's error; the rest of the report still stands.
void add_deep(const DoctorOptions& o, const Context& context, const doctor::Snapshot& s,
              doctor::Report& report) {
  try {
    report.deep = judge_probes(o, context, s, report.failed_nodes_file);
    report.checks.push_back(report.deep->check);
  } catch (const std::exception& error) {
    report.failed_nodes_file.clear();
    report.checks.push_back({"nodes", doctor::Status::error, error.what(),
                             "fix what it names, then run ezpz doctor --deep again"});
  }
}

}  // namespace

int run_doctor(const DoctorOptions& o, const Context& context) {
  refuse_rank_options(o.plan);  // not only with --deep: never silently ignored
  if (o.plan.dry_run) return print_plan(o.plan, prepare_probes(o, context));
  const Clock::time_point started = Clock::now();
  doctor::Snapshot snapshot = take_snapshot(o, context);
  doctor::Derived derived = doctor::derive(snapshot);
  doctor::Report report;
  report.checks = doctor::run_checks(snapshot, derived);
  report.context = doctor::context_of(snapshot, derived);
  if (o.deep) add_deep(o, context, snapshot, report);
  report.elapsed_s = std::chrono::duration<double>(Clock::now() - started).count();
  std::string text = o.plan.json ? doctor::render_json(report) + "\n"
                                 : doctor::render_text(report, context.color);
  std::fputs(text.c_str(), stdout);
  return doctor::worst(report.checks) == doctor::Status::error ? 1 : 0;
}

}  // namespace ezpz
