#pragma once
// How many ranks, on how many hosts, how many per host. Pure.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ezpz/core/allocation.hpp"
#include "ezpz/core/env.hpp"

namespace ezpz {

// The ranks-per-host default and where it came from.
struct SlotsPerHost {
  int count = 1;
  std::string source;  // "NGPU_PER_HOST=4", "machine profile aurora", ...
  bool known = false;  // false for the last-resort default of 1
  // With slots unknown, the most ranks -n alone may put on one host (0: no
  // limit): a local run of -n 99999999999 would spawn until the host falls
  // over. --ppn says the user means it.
  int most_per_host = 0;
  std::string most_source{};  // "8 per CPU x 2 CPUs"
};

// The largest counts ezpz plans for, checked when flags are parsed: far above
// any machine (Fugaku's 158,976 nodes x 48 cores is 7.6 M ranks), far below
// where an int would wrap.
inline constexpr long k_max_ranks = 10'000'000;
inline constexpr long k_max_ppn = 4'096;
inline constexpr long k_max_hosts = 1'000'000;

// First of: NGPU_PER_HOST; what the job asked the scheduler for; the
// profile's accelerators per node; the local probe; else 1 (unknown).
// Throws Error when NGPU_PER_HOST is not a positive integer.
SlotsPerHost default_slots_per_host(const Env& env, const Allocation& allocation, int profile_gpus,
                                    const std::string& profile_name,
                                    const std::function<std::optional<int>()>& probe);

struct TopologyRequest {
  std::optional<long> nprocs;  // -n/--np
  std::optional<long> ppn;     // --ppn
  std::optional<long> nhosts;  // -N/--nhosts
};

// Ranks fill hosts in order, `ppn` each; with `in_order` the last host may
// hold fewer (-n 3 --ppn 2: 2 + 1), as mpiexec -ppn, srun, PALS and Open MPI
// place them. `evenly`: every host the same (torchrun's --nproc_per_node is
// one count for all hosts).
enum class Fill { in_order, evenly };

struct Topology {
  int nhosts = 1;
  int ppn = 1;  // on every host but the last, which holds world_size - (nhosts-1) x ppn
  int world_size = 1;
  bool operator==(const Topology&) const = default;
};

// Infers the missing numbers and checks them against `available_hosts` and
// `slots`. Each error is one sentence naming the flags involved.
Topology infer_topology(const TopologyRequest& request, int available_hosts,
                        const SlotsPerHost& slots, Fill fill = Fill::in_order);

// Hosts after --exclude/--exclude-file (matched by short name) and --nhosts
// (the first K). Throws Error when nothing is left.
std::vector<std::string> select_hosts(const std::vector<std::string>& hosts,
                                      const std::vector<std::string>& excluded);

}  // namespace ezpz
