#pragma once
// The pure half of the runtime API (ezpz::dist::setup() is the libtorch half,
// in lib/ezpz/runtime/): which rank this process is, where to rendezvous,
// which device and backend to use, and how to seed and log. Everything here
// takes an environment snapshot or plain flags and returns values, so it is
// tested with tables; nothing here includes libtorch.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ezpz/core/env.hpp"

namespace ezpz::runtime {

// Who this process is, and which variables said so.
struct RankInfo {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  int node_index = 0;  // which host, counting from 0 (ranks are placed host by host)
  std::string source;  // e.g. "RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE (torch env://)"
};

// The torch env:// variables first (what `ezpz launch` and torchrun set), then
// a bare launcher's own: Cray PALS, Flux, MPICH Hydra, Slurm srun, Open MPI. The
// first family whose rank variable is set wins, and all four numbers come from
// that family, so a stale PMI_RANK from an outer job cannot mix in. Missing
// local variables mean one host (local = global); Flux, which counts only hosts
// (FLUX_JOB_NNODES), gives each host an even share. No variables: rank 0 of 1.
// Throws Error naming the variable when a value is not a count, or when the
// numbers contradict each other (RANK=4 with WORLD_SIZE=2).
RankInfo rank_info_from_env(const Env& env);

// Where rank 0's TCPStore listens.
struct Rendezvous {
  std::string master_addr;
  int master_port = 29500;
  std::string source;  // "MASTER_ADDR, MASTER_PORT" or what was defaulted
};

// MASTER_ADDR and MASTER_PORT. With every rank on one host they default to
// 127.0.0.1 and 29500 (torch's default port); across hosts MASTER_ADDR is
// required, since no host can guess another's address.
Rendezvous rendezvous_from_env(const Env& env, const RankInfo& info);

// How long to wait, in milliseconds.
struct Timeouts {
  long rendezvous_ms = 60'000;   // EZPZ_RENDEZVOUS_TIMEOUT (seconds), for the TCPStore
  long collective_ms = 120'000;  // EZPZ_COLLECTIVE_TIMEOUT (seconds), for each collective
};
Timeouts timeouts_from_env(const Env& env);

// Parses a positive number of seconds ("60", "0.5") into milliseconds;
// `name` is the variable, for the message.
long parse_seconds(std::string_view name, std::string_view text);

// Parses a boolean switch: 1/true/yes/on and 0/false/no/off (any case), the
// empty string being false. Anything else throws, rather than guessing.
bool parse_switch(std::string_view name, std::string_view text);

// What this libtorch can do, as probed by the torch half.
struct Availability {
  bool cuda_built = false;
  int cuda_devices = 0;
  bool xpu_built = false;
  int xpu_devices = 0;
  bool mps_built = false;
  bool mps_available = false;
  bool nccl = false;  // a NCCL process group is compiled in
  bool xccl = false;
  bool ccl = false;
  bool mpi = false;
};

struct DeviceChoice {
  std::string type;  // "cuda", "xpu", "mps" or "cpu"
  int index = -1;    // -1 for cpu and mps (one device each)
  std::string source;
  std::string name() const { return index < 0 ? type : type + ":" + std::to_string(index); }
};

// TORCH_DEVICE ("cuda", "cuda:1", "cpu", ...) when given, else the first of
// cuda, xpu, mps, cpu this libtorch can use. An accelerator's index is the one
// TORCH_DEVICE names, else EZPZ_LOCAL_DEVICE (what the plan exports when it gave
// each rank its own devices: 0 once a rank sees only them), else the local rank.
// `source` says which rule decided each. Throws Error when TORCH_DEVICE names
// something unknown or unusable, when EZPZ_LOCAL_DEVICE is not an index (also
// on cpu, which has none), or when the index is not below the visible devices
// (without EZPZ_LOCAL_DEVICE: two ranks on one GPU would deadlock NCCL).
DeviceChoice choose_device(const Env& env, const Availability& available, int local_rank);

struct BackendChoice {
  std::string name;  // "gloo", "nccl", "xccl", "ccl", "mpi"
  std::string source;
};

// TORCH_BACKEND when given, else the table: cuda -> nccl, xpu -> xccl (or ccl),
// anything else or a missing library -> gloo. Throws Error when TORCH_BACKEND
// is unknown, not built into this libtorch, or cannot drive the device.
// `shared_gpu`: what shared_gpu() says; NCCL is then no default, and TORCH_BACKEND=nccl is an
// error (NCCL refuses two ranks on one GPU: "Duplicate GPU detected").
BackendChoice choose_backend(const std::optional<std::string>& torch_backend,
                             const DeviceChoice& device, const Availability& available,
                             const std::optional<std::string>& shared_gpu = std::nullopt);

// Whether local rank `local_rank` shares a GPU with another of the host's `local_world_size`
// ranks under ezpz's placement (EZPZ_GPU_MASKS, each local rank's entry, modulo the entries
// as ezpz-rankenv takes them): "local ranks 0 and 1 share GPU 0 (EZPZ_GPU_MASKS=0;0)".
std::optional<std::string> shared_gpu(const Env& env, int local_rank, int local_world_size);

// The backends a process group can be made with here, gloo first.
std::vector<std::string> available_backends(const Availability& available);

// Each rank's seed: seed x (rank + 1), so ranks draw different data and a run
// is reproducible from one number.
unsigned long long rank_seed(unsigned long long seed, int rank);

// Rank 0 logs; with EZPZ_LOG_FROM_ALL_RANKS every rank does, each line
// prefixed "[rank N] " so interleaved lines can be told apart.
struct LogPolicy {
  bool enabled = true;
  std::string prefix;
};
LogPolicy log_policy(const Env& env, int rank);

}  // namespace ezpz::runtime
