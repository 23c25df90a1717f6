// A binding in each launcher's own words: the profile's cores per local rank (binding.hpp) and
// each launcher's spelling of them (launcher_table.hpp's binding forms, binding.cpp), or its
// refusal, word for word.
#include <string>
#include <vector>

#include "ezpz/core/error.hpp"
#include "ezpz/launchers/binding.hpp"
#include "ezpz/launchers/launchers.hpp"
#include "tests/catch.hpp"

using namespace ezpz;

namespace {

using Words = std::vector<std::string>;
using Cores = std::vector<std::vector<int>>;

CpuBind aurora_bind() {
  return {.style = CpuBind::Style::list,
          .sockets = 2,
          .cores_per_socket = 52,
          .reserved_cores = {0, 52}};
}

CpuBind depth_bind(int depth) {
  CpuBind bind;
  bind.style = CpuBind::Style::depth;
  bind.depth = depth;
  return bind;
}

// "1-8 9-16": each rank's first and last core, ranks apart (the cores of the tests below
// are consecutive).
std::string first_last(const Cores& cores) {
  std::string text;
  for (const std::vector<int>& rank : cores) {
    if (!text.empty()) text += ' ';  // not `"" + std::string`: GCC 12 warns (-Wrestrict) wrongly
    text += std::to_string(rank.front()) + "-" + std::to_string(rank.back()) + "/" +
            std::to_string(rank.size());
  }
  return text;
}

BindingWords words_for(std::string_view launcher, const CoreBinding& binding, int ppn = 2) {
  return binding_words(*launcher_row(launcher), binding, ppn);
}

CoreBinding cores(Cores each) {
  return {.kind = CoreBinding::Kind::cores, .cores = std::move(each)};
}

CoreBinding verbatim(std::string value) {
  return {.kind = CoreBinding::Kind::verbatim, .verbatim = std::move(value)};
}

}  // namespace

TEST_CASE("a profile's binding gives each local rank its cores", "[binding]") {
  struct Row {
    CpuBind bind;
    int ppn;
    int slots_per_rank;
    CoreBinding::Kind kind;
    int depth;
    const char* cores;  // first-last/count per rank
  };
  using K = CoreBinding::Kind;
  const std::vector<Row> rows = {
      {depth_bind(8), 4, 1, K::depth, 8, "0-7/8 8-15/8 16-23/8 24-31/8"},
      // --gpus-per-rank 2: each rank the cores of its two slots.
      {depth_bind(8), 2, 2, K::depth, 16, "0-15/16 16-31/16"},
      {aurora_bind(), 12, 1, K::cores, 0,
       "1-8/8 9-16/8 17-24/8 25-32/8 33-40/8 41-48/8 53-60/8 61-68/8 69-76/8 77-84/8 85-92/8 "
       "93-100/8"},
      {aurora_bind(), 6, 1, K::cores, 0, "1-17/17 18-34/17 35-51/17 53-69/17 70-86/17 87-103/17"},
      // Six ranks of two slots each: the 12-rank blocks, two to a rank.
      {aurora_bind(), 6, 2, K::cores, 0, "1-16/16 17-32/16 33-48/16 53-68/16 69-84/16 85-100/16"},
      {aurora_bind(), 3, 1, K::cores, 0, "1-25/25 26-50/25 53-103/51"},
      {aurora_bind(), 1, 1, K::cores, 0, "1-51/51"},
  };
  for (const Row& row : rows) {
    INFO("ppn " << row.ppn << " slots per rank " << row.slots_per_rank);
    CoreBinding binding = profile_core_binding(row.bind, row.ppn, row.slots_per_rank);
    CHECK(binding.kind == row.kind);
    CHECK(binding.depth == row.depth);
    CHECK(first_last(binding.cores) == row.cores);
  }
  CHECK(profile_core_binding(CpuBind{}, 4, 2) == CoreBinding{});
}

TEST_CASE("PALS keeps the list ALCF documents for Aurora at every ppn", "[binding]") {
  struct Row {
    int ppn;
    const char* word;
  };
  const std::vector<Row> rows = {
      // The 12-rank list ALCF documents (and the Python ezpz always emits).
      {12, "--cpu-bind=list:1-8:9-16:17-24:25-32:33-40:41-48:53-60:61-68:69-76:77-84:85-92:93-100"},
      {6, "--cpu-bind=list:1-17:18-34:35-51:53-69:70-86:87-103"},
      {2, "--cpu-bind=list:1-51:53-103"},
      {1, "--cpu-bind=list:1-51"},
      {3, "--cpu-bind=list:1-25:26-50:53-103"},
  };
  for (const Row& row : rows) {
    INFO("ppn " << row.ppn);
    CHECK(words_for("pals", profile_core_binding(aurora_bind(), row.ppn), row.ppn).words ==
          Words{row.word});
  }
  // A reserved core inside a block splits it into runs.
  CpuBind split{
      .style = CpuBind::Style::list, .sockets = 1, .cores_per_socket = 8, .reserved_cores = {3}};
  CHECK(words_for("pals", profile_core_binding(split, 1), 1).words ==
        Words{"--cpu-bind=list:0-2,4-7"});
}

TEST_CASE("each launcher spells each kind of binding in its own words", "[binding]") {
  struct Row {
    const char* launcher;
    CoreBinding binding;
    Words words;
  };
  const CoreBinding depth2 = profile_core_binding(depth_bind(2), 2);
  const CoreBinding split = cores({{1, 2}, {3, 5}});    // rank 1's cores are not consecutive
  const CoreBinding uniform = cores({{0, 1}, {2, 3}});  // what depth 2 would give
  const std::vector<Row> rows = {
      {"pals", depth2, {"--cpu-bind=depth", "--depth=2"}},
      {"pals", split, {"--cpu-bind=list:1-2:3-3,5-5"}},
      {"pals", uniform, {"--cpu-bind=list:0-1:2-3"}},
      {"pals", verbatim("core"), {"--cpu-bind=core"}},
      {"hydra", depth2, {"-bind-to", "user:0+1,2+3"}},
      {"hydra", split, {"-bind-to", "user:1+2,3+5"}},
      {"hydra", verbatim("core:2"), {"-bind-to", "core:2"}},
      // PALS's list:A:B (the Python ezpz's CPU_BIND), in each launcher's words; before, Hydra
      // was given -bind-to list:0-1:2-3 and refused it at start-up.
      {"hydra", verbatim("list:0-1:2-3"), {"-bind-to", "user:0+1,2+3"}},
      {"srun", verbatim("list:1-2:3,5"), {"--cpu-bind=mask_cpu:0x6,0x28"}},
      {"pals", verbatim("list:1-2:3,5"), {"--cpu-bind=list:1-2:3,5"}},
      {"hydra", verbatim("list:0-1:"), {"-bind-to", "list:0-1:"}},  // no list: as written
      {"hydra", verbatim("list:2-1"), {"-bind-to", "list:2-1"}},
      {"openmpi", depth2, {"--map-by", "ppr:2:node:PE=2", "--bind-to", "core"}},
      {"openmpi", uniform, {"--map-by", "ppr:2:node:PE=2", "--bind-to", "core"}},
      {"openmpi", verbatim("none"), {"--bind-to", "none"}},
      {"srun", depth2, {"-c", "2", "--cpu-bind=cores"}},
      {"srun", split, {"--cpu-bind=mask_cpu:0x6,0x28"}},
      {"srun", cores({{64}, {0, 1, 2, 3}}), {"--cpu-bind=mask_cpu:0x10000000000000000,0xf"}},
      {"srun", verbatim("map_cpu:0,1"), {"--cpu-bind=map_cpu:0,1"}},
      {"flux", depth2, {"--setopt=cpu-affinity=map:0-1;2-3"}},
      {"flux", split, {"--setopt=cpu-affinity=map:1-2;3-3,5-5"}},
      {"flux", verbatim("per-task"), {"--setopt=cpu-affinity=per-task"}},
      {"aprun", depth2, {"-cc", "depth", "-d", "2"}},
      {"aprun", uniform, {"-cc", "depth", "-d", "2"}},
      {"aprun", verbatim("cpu"), {"-cc", "cpu"}},
  };
  for (const Row& row : rows) {
    INFO(row.launcher << " " << row.words.front());
    BindingWords words = words_for(row.launcher, row.binding);
    CHECK(words.words == row.words);
    CHECK(words.dropped_why.empty());
  }
  for (const LauncherRow& row : k_launchers) {
    INFO(row.name);
    CHECK(binding_words(row, CoreBinding{}, 2).words.empty());
  }
}

TEST_CASE("Open MPI's depth words place the ranks, so -N is left out", "[binding]") {
  CHECK(words_for("openmpi", profile_core_binding(depth_bind(2), 2)).places_ranks);
  CHECK_FALSE(words_for("openmpi", verbatim("core")).places_ranks);
  LauncherInput input;
  input.world_size = 4;
  input.ppn = 2;
  input.hosts = {"n01", "n02"};
  input.hostfile = "/h";
  input.cpu_bind = profile_core_binding(depth_bind(8), 2);
  CHECK(launcher_argv("openmpi", input) == Words{"mpirun", "-n", "4", "--hostfile", "/h",
                                                 "--map-by", "ppr:2:node:PE=8", "--bind-to",
                                                 "core"});
}

TEST_CASE("a binding a launcher cannot say is refused in one line", "[binding]") {
  const CoreBinding split = cores({{1, 2}, {3, 5}});
  CHECK_THROWS_WITH(words_for("openmpi", split),
                    "launcher openmpi cannot bind each rank to its own list of cores "
                    "(1-2:3-3,5-5), as the profile asks; give its own binding with "
                    "--cpu-bind");
  CHECK_THROWS_WITH(words_for("aprun", split),
                    "launcher aprun cannot bind each rank to its own list of cores "
                    "(1-2:3-3,5-5), as the profile asks; give its own binding with "
                    "--cpu-bind");
  CHECK_THROWS_WITH(words_for("torchrun", verbatim("core")),

                    "launcher torchrun takes no CPU binding; leave out --cpu-bind and CPU_BIND");
}

TEST_CASE("torchrun drops a profile's binding and says why", "[binding]") {
  for (const CoreBinding& binding :
       {profile_core_binding(depth_bind(2), 2), cores({{1, 2}, {3, 5}})}) {
    BindingWords words = words_for("torchrun", binding);
    CHECK(words.words.empty());
    CHECK(words.dropped_why ==
          "the profile's CPU binding is not applied: torchrun starts its ranks itself and binds "
          "no cores");
  }
  LauncherInput input;
  input.cpu_bind = verbatim("core");
  CHECK_THROWS_AS(launcher_argv("torchrun", input), Error);
}
