// The launcher table is whole: every row has what the planner, ezpz-rankenv, the failure
// classifier and doctor read from it, and the names profiles accept are the table's.
#include <regex>
#include <set>
#include <string>

#include "ezpz/core/error.hpp"
#include "ezpz/launchers/launcher_table.hpp"
#include "ezpz/launchers/launchers.hpp"
#include "ezpz/launchers/rank_env.hpp"
#include "ezpz/launchers/runtime_env.hpp"
#include "ezpz/profile/machine_profile.hpp"
#include "tests/catch.hpp"

using namespace ezpz;

TEST_CASE("every launcher row is whole", "[launcher_table]") {
  for (const LauncherRow& row : k_launchers) {
    INFO("launcher " << row.name);
    CHECK(!row.name.empty());
    CHECK(!row.programs.empty());
    CHECK(!row.install.empty());
    for (const LauncherFlavour& flavour : row.flavours) {
      CHECK(!flavour.name.empty());
      CHECK(!flavour.markers.empty());
    }
    if (row.argv_form == ArgvForm::flags) {
      // A launcher without a rank count (Flux) places ppn ranks on each of its hosts.
      CHECK((!row.np.empty() || (!row.nnodes.empty() && !row.fills_in_order)));
      CHECK(!row.ppn.empty());
      CHECK(!row.hosts.empty());
      CHECK(!row.flavours.empty());  // its program's identity is checked before it runs
      CHECK(!row.binding.verbatim.empty());  // a user's --cpu-bind reaches its own flag
    }
    // A profile's binding is written, or dropped saying why (binding.cpp).
    const BindingForms& forms = row.binding;
    CHECK((!forms.depth.empty() || !forms.cores.empty() || !forms.dropped_why.empty()));
    if (!forms.cores.empty()) CHECK(!forms.list.between.empty());
    // ezpz-rankenv maps its variables, unless it sets torch's own.
    CHECK((row.sets_rank_env || row.rank_variables.rank != nullptr));
    if (row.rank_variables.local_size_list != nullptr) CHECK(row.rank_variables.node != nullptr);
    if (!row.multi_host_dialect.empty()) CHECK(launcher_row(row.multi_host_dialect) != nullptr);
  }
}

TEST_CASE("launcher names and the names users type for them are each one launcher's",
          "[launcher_table]") {
  std::set<std::string_view> names;
  for (const LauncherRow& row : k_launchers) {
    CHECK(names.insert(row.name).second);
    for (std::string_view alias : row.aliases) {
      CHECK(names.insert(alias).second);
      CHECK(launcher_row(alias) == &row);
    }
    CHECK(launcher_row(row.name) == &row);
    CHECK(canonical_launcher(row.name) == row.name);
  }
}

TEST_CASE("each failure report compiles and names groups it has", "[launcher_table]") {
  for (const LauncherRow& row : k_launchers) {
    for (const FailureReport& report : row.failure_reports) {
      INFO(row.name << ": " << report.regex);
      std::regex regex(report.regex.begin(), report.regex.end());
      const int groups = static_cast<int>(regex.mark_count());
      for (int index : {report.host, report.ranks, report.pid, report.what}) {
        CHECK(index >= 0);
        CHECK(index <= groups);
      }
      CHECK((report.what > 0 || !report.what_regex.empty()));
      if (!report.what_regex.empty()) {
        CHECK(std::regex(report.what_regex.begin(), report.what_regex.end()).mark_count() >= 1);
      }
    }
  }
}

TEST_CASE("a profile accepts exactly the table's launchers, and its message lists them",
          "[launcher_table]") {
  std::string listed;
  for (const LauncherRow& row : k_launchers) {
    listed += (listed.empty() ? "" : ", ") + std::string(row.name);
    std::vector<std::string_view> typed(row.aliases.begin(), row.aliases.end());
    typed.push_back(row.name);
    for (std::string_view name : typed) {
      INFO("launcher: " << name);
      MachineProfile profile =
          parse_machine_profile("launcher: " + std::string(name) + "\n", "machines/x.yaml");
      CHECK(profile.launcher == row.name);
    }
  }
  CHECK(known_launchers() == listed);
  CHECK_THROWS_WITH(parse_machine_profile("launcher: lsf\n", "machines/x.yaml"),
                    "machines/x.yaml:1: launcher: expected one of " + listed + ", got \"lsf\"");
}

namespace {
// The environment a rank of each row's launcher sees: rank 3 of 8, 1 of 4 on its host.
const LauncherRow* g_row = nullptr;
const char* row_lookup(const char* name) {
  const RankVariables& v = g_row->rank_variables;
  const std::string_view wanted = name;
  for (auto [variable, value] : {std::pair{v.rank, "3"}, std::pair{v.local_rank, "1"},
                                 std::pair{v.size, "8"}, std::pair{v.local_size, "4"}}) {
    if (variable != nullptr && wanted == variable) return value;
  }
  return nullptr;
}
}  // namespace

TEST_CASE("ezpz-rankenv reads each launcher's rank variables from its row", "[launcher_table]") {
  for (const LauncherRow& row : k_launchers) {
    if (row.rank_variables.rank == nullptr) continue;
    INFO("launcher " << row.name);
    g_row = &row;
    const auto assignments = map_rank_env(row.name, row_lookup);
    REQUIRE(!assignments.empty());
    CHECK(assignments.front() == std::pair<std::string, std::string>{"RANK", "3"});
    // A launcher that names no local rank or sizes leaves ezpz's exported values.
    const std::size_t named = 1 + (row.rank_variables.local_rank != nullptr) +
                              (row.rank_variables.size != nullptr) +
                              (row.rank_variables.local_size != nullptr);
    CHECK(assignments.size() == named);
  }
}

TEST_CASE("the runtime names a bare launcher's rank by its row's variables", "[launcher_table]") {
  for (const LauncherRow& row : k_launchers) {
    const RankVariables& v = row.rank_variables;
    if (v.rank == nullptr || v.size == nullptr) continue;
    INFO("launcher " << row.name);
    Env env = {{v.rank, "3"}, {v.size, "8"}};
    if (v.local_rank) env[v.local_rank] = "1";
    if (v.local_size) env[v.local_size] = "4";
    const runtime::RankInfo info = runtime::rank_info_from_env(env);
    CHECK(info.rank == 3);
    CHECK(info.world_size == 8);
    CHECK(info.source.find(std::string(row.flavours.front().name)) != std::string::npos);
  }
}
