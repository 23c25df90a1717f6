#pragma once
// What the scheduler gave this job: which hosts, under which job id.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ezpz/core/address.hpp"

namespace ezpz {

enum class SchedulerKind { local, pbs, slurm, flux };

std::string_view to_string(SchedulerKind kind);
// "pbs", "slurm", "flux", "local" (also "none"), any case; nullopt otherwise.
std::optional<SchedulerKind> scheduler_from_string(std::string_view text);

struct Allocation {
  SchedulerKind scheduler = SchedulerKind::local;
  std::string job_id;              // empty for local
  std::vector<std::string> hosts;  // unique by short name, in scheduler order
  // Ranks per host the job asked the scheduler for (SLURM_NTASKS_PER_NODE,
  // or the slot count when a PBS nodefile repeats each host once per slot).
  std::optional<int> slots_per_host;
  std::string slots_source;  // where slots_per_host came from, for -v and doctor
  // The scheduler's nodefile, when it lists exactly `hosts` once each, in order,
  // so a launcher can be handed it unchanged.
  std::string nodefile;
  bool operator==(const Allocation&) const = default;
};

// A host's identity is its short name (text before the first dot): "x4102c5s2b0n0"
// and "x4102c5s2b0n0.hostmgmt.cm.aurora" are the same host. An IP literal is whole:
// 192.0.2.1 and 192.0.2.2 are two hosts. The spelling the scheduler used is what
// launchers are given.
std::string_view short_host_name(std::string_view host);

// Whether `hosts` lists `host` (by short name).
bool lists_host(const std::vector<std::string>& hosts, std::string_view host);

// Why `host` is not a host name, or nullopt when it is one: RFC 1123 labels
// (letters, digits and '-', 1-63 characters, at most 253 in all) and the '_'
// some schedulers' node names use. A binary file or a stray NUL would
// otherwise become a rank's MASTER_ADDR.
std::optional<std::string> host_name_problem(std::string_view host);

// Throws Error("<where>: <problem>") when `host` is not a host name.
void check_host_name(std::string_view host, std::string_view where);

// Hostfile text ("host" or "host slots=N" / "host:N" per line, '#' comments)
// into host names in order, duplicates kept. `source` ("PBS_NODEFILE
// /var/spool/..." ) names the file in errors, as "source:LINE".
std::vector<std::string> parse_hostfile(std::string_view text,
                                        std::string_view source = "hostfile");

// `hosts` without repeats (by short name), first spelling and order kept.
std::vector<std::string> unique_hosts(const std::vector<std::string>& hosts);

}  // namespace ezpz
