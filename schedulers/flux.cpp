// Flux (flux-core 0.60 and later): FLUX_URI is set in the shell of `flux alloc`, the script
// of `flux batch` and every task of a job (flux-environment(7)). Flux names a job's hosts in
// no variable: flux-environment(7) says to ask Flux, and `flux hostlist local`
// (flux-hostlist(1), 0.60 on) prints them as one RFC 29 hostlist: the hosts of the job
// FLUX_JOB_ID names, or in an instance's own shell or script the instance's, in broker rank
// order (the order `flux run` gives ranks). "local" is named: since 0.66 the default is stdin.
#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "ezpz/core/hostlist.hpp"
#include "ezpz/core/text.hpp"
#include "schedulers/scheduler.hpp"

namespace ezpz {
namespace {

const std::vector<std::string> k_hosts_command = {"flux", "hostlist", "local"};
constexpr std::string_view k_hosts_origin = "flux hostlist local";
// The broker unsets FLUX_JOB_ID for the shell or script it runs; there the job is the
// instance itself, whose id is FLUX_ENCLOSING_ID when Flux started it.
const std::vector<std::string_view> k_job_id_vars = {"FLUX_JOB_ID", "FLUX_ENCLOSING_ID"};

std::optional<std::string> detect_flux(const Env& env) {
  if (!get_nonempty(env, "FLUX_URI")) return std::nullopt;
  return std::string("FLUX_URI is set");
}

std::string asked_hosts(const CommandReader& commands, const std::string& uri) {
  try {
    return commands.output(k_hosts_command);
  } catch (const Error& error) {
    throw Error(
        fmt::format("FLUX_URI is set ({}) but {} failed: {}; run inside the Flux "
                    "instance, or set --scheduler local",
                    uri, k_hosts_origin, error.what()));
  }
}

// One hostlist a line (flux-hostlist(1) prints one).
std::vector<std::string> parsed_hosts(std::string_view text) {
  std::vector<std::string> hosts;
  try {
    for (std::string_view line : split_lines(text)) {
      if (line.empty()) continue;
      std::vector<std::string> listed = expand_hostlist(line);
      hosts.insert(hosts.end(), listed.begin(), listed.end());
    }
  } catch (const Error& error) {
    throw Error(fmt::format("{}: {}", k_hosts_origin, error.what()));
  }
  if (hosts.empty()) throw Error(fmt::format("{}: no hosts", k_hosts_origin));
  for (const std::string& host : hosts) check_host_name(host, k_hosts_origin);
  return hosts;
}

Allocation read_flux(const Env& env, const FileReader&, const CommandReader& commands,
                     std::string_view) {
  auto uri = get_nonempty(env, "FLUX_URI");
  if (!uri) {
    throw Error(
        "FLUX_URI is not set: run inside a Flux instance (flux alloc, flux batch), or set "
        "--scheduler local");
  }
  Allocation allocation;
  allocation.scheduler = SchedulerKind::flux;
  auto job_id = first_nonempty(env, k_job_id_vars);
  allocation.job_id = job_id ? job_id->second : "";
  allocation.hosts = unique_hosts(parsed_hosts(asked_hosts(commands, *uri)));
  return allocation;
}

}  // namespace

const SchedulerSpec k_flux{SchedulerKind::flux, detect_flux, read_flux};

}  // namespace ezpz
