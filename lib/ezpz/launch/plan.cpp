#include "ezpz/launch/plan.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "ezpz/core/content_hash.hpp"
#include "ezpz/core/error.hpp"
#include "ezpz/launchers/launchers.hpp"
#include "ezpz/output/rank_records.hpp"

namespace ezpz {

std::string hostfile_text(const std::vector<std::string>& hosts) {
  std::string text;
  for (const std::string& host : hosts) text += host + '\n';
  return text;
}

namespace {

// The hostfile is named by its content, so rewriting it is idempotent and two
// jobs never share a name for different host sets.
std::string content_hash(std::string_view text) {
  ContentHash hash;
  hash.add(text);
  return fmt::format("{:016x}", hash.value());
}

}  // namespace

std::string written_hostfile(const std::vector<std::string>& hosts, const PlanInputs& in,
                             std::vector<FileToWrite>& files) {
  std::string text = hostfile_text(hosts);
  std::string job = in.allocation.job_id.empty() ? "local" : in.allocation.job_id;
  std::string path = fmt::format("{}/ezpz-{}-{}.hosts", in.run_dir, job, content_hash(text));
  files.push_back({path, text});
  return path;
}

namespace {

// Rank 0 runs on the first host: this one in a local run, and usually in a batch job too
// (PBS's mother superior and Slurm's batch host come first).
bool rank0_is_here(const std::vector<std::string>& hosts, const PlanInputs& in) {
  const std::string_view first = short_host_name(hosts.front());
  return first == "localhost" || (!in.hostname.empty() && first == short_host_name(in.hostname));
}

// The scheduler's own nodefile when it already lists exactly the hosts used;
// otherwise a file ezpz writes. A run on this host alone and srun (given --nodelist) need
// none; one other host does (--hostfile hf --nhosts 1 ran here, not on hf's first host).
std::string choose_hostfile(const std::vector<std::string>& hosts, const std::string& launcher,
                            const PlanInputs& in, std::vector<FileToWrite>& files) {
  const bool here_alone = hosts.size() == 1 && rank0_is_here(hosts, in);
  if (in.allocation.scheduler == SchedulerKind::local && here_alone) return "";
  if (!launcher_takes_hostfile(launcher)) return "";
  if (!in.allocation.nodefile.empty() && hosts == in.allocation.hosts) {
    return in.allocation.nodefile;
  }
  return written_hostfile(hosts, in, files);
}

// Rank 0's address: the first host used. A profile's fixed address wins, except a loopback
// one (the local profile's) when any rank runs elsewhere (--hostfile without a scheduler):
// ranks there would rendezvous with themselves. An IP address has no name on the fast network.
std::string master_addr(const std::vector<std::string>& hosts, const PlanInputs& in) {
  const MachineProfile& profile = in.profile;
  const bool only_here = hosts.size() == 1 && rank0_is_here(hosts, in);
  if (!profile.master_addr.empty() && (only_here || !loopback_address(profile.master_addr))) {
    return profile.master_addr;
  }
  if (profile.network_suffix.empty() || ip_literal(hosts.front())) return hosts.front();
  return fmt::format("{}{}", short_host_name(hosts.front()), profile.network_suffix);
}

std::string choose_launcher(const LaunchRequest& request, const MachineProfile& profile) {
  std::string name = request.launcher.value_or(profile.launcher);
  if (!is_known_launcher(name)) {
    throw Error(fmt::format("{}: unknown launcher \"{}\"; expected one of {}",
                            request.launcher ? "--launcher" : profile.source, name,
                            known_launchers()));
  }
  return name;
}

// --gpus-per-rank K: a host holds 1/K as many ranks as it has slots (GPUs).
SlotsPerHost slots_for(const SlotsPerHost& slots, const GpuRequest& gpus) {
  if (!gpus.given || gpus.gpus_per_rank <= 1 || !slots.known) return slots;
  SlotsPerHost per_rank = slots;
  per_rank.count = std::max(1, slots.count / gpus.gpus_per_rank);
  per_rank.source = fmt::format("{} / --gpus-per-rank {}", slots.source, gpus.gpus_per_rank);
  return per_rank;
}

// A user --cpu-bind value replaces the profile's binding. A rank given K GPUs is given the cores
// of K GPUs' ranks, on their NUMA domains.
CoreBinding choose_cpu_bind(const LaunchRequest& request, const MachineProfile& profile, int ppn,
                            const GpuPlacement& gpus) {
  // Empty: no binding flag at all (ezpz's own one-rank-per-host programs), the launcher's default.
  if (request.cpu_bind) {
    if (request.cpu_bind->empty()) return {};
    return {.kind = CoreBinding::Kind::verbatim, .verbatim = *request.cpu_bind};
  }
  const bool placed = gpus.by != GpuPlacement::By::none;
  return profile_core_binding(profile.cpu_bind, ppn, placed ? gpus.gpus_per_rank : 1);
}

// A profile's env values are defaults: what the user already exported wins.
EnvList profile_defaults(const MachineProfile& profile, const Env& environment) {
  EnvList defaults;
  for (const auto& [name, value] : profile.env) {
    if (!environment.count(name)) defaults.emplace_back(name, value);
  }
  return defaults;
}

// A watchdog that reads the ranks' output needs it as it is printed: Python block-buffers
// print() into a pipe, so a healthy rank would look silent until 8 KiB had piled up. A
// PYTHONUNBUFFERED the user set (exported or -x) wins.
bool wants_unbuffered_python(const LaunchRequest& request, const Env& environment) {
  const auto user_set = [](const auto& entry) { return entry.first == "PYTHONUNBUFFERED"; };
  return request.output_watched && !environment.count("PYTHONUNBUFFERED") &&
         std::none_of(request.env.begin(), request.env.end(), user_set);
}

// Whether ezpz-rankenv can relay the ranks' output: it runs under each rank, and the launcher
// carries its records whole (so its own pipes too, on ezpz's host; LaunchPlan).
bool ranks_can_pass_pipes(const PlannedLaunch& planned, const LaunchRequest& request) {
  return request.rank_env && launcher_keeps_records(planned.launcher);
}

// Whether the ranks write rank records: asked for, and ezpz-rankenv can; else the bytes pass as
// they are.
bool records_on(const PlannedLaunch& planned, const LaunchRequest& request) {
  return request.output_records && ranks_can_pass_pipes(planned, request);
}

// Profile defaults first, then the rank contract, then -x (the user has the last word).
EnvList rank_env(const PlannedLaunch& planned, const LaunchRequest& request, const PlanInputs& in) {
  EnvList env = profile_defaults(in.profile, in.environment);
  if (request.rank_env && !launcher_sets_rank_env(planned.launcher)) {
    env.insert(env.end(), {{"MASTER_ADDR", planned.master_addr},
                           {"MASTER_PORT", std::to_string(in.master_port)},
                           {"WORLD_SIZE", std::to_string(planned.topology.world_size)},
                           {"LOCAL_WORLD_SIZE", std::to_string(planned.topology.ppn)},
                           {"EZPZ_LAUNCHER", planned.launcher}});
  }
  const EnvList gpus = placement_env(planned.gpus);
  env.insert(env.end(), gpus.begin(), gpus.end());
  if (wants_unbuffered_python(request, in.environment)) env.emplace_back("PYTHONUNBUFFERED", "1");
  if (records_on(planned, request))
    env.emplace_back(output::k_records_variable, output::k_records_on);
  env.insert(env.end(), request.env.begin(), request.env.end());
  return env;
}

// A mask the user set, exported or with -x, is where placement happens.
GpuPlacement place(const PlannedLaunch& planned, const LaunchRequest& request,
                   const PlanInputs& in) {
  Env with_x;  // copied only when there is a -x to add
  if (!request.env.empty()) {
    with_x = in.environment;
    for (const auto& [name, value] : request.env) with_x[name] = value;
  }
  return place_gpus({.profile = in.profile,
                     .launcher = planned.launcher,
                     .ppn = planned.topology.ppn,
                     .launcher_binds = launcher_binds_gpus(planned.launcher),
                     .ranks_wrapped = request.rank_env && !launcher_sets_rank_env(planned.launcher),
                     .environment = request.env.empty() ? in.environment : with_x},
                    request.gpus);
}

std::vector<std::string> gpu_flags(const PlannedLaunch& planned) {
  const GpuPlacement& gpus = planned.gpus;
  if (gpus.by != GpuPlacement::By::launcher) return {};
  return launcher_gpu_flags(planned.launcher, gpus.gpus_per_rank, gpus.launcher_bind);
}

std::vector<std::string> names_of(const EnvList& env) {
  std::vector<std::string> names;
  for (const auto& [name, value] : env) names.push_back(name);
  return names;
}

}  // namespace

PlannedLaunch plan_launch(const LaunchRequest& request, const PlanInputs& in) {
  if (request.command.empty()) throw Error("no command given: ezpz launch [options] -- COMMAND");
  PlannedLaunch planned;
  planned.launcher = choose_launcher(request, in.profile);
  std::vector<std::string> hosts = select_hosts(in.allocation.hosts, request.excluded);
  planned.topology = infer_topology(
      request.topology, static_cast<int>(hosts.size()), slots_for(in.slots, request.gpus),
      launcher_fills_in_order(planned.launcher) ? Fill::in_order : Fill::evenly);
  hosts.resize(planned.topology.nhosts);
  planned.hosts = hosts;
  planned.master_addr = master_addr(hosts, in);
  planned.hostfile = choose_hostfile(hosts, planned.launcher, in, planned.plan.files);
  planned.gpus = place(planned, request, in);
  planned.plan.env = rank_env(planned, request, in);

  planned.binding = choose_cpu_bind(request, in.profile, planned.topology.ppn, planned.gpus);
  planned.binding_note =
      binding_words(*launcher_row(planned.launcher), planned.binding, planned.topology.ppn)
          .dropped_why;
  LauncherInput launcher{.world_size = planned.topology.world_size,
                         .ppn = planned.topology.ppn,
                         .hosts = hosts,
                         .hostfile = planned.hostfile,
                         .cpu_bind = planned.binding,
                         .exported = names_of(planned.plan.env),
                         .master_addr = planned.master_addr,
                         .master_port = in.master_port,
                         .environment = in.environment,
                         .whole_lines = records_on(planned, request) || request.node_step,
                         .node_step = request.node_step};
  std::vector<std::string>& argv = planned.plan.argv;
  argv = launcher_argv(planned.launcher, launcher);
  const std::vector<std::string> gpus = gpu_flags(planned);
  argv.insert(argv.end(), gpus.begin(), gpus.end());
  // A profile's launcher_args are in its own launcher's words (Aurora's PALS --pmi=pmix):
  // another launcher, chosen with --launcher, is not given them.
  if (planned.launcher == in.profile.launcher) {
    argv.insert(argv.end(), in.profile.launcher_args.begin(), in.profile.launcher_args.end());
  }
  argv.insert(argv.end(), request.launcher_args.begin(), request.launcher_args.end());
  const bool wrapped = request.rank_env && !launcher_sets_rank_env(planned.launcher);
  if (wrapped) argv.push_back(in.rankenv);
  argv.insert(argv.end(), request.command.begin(), request.command.end());
  planned.plan.relay_stdin = wrapped && rank0_is_here(hosts, in);
  planned.plan.ranks_can_pass_pipes = ranks_can_pass_pipes(planned, request);
  return planned;
}

}  // namespace ezpz
