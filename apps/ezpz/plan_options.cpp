#include "plan_options.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bundled.hpp"

#include "ezpz/core/env.hpp"
#include "ezpz/core/error.hpp"
#include "ezpz/core/hostlist.hpp"
#include "ezpz/core/log.hpp"
#include "ezpz/core/text.hpp"
#include "ezpz/doctor/this_host.hpp"
#include "ezpz/launchers/launchers.hpp"
#include "ezpz/supervise/attempt_loop.hpp"
#include "ezpz/sys/doctor_probes.hpp"
#include "ezpz/sys/executor.hpp"
#include "ezpz/sys/launcher_program.hpp"
#include "ezpz/sys/processes.hpp"
#include "ezpz/sys/world.hpp"
#include "schedulers/scheduler.hpp"

namespace ezpz {

std::vector<doctor::HostLookup> first_lookups(const std::vector<std::string>& hosts) {
  const std::vector<std::string> first(
      hosts.begin(), hosts.begin() + std::min<std::ptrdiff_t>(16, std::ssize(hosts)));
  return sys::resolve_hosts(first, std::chrono::milliseconds(500));
}
namespace {

// CLI11's own conversion message ("Could not convert: --np = abc") names no
// expectation; this one does, and runs before conversion. The upper bound is
// checked here too: past it a count would wrap when narrowed to an int.
CLI::Validator integer_up_to(long most) {
  return CLI::Validator(
      [most](std::string& text) {
        std::string_view digits = text;
        if (!digits.empty() && digits.front() == '-') digits.remove_prefix(1);
        bool all_digits =
            !digits.empty() && digits.find_first_not_of("0123456789") == std::string_view::npos;
        std::optional<long> value = parse_count(digits);
        if (value && *value <= most) return std::string();
        if (!all_digits) return fmt::format("expected an integer, got \"{}\"", text);
        return fmt::format("expected at most {}, got {}", most, text);
      },
      "");
}

// Ranks per CPU that -n alone may start on a local host (slots unknown).
constexpr int k_local_ranks_per_cpu = 8;

}  // namespace

void add_rank_count_options(CLI::App& cmd, PlanOptions& o) {
  o.nprocs_option = cmd.add_option("-n,--np,--nproc", o.nprocs, "Total ranks")
                        ->type_name("N")
                        ->check(integer_up_to(k_max_ranks));
  o.ppn_option = cmd.add_option("--ppn", o.ppn, "Ranks per host")
                     ->type_name("N")
                     ->check(integer_up_to(k_max_ppn));
}

void add_plan_options(CLI::App& app, PlanOptions& o, bool rank_options) {
  CLI::App* cmd = &app;
  if (rank_options) {
    add_rank_count_options(*cmd, o);
  } else {
    // Said plainly, rather than CLI11's "arguments were not expected".
    o.rank_refusal = fmt::format(
        "{}: -n and --ppn do not apply: one rank runs on each node (choose nodes with "
        "--nhosts, --exclude or --hostfile)",
        cmd->get_name());
    o.refused_rank_option = cmd->add_option("-n,--np,--nproc,--ppn")
                                ->group("")
                                ->expected(0, 1)
                                ->allow_extra_args(false);
  }
  o.nhosts_option = cmd->add_option("-N,--nhosts", o.nhosts, "Use the first N hosts")
                        ->type_name("N")
                        ->check(integer_up_to(k_max_hosts));
  cmd->add_option("--hostfile", o.hostfile, "Take hosts from this file, not the scheduler")
      ->type_name("FILE");
  cmd->add_option("--exclude", o.exclude, "Never use these hosts (comma list, repeatable)")
      ->delimiter(',')
      ->type_name("HOST,...");
  cmd->add_option("--exclude-file", o.exclude_file, "Never use the hosts listed in this file")
      ->type_name("FILE");
  cmd->add_option("--machine", o.machine, "Machine profile to use (default: detected)")
      ->type_name("NAME");
  cmd->add_option("--scheduler", o.scheduler, "pbs, slurm, flux or local (default: detected)")
      ->type_name("NAME");
  cmd->add_option("--launcher", o.launcher,
                  "pals, hydra, openmpi, srun, flux or torchrun (default: profile's)")
      ->type_name("NAME");
  cmd->add_option("--launcher-program", o.launcher_program,
                  "The launcher's program, on PATH or a path (default: profile's, or the first "
                  "of the launcher's usual names that is it)")
      ->type_name("NAME|PATH");
  if (rank_options) {
    cmd->add_option("--cpu-bind", o.cpu_bind,
                    "CPU binding for the launcher (default: profile's, or CPU_BIND)")
        ->type_name("BIND");
  }
  cmd->add_option("-x,--env", o.env, "Set NAME=VALUE for every rank (repeatable)")
      ->type_name("NAME=VALUE");
  cmd->add_option("--launcher-arg", o.launcher_args, "Pass ARG to the launcher as is (repeatable)")
      ->allow_extra_args(false)
      ->type_name("ARG");
  if (rank_options) {
    o.gpus_per_rank_option =
        cmd->add_option("--gpus-per-rank", o.gpus_per_rank,
                        "GPUs each rank gets (default 1 on machines with a gpu_bind)")
            ->type_name("K")
            ->check(integer_up_to(k_max_ppn));
    cmd->add_flag("--no-gpu-bind", o.no_gpu_bind,
                  "Leave devices alone: no per-rank CUDA_VISIBLE_DEVICES, ZE_AFFINITY_MASK ...");
    cmd->add_flag("--no-rank-env", o.no_rank_env,
                  "Do not set RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR ... for the ranks");
  }
  CLI::Option* dry_run =
      cmd->add_flag("--dry-run", o.dry_run,
                    "Print the command instead of running it (writes only the hostfile it names)");
  cmd->add_flag("--json", o.json, "With --dry-run: print the plan as one JSON object")
      ->needs(dry_run);
}

void refuse_rank_options(const PlanOptions& options) {
  if (options.refused_rank_option && options.refused_rank_option->count() > 0) {
    throw Error(options.rank_refusal);
  }
}

void plan_one_rank_per_host(PlanOptions& options) {
  refuse_rank_options(options);
  options.fixed_ppn = 1;
  options.mpi_program = true;
  options.no_rank_env = true;
  options.node_step = true;
  // A profile's per-GPU binding list would pin the one rank to a few cores:
  // an empty binding adds no flag, so the launcher's default applies.
  options.cpu_bind = "";
}

namespace {

LaunchPlan node_step_plan(std::vector<std::string> command, const Context& context) {
  PlanOptions plan;
  plan_one_rank_per_host(plan);
  LaunchPlan launch = prepare_launch(plan, std::move(command), context).planned.plan;
  return tagged_plan(std::move(launch), sys::make_run_id(sys::hostname()));
}

}  // namespace

std::string node_step_output(std::vector<std::string> command, std::chrono::seconds limit,
                             const Context& context) {
  // Removed however this returns (an exception, ezpz interrupted while the step runs).
  const sys::ScratchDirectory scratch(context.env, "ezpz-step");
  const std::string path = scratch.path() + "/output";
  sys::ProcessOptions options{
      .grace = std::chrono::seconds(2), .timeout = limit, .stdout_path = path};
  sys::ProcessExecutor(context.env, options)
      .run_for_outcome(node_step_plan(std::move(command), context));
  return sys::read_file_if_present(path).value_or("");
}

std::optional<long> given(const CLI::Option* option, long value) {
  if (option == nullptr || option->count() == 0) return std::nullopt;
  return value;
}

namespace {

// The Python ezpz documents CPU_BIND=--cpu-bind=list:0-1: the value is what follows the flag.
std::string bare_binding(std::string_view text) {
  constexpr std::string_view flag = "--cpu-bind=";
  if (text.starts_with(flag)) text.remove_prefix(flag.size());
  return std::string(text);
}

// --cpu-bind, else CPU_BIND. An empty --cpu-bind is ezpz's own "no binding" (one rank per node).
std::optional<std::string> chosen_cpu_bind(const PlanOptions& o, const Env& env) {
  const std::optional<std::string> variable = get_nonempty(env, "CPU_BIND");
  if (!o.cpu_bind) return variable ? std::optional(bare_binding(*variable)) : std::nullopt;
  std::string bind = bare_binding(*o.cpu_bind);
  if (variable && !bind.empty()) {
    log::warn("--cpu-bind {} and CPU_BIND={} are both set: --cpu-bind is used", bind, *variable);
  }
  return bind;
}

LaunchRequest to_request(const PlanOptions& o, std::vector<std::string> command,
                         const Context& context, const FileReader& files) {
  LaunchRequest request;
  request.command = std::move(command);
  request.topology = {.nprocs = given(o.nprocs_option, o.nprocs),
                      .ppn = o.fixed_ppn ? o.fixed_ppn : given(o.ppn_option, o.ppn),
                      .nhosts = given(o.nhosts_option, o.nhosts)};
  request.excluded = o.exclude;
  if (o.exclude_file) {
    for (const std::string& host :
         parse_hostfile(read_naming(files, *o.exclude_file, "--exclude-file"),
                        "--exclude-file " + *o.exclude_file)) {
      request.excluded.push_back(host);
    }
  }
  // "mpich", "ompi": the dialect's own name from here on (an unknown name stays, for the error).
  if (o.launcher) request.launcher = canonical_launcher(*o.launcher);
  request.cpu_bind = chosen_cpu_bind(o, context.env);
  for (const std::string& assignment : o.env) {
    request.env.push_back(parse_assignment(assignment, "--env"));
  }
  request.launcher_args = o.launcher_args;
  request.rank_env = !o.no_rank_env;
  request.gpus = {.gpus_per_rank = static_cast<int>(o.gpus_per_rank),
                  .bind = !o.no_gpu_bind && !o.mpi_program,
                  .given = given(o.gpus_per_rank_option, o.gpus_per_rank).has_value()};
  request.output_watched = o.output_watched;
  request.output_records = o.output_records;
  request.node_step = o.node_step;
  return request;
}

// --hostfile replaces the scheduler's hosts (deduplicated, in order).
void apply_hostfile(Allocation& allocation, const std::string& path, const FileReader& files) {
  std::vector<std::string> lines =
      parse_hostfile(read_naming(files, path, "--hostfile"), "--hostfile " + path);
  if (lines.empty()) throw Error(fmt::format("--hostfile {}: no hosts in file", path));
  allocation.hosts = unique_hosts(lines);
  allocation.nodefile = lines == allocation.hosts ? path : "";
  log::debug("hosts: {} from --hostfile {}", allocation.hosts.size(), path);
}

int master_port(const Env& env) {
  if (auto text = get_nonempty(env, "MASTER_PORT")) {
    auto port = parse_count(*text);
    if (!port || *port < 1 || *port > 65535) {
      throw Error(fmt::format("MASTER_PORT={}: expected a port number 1-65535", *text));
    }
    return static_cast<int>(*port);
  }
  return sys::find_free_port();
}

// Hostfiles go where only this user can write, and survive the run so a
// --dry-run line can be pasted later. Without EZPZ_RUN_DIR or HOME (cron, some batch systems),
// beside the run records in the working directory: never a shared /tmp name another user
// could have linked elsewhere. Only a plan that needs a hostfile writes one.
std::string run_dir(const Env& env) {
  if (auto dir = get_nonempty(env, "EZPZ_RUN_DIR")) return *dir;
  if (auto cache = ezpz_cache_dir(env)) return *cache + "/hostfiles";
  return sys::current_directory() + "/.ezpz/hostfiles";
}

struct Gathered {
  PlanInputs inputs;
  std::string scheduler;
  std::string machine_rule;
  std::optional<RunningJob> found;  // the job qstat/squeue says holds this node
};

// The client that names a running job of `kind`'s scheduler; empty: ask each.
std::string_view job_client(std::optional<SchedulerKind> kind) {
  if (kind == SchedulerKind::pbs) return "qstat";
  if (kind == SchedulerKind::slurm) return "squeue";
  return "";
}

// qstat and squeue (`only` one of them, when given) asked which running job holds this host.
// When none answered, what they said is said without -v, after their tries of the moment:
// what ezpz plans on depends on it. (One that answered makes another's failure moot: squeue
// with no controller on a PBS machine.)
JobLookup look_up_job(const Env& env, const std::string& host, std::string_view only = {}) {
  const auto on_path = [&env, only](std::string_view program) {
    return (only.empty() || program == only) &&
           sys::find_program(std::string(program), env).has_value();
  };
  const auto pause = [](double seconds) {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  };
  JobLookup lookup = find_job_holding(host, env, sys::RealCommandReader(env), on_path, pause);
  const bool none_answered = lookup.asked.empty();
  for (const std::string& failure : lookup.failed) {
    none_answered ? log::warn("job lookup: {}", failure) : log::debug("job lookup: {}", failure);
  }
  return lookup;
}

// With no job variables here (a compute node reached by ssh), the job qstat or squeue says
// holds this node; a warning when they answered and none does, or when none answered.
std::optional<RunningJob> job_of_this_node(const Env& env, const std::string& host,
                                           std::string_view only) {
  JobLookup lookup = look_up_job(env, host, only);
  if (!lookup.job && lookup.asked.empty() && !lookup.failed.empty()) {
    log::warn("no scheduler answered which job holds {}: a local run on this node only", host);
  }
  if (lookup.job) {
    log::info("job: {} ({}, {}), found by {}: no job variables are set here", lookup.job->job_id,
              to_string(lookup.job->kind),
              plural(static_cast<long>(lookup.job->hosts.size()), "host"),
              lookup.job->kind == SchedulerKind::pbs ? "qstat" : "squeue");
  } else if (!lookup.asked.empty()) {
    log::warn("{} lists no running job holding {}: a local run on this node only",
              fmt::join(lookup.asked, " and "), host);
  }
  return lookup.job;
}

// The job holding this node, asked only where nothing named a scheduler (--scheduler local and
// EZPZ_SCHEDULER=local mean it) or the hosts, and only on a known machine's node: its hostname
// matches a machine profile, or --machine/EZPZ_MACHINE names one. Elsewhere (a laptop, a
// workstation with Slurm's clients installed) a local launch does not pay for running qstat or
// squeue: 3 ms when squeue finds no controller, a round trip to it when it does.
std::optional<RunningJob> job_of_this_node(const PlanOptions& o, const Env& env,
                                           const std::string& host,
                                           const LoadedProfiles& profiles) {
  if (o.scheduler || get_nonempty(env, "EZPZ_SCHEDULER") || o.hostfile) return std::nullopt;
  const ProfileChoice here = select_profile(profiles, o.machine, env, host, SchedulerKind::local);
  if (here.profile->name == "local") {
    log::debug("job lookup: none (no machine profile names this host; EZPZ_MACHINE would)");
    return std::nullopt;
  }
  if (here.profile->scheduler == SchedulerKind::local) {  // a machine that runs none
    log::debug("job lookup: none (the machine profile {} runs no scheduler)", here.profile->name);
    return std::nullopt;
  }
  // Only the machine's own scheduler is asked: a PBS machine's squeue (a client with no
  // controller) has nothing to say, and its failure nothing worth a warning.
  return job_of_this_node(env, host, job_client(here.profile->scheduler));
}

// PBS_JOBID and PBS_NODEFILE carried here from another job (a shell that kept them): the job
// qstat says holds this node instead, as the Python ezpz asks, said on stderr. None found: the
// nodefile's hosts, which `ezpz launch` warns of (cmd_launch.cpp, warn_foreign_nodefile).
// Launches only, where qstat is on PATH: a --dry-run may plan for a job from outside it, and
// the nodefile's names are looked up (DNS: 2 to 12 ms for a login node's plan) only then.
std::optional<RunningJob> job_instead_of_nodefile(const Allocation& allocation,
                                                  const PlanOptions& o, const Env& env,
                                                  const std::string& host) {
  if (allocation.scheduler != SchedulerKind::pbs || o.hostfile || o.dry_run ||
      allocation.hosts.empty() || !sys::find_program("qstat", env)) {
    return std::nullopt;
  }
  const auto look_up = [&allocation] { return first_lookups(allocation.hosts); };
  if (doctor::lists_this_host(allocation.hosts, host, look_up)) return std::nullopt;
  JobLookup lookup = look_up_job(env, host, "qstat");
  if (!lookup.job) return std::nullopt;
  log::warn(
      "PBS_NODEFILE does not list this host ({}): PBS_JOBID={} is another node's job; "
      "qstat says job {} holds it: planning on its {}",
      host, allocation.job_id, lookup.job->job_id,
      plural(static_cast<long>(lookup.job->hosts.size()), "host"));
  return lookup.job;
}

Allocation allocation_of(const RunningJob& job) {
  Allocation allocation;
  allocation.scheduler = job.kind;
  allocation.job_id = job.job_id;
  allocation.hosts = unique_hosts(job.hosts);
  return allocation;
}

Gathered gather(const PlanOptions& o, const Context& context, const FileReader& files) {
  const Env& env = context.env;
  std::string host = sys::hostname();
  SchedulerChoice scheduler = choose_scheduler(o.scheduler, env);
  LoadedProfiles profiles = sys::load_machine_profiles(env);
  const std::optional<RunningJob> found = scheduler.kind == SchedulerKind::local
                                              ? job_of_this_node(o, env, host, profiles)
                                              : std::nullopt;
  if (found) scheduler = {found->kind, fmt::format("job {} holds this node", found->job_id)};
  log::debug("scheduler: {} ({})", to_string(scheduler.kind), scheduler.rule);
  Allocation allocation =
      found ? allocation_of(*found)
            : read_allocation(scheduler.kind, env, files, sys::RealCommandReader(env), host);
  if (auto job = job_instead_of_nodefile(allocation, o, env, host)) {
    allocation = allocation_of(*job);
  }
  if (o.hostfile) apply_hostfile(allocation, *o.hostfile, files);
  if (log::enabled(log::Level::debug)) {  // compressing 10,000 names is not free
    log::debug("allocation: job {}, {}: {}", allocation.job_id.empty() ? "-" : allocation.job_id,
               plural(static_cast<long>(allocation.hosts.size()), "host"),
               compress_hostlist(allocation.hosts));
  }
  ProfileChoice choice = select_profile(profiles, o.machine, env, host, scheduler.kind);
  log::debug("machine: {} ({}; {})", choice.profile->name, choice.rule, choice.profile->source);
  sys::warn_skipped_profiles(profiles);
  const MachineProfile& profile = *choice.profile;
  SlotsPerHost slots =
      default_slots_per_host(env, allocation, profile.gpus_per_node, profile.name,
                             [&env] { return sys::probe_local_accelerators(env); });
  if (scheduler.kind == SchedulerKind::local) {
    int cpus = sys::online_cpus();
    slots.most_per_host = k_local_ranks_per_cpu * cpus;
    slots.most_source =
        fmt::format("{} per CPU x {} CPU{}", k_local_ranks_per_cpu, cpus, cpus == 1 ? "" : "s");
  }
  log::debug("ranks per host: {} ({})", slots.count, slots.source);
  return {.inputs = {.allocation = allocation,
                     .profile = profile,
                     .slots = slots,
                     .master_port = master_port(env),
                     .rankenv = bundled_program_path(context, "ezpz-rankenv"),
                     .run_dir = run_dir(env),
                     .environment = env,
                     .hostname = host},
          .scheduler = std::string(to_string(scheduler.kind)),
          .machine_rule = choice.rule,
          .found = std::move(found)};
}

LauncherProgramChoice choose_program(const PlanOptions& o, const PlannedLaunch& planned,
                                     const MachineProfile& profile, const Env& env) {
  return sys::resolve_launcher_program(
      program_dialect(planned.launcher, planned.hosts.size()),
      named_launcher_program(o.launcher_program, profile, planned.launcher),
      sys::launcher_environment(env, planned.plan.env));
}

}  // namespace

PreparedLaunch prepare_launch(const PlanOptions& o, std::vector<std::string> command,
                              const Context& context) {
  sys::RealFileReader files;
  LaunchRequest request = to_request(o, std::move(command), context, files);
  Gathered gathered = gather(o, context, files);
  if (gathered.found) {  // srun attaches to the job by its id, as inside it; PALS reads PBS_JOBID
    const bool slurm = gathered.found->kind == SchedulerKind::slurm;
    request.env.emplace_back(slurm ? "SLURM_JOB_ID" : "PBS_JOBID", gathered.found->job_id);
  }
  if (o.mpi_program) {  // the profile's flags first: the user's --launcher-arg has the last word
    const std::vector<std::string>& mpi_args = gathered.inputs.profile.mpi_launcher_args;
    request.launcher_args.insert(request.launcher_args.begin(), mpi_args.begin(), mpi_args.end());
  }
  PlannedLaunch planned = plan_launch(request, gathered.inputs);
  log::debug("layout: {} = {} x {} per host", plural(planned.topology.world_size, "rank"),
             plural(planned.topology.nhosts, "host"), planned.topology.ppn);
  log::debug("gpus: {}", planned.gpus.rule);
  if (!planned.binding_note.empty()) log::debug("cpu binding: {}", planned.binding_note);
  LauncherProgramChoice program = choose_program(o, planned, gathered.inputs.profile, context.env);
  PlanContext plan_context{.scheduler = gathered.scheduler,
                           .machine = gathered.inputs.profile.name,
                           .job_id = gathered.inputs.allocation.job_id,
                           .spares = {}};
  return {.planned = with_program(std::move(planned), program),
          .context = std::move(plan_context),
          .request = std::move(request),
          .inputs = std::move(gathered.inputs),
          .program = std::move(program)};
}

int print_plan(const PlanOptions& o, const PreparedLaunch& prepared) {
  sys::write_files(prepared.planned.plan.files);  // so the printed line can be pasted
  std::string text = o.json ? render_json(prepared.planned, prepared.context)
                            : render_command(prepared.planned.plan);
  std::fputs((text + "\n").c_str(), stdout);
  return 0;
}

void check_launcher_program(const PreparedLaunch& prepared, const Context& context) {
  if (!prepared.program.refusal.empty()) {
    throw Error(prepared.program.refusal, ExitCode::not_found);
  }
  const std::string& dialect = prepared.planned.launcher;
  const Env env = sys::launcher_environment(context.env, prepared.planned.plan.env);
  const std::string missing = missing_root_assignments(dialect, env);
  // Only for a launcher that will run: a missing one is the executor's one error line.
  if (::geteuid() == 0 && !missing.empty() && !prepared.program.path.empty()) {
    log::warn(
        "as root, {} refuses to start without {}: export them to run as root (ezpz never "
        "sets them)",
        expected_flavour(dialect), missing);
  }
}

int run_plan(const PreparedLaunch& prepared, const Context& context) {
  check_launcher_program(prepared, context);
  if (log::enabled(log::Level::info)) {
    log::info("running: {}", render_command(prepared.planned.plan));
  }
  std::string run_id = sys::make_run_id(sys::hostname());
  log::info("run id: {}", run_id);
  return sys::ProcessExecutor(context.env).run(tagged_plan(prepared.planned.plan, run_id));
}

}  // namespace ezpz
