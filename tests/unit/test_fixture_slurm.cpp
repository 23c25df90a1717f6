// The environments a real Slurm 22.05 gives a job (captured from the 4-node
// cluster of tests/slurm/cluster.sh into tests/fixtures/), read the way ezpz
// reads them: detection and allocation from the batch script's variables and
// from a rank's.
#include <fstream>
#include <sstream>
#include <string>

#include "schedulers/scheduler.hpp"
#include "tests/catch.hpp"
#include "tests/support/fake_files.hpp"

using namespace ezpz;
using ezpz::testing::FakeCommands;
using ezpz::testing::FakeFiles;

namespace {

// Lines NAME=VALUE ('#' comments and blank lines skipped) into an Env.
Env read_env_fixture(const std::string& name) {
  std::string path = std::string(EZPZ_SOURCE_DIR) + "/tests/fixtures/" + name;
  std::ifstream in(path);
  REQUIRE(in.good());
  Env env;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto eq = line.find('=');
    REQUIRE(eq != std::string::npos);
    env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return env;
}

}  // namespace

TEST_CASE("a Slurm 22.05 batch script's environment is a 4-host, 2-per-host slurm job",
          "[scheduler]") {
  Env env = read_env_fixture("slurm-22.05-batch-env.txt");
  REQUIRE(env.count("SLURM_JOB_NODELIST") == 1);  // the fixture was parsed

  SchedulerChoice choice = choose_scheduler(std::nullopt, env);
  CHECK(choice.kind == SchedulerKind::slurm);
  CHECK(choice.rule == "SLURM_JOB_ID is set");

  FakeFiles files;  // Slurm's contract is variables only: no file is read
  Allocation allocation = read_allocation(choice.kind, env, files, FakeCommands{}, "n01");
  CHECK(allocation.scheduler == SchedulerKind::slurm);
  CHECK(allocation.job_id == env.at("SLURM_JOB_ID"));
  CHECK(allocation.hosts == std::vector<std::string>{"n01", "n02", "n03", "n04"});
  CHECK(allocation.slots_per_host == 2);
  CHECK(allocation.slots_source == "SLURM_NTASKS_PER_NODE=2");
  CHECK(allocation.nodefile.empty());
}

TEST_CASE("a Slurm 22.05 rank's environment names the same allocation", "[scheduler]") {
  Env env = read_env_fixture("slurm-22.05-step-env.txt");
  REQUIRE(env.count("SLURM_STEP_NODELIST") == 1);

  SchedulerChoice choice = choose_scheduler(std::nullopt, env);
  CHECK(choice.kind == SchedulerKind::slurm);
  Allocation allocation = read_allocation(choice.kind, env, FakeFiles{}, FakeCommands{}, "n02");
  CHECK(allocation.hosts == std::vector<std::string>{"n01", "n02", "n03", "n04"});
  CHECK(allocation.slots_per_host == 2);
}
