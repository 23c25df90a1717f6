#include "ezpz/core/error.hpp"
#include "ezpz/launch/placement.hpp"
#include "ezpz/launchers/rank_env.hpp"
#include "tests/catch.hpp"

using namespace ezpz;

namespace {

MachineProfile gpu_machine(std::string name, std::vector<std::string> order, int sharing = 1) {
  MachineProfile profile;
  profile.name = std::move(name);
  profile.device = "cuda";
  profile.gpus_per_node = static_cast<int>(order.size());
  profile.gpu_bind = {.order = std::move(order), .ranks_per_gpu = sharing};
  return profile;
}

using Local = std::vector<std::vector<std::string>>;

struct Row {
  std::string what;
  int ppn;
  GpuRequest request;
  Env environment;
  Local expected;
};

}  // namespace

TEST_CASE("each local rank's GPUs follow the profile's order, within a user's mask",
          "[placement]") {
  const MachineProfile polaris = gpu_machine("polaris", {"3", "2", "1", "0"}, 2);
  const std::vector<Row> rows = {
      {"full node", 4, {}, {}, {{"3"}, {"2"}, {"1"}, {"0"}}},
      {"partial node: the first in order", 2, {}, {}, {{"3"}, {"2"}}},
      {"one rank", 1, {}, {}, {{"3"}}},
      {"2 per rank", 2, {.gpus_per_rank = 2, .given = true}, {}, {{"3", "2"}, {"1", "0"}}},
      {"4 per rank", 1, {.gpus_per_rank = 4, .given = true}, {}, {{"3", "2", "1", "0"}}},
      {"2 ranks per GPU, neighbours together",
       8,
       {},
       {},
       {{"3"}, {"3"}, {"2"}, {"2"}, {"1"}, {"1"}, {"0"}, {"0"}}},
      {"user mask: the profile's order kept",
       2,
       {},
       {{"CUDA_VISIBLE_DEVICES", "0,2"}},
       {{"2"}, {"0"}}},
      {"user mask of UUIDs: the mask's order",
       2,
       {},
       {{"CUDA_VISIBLE_DEVICES", "GPU-b,GPU-a"}},
       {{"GPU-b"}, {"GPU-a"}}},
      {"user mask shared by 2", 2, {}, {{"CUDA_VISIBLE_DEVICES", "1"}}, {{"1"}, {"1"}}},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    GpuPlacement placed = place_gpus(
        {.profile = polaris, .launcher = "pals", .ppn = row.ppn, .environment = row.environment},
        row.request);
    CHECK(placed.by == GpuPlacement::By::masks);
    CHECK(placed.variables == std::vector<std::string>{"CUDA_VISIBLE_DEVICES"});
    CHECK(placed.local == row.expected);
  }
}

TEST_CASE("the rule that placed the GPUs is said in one line", "[placement]") {
  const MachineProfile polaris = gpu_machine("polaris", {"3", "2", "1", "0"}, 2);
  const Env none;
  const Env masked{{"CUDA_VISIBLE_DEVICES", "0,2"}};
  auto rule = [&](int ppn, GpuRequest request, const Env& env = {}) {
    return place_gpus({.profile = polaris, .launcher = "pals", .ppn = ppn, .environment = env},
                      request)
        .rule;
  };
  CHECK(rule(4, {}) ==
        "1 GPU per rank from machine profile polaris, in order 3,2,1,0 (ezpz-rankenv sets "
        "CUDA_VISIBLE_DEVICES)");
  CHECK(rule(2, {.gpus_per_rank = 2, .given = true}) ==
        "2 GPUs per rank from machine profile polaris, in order 3,2,1,0 (ezpz-rankenv sets "
        "CUDA_VISIBLE_DEVICES)");
  CHECK(rule(8, {}) ==
        "2 ranks per GPU from machine profile polaris, in order 3,2,1,0 (ezpz-rankenv sets "
        "CUDA_VISIBLE_DEVICES)");
  CHECK(rule(2, {}, masked) ==
        "1 GPU per rank from CUDA_VISIBLE_DEVICES=0,2, in order 2,0 (ezpz-rankenv sets "
        "CUDA_VISIBLE_DEVICES)");
  CHECK(rule(4, {.bind = false}) == "--no-gpu-bind: devices left alone");
  // A mask naming every GPU narrows nothing.
  CHECK(rule(4, {}, {{"CUDA_VISIBLE_DEVICES", "0,1,2,3"}}) == rule(4, {}));
}

TEST_CASE("devices are left alone where no placement can be made", "[placement]") {
  const MachineProfile local = [] {
    MachineProfile p;
    p.name = "local";
    return p;
  }();
  const MachineProfile polaris = gpu_machine("polaris", {"3", "2", "1", "0"});
  const Env env;
  GpuPlacement none =
      place_gpus({.profile = local, .launcher = "hydra", .ppn = 2, .environment = env}, {});
  CHECK(none.by == GpuPlacement::By::none);
  CHECK(none.rule == "machine profile local has no gpu_bind: devices left alone");
  CHECK(placement_env(none).empty());
  GpuPlacement torchrun = place_gpus({.profile = polaris,
                                      .launcher = "torchrun",
                                      .ppn = 4,
                                      .ranks_wrapped = false,
                                      .environment = env},
                                     {});
  CHECK(torchrun.by == GpuPlacement::By::none);
  CHECK(torchrun.rule == "torchrun starts the ranks without ezpz-rankenv: devices left alone");
}

TEST_CASE("a launcher with GPU flags binds when the profile names its binding", "[placement]") {
  MachineProfile frontier = gpu_machine("frontier", {"4", "5", "2", "3", "6", "7", "0", "1"});
  frontier.device = "rocm";
  frontier.gpu_bind.launcher_bind = "closest";
  const Env none;
  const Env masked{{"ROCR_VISIBLE_DEVICES", "4,5"}};
  auto place = [&](std::string_view launcher, bool binds, const Env& env) {
    return place_gpus({.profile = frontier,
                       .launcher = launcher,
                       .ppn = 2,
                       .launcher_binds = binds,
                       .environment = env},
                      {});
  };
  GpuPlacement srun = place("srun", true, none);
  CHECK(srun.by == GpuPlacement::By::launcher);
  CHECK(srun.launcher_bind == "closest");
  CHECK(srun.rule ==
        "1 GPU per rank from machine profile frontier, in order 4,5,2,3,6,7,0,1 "
        "(srun binds them: closest)");
  CHECK(placement_env(srun) == EnvList{{"EZPZ_LOCAL_DEVICE", "0"}});
  // Another launcher, or a mask of the user's (srun would replace it): ezpz-rankenv's masks.
  GpuPlacement hydra = place("hydra", false, none);
  CHECK(hydra.by == GpuPlacement::By::masks);
  CHECK(hydra.variables == std::vector<std::string>{"ROCR_VISIBLE_DEVICES"});
  CHECK(placement_env(hydra) == EnvList{{"EZPZ_GPU_MASKS", "4;5"},
                                        {"EZPZ_GPU_VARIABLES", "ROCR_VISIBLE_DEVICES"},
                                        {"EZPZ_LOCAL_DEVICE", "0"}});
  CHECK(place("srun", true, masked).by == GpuPlacement::By::masks);
  // A batch script's masks are Slurm's own list of the job's GPUs: srun keeps within them.
  const Env slurms{{"ROCR_VISIBLE_DEVICES", "4,5"}, {"SLURM_JOB_GPUS", "4,5"}};
  GpuPlacement slurm = place("srun", true, slurms);
  CHECK(slurm.by == GpuPlacement::By::launcher);
  CHECK(slurm.local == Local{{"4"}, {"5"}});
  CHECK(slurm.rule ==
        "1 GPU per rank from ROCR_VISIBLE_DEVICES=4,5 (Slurm's), in order 4,5 "
        "(srun binds them: closest)");
}

TEST_CASE("layouts that cannot each have their GPUs are refused in one line", "[placement]") {
  const MachineProfile polaris = gpu_machine("polaris", {"3", "2", "1", "0"}, 2);
  const MachineProfile local = [] {
    MachineProfile p;
    p.name = "local";
    return p;
  }();
  struct Refusal {
    const MachineProfile& profile;
    int ppn;
    GpuRequest request;
    Env environment;
    std::string message;
  };
  const std::vector<Refusal> rows = {
      {polaris,
       12,
       {},
       {},
       "12 ranks per host at 1 GPU each need 12 GPUs, but machine profile polaris has 4; pass "
       "--no-gpu-bind to leave devices alone"},
      {polaris,
       3,
       {.gpus_per_rank = 2, .given = true},
       {},
       "3 ranks per host at 2 GPUs each need 6 GPUs, but machine profile polaris has 4; pass "
       "--no-gpu-bind to leave devices alone"},
      {polaris,
       4,
       {},
       {{"CUDA_VISIBLE_DEVICES", "1"}},
       "4 ranks per host at 1 GPU each need 4 GPUs, but CUDA_VISIBLE_DEVICES=1 has 1; pass "
       "--no-gpu-bind to leave devices alone"},
      {polaris,
       2,
       {.gpus_per_rank = 2, .bind = false, .given = true},
       {},
       "--gpus-per-rank and --no-gpu-bind contradict each other"},
      {polaris,
       2,
       {.gpus_per_rank = 0, .given = true},
       {},
       "--gpus-per-rank must be at least 1, got 0"},
      {local,
       2,
       {.gpus_per_rank = 2, .given = true},
       {},
       "--gpus-per-rank 2: machine profile local has no gpu_bind"},
  };
  for (const Refusal& row : rows) {
    INFO(row.message);
    CHECK_THROWS_MATCHES(place_gpus({.profile = row.profile,
                                     .launcher = "pals",
                                     .ppn = row.ppn,
                                     .environment = row.environment},
                                    row.request),
                         Error, Catch::Matchers::Message(row.message));
  }
}

TEST_CASE("ezpz-rankenv gives each local rank its entry of the plan's masks", "[placement]") {
  static Env env;
  EnvLookup lookup = [](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  env = {{"EZPZ_GPU_MASKS", "3,2;1,0"}, {"EZPZ_GPU_VARIABLES", "ROCR_VISIBLE_DEVICES,HIP_X"}};
  using Assignments = std::vector<std::pair<std::string, std::string>>;
  CHECK(gpu_masks("0", lookup) == Assignments{{"ROCR_VISIBLE_DEVICES", "3,2"}, {"HIP_X", "3,2"}});
  CHECK(gpu_masks("1", lookup) == Assignments{{"ROCR_VISIBLE_DEVICES", "1,0"}, {"HIP_X", "1,0"}});
  CHECK(gpu_masks("2", lookup) ==
        Assignments{{"ROCR_VISIBLE_DEVICES", "3,2"}, {"HIP_X", "3,2"}});  // modulo
  CHECK(gpu_masks("x", lookup).empty());
  env = {{"EZPZ_GPU_MASKS", "3;2"},
         {"SLURM_PROCID", "1"},
         {"SLURM_LOCALID", "1"},
         {"EZPZ_GPU_VARIABLES", "CUDA_VISIBLE_DEVICES"}};
  Assignments mapped = map_rank_env("srun", lookup);
  CHECK(mapped.back() == Assignments::value_type{"CUDA_VISIBLE_DEVICES", "2"});
  env.erase("EZPZ_GPU_MASKS");
  CHECK(gpu_masks("0", lookup).empty());
}

TEST_CASE("a local rank's entry of EZPZ_GPU_MASKS, modulo the entries", "[placement]") {
  CHECK(gpu_mask_entry("3,2;1,0", 0) == "3,2");
  CHECK(gpu_mask_entry("3,2;1,0", 1) == "1,0");
  CHECK(gpu_mask_entry("3,2;1,0", 2) == "3,2");
  CHECK(gpu_mask_entry("3,2;1,0", 5) == "1,0");
  CHECK(gpu_mask_entry("0", 7) == "0");
}
