// The sites' known errors: each row's line, as its document quotes it, gives that row's hint.
#include <string>

#include "ezpz/supervise/known_errors.hpp"
#include "tests/catch.hpp"

using namespace ezpz;

TEST_CASE("each known error's documented line gives its hint, once", "[known_errors]") {
  struct Row {
    std::string line;  // as the site's document shows it
    std::string hint;
  };
  const std::vector<Row> rows = {
      {"start failed on x4102c5s2b0n0: No VNIs available in internal allocator",
       "hint: \"No VNIs available\" (ALCF Aurora, Known Issues: No VNIs available in internal "
       "allocator): pass --no-vni to PALS's mpiexec: ezpz launch --launcher-arg --no-vni ..."},
      {"OSError: AF_UNIX path too long",
       "hint: \"AF_UNIX path too long\" (ALCF Aurora and Polaris, Known Issues): give the ranks a "
       "short TMPDIR: ezpz launch -x TMPDIR=/tmp ..."},
      {"Cassini Event Queue overflow detected.",
       "hint: \"Cassini Event Queue overflow detected\" (ALCF Aurora, Known Issues): enlarge "
       "libfabric's queues: ezpz launch -x FI_CXI_DEFAULT_CQ_SIZE=131072 -x "
       "FI_CXI_OFLOW_BUF_SIZE=8388608 -x FI_CXI_CQ_FILL_PERCENT=20 ..."},
      {"launch failed on x4520c2s0b0n0: Failed to parse implicit GPU selection",
       "hint: \"Failed to parse implicit GPU selection\" (ALCF Aurora, Running Jobs: binding MPI "
       "ranks to GPUs): PALS's --gpu-bind takes GPU.tile lists only with "
       "ZE_FLAT_DEVICE_HIERARCHY=COMPOSITE: drop the --gpu-bind launcher argument and let "
       "ezpz-rankenv set ZE_AFFINITY_MASK"},
      {"PMIX ERROR: PMIX_ERR_NOT_FOUND in file dstore_base.c at line 1567",
       "hint: \"PMIX_ERR_NOT_FOUND in file dstore_base.c\" (ALCF Aurora, Known Issues): harmless "
       "(the site says it can be safely ignored): the failure is elsewhere"},
      {"MPICH ERROR [Rank 0] [job id 1] [Mon Jan 1 00:00:00 2024] [x3001c0s1b0n0] - Abort(-1) "
       "(rank 0 in comm 0): MPIDI_CRAY_init: GPU_SUPPORT_ENABLED is requested, but GTL library "
       "is not linked",
       "hint: \"GPU_SUPPORT_ENABLED is requested, but GTL library is not linked\" (ALCF Polaris, "
       "Using GPUs): MPICH_GPU_SUPPORT_ENABLED=1 needs the GTL library: module load "
       "craype-accel-nvidia80, or unset MPICH_GPU_SUPPORT_ENABLED"},
      {"RuntimeError: CUDA tensor detected and the MPI used doesn't have CUDA-aware MPI support",
       "hint: \"CUDA tensor detected and the MPI used doesn't have CUDA-aware MPI support\" (ALCF "
       "Polaris, PyTorch): the mpi backend here is not CUDA-aware: use the nccl backend"},
      {"MPICH ERROR: Unable to use a NIC_POLICY of 'NUMA'. Rank 4 is not confined to a single "
       "NUMA node.  There are 4 numa_nodes detected (rc=0).",
       "hint: \"Unable to use a NIC_POLICY of 'NUMA'\" (OLCF Frontier User Guide, MPICH mpi4py "
       "errors): a rank spans NUMA domains: keep each rank's cores on one (the profile's -c7, or "
       "your --cpu-bind), and import mpi4py before torch"},
      {"[W socket.cpp:697] [c10d] The client socket cannot be initialized to connect to "
       "[frontier01.frontier.olcf.ornl.gov]:3442 (errno: 97 - Address family not supported by "
       "protocol).",
       "hint: \"errno: 97 - Address family not supported by protocol\" (OLCF Frontier User Guide, "
       "c10d socket warnings): harmless (c10d tries IPv6 first): the failure is elsewhere"},
      {"Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 60",
       "hint: \"Duplicate GPU detected\" (NCCL 2.28.9's error, seen with 2 ranks on one H200): "
       "NCCL runs one rank per GPU: run at most one rank per GPU (--ppn), or use the gloo "
       "backend where ranks share GPUs (ezpz's runtime: -x TORCH_BACKEND=gloo)"},
      {"[mpiexec@n01] HYDU_create_process (utils/launch/launch.c:73): execvp error on file "
       "/opt/l/hydra_pmi_proxy (No such file or directory)",
       "hint: \"hydra_pmi_proxy (No such file or directory)\" (MPICH 4.0's Hydra, run as a link to "
       "mpiexec.hydra in another directory): Hydra starts hydra_pmi_proxy from the directory of "
       "the mpiexec it was run as (a link's, not its target's): run the mpiexec of an MPICH "
       "installation from its own directory; ezpz doctor names it"},
  };
  REQUIRE(rows.size() == known_errors().size());
  for (const Row& row : rows) {
    INFO(row.line);
    const std::string twice = "before\n" + row.line + "\n" + row.line + "\nafter\n";
    CHECK(known_error_hints(twice) == std::vector<std::string>{row.hint});
  }
  CHECK(known_error_hints("Traceback (most recent call last):\nValueError: boom\n").empty());
  // Two known errors in one output: both, in the table's order.
  CHECK(known_error_hints("AF_UNIX path too long\nNo VNIs available\n") ==
        std::vector<std::string>{rows[0].hint, rows[1].hint});
}
