// Rank 0's address in the plan: the first host, its short name plus the profile's network
// suffix, or the profile's fixed address.
#include "ezpz/launch/plan.hpp"
#include "tests/catch.hpp"

using namespace ezpz;

TEST_CASE("MASTER_ADDR is the first host, on the fast network when the profile says", "[plan]") {
  struct Row {
    std::vector<std::string> hosts;
    std::string suffix, fixed, master_addr;
  };
  const std::vector<Row> rows = {
      {{"n01.x", "n02"}, "", "", "n01.x"},
      {{"n01.x", "n02"}, ".hsn.x", "", "n01.hsn.x"},
      {{"n01", "n02"}, "", "10.1.1.1", "10.1.1.1"},
      // A loopback address is no rendezvous for ranks on other hosts.
      {{"n01", "n02"}, "", "127.0.0.1", "n01"},
      // An address has no name on the fast network (was "192.hsn.x").
      {{"192.0.2.1", "192.0.2.2"}, ".hsn.x", "", "192.0.2.1"},
  };
  for (const Row& row : rows) {
    INFO(row.hosts.front() << " suffix " << row.suffix << " fixed " << row.fixed);
    PlanInputs in;
    in.allocation.hosts = row.hosts;
    in.profile.launcher = "hydra";
    in.profile.network_suffix = row.suffix;
    in.profile.master_addr = row.fixed;
    in.slots = {.count = 1, .source = "test", .known = true};
    in.rankenv = "ezpz-rankenv";
    in.run_dir = "/run";
    LaunchRequest request;
    request.command = {"probe"};
    CHECK(plan_launch(request, in).master_addr == row.master_addr);
  }
}
