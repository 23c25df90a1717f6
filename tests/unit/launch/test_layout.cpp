#include "ezpz/core/error.hpp"
#include "ezpz/launch/layout.hpp"
#include "tests/catch.hpp"

using namespace ezpz;

namespace {
const SlotsPerHost k_twelve{12, "machine profile aurora", true};
const SlotsPerHost k_unknown{1, "default (no accelerators found)", false};

std::optional<int> no_probe() {
  return std::nullopt;
}
}  // namespace

TEST_CASE("topology is inferred from whichever of -n, --ppn, --nhosts are given", "[layout]") {
  struct Row {
    TopologyRequest request;
    int hosts;
    SlotsPerHost slots;
    Topology expected;
  };
  const std::vector<Row> rows = {
      {{}, 2, k_twelve, {2, 12, 24}},
      {{std::nullopt, 6, std::nullopt}, 2, k_twelve, {2, 6, 12}},
      {{std::nullopt, std::nullopt, 1}, 2, k_twelve, {1, 12, 12}},
      {{24, std::nullopt, std::nullopt}, 2, k_twelve, {2, 12, 24}},
      // -n alone fills hosts in order, as mpiexec does: 12 ranks is one full host.
      {{12, std::nullopt, std::nullopt}, 2, k_twelve, {1, 12, 12}},
      {{2, std::nullopt, std::nullopt}, 2, k_twelve, {1, 2, 2}},
      {{16, std::nullopt, std::nullopt}, 2, k_twelve, {2, 8, 16}},
      {{8, 4, std::nullopt}, 4, k_twelve, {2, 4, 8}},
      {{8, std::nullopt, 2}, 4, k_twelve, {2, 4, 8}},
      {{8, 4, 2}, 4, k_twelve, {2, 4, 8}},
      {{std::nullopt, 4, 2}, 4, k_twelve, {2, 4, 8}},
      // A laptop with no accelerators: any -n runs on the one host.
      {{4, std::nullopt, std::nullopt}, 1, k_unknown, {1, 4, 4}},
      {{}, 1, k_unknown, {1, 1, 1}},
      // An explicit --ppn may oversubscribe.
      {{std::nullopt, 24, std::nullopt}, 1, k_twelve, {1, 24, 24}},
  };
  for (const Row& row : rows) {
    INFO("hosts=" << row.hosts << " np=" << row.request.nprocs.value_or(-9) << " ppn="
                  << row.request.ppn.value_or(-9) << " nhosts=" << row.request.nhosts.value_or(-9));
    CHECK(infer_topology(row.request, row.hosts, row.slots) == row.expected);
  }
}

TEST_CASE("impossible topologies fail with one sentence naming the flags", "[layout]") {
  struct Row {
    TopologyRequest request;
    int hosts;
    const char* message;
  };
  const std::vector<Row> rows = {
      {{0, std::nullopt, std::nullopt}, 2, "-n/--np must be at least 1, got 0"},
      {{-1, std::nullopt, std::nullopt}, 2, "-n/--np must be at least 1, got -1"},
      {{std::nullopt, 0, std::nullopt}, 2, "--ppn must be at least 1, got 0"},
      {{std::nullopt, std::nullopt, 0}, 2, "--nhosts must be at least 1, got 0"},
      {{std::nullopt, std::nullopt, 3}, 2, "--nhosts 3 is more than the 2 hosts available"},
      {{std::nullopt, std::nullopt, 2}, 1, "--nhosts 2 is more than the 1 host available"},
      {{13, std::nullopt, std::nullopt}, 2, "-n 13 cannot be split evenly over 2 hosts"},
      {{48, std::nullopt, std::nullopt},
       2,
       "-n 48 is more than the 24 slots of 2 hosts x 12 (machine profile aurora); "
       "pass --ppn to oversubscribe"},
      {{13, std::nullopt, std::nullopt},
       1,
       "-n 13 is more than the 12 slots of 1 host x 12 (machine profile aurora); "
       "pass --ppn to oversubscribe"},
      {{10, 4, std::nullopt}, 4, "-n 10 cannot be split evenly over 4 ranks per host (--ppn)"},
      {{16, 4, std::nullopt}, 2, "-n 16 at --ppn 4 needs 4 hosts, but 2 are available"},
      {{10, std::nullopt, 4}, 4, "-n 10 cannot be split evenly over 4 hosts (--nhosts)"},
      {{8, 4, 1}, 4, "-n 8 does not equal --nhosts 1 x --ppn 4"},
  };
  for (const Row& row : rows) {
    CHECK_THROWS_WITH(infer_topology(row.request, row.hosts, k_twelve, Fill::evenly), row.message);
  }
}

// -n 3 on 2 hosts with --ppn 2, as srun and mpiexec take it: 2 + 1. Before, under PBS and
// Slurm: "-n 3 cannot be split evenly over 2 ranks per host (--ppn)". Torchrun's one
// --nproc_per_node for all hosts keeps those errors (above, Fill::evenly).
TEST_CASE("ranks fill hosts in order, the last host holding fewer", "[layout]") {
  struct Row {
    TopologyRequest request;
    int hosts;
    Topology expected;
  };
  const SlotsPerHost two{2, "PBS_NODEFILE lists each host 2 times", true};
  const std::vector<Row> rows = {
      {{3, 2, std::nullopt}, 2, {2, 2, 3}},   {{3, std::nullopt, std::nullopt}, 2, {2, 2, 3}},
      {{3, std::nullopt, 2}, 2, {2, 2, 3}},   {{10, 4, std::nullopt}, 4, {3, 4, 10}},
      {{10, std::nullopt, 4}, 4, {4, 3, 10}}, {{7, std::nullopt, std::nullopt}, 4, {4, 2, 7}},
      {{4, 2, std::nullopt}, 2, {2, 2, 4}},  // even layouts as before
  };
  for (const Row& row : rows) {
    INFO("hosts=" << row.hosts << " np=" << row.request.nprocs.value_or(-9) << " ppn="
                  << row.request.ppn.value_or(-9) << " nhosts=" << row.request.nhosts.value_or(-9));
    CHECK(infer_topology(row.request, row.hosts, two) == row.expected);
  }
  CHECK(infer_topology({13, std::nullopt, std::nullopt}, 2, k_twelve) == Topology{2, 7, 13});
  CHECK_THROWS_WITH(infer_topology({5, std::nullopt, 4}, 4, two),
                    "-n 5 on --nhosts 4 leaves a host with no rank (2 per host fill 3 hosts)");
  CHECK_THROWS_WITH(infer_topology({5, 2, std::nullopt}, 2, two),
                    "-n 5 at --ppn 2 needs 3 hosts, but 2 are available");
  CHECK_THROWS_WITH(infer_topology({5, std::nullopt, std::nullopt}, 2, two),
                    "-n 5 is more than the 4 slots of 2 hosts x 2 (PBS_NODEFILE lists each host 2 "
                    "times); pass --ppn to oversubscribe");
}

TEST_CASE("-n alone never puts more ranks on a local host than it can hold", "[layout]") {
  SlotsPerHost local = k_unknown;
  local.most_per_host = 16;
  local.most_source = "8 per CPU x 2 CPUs";
  CHECK(infer_topology({16, std::nullopt, std::nullopt}, 1, local) == Topology{1, 16, 16});
  CHECK_THROWS_WITH(infer_topology({17, std::nullopt, std::nullopt}, 1, local),
                    "-n 17 is more than this host can hold (8 per CPU x 2 CPUs); pass --ppn to "
                    "oversubscribe");
  // --ppn says the user means it.
  CHECK(infer_topology({64, 64, std::nullopt}, 1, local) == Topology{1, 64, 64});
  // Known slots have their own check; the cap is for a host ezpz knows nothing of.
  SlotsPerHost known = k_twelve;
  known.most_per_host = 1;
  CHECK(infer_topology({12, std::nullopt, std::nullopt}, 1, known) == Topology{1, 12, 12});
}

TEST_CASE("ranks per host come from the first source that says", "[layout]") {
  Allocation slurm;
  slurm.slots_per_host = 2;
  slurm.slots_source = "SLURM_NTASKS_PER_NODE=2";
  auto probe_four = [] { return std::optional<int>(4); };
  CHECK(default_slots_per_host({{"NGPU_PER_HOST", "3"}}, slurm, 12, "aurora", no_probe).source ==
        "NGPU_PER_HOST=3");
  CHECK(default_slots_per_host({}, slurm, 12, "aurora", no_probe).count == 2);
  CHECK(default_slots_per_host({}, Allocation{}, 12, "aurora", no_probe).source ==
        "machine profile aurora");
  CHECK(default_slots_per_host({}, Allocation{}, 0, "local", probe_four).count == 4);
  SlotsPerHost fallback = default_slots_per_host({}, Allocation{}, 0, "local", no_probe);
  CHECK(fallback.count == 1);
  CHECK_FALSE(fallback.known);
  CHECK_THROWS_WITH(default_slots_per_host({{"NGPU_PER_HOST", "four"}}, slurm, 0, "x", no_probe),
                    "NGPU_PER_HOST=four: expected a positive integer");
}

TEST_CASE("excluded hosts are matched by short name and all-excluded is an error", "[layout]") {
  std::vector<std::string> hosts = {"n01.cluster", "n02.cluster", "n03.cluster"};
  CHECK(select_hosts(hosts, {"n02"}) == std::vector<std::string>{"n01.cluster", "n03.cluster"});
  CHECK(select_hosts(hosts, {"n03.other", "nope"}) ==
        std::vector<std::string>{"n01.cluster", "n02.cluster"});
  CHECK_THROWS_WITH(select_hosts({"n01"}, {"n01"}),
                    "--exclude leaves no hosts: all 1 host of the allocation is excluded");
}
