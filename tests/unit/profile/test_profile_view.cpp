// `ezpz machines`: the table, the match column, and profiles shown as YAML that
// loads back into the same profile (every bundled one, and hostile values).
#include "ezpz/profile/profile_view.hpp"

#include "tests/catch.hpp"
#include "tests/support/every_key.hpp"
#include "tests/support/files.hpp"

namespace ezpz {
namespace {

MachineProfile sample(std::string name) {
  MachineProfile p;
  p.name = std::move(name);
  p.source = "/site/machines/" + p.name + ".yaml";
  p.launcher = "hydra";
  return p;
}

TEST_CASE("the match column says when a profile applies", "[machines]") {
  MachineProfile aurora = sample("aurora");
  aurora.match.hostnames = {"x4*", "aurora*"};
  CHECK(match_summary(aurora) == "hostname x4* or aurora*");
  MachineProfile sirius = sample("sirius");
  sirius.match = {{"x3*"}, {{"PBS_O_HOST", "sirius*"}}};
  CHECK(match_summary(sirius) == "hostname x3* and PBS_O_HOST=sirius*");
  CHECK(match_summary(sample("generic-pbs")) == "fallback for pbs jobs");
  CHECK(match_summary(sample("local")) == "fallback for local jobs");
  CHECK(match_summary(sample("mine")) == "only by name");
}

TEST_CASE("the table lines up its columns", "[machines]") {
  MachineProfile aurora = sample("aurora");
  aurora.scheduler = SchedulerKind::pbs;
  aurora.launcher = "pals";
  aurora.match.hostnames = {"x4*"};
  CHECK(profiles_table({.profiles = {aurora, sample("local")}}) ==
        "NAME    SCHEDULER  LAUNCHER  MATCH                    FILE\n"
        "aurora  pbs        pals      hostname x4*             /site/machines/aurora.yaml\n"
        "local   -          hydra     fallback for local jobs  /site/machines/local.yaml\n");
}

TEST_CASE("the table shows a broken file with its error where the file goes", "[machines]") {
  LoadedProfiles loaded{.profiles = {sample("local")},
                        .broken = {{"draft", "/u/draft.yaml:2: invalid YAML: x"}}};
  CHECK(profiles_table(loaded) ==
        "NAME   SCHEDULER  LAUNCHER  MATCH                    FILE\n"
        "local  -          hydra     fallback for local jobs  /site/machines/local.yaml\n"
        "draft  -          -         BROKEN                   /u/draft.yaml:2: invalid YAML: x\n");
}

MachineProfile reloaded(const MachineProfile& p) {
  return parse_machine_profile(profile_yaml(p), p.source);
}

TEST_CASE("every bundled profile, shown, loads back unchanged", "[machines]") {
  for (const MachineProfile& p : load_profiles(testing::bundled_profile_files())) {
    INFO(p.name << ":\n" << profile_yaml(p));
    CHECK(reloaded(p) == p);
  }
}

TEST_CASE("a profile with every key set, shown, loads back unchanged", "[machines]") {
  MachineProfile p = parse_machine_profile(testing::k_every_key_profile, "/m/every.yaml");
  testing::check_every_key_set(p);
  p.cpu_bind.depth = 0;  // shown with style depth only
  INFO(profile_yaml(p));
  CHECK(reloaded(p) == p);
}

TEST_CASE("values YAML would misread survive the round trip", "[machines]") {
  MachineProfile p = sample("odd");
  p.description = "a: colon, # hash and 'quotes' \"too\"";
  p.env = {{"LEADING_ZERO", "007"}, {"EMPTY", ""}, {"BOOL", "true"}, {"SPACES", " x "}};
  p.launcher_args = {"--opt=a b", "-x", "{braces}", "[brackets]"};
  p.cpu_bind = {CpuBind::Style::depth, 8, 0, 0, {}};
  p.bad_node_patterns = {{"odd", R"(^it's (\S+): '\d+' failed$)"}};
  p.batch = {"home:flare", {"-l place=scatter", "--exclusive"}};
  CHECK(reloaded(p) == p);
  CHECK(profile_yaml(p).starts_with("# odd: /site/machines/odd.yaml\n"));
}

}  // namespace
}  // namespace ezpz
