#include "ezpz/supervise/known_errors.hpp"

#include <fmt/format.h>

namespace ezpz {

// Matched as plain text, not patterns: each row is a line a site quotes verbatim.
const std::vector<KnownError>& known_errors() {
  static const std::vector<KnownError> k_rows = {
      {"No VNIs available",
       "pass --no-vni to PALS's mpiexec: ezpz launch --launcher-arg --no-vni ...",
       "ALCF Aurora, Known Issues: No VNIs available in internal allocator"},
      {"AF_UNIX path too long", "give the ranks a short TMPDIR: ezpz launch -x TMPDIR=/tmp ...",
       "ALCF Aurora and Polaris, Known Issues"},
      {"Cassini Event Queue overflow detected",
       "enlarge libfabric's queues: ezpz launch -x FI_CXI_DEFAULT_CQ_SIZE=131072 -x "
       "FI_CXI_OFLOW_BUF_SIZE=8388608 -x FI_CXI_CQ_FILL_PERCENT=20 ...",
       "ALCF Aurora, Known Issues"},
      {"Failed to parse implicit GPU selection",
       "PALS's --gpu-bind takes GPU.tile lists only with ZE_FLAT_DEVICE_HIERARCHY=COMPOSITE: drop "
       "the --gpu-bind launcher argument and let ezpz-rankenv set ZE_AFFINITY_MASK",
       "ALCF Aurora, Running Jobs: binding MPI ranks to GPUs"},
      {"PMIX_ERR_NOT_FOUND in file dstore_base.c",
       "harmless (the site says it can be safely ignored): the failure is elsewhere",
       "ALCF Aurora, Known Issues"},
      {"GPU_SUPPORT_ENABLED is requested, but GTL library is not linked",
       "MPICH_GPU_SUPPORT_ENABLED=1 needs the GTL library: module load craype-accel-nvidia80, or "
       "unset MPICH_GPU_SUPPORT_ENABLED",
       "ALCF Polaris, Using GPUs"},
      {"CUDA tensor detected and the MPI used doesn't have CUDA-aware MPI support",
       "the mpi backend here is not CUDA-aware: use the nccl backend", "ALCF Polaris, PyTorch"},
      {"Unable to use a NIC_POLICY of 'NUMA'",
       "a rank spans NUMA domains: keep each rank's cores on one (the profile's -c7, or your "
       "--cpu-bind), and import mpi4py before torch",
       "OLCF Frontier User Guide, MPICH mpi4py errors"},
      {"errno: 97 - Address family not supported by protocol",
       "harmless (c10d tries IPv6 first): the failure is elsewhere",
       "OLCF Frontier User Guide, c10d socket warnings"},
      {"Duplicate GPU detected",
       "NCCL runs one rank per GPU: run at most one rank per GPU (--ppn), or use the gloo "
       "backend where ranks share GPUs (ezpz's runtime: -x TORCH_BACKEND=gloo)",
       "NCCL 2.28.9's error, seen with 2 ranks on one H200"},
      {"hydra_pmi_proxy (No such file or directory)",
       "Hydra starts hydra_pmi_proxy from the directory of the mpiexec it was run as (a link's, "
       "not its target's): run the mpiexec of an MPICH installation from its own directory; "
       "ezpz doctor names it",
       "MPICH 4.0's Hydra, run as a link to mpiexec.hydra in another directory"},
  };
  return k_rows;
}

std::vector<std::string> known_error_hints(std::string_view output) {
  std::vector<std::string> hints;
  for (const KnownError& row : known_errors()) {
    if (output.find(row.text) == std::string_view::npos) continue;
    hints.push_back(fmt::format("hint: \"{}\" ({}): {}", row.text, row.source, row.remedy));
  }
  return hints;
}

}  // namespace ezpz
