// What the plan asks of the ranks' output, by launcher: rank records where the launcher keeps
// them whole, and (for `--output raw`) whether the ranks on ezpz's host can pass ezpz their
// pipes. Neither under a launcher that sets the rank's variables itself (torchrun: no
// ezpz-rankenv), nor under Open MPI (a pseudo-terminal, read in pieces), nor with --no-rank-env.
#include <algorithm>

#include "ezpz/launch/plan.hpp"
#include "tests/catch.hpp"

using namespace ezpz;

namespace {

LaunchPlan planned(const std::string& launcher, bool rank_env, bool records) {
  PlanInputs in;
  in.allocation.hosts = {"n01"};
  in.profile.launcher = launcher;
  in.slots = {.count = 2, .source = "test", .known = true};
  in.rankenv = "ezpz-rankenv";
  in.run_dir = "/run";
  LaunchRequest request;
  request.command = {"train"};
  request.rank_env = rank_env;
  request.output_records = records;
  return plan_launch(request, in).plan;
}

std::string records_value(const LaunchPlan& plan) {
  const auto it = std::find_if(plan.env.begin(), plan.env.end(), [](const auto& entry) {
    return entry.first == "EZPZ_OUTPUT_RECORDS";
  });
  return it == plan.env.end() ? "-" : it->second;
}

}  // namespace

TEST_CASE("records and passed pipes are planned only where the launcher keeps a rank's pipes",
          "[plan]") {
  struct Row {
    std::string launcher;
    bool rank_env;
    std::string records;  // EZPZ_OUTPUT_RECORDS with records asked for; "-": none
    bool pipes;           // ranks_can_pass_pipes, either way
  };
  const Row rows[] = {
      {.launcher = "hydra", .rank_env = true, .records = "1", .pipes = true},
      {.launcher = "srun", .rank_env = true, .records = "1", .pipes = true},
      {.launcher = "pals", .rank_env = true, .records = "1", .pipes = true},
      {.launcher = "openmpi", .rank_env = true, .records = "-", .pipes = false},
      {.launcher = "torchrun", .rank_env = true, .records = "-", .pipes = false},
      {.launcher = "hydra", .rank_env = false, .records = "-", .pipes = false},
  };
  for (const Row& row : rows) {
    INFO(row.launcher << (row.rank_env ? "" : " --no-rank-env"));
    const LaunchPlan with_records = planned(row.launcher, row.rank_env, true);
    const LaunchPlan raw = planned(row.launcher, row.rank_env, false);
    CHECK(records_value(with_records) == row.records);
    CHECK(records_value(raw) == "-");  // the executor sets it, where ezpz listens
    CHECK(with_records.ranks_can_pass_pipes == row.pipes);
    CHECK(raw.ranks_can_pass_pipes == row.pipes);
  }
}
