#pragma once
// ezpz::dist::setup(): everything a libtorch program needs to train on every
// rank that `ezpz launch` (or a bare mpiexec, srun, mpirun) started: who it
// is, which device to use, and a ready process group.
//
//   ezpz::dist::Dist dist = ezpz::dist::setup();
//   model->to(dist.device);
//   dist.group->allreduce(tensors)->wait();
//
// The choices themselves (which variables, which device, which backend) are
// pure and live in ezpz/launchers/runtime_env.hpp; this file only acts on them.
#include <cstdio>
#include <string>
#include <string_view>

#include <c10/core/Device.h>
#include <fmt/format.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include "ezpz/core/env.hpp"
#include "ezpz/launchers/runtime_env.hpp"

namespace ezpz::dist {

struct Dist {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  int node_index = 0;
  c10::Device device{c10::kCPU};
  std::string backend;  // "gloo", "nccl", ...
  // Always set, also for one rank (a group of one over an in-memory store),
  // so callers never branch on world size.
  c10::intrusive_ptr<c10d::ProcessGroup> group;
  // How each choice was made, for logs and reports.
  runtime::RankInfo rank_info;
  runtime::Rendezvous rendezvous;
  runtime::Timeouts timeouts;
  std::string device_source;
  std::string backend_source;
  runtime::LogPolicy log;
};

// Reads the rank, device, backend and timeouts from `env`, then rendezvouses:
// rank 0 serves a TCPStore at MASTER_ADDR:MASTER_PORT and every rank joins
// within EZPZ_RENDEZVOUS_TIMEOUT (60 s). Collectives give up after
// EZPZ_COLLECTIVE_TIMEOUT (120 s), so the survivors of a dead rank fail
// instead of hanging. Throws ezpz::Error with a "where: what" message.
Dist setup(const Env& env);

// The same, from this process's environment.
Dist setup();

// A snapshot of this process's environment, for setup(env) and the pure
// functions of ezpz/launchers/runtime_env.hpp.
Env process_environment();

// What this libtorch can do: devices and process-group backends. Creates no
// process group and touches no network.
runtime::Availability probe();

// libtorch's version, as compiled in ("1.13.0").
std::string libtorch_version();

// A line on stderr when this rank logs (rank 0, or every rank with
// EZPZ_LOG_FROM_ALL_RANKS=1, then prefixed "[rank N] ").
template <typename... Args>
void log(const Dist& dist, fmt::format_string<Args...> format, Args&&... args) {
  if (!dist.log.enabled) return;
  std::string line = dist.log.prefix + fmt::format(format, std::forward<Args>(args)...) + "\n";
  std::fputs(line.c_str(), stderr);
}

}  // namespace ezpz::dist
