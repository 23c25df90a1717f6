// Which run records go (lib/ezpz/run_prune): EZPZ_RUNS_KEEP, ages, the newest N,
// and never a run that may still be going.
#include "ezpz/supervise/run_prune.hpp"

#include <map>

#include "tests/catch.hpp"

namespace ezpz {
namespace {

using std::chrono::seconds;

TEST_CASE("EZPZ_RUNS_KEEP: a count, all, or a warning that keeps everything", "[prune]") {
  CHECK(runs_kept({}).newest == k_default_runs_kept);
  CHECK(runs_kept({{"EZPZ_RUNS_KEEP", "7"}}).newest == 7u);
  CHECK(runs_kept({{"EZPZ_RUNS_KEEP", ""}}).newest == k_default_runs_kept);  // empty is unset
  CHECK_FALSE(runs_kept({{"EZPZ_RUNS_KEEP", "all"}}).newest);
  CHECK(runs_kept({{"EZPZ_RUNS_KEEP", "all"}}).warning.empty());
  for (const char* bad : {"0", "-1", "ten", "5x"}) {
    INFO(bad);
    RunsKept kept = runs_kept({{"EZPZ_RUNS_KEEP", bad}});
    CHECK_FALSE(kept.newest);
    CHECK(kept.warning == std::string("EZPZ_RUNS_KEEP=") + bad +
                              ": expected a number of runs (1 or more) or all; every run record "
                              "is kept");
  }
}

TEST_CASE("ages take a unit", "[prune]") {
  CHECK(parse_age("90s") == seconds(90));
  CHECK(parse_age("30m") == seconds(1800));
  CHECK(parse_age("12h") == seconds(43200));
  CHECK(parse_age("7d") == seconds(604800));
  CHECK(parse_age("2w") == seconds(1209600));
  CHECK(parse_age("0d") == seconds(0));
  for (const char* bad : {"", "7", "d", "7y", "-1d", "1.5h", "99999999999999999w"}) {
    INFO(bad);
    CHECK_FALSE(parse_age(bad));
  }
}

TEST_CASE("the newest N are kept, whatever order the directory lists them in", "[prune]") {
  const std::vector<std::string> names = {"20261122-095931-n01-1", "20261123-080000-n01-9",
                                          "20261122-095931-n01-1-2", "20261121-120000-n02-4"};
  std::vector<std::string> asked;  // of started_ns: only runs that share their second
  const StartedNs started_ns = [&](const std::string& name) {
    asked.push_back(name);
    return name.ends_with("-2") ? 2 : 1;
  };
  CHECK(beyond_newest(names, 2, started_ns) ==
        std::vector<std::string>{"20261122-095931-n01-1", "20261121-120000-n02-4"});
  CHECK(asked == std::vector<std::string>{"20261122-095931-n01-1-2", "20261122-095931-n01-1"});
  asked.clear();
  CHECK(beyond_newest(names, 1, started_ns) == std::vector<std::string>{"20261122-095931-n01-1-2",
                                                                        "20261122-095931-n01-1",
                                                                        "20261121-120000-n02-4"});
  CHECK(asked.empty());  // the cut between two seconds: no run.json read
  CHECK(beyond_newest(names, 9, started_ns).empty());
  // no --keep: every one is a candidate
  CHECK(beyond_newest(names, std::nullopt, started_ns).size() == 4);
  CHECK(beyond_newest(names, 0, started_ns).front() == "20261123-080000-n01-9");
}

// Within one second the pids would decide, and they wrap ("999" sorts after "1000"): the run
// that started later is kept, as `ezpz runs` lists it first.
TEST_CASE("within one second, the run that started last is the newest", "[prune]") {
  const std::vector<std::string> names = {"20261122-095931-n01-999", "20261122-095931-n01-1000",
                                          "20261122-095930-n01-5", "20261122-095931-n01-7"};
  const std::map<std::string, std::int64_t> started = {{"20261122-095931-n01-999", 10},
                                                       {"20261122-095931-n01-1000", 30},
                                                       {"20261122-095931-n01-7", 20}};
  const StartedNs started_ns = [&](const std::string& name) { return started.at(name); };
  CHECK(beyond_newest(names, 1, started_ns) == std::vector<std::string>{"20261122-095931-n01-7",
                                                                        "20261122-095931-n01-999",
                                                                        "20261122-095930-n01-5"});
  // Records without started_ns (0): the id decides, as before.
  const StartedNs none = [](const std::string&) { return std::int64_t{0}; };
  CHECK(beyond_newest(names, 1, none) == std::vector<std::string>{"20261122-095931-n01-7",
                                                                  "20261122-095931-n01-1000",
                                                                  "20261122-095930-n01-5"});
}

TEST_CASE("a launch prunes once the records exceed the kept count by a tenth", "[prune]") {
  struct Row {
    std::size_t records, keep;
    bool due;
  };
  for (const Row& row : {Row{50, 50, false}, Row{55, 50, false}, Row{56, 50, true}, Row{3, 2, true},
                         Row{2, 2, false}, Row{10, 9, true}, Row{11, 10, false}, Row{12, 10, true},
                         Row{10, 10, false}, Row{0, 1, false}}) {
    INFO(row.records << " records, " << row.keep << " kept");
    CHECK(prune_due(row.records, row.keep) == row.due);
  }
}

TEST_CASE("only a run that is over, unlocked and old enough goes", "[prune]") {
  const PruneRule any{.keep = std::nullopt, .older_than = std::nullopt};
  const PruneRule week{.keep = std::nullopt, .older_than = seconds(604800)};
  CHECK(prunable(RunState::finished, false, seconds(1), any));
  CHECK(prunable(RunState::lost, false, seconds(1), any));
  CHECK(prunable(RunState::finished, std::nullopt, seconds(1), any));  // no lock file to probe
  CHECK_FALSE(prunable(RunState::finished, true, seconds(1), any));    // its ezpz is still exiting
  CHECK_FALSE(prunable(RunState::running, true, seconds(1), any));
  CHECK_FALSE(prunable(RunState::elsewhere, std::nullopt, seconds(1), any));  // may run there
  CHECK_FALSE(prunable(RunState::unknown, std::nullopt, seconds(1), any));
  CHECK_FALSE(prunable(RunState::finished, false, seconds(604799), week));
  CHECK(prunable(RunState::finished, false, seconds(604800), week));
}

}  // namespace
}  // namespace ezpz
