// The plan's CPU binding when the request names one: the user's words verbatim, and an empty
// one (ezpz's own one-rank-per-host programs: doctor --deep's probe, yeet's stager) no flag.
#include <algorithm>

#include "ezpz/launch/plan.hpp"
#include "tests/catch.hpp"

using namespace ezpz;

namespace {

std::vector<std::string> planned_argv(std::optional<std::string> cpu_bind) {
  PlanInputs in;
  in.allocation.hosts = {"n01", "n02"};
  in.profile.launcher = "hydra";
  in.profile.cpu_bind = {.style = CpuBind::Style::depth,
                         .depth = 8,
                         .sockets = 0,
                         .cores_per_socket = 0,
                         .reserved_cores = {}};
  in.slots = {.count = 1, .source = "test", .known = true};
  in.rankenv = "ezpz-rankenv";
  in.run_dir = "/run";
  LaunchRequest request;
  request.command = {"probe"};
  request.cpu_bind = std::move(cpu_bind);
  return plan_launch(request, in).plan.argv;
}

// The word after `flag`, or "" when `flag` is not there.
std::string after(const std::vector<std::string>& argv, const std::string& flag) {
  auto it = std::find(argv.begin(), argv.end(), flag);
  return it == argv.end() || it + 1 == argv.end() ? "" : *(it + 1);
}

}  // namespace

TEST_CASE("an empty --cpu-bind adds no binding flag; a given one is passed as written", "[plan]") {
  CHECK(after(planned_argv(std::nullopt), "-bind-to") == "user:0+1+2+3+4+5+6+7");
  CHECK(after(planned_argv("core"), "-bind-to") == "core");
  const std::vector<std::string> none = planned_argv("");  // was: -bind-to ''
  CHECK(std::count(none.begin(), none.end(), "-bind-to") == 0);
}
