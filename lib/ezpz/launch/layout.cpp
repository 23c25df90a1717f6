#include "ezpz/launch/layout.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "ezpz/core/text.hpp"

namespace ezpz {

SlotsPerHost default_slots_per_host(const Env& env, const Allocation& allocation, int profile_gpus,
                                    const std::string& profile_name,
                                    const std::function<std::optional<int>()>& probe) {
  if (auto text = get_nonempty(env, "NGPU_PER_HOST")) {
    auto count = parse_count(*text);
    if (!count || *count < 1) {
      throw Error(fmt::format("NGPU_PER_HOST={}: expected a positive integer", *text));
    }
    return {static_cast<int>(*count), fmt::format("NGPU_PER_HOST={}", *text), true};
  }
  if (allocation.slots_per_host) {
    return {*allocation.slots_per_host, allocation.slots_source, true};
  }
  if (profile_gpus > 0) {
    return {profile_gpus, fmt::format("machine profile {}", profile_name), true};
  }
  // Last, because probing runs nvidia-smi & co.: only when nothing else says.
  if (auto probed = probe(); probed && *probed > 0) {
    return {*probed, "accelerators found on this node", true};
  }
  return {1, "default (no accelerators found)", false};
}

namespace {

void require_positive(const std::optional<long>& value, std::string_view flag) {
  if (value && *value < 1) {
    throw Error(fmt::format("{} must be at least 1, got {}", flag, *value));
  }
}

int divide_evenly(long total, long parts, std::string_view what) {
  if (total % parts != 0) {
    throw Error(fmt::format("-n {} cannot be split evenly over {} {}", total, parts, what));
  }
  return static_cast<int>(total / parts);
}

long ceil_div(long total, long parts) {
  return (total + parts - 1) / parts;
}

// `total` over `parts`: exactly, or (filling in order) rounded up, the last part holding less.
int split(long total, long parts, std::string_view what, Fill fill) {
  if (fill == Fill::evenly) return divide_evenly(total, parts, what);
  return static_cast<int>(ceil_div(total, parts));
}

// -n alone: fill hosts at the default ranks per host, using as few hosts as
// that takes (mpiexec's own fill order), then spread the ranks over them: evenly,
// or as evenly as ranks per host allow with the last host holding fewer.
Topology infer_from_nprocs(long nprocs, int available, const SlotsPerHost& slots, Fill fill) {
  long hosts = std::min<long>(available, ceil_div(nprocs, slots.count));
  int ppn = split(nprocs, hosts, hosts == 1 ? "host" : "hosts", fill);
  if (slots.known && ppn > slots.count) {
    throw Error(
        fmt::format("-n {} is more than the {} slots of {} x {} ({}); pass --ppn to oversubscribe",
                    nprocs, static_cast<long>(available) * slots.count, plural(available, "host"),
                    slots.count, slots.source));
  }
  if (!slots.known && slots.most_per_host > 0 && ppn > slots.most_per_host) {
    throw Error(
        fmt::format("-n {} is more than this host can hold ({}); pass --ppn to oversubscribe",
                    nprocs, slots.most_source));
  }
  return {static_cast<int>(ceil_div(nprocs, ppn)), ppn, static_cast<int>(nprocs)};
}

// -n and --nhosts: as many per host as it takes; every host must get a rank.
int per_host_of(long nprocs, long nhosts, Fill fill) {
  const std::string_view what = nhosts == 1 ? "host (--nhosts)" : "hosts (--nhosts)";
  const int ppn = split(nprocs, nhosts, what, fill);
  if (const long used = ceil_div(nprocs, ppn); used != nhosts) {
    throw Error(
        fmt::format("-n {} on --nhosts {} leaves a host with no rank ({} per host fill {} "
                    "hosts)",
                    nprocs, nhosts, ppn, used));
  }
  return ppn;
}

}  // namespace

Topology infer_topology(const TopologyRequest& request, int available, const SlotsPerHost& slots,
                        Fill fill) {
  require_positive(request.nprocs, "-n/--np");
  require_positive(request.ppn, "--ppn");
  require_positive(request.nhosts, "--nhosts");
  if (request.nhosts && *request.nhosts > available) {
    throw Error(fmt::format("--nhosts {} is more than the {} host{} available", *request.nhosts,
                            available, available == 1 ? "" : "s"));
  }
  const auto& [np, ppn, nhosts] = request;
  Topology topology;
  if (np && ppn && nhosts) {
    if (*np != *ppn * *nhosts) {
      throw Error(fmt::format("-n {} does not equal --nhosts {} x --ppn {}", *np, *nhosts, *ppn));
    }
    topology = {static_cast<int>(*nhosts), static_cast<int>(*ppn), static_cast<int>(*np)};
  } else if (np && ppn) {
    int hosts = split(*np, *ppn, "ranks per host (--ppn)", fill);
    if (hosts > available) {
      throw Error(fmt::format("-n {} at --ppn {} needs {} hosts, but {} {} available", *np, *ppn,
                              hosts, available, available == 1 ? "is" : "are"));
    }
    topology = {hosts, static_cast<int>(*ppn), static_cast<int>(*np)};
  } else if (np && nhosts) {
    topology = {static_cast<int>(*nhosts), per_host_of(*np, *nhosts, fill), static_cast<int>(*np)};
  } else if (np) {
    topology = infer_from_nprocs(*np, available, slots, fill);
  } else {
    int hosts = static_cast<int>(nhosts.value_or(available));
    int per_host = static_cast<int>(ppn.value_or(slots.count));
    topology = {hosts, per_host, hosts * per_host};
  }
  return topology;
}

std::vector<std::string> select_hosts(const std::vector<std::string>& hosts,
                                      const std::vector<std::string>& excluded) {
  if (excluded.empty()) return hosts;
  std::set<std::string_view> dropped;
  for (const std::string& host : excluded) dropped.insert(short_host_name(host));
  std::vector<std::string> kept;
  for (const std::string& host : hosts) {
    if (!dropped.count(short_host_name(host))) kept.push_back(host);
  }
  if (kept.empty()) {
    throw Error(
        fmt::format("--exclude leaves no hosts: all {} host{} of the allocation {} excluded",
                    hosts.size(), hosts.size() == 1 ? "" : "s", hosts.size() == 1 ? "is" : "are"));
  }
  return kept;
}

}  // namespace ezpz
