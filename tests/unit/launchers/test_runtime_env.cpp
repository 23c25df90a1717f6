#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ezpz/core/error.hpp"
#include "ezpz/launchers/runtime_env.hpp"
#include "tests/catch.hpp"

using namespace ezpz;
using namespace ezpz::runtime;

namespace {

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

Availability cpu_only() {
  return {};
}

Availability with_cuda(int devices, bool nccl) {
  Availability a;
  a.cuda_built = true;
  a.cuda_devices = devices;
  a.nccl = nccl;
  return a;
}

Env torch(const char* device) {
  return {{"TORCH_DEVICE", device}};
}

Env local(const char* index) {
  return {{"EZPZ_LOCAL_DEVICE", index}};
}

Env both(const char* device, const char* index) {
  return {{"TORCH_DEVICE", device}, {"EZPZ_LOCAL_DEVICE", index}};
}

// choose_device's answer for an environment, a libtorch and a local rank.
struct ChoiceRow {
  Env env;
  Availability available;
  int local_rank;
  std::string name;
  std::string source;
};

void check_choices(const std::vector<ChoiceRow>& rows) {
  for (const ChoiceRow& row : rows) {
    DeviceChoice choice = choose_device(row.env, row.available, row.local_rank);
    CHECK(choice.name() == row.name);
    CHECK(choice.source == row.source);
  }
}

}  // namespace

TEST_CASE("the rank comes from the first launcher family whose rank variable is set", "[runtime]") {
  struct Row {
    Env env;
    RankInfo expected;
  };
  const std::vector<Row> rows = {
      {{}, {0, 1, 0, 1, 0, "no rank variables set: a single process"}},
      {{{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "2"}},
       {3, 8, 1, 2, 1, "RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE (torch env://)"}},
      // Without local variables all ranks are taken to share one host.
      {{{"RANK", "1"}, {"WORLD_SIZE", "2"}},
       {1, 2, 1, 2, 0, "RANK, WORLD_SIZE (torch env://; one host assumed)"}},
      // A local size alone: block placement gives the local rank.
      {{{"RANK", "5"}, {"WORLD_SIZE", "8"}, {"LOCAL_WORLD_SIZE", "4"}},
       {5, 8, 1, 4, 1, "RANK, WORLD_SIZE, LOCAL_WORLD_SIZE (torch env://; one host assumed)"}},
      {{{"PMI_RANK", "5"}, {"PMI_SIZE", "8"}, {"MPI_LOCALRANKID", "1"}, {"MPI_LOCALNRANKS", "4"}},
       {5, 8, 1, 4, 1, "PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS (MPICH Hydra)"}},
      // Cray PMI sets PMI_RANK too; PALS_RANKID says whose it is.
      {{{"PALS_RANKID", "13"},
        {"PMI_RANK", "13"},
        {"PMI_SIZE", "24"},
        {"PALS_LOCAL_RANKID", "1"},
        {"PALS_LOCAL_SIZE", "12"},
        {"PALS_NODEID", "1"}},
       {13, 24, 1, 12, 1, "PALS_RANKID, PMI_SIZE, PALS_LOCAL_RANKID, PALS_LOCAL_SIZE (Cray PALS)"}},
      {{{"SLURM_PROCID", "5"},
        {"SLURM_NTASKS", "6"},
        {"SLURM_LOCALID", "1"},
        {"SLURM_STEP_TASKS_PER_NODE", "2(x3)"},
        {"SLURM_NODEID", "2"}},
       {5, 6, 1, 2, 2,
        "SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_STEP_TASKS_PER_NODE (Slurm)"}},
      {{{"SLURM_PROCID", "4"},
        {"SLURM_NTASKS", "7"},
        {"SLURM_LOCALID", "1"},
        {"SLURM_STEP_TASKS_PER_NODE", "3,2(x2)"},
        {"SLURM_NODEID", "1"}},
       {4, 7, 1, 2, 1,
        "SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_STEP_TASKS_PER_NODE (Slurm)"}},
      {{{"SLURM_PROCID", "3"},
        {"SLURM_NTASKS", "4"},
        {"SLURM_LOCALID", "1"},
        {"SLURM_NTASKS_PER_NODE", "2"},
        {"SLURM_NODEID", "1"}},
       {3, 4, 1, 2, 1, "SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NTASKS_PER_NODE (Slurm)"}},
      // The step's own layout wins over the job's --ntasks-per-node.
      {{{"SLURM_PROCID", "2"},
        {"SLURM_NTASKS", "3"},
        {"SLURM_LOCALID", "0"},
        {"SLURM_NTASKS_PER_NODE", "4"},
        {"SLURM_STEP_TASKS_PER_NODE", "2,1"},
        {"SLURM_NODEID", "1"}},
       {2, 3, 0, 1, 1,
        "SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_STEP_TASKS_PER_NODE (Slurm)"}},
      // flux run -N 2 --tasks-per-node=4, rank 5 (flux-environment(7)); Flux's PMI sets
      // PMI_RANK too, and FLUX_TASK_RANK says whose it is. Hosts hold an even share.
      {{{"FLUX_TASK_RANK", "5"},
        {"PMI_RANK", "5"},
        {"FLUX_JOB_SIZE", "8"},
        {"FLUX_TASK_LOCAL_ID", "1"},
        {"FLUX_JOB_NNODES", "2"}},
       {5, 8, 1, 4, 1,
        "FLUX_TASK_RANK, FLUX_JOB_SIZE, FLUX_TASK_LOCAL_ID, FLUX_JOB_NNODES (Flux)"}},
      {{{"FLUX_TASK_RANK", "0"}, {"FLUX_JOB_SIZE", "3"}, {"FLUX_TASK_LOCAL_ID", "0"}},
       {0, 3, 0, 3, 0,
        "FLUX_TASK_RANK, FLUX_JOB_SIZE, FLUX_TASK_LOCAL_ID (Flux; one host assumed)"}},
      {{{"OMPI_COMM_WORLD_RANK", "2"},
        {"OMPI_COMM_WORLD_SIZE", "4"},
        {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
        {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}},
       {2, 4, 0, 2, 1,
        "OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK, "
        "OMPI_COMM_WORLD_LOCAL_SIZE (Open MPI)"}},
      // torch's contract wins over a launcher's, and families never mix.
      {{{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"PMI_RANK", "7"}, {"MPI_LOCALNRANKS", "8"}},
       {1, 2, 1, 2, 0, "RANK, WORLD_SIZE (torch env://; one host assumed)"}},
  };
  for (const Row& row : rows) {
    RankInfo info = rank_info_from_env(row.env);
    INFO(row.expected.source);
    CHECK(info.rank == row.expected.rank);
    CHECK(info.world_size == row.expected.world_size);
    CHECK(info.local_rank == row.expected.local_rank);
    CHECK(info.local_world_size == row.expected.local_world_size);
    CHECK(info.node_index == row.expected.node_index);
    CHECK(info.source == row.expected.source);
  }
}

TEST_CASE("bad rank variables are reported by name, all at once", "[runtime]") {
  struct Row {
    Env env;
    std::string message;
  };
  const std::vector<Row> rows = {
      {{{"RANK", "abc"}, {"WORLD_SIZE", "2"}}, "RANK=abc: expected a non-negative integer"},
      {{{"RANK", "x"}, {"WORLD_SIZE", "y"}},
       "RANK=x: expected a non-negative integer; WORLD_SIZE=y: expected a non-negative integer"},
      {{{"PMI_RANK", "-1"}, {"PMI_SIZE", "2"}}, "PMI_RANK=-1: expected a non-negative integer"},
      {{{"RANK", "1"}}, "RANK=1 is set but WORLD_SIZE is not"},
      {{{"RANK", "4"}, {"WORLD_SIZE", "2"}}, "RANK=4: not below WORLD_SIZE=2"},
      {{{"RANK", "0"}, {"WORLD_SIZE", "0"}}, "WORLD_SIZE=0: expected at least 1"},
      {{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "0"}, {"LOCAL_WORLD_SIZE", "4"}},
       "LOCAL_WORLD_SIZE=4: expected 1 to WORLD_SIZE=2"},
      {{{"RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "2"}, {"LOCAL_WORLD_SIZE", "2"}},
       "LOCAL_RANK=2: not below LOCAL_WORLD_SIZE=2"},
      {{{"RANK", "9"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "2"}, {"LOCAL_WORLD_SIZE", "2"}},
       "RANK=9: not below WORLD_SIZE=4; LOCAL_RANK=2: not below LOCAL_WORLD_SIZE=2"},
      {{{"SLURM_PROCID", "1"},
        {"SLURM_NTASKS", "4"},
        {"SLURM_LOCALID", "2"},
        {"SLURM_STEP_TASKS_PER_NODE", "2(x2)"},
        {"SLURM_NODEID", "0"}},
       "SLURM_LOCALID=2: not below SLURM_STEP_TASKS_PER_NODE=2"},
      // flux run -N 2 -n 3: the hosts hold 2 and 1, and no variable says which this is.
      {{{"FLUX_TASK_RANK", "2"},
        {"FLUX_JOB_SIZE", "3"},
        {"FLUX_TASK_LOCAL_ID", "0"},
        {"FLUX_JOB_NNODES", "2"}},
       "FLUX_JOB_SIZE=3 ranks on FLUX_JOB_NNODES=2 hosts: ranks per host differ, and Flux does "
       "not say how many are on this one; start it with ezpz launch"},
      {{{"FLUX_TASK_RANK", "0"}, {"FLUX_JOB_SIZE", "2"}, {"FLUX_JOB_NNODES", "two"}},
       "FLUX_JOB_NNODES=two: expected a non-negative integer"},
  };
  for (const Row& row : rows) {
    CHECK(error_of([&] { rank_info_from_env(row.env); }) == row.message);
  }
}

TEST_CASE("MASTER_ADDR defaults to loopback only when every rank is on one host", "[runtime]") {
  RankInfo one_host{1, 2, 1, 2, 0, ""};
  RankInfo two_hosts{1, 4, 1, 2, 0, ""};
  Rendezvous given =
      rendezvous_from_env({{"MASTER_ADDR", "x1"}, {"MASTER_PORT", "1234"}}, two_hosts);
  CHECK(given.master_addr == "x1");
  CHECK(given.master_port == 1234);
  CHECK(given.source == "MASTER_ADDR, MASTER_PORT");
  Rendezvous defaulted = rendezvous_from_env({}, one_host);
  CHECK(defaulted.master_addr == "127.0.0.1");
  CHECK(defaulted.master_port == 29500);
  CHECK(defaulted.source == "MASTER_ADDR unset: 127.0.0.1, all 2 ranks on one host; default port");
  CHECK(rendezvous_from_env({}, RankInfo{0, 1, 0, 1, 0, ""}).source ==
        "MASTER_ADDR unset: 127.0.0.1, 1 rank on one host; default port");
  CHECK(error_of([&] { rendezvous_from_env({}, two_hosts); }) ==
        "MASTER_ADDR is not set: 4 ranks on 2 hosts need rank 0's host name (ezpz launch sets it)");
  for (const char* port : {"0", "65536", "abc", "-1"}) {
    CHECK(error_of([&] {
            rendezvous_from_env({{"MASTER_PORT", port}}, one_host);
          }) == std::string("MASTER_PORT=") + port + ": expected a port number from 1 to 65535");
  }
}

TEST_CASE("timeouts are positive seconds, defaulting to 60 and 120", "[runtime]") {
  Timeouts defaults = timeouts_from_env({});
  CHECK(defaults.rendezvous_ms == 60'000);
  CHECK(defaults.collective_ms == 120'000);
  Timeouts set =
      timeouts_from_env({{"EZPZ_RENDEZVOUS_TIMEOUT", "5"}, {"EZPZ_COLLECTIVE_TIMEOUT", "0.5"}});
  CHECK(set.rendezvous_ms == 5'000);
  CHECK(set.collective_ms == 500);
  CHECK(parse_seconds("X", "1e3") == 1'000'000);
  for (const char* bad : {"abc", "0", "-1", "inf", "nan", "5s", "0.0001"}) {
    CHECK(error_of([&] {
            timeouts_from_env({{"EZPZ_COLLECTIVE_TIMEOUT", bad}});
          }) == std::string("EZPZ_COLLECTIVE_TIMEOUT=") + bad +
                    ": expected a positive number of seconds");
  }
}

TEST_CASE("switches take the usual spellings and nothing else", "[runtime]") {
  for (const char* yes : {"1", "true", "TRUE", "yes", "on", "On"}) CHECK(parse_switch("X", yes));
  for (const char* no : {"", "0", "false", "no", "off", "OFF"}) CHECK_FALSE(parse_switch("X", no));
  CHECK(error_of([] { parse_switch("EZPZ_LOG_FROM_ALL_RANKS", "maybe"); }) ==
        "EZPZ_LOG_FROM_ALL_RANKS=maybe: expected 1, true, yes, on or 0, false, no, off");
}

TEST_CASE("the device is TORCH_DEVICE, else the first usable of cuda, xpu, mps, cpu", "[runtime]") {
  Availability xpu;
  xpu.xpu_built = true;
  xpu.xpu_devices = 12;
  Availability mps;
  mps.mps_built = mps.mps_available = true;
  const std::string first = "first usable of cuda, xpu, mps, cpu";
  const std::vector<ChoiceRow> rows = {
      {{}, cpu_only(), 3, "cpu", first},
      {{}, with_cuda(4, true), 2, "cuda:2", first + "; index from LOCAL_RANK=2"},
      {{}, with_cuda(0, false), 0, "cpu", first},
      {{}, xpu, 11, "xpu:11", first + "; index from LOCAL_RANK=11"},
      {{}, mps, 0, "mps", first},
      {torch("cpu"), with_cuda(4, true), 1, "cpu", "TORCH_DEVICE=cpu"},
      {torch("cuda"), with_cuda(4, true), 1, "cuda:1",
       "TORCH_DEVICE=cuda; index from LOCAL_RANK=1"},
      {torch("cuda:1"), with_cuda(2, true), 0, "cuda:1", "TORCH_DEVICE=cuda:1"},
      {torch(""), cpu_only(), 0, "cpu", first},
  };
  check_choices(rows);
}

TEST_CASE("EZPZ_LOCAL_DEVICE picks the index when TORCH_DEVICE names none", "[runtime]") {
  Availability xpu;
  xpu.xpu_built = true;
  xpu.xpu_devices = 1;
  const std::string first = "first usable of cuda, xpu, mps, cpu";
  const std::vector<ChoiceRow> rows = {
      // Each rank sees only its own GPU: device 0 whatever its local rank (LOCAL_RANK=3 failed).
      {local("0"), with_cuda(1, true), 3, "cuda:0", first + "; index from EZPZ_LOCAL_DEVICE=0"},
      {local("0"), xpu, 5, "xpu:0", first + "; index from EZPZ_LOCAL_DEVICE=0"},
      {local("1"), with_cuda(4, true), 0, "cuda:1", first + "; index from EZPZ_LOCAL_DEVICE=1"},
      {both("cuda", "0"), with_cuda(1, true), 2, "cuda:0",
       "TORCH_DEVICE=cuda; index from EZPZ_LOCAL_DEVICE=0"},
      // An index TORCH_DEVICE names wins.
      {both("cuda:1", "0"), with_cuda(2, true), 0, "cuda:1", "TORCH_DEVICE=cuda:1"},
      // cpu and mps have no index: the variable is reported as unused.
      {local("0"), cpu_only(), 1, "cpu",
       first + "; EZPZ_LOCAL_DEVICE=0 not used: cpu has no device index"},
      {local("5"), with_cuda(0, false), 0, "cpu",
       first + "; EZPZ_LOCAL_DEVICE=5 not used: cpu has no device index"},
      {both("cpu", "0"), with_cuda(1, true), 0, "cpu",
       "TORCH_DEVICE=cpu; EZPZ_LOCAL_DEVICE=0 not used: cpu has no device index"},
      // Empty is unset, as for TORCH_DEVICE.
      {local(""), with_cuda(2, true), 1, "cuda:1", first + "; index from LOCAL_RANK=1"},
  };
  check_choices(rows);
}

TEST_CASE("a device this libtorch cannot use is a clear error", "[runtime]") {
  struct Row {
    Env env;
    Availability available;
    int local_rank;
    std::string message;
  };
  const std::vector<Row> rows = {
      {torch("cuda"), cpu_only(), 0, "TORCH_DEVICE=cuda: this libtorch was built without CUDA"},
      {torch("cuda"), with_cuda(0, true), 0, "TORCH_DEVICE=cuda: no CUDA device is visible"},
      {torch("mps"), cpu_only(), 0, "TORCH_DEVICE=mps: this libtorch was built without MPS"},
      {torch("xpu:0"), cpu_only(), 0, "TORCH_DEVICE=xpu:0: this libtorch was built without XPU"},
      {torch("cuda:3"), with_cuda(2, true), 0,
       "TORCH_DEVICE=cuda:3: only 2 CUDA devices are visible"},
      {torch("cuda"), with_cuda(1, true), 1,
       "LOCAL_RANK=1: only 1 CUDA device is visible; run at most that many ranks per host"},
      {Env{}, with_cuda(4, true), 5,
       "LOCAL_RANK=5: only 4 CUDA devices are visible; run at most that many ranks per host"},
      {torch("tpu"), cpu_only(), 0,
       "TORCH_DEVICE=tpu: unknown device; expected cpu, cuda, xpu or mps"},
      {torch("cuda:x"), with_cuda(2, true), 0,
       "TORCH_DEVICE=cuda:x: expected a device index after ':'"},
      {local("5"), with_cuda(1, true), 0, "EZPZ_LOCAL_DEVICE=5: only 1 CUDA device is visible"},
      {both("cuda", "4"), with_cuda(4, true), 0,
       "EZPZ_LOCAL_DEVICE=4: only 4 CUDA devices are visible"},
      // Not an index is an error on any device, cpu too: whatever set it is broken.
      {local("x"), with_cuda(1, true), 0,
       "EZPZ_LOCAL_DEVICE=x: expected a device index (a non-negative integer)"},
      {local("x"), cpu_only(), 0,
       "EZPZ_LOCAL_DEVICE=x: expected a device index (a non-negative integer)"},
      {local("-1"), with_cuda(1, true), 0,
       "EZPZ_LOCAL_DEVICE=-1: expected a device index (a non-negative integer)"},
      {local("0 "), with_cuda(1, true), 0,
       "EZPZ_LOCAL_DEVICE=0 : expected a device index (a non-negative integer)"},
      {local("99999999999"), with_cuda(1, true), 0,
       "EZPZ_LOCAL_DEVICE=99999999999: expected a device index (a non-negative integer)"},
  };
  for (const Row& row : rows) {
    CHECK(error_of([&] { choose_device(row.env, row.available, row.local_rank); }) == row.message);
  }
}

TEST_CASE("the backend is TORCH_BACKEND, else the device's best that is built", "[runtime]") {
  DeviceChoice cpu{"cpu", -1, ""};
  DeviceChoice cuda{"cuda", 0, ""};
  DeviceChoice xpu{"xpu", 0, ""};
  Availability ccl_only;
  ccl_only.xpu_built = true;
  ccl_only.ccl = true;
  struct Row {
    std::optional<std::string> torch_backend;
    DeviceChoice device;
    Availability available;
    std::string name;
    std::string source;
  };
  const std::vector<Row> rows = {
      {std::nullopt, cpu, cpu_only(), "gloo", "default for cpu"},
      {std::nullopt, cuda, with_cuda(1, true), "nccl", "default for cuda"},
      {std::nullopt, cuda, with_cuda(1, false), "gloo",
       "default for cuda; no better backend in this libtorch"},
      {std::nullopt, xpu, ccl_only, "ccl", "default for xpu; no better backend in this libtorch"},
      {"gloo", cuda, with_cuda(1, true), "gloo", "TORCH_BACKEND=gloo"},
  };
  for (const Row& row : rows) {
    BackendChoice choice = choose_backend(row.torch_backend, row.device, row.available);
    CHECK(choice.name == row.name);
    CHECK(choice.source == row.source);
  }
  CHECK(available_backends(cpu_only()) == std::vector<std::string>{"gloo"});
  CHECK(available_backends(with_cuda(1, true)) == std::vector<std::string>{"gloo", "nccl"});
}

TEST_CASE("a backend this libtorch cannot provide is a clear error", "[runtime]") {
  DeviceChoice cpu{"cpu", -1, ""};
  DeviceChoice xpu{"xpu", 0, ""};
  struct Row {
    std::string torch_backend;
    DeviceChoice device;
    Availability available;
    std::string message;
  };
  const std::vector<Row> rows = {
      {"nccl", cpu, cpu_only(), "TORCH_BACKEND=nccl: this libtorch was built without NCCL"},
      {"mpi", cpu, cpu_only(), "TORCH_BACKEND=mpi: this libtorch was built without MPI"},
      {"xccl", cpu, cpu_only(), "TORCH_BACKEND=xccl: this libtorch was built without XCCL"},
      {"nccl", cpu, with_cuda(1, true),
       "TORCH_BACKEND=nccl: needs a cuda device, but the device is cpu"},
      {"gloo", xpu, cpu_only(),
       "TORCH_BACKEND=gloo: needs a cpu, cuda or mps device, but the device is xpu:0"},
      {"foo", cpu, cpu_only(),
       "TORCH_BACKEND=foo: unknown backend; expected gloo, nccl, xccl, ccl or mpi"},
  };
  for (const Row& row : rows) {
    CHECK(error_of([&] { choose_backend(row.torch_backend, row.device, row.available); }) ==
          row.message);
  }
}

// NCCL refuses two ranks on one GPU ("Duplicate GPU detected : rank 0 and rank 1 both on CUDA
// device 60", seen with 2 ranks on one H200): where ezpz's placement shares a GPU, NCCL is no
// default, and asking for it is an error before NCCL's own.
TEST_CASE("ranks sharing a GPU under ezpz's placement get Gloo, not NCCL", "[runtime]") {
  struct Row {
    std::string masks;
    int local_rank;
    int local_world_size;
    std::optional<std::string> shared;
  };
  const std::vector<Row> rows = {
      {"0;0", 0, 2, "local ranks 0 and 1 share GPU 0 (EZPZ_GPU_MASKS=0;0)"},
      {"0;0", 1, 2, "local ranks 0 and 1 share GPU 0 (EZPZ_GPU_MASKS=0;0)"},
      {"3;3;2;2;1;1;0;0", 5, 8, "local ranks 4 and 5 share GPU 1 (EZPZ_GPU_MASKS=3;3;2;2;1;1;0;0)"},
      {"3,2;2,1", 1, 2, "local ranks 0 and 1 share GPU 2 (EZPZ_GPU_MASKS=3,2;2,1)"},
      // More ranks than entries: ezpz-rankenv takes them modulo the entries.
      {"0;1", 0, 4, "local ranks 0 and 2 share GPU 0 (EZPZ_GPU_MASKS=0;1)"},
      {"3;2;1;0", 2, 4, std::nullopt},
      {"3,2;1,0", 0, 2, std::nullopt},
      {"0", 0, 1, std::nullopt},
      {"", 0, 2, std::nullopt},  // no placement
  };
  for (const Row& row : rows) {
    INFO(row.masks << " local rank " << row.local_rank);
    Env env;
    if (!row.masks.empty()) env["EZPZ_GPU_MASKS"] = row.masks;
    CHECK(shared_gpu(env, row.local_rank, row.local_world_size) == row.shared);
  }
  const std::string shared = "local ranks 0 and 1 share GPU 0 (EZPZ_GPU_MASKS=0;0)";
  DeviceChoice cuda{"cuda", 0, ""};
  BackendChoice choice = choose_backend(std::nullopt, cuda, with_cuda(1, true), shared);
  CHECK(choice.name == "gloo");
  CHECK(choice.source ==
        "default for cuda; NCCL needs a GPU of its own per rank, but local "
        "ranks 0 and 1 share GPU 0 (EZPZ_GPU_MASKS=0;0)");
  CHECK(choose_backend("gloo", cuda, with_cuda(1, true), shared).name == "gloo");
  CHECK(error_of([&] { choose_backend("nccl", cuda, with_cuda(1, true), shared); }) ==
        "TORCH_BACKEND=nccl: NCCL needs a GPU of its own per rank, but local ranks 0 and 1 "
        "share GPU 0 (EZPZ_GPU_MASKS=0;0); pass TORCH_BACKEND=gloo, or fewer ranks per host");
  // Without NCCL in this libtorch the fallback says why as before.
  CHECK(choose_backend(std::nullopt, cuda, with_cuda(1, false), shared).source ==
        "default for cuda; no better backend in this libtorch");
}

TEST_CASE("each rank's seed is seed x (rank + 1)", "[runtime]") {
  CHECK(rank_seed(1234, 0) == 1234);
  CHECK(rank_seed(1234, 3) == 4936);
  CHECK(rank_seed(0, 5) == 0);
}

TEST_CASE("rank 0 logs; EZPZ_LOG_FROM_ALL_RANKS makes every rank log, prefixed", "[runtime]") {
  LogPolicy zero = log_policy({}, 0);
  CHECK(zero.enabled);
  CHECK(zero.prefix.empty());
  CHECK_FALSE(log_policy({}, 1).enabled);
  CHECK_FALSE(log_policy({{"EZPZ_LOG_FROM_ALL_RANKS", "0"}}, 1).enabled);
  LogPolicy all = log_policy({{"EZPZ_LOG_FROM_ALL_RANKS", "1"}}, 3);
  CHECK(all.enabled);
  CHECK(all.prefix == "[rank 3] ");
  CHECK(error_of([] {
          log_policy({{"EZPZ_LOG_FROM_ALL_RANKS", "maybe"}}, 0);
        }) == "EZPZ_LOG_FROM_ALL_RANKS=maybe: expected 1, true, yes, on or 0, false, no, off");
}
