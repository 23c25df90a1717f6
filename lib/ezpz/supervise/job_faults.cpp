#include "ezpz/supervise/job_faults.hpp"

#include <array>
#include <cmath>
#include <cstdint>

namespace ezpz {
namespace {

// Python's OSError for ENOSPC, and every libc-based writer's strerror(ENOSPC):
//   OSError: [Errno 28] No space left on device: '/lus/flare/ckpt/step_100.pt'
constexpr std::array<std::string_view, 1> k_no_space = {"No space left on device"};

// torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total...
// RuntimeError: [enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: not enough memory
// terminate called after throwing an instance of 'std::bad_alloc'
// slurmstepd: error: Detected 1 oom_kill event in StepId=1234.0. Some of the step tasks have
//   been OOM Killed.
// srun: error: nid001234: task 3: Out Of Memory
// The kernel's OOM killer (dmesg, or the job's log where the site copies it there):
//   Out of memory: Killed process 51234 (python3) total-vm:...
constexpr std::array<std::string_view, 7> k_out_of_memory = {
    "out of memory",  "Out of memory: Killed process",
    "std::bad_alloc", "not enough memory",
    "oom_kill event", "OOM Killed",
    "Out Of Memory"};

// Aurora's Unified Runtime reports a rank's failed allocation on the GPU and PALS may still
// exit 0 (the Python ezpz's threads):
//   UR_RESULT_ERROR_OUT_OF_RESOURCES on rank 4
constexpr std::array<std::string_view, 1> k_ur_out_of_resources = {
    "UR_RESULT_ERROR_OUT_OF_RESOURCES"};

// torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/
//   ProcessGroupNCCL.cpp:1970, unhandled cuda error (run with NCCL_DEBUG=INFO for details)
constexpr std::array<std::string_view, 1> k_nccl_cuda = {"unhandled cuda error"};

// Python's own first line of a traceback, once per failed rank.
constexpr std::array<std::string_view, 1> k_traceback = {"Traceback (most recent call last):"};

constexpr std::array<JobFault, 5> k_rows = {{
    {.name = "no-space", .what = "out of disk space", .texts = k_no_space},
    {.name = "ur-out-of-resources",
     .what = "out of GPU resources (Unified Runtime)",
     .texts = k_ur_out_of_resources,
     .fails_success = true},
    {.name = "out-of-memory", .what = "out of memory", .texts = k_out_of_memory},
    {.name = "nccl-cuda-error",
     .what = "an unhandled CUDA error in NCCL on every rank",
     .texts = k_nccl_cuda,
     .share = 1},
    {.name = "traceback",
     .what = "a Python traceback in most ranks",
     .texts = k_traceback,
     .share = 0.5,
     .less_lost_peers = true},
}};

bool holds_any(std::string_view line, const JobFault& row) {
  for (std::string_view text : row.texts) {
    if (line.find(text) != std::string_view::npos) return true;
  }
  return false;
}

// The lines needed: one, or more than `share` of the ranks (all of them at share 1).
std::size_t lines_needed(const JobFault& row, int world_size) {
  if (row.share <= 0) return 1;
  if (world_size <= 0) return SIZE_MAX;
  const double needed = row.share * world_size;
  return row.share >= 1 ? static_cast<std::size_t>(world_size)
                        : static_cast<std::size_t>(std::floor(needed)) + 1;
}

// The first line of `output` the row holds, when it holds at least `needed`.
std::string count_lines(std::string_view output, const JobFault& row, std::size_t needed) {
  std::string first;
  std::size_t seen = 0;
  while (!output.empty() && seen < needed) {
    const std::size_t end = std::min(output.find('\n'), output.size());
    const std::string_view line = output.substr(0, end);
    if (holds_any(line, row) && seen++ == 0) first = line;
    output.remove_prefix(std::min(end + 1, output.size()));
  }
  return seen >= needed ? first : "";
}

}  // namespace

std::span<const JobFault> job_faults() {
  return k_rows;
}

JobFaultHit find_job_fault(std::string_view output, int world_size, bool success_only,
                           std::size_t lost_peer_lines) {
  for (const JobFault& row : k_rows) {
    if (success_only && !row.fails_success) continue;
    std::size_t needed = lines_needed(row, world_size);
    if (needed == SIZE_MAX) continue;
    if (row.less_lost_peers) needed += lost_peer_lines;
    std::string line = count_lines(output, row, needed);
    if (!line.empty()) return {.fault = &row, .line = std::move(line)};
  }
  return {};
}

}  // namespace ezpz
