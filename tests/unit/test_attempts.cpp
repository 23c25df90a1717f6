#include <csignal>

#include "ezpz/attempts.hpp"
#include "ezpz/error.hpp"
#include "tests/catch.hpp"

using namespace ezpz;

namespace {
const std::vector<BadNodePattern> k_patterns = {
    {"shepherd", R"(^([a-z0-9.-]+\.hsn\.cm\.aurora\.alcf\.anl\.gov):\s+shepherd\s+died\s+from\s+signal\s+9\b)"},
    {"hydra", R"(^=\s+PID \d+ RUNNING AT (\S+)$)"},
};
}  // namespace

TEST_CASE("an attempt's ending comes from signals, the watchdog, its status and its output",
          "[attempts]") {
  struct Row {
    const char* name;
    AttemptFacts facts;
    Ending ending;
    std::vector<std::string> hosts;
    const char* reason;
  };
  const Row rows[] = {
      {"clean exit", {0, false, 0, true, Watchdog::none, ""}, Ending::success, {}, "exit status 0"},
      {"the job's own error", {1, false, 0, true, Watchdog::none, "Traceback ...\nValueError\n"},
       Ending::application_error, {}, "exit status 1: the job's own failure"},
      {"SIGTERM in a job is walltime", {143, true, SIGTERM, true, Watchdog::none, ""},
       Ending::walltime, {}, "SIGTERM inside the job: walltime (or the job was cancelled)"},
      {"SIGTERM outside a job", {143, true, SIGTERM, false, Watchdog::none, ""},
       Ending::interrupted, {}, "interrupted by signal 15"},
      {"Ctrl-C", {130, true, SIGINT, true, Watchdog::none, ""}, Ending::interrupted, {},
       "interrupted by signal 2"},
      {"wall-clock limit", {124, false, 0, true, Watchdog::timeout, ""}, Ending::timeout, {},
       "the --timeout limit passed"},
      {"silent ranks", {124, false, 0, true, Watchdog::idle, ""}, Ending::hang, {},
       "no output from any rank for --idle-timeout"},
      {"a rank killed, nobody named", {137, false, 0, true, Watchdog::none, "Killed\n"},
       Ending::bad_node, {}, "exit status 137: a rank died of signal 9; no node named"},
      {"Aurora's shepherd names the node",
       {1, false, 0, true, Watchdog::none,
        "step=3\nx4102c5s2b0n0.hsn.cm.aurora.alcf.anl.gov: shepherd died from signal 9\n"
        "x4102c5s2b0n0.hsn.cm.aurora.alcf.anl.gov: shepherd died from signal 9\n"},
       Ending::bad_node, {"x4102c5s2b0n0.hsn.cm.aurora.alcf.anl.gov"},
       "exit status 1; bad node: x4102c5s2b0n0.hsn.cm.aurora.alcf.anl.gov"},
      {"Hydra names where a rank died",
       {9, false, 0, true, Watchdog::none,
        "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   PID 18592 RUNNING AT n03\n"
        "=   EXIT CODE: 9\n"},
       Ending::bad_node, {"n03"}, "exit status 9; bad node: n03"},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    Classification c = classify_attempt(row.facts, k_patterns);
    CHECK(c.ending == row.ending);
    CHECK(c.bad_hosts == row.hosts);
    CHECK(c.reason == row.reason);
  }
  CHECK(to_string(Ending::bad_node) == "bad_node");
  CHECK(to_string(Ending::walltime) == "walltime");
}

TEST_CASE("a broken signature is named", "[attempts]") {
  CHECK_THROWS_WITH(classify_attempt({1, false, 0, false, Watchdog::none, "x"}, {{"mine", "(["}}),
                    Catch::StartsWith("bad_node_patterns mine: invalid regular expression: "));
}

TEST_CASE("only node trouble is worth another attempt", "[attempts]") {
  CHECK(worth_retrying(Ending::bad_node));
  CHECK(worth_retrying(Ending::hang));
  CHECK(worth_retrying(Ending::timeout));
  CHECK_FALSE(worth_retrying(Ending::success));
  CHECK_FALSE(worth_retrying(Ending::application_error));
  CHECK_FALSE(worth_retrying(Ending::walltime));
  CHECK_FALSE(worth_retrying(Ending::interrupted));
}

TEST_CASE("back-off doubles and is capped", "[attempts]") {
  CHECK(backoff_seconds(1) == 0);
  CHECK(backoff_seconds(2) == 5);
  CHECK(backoff_seconds(3) == 10);
  CHECK(backoff_seconds(5) == 40);
  CHECK(backoff_seconds(6) == 60);
  CHECK(backoff_seconds(30) == 60);
  CHECK(backoff_seconds(3, 0.5, 1) == 1);
}

TEST_CASE("spares replace named bad nodes, or rotate blind", "[attempts]") {
  NodePool pool = split_pool({"n1", "n2", "n3", "n4", "n5"}, 2);
  CHECK(pool.active == std::vector<std::string>{"n1", "n2", "n3"});
  CHECK(pool.spares == std::vector<std::string>{"n4", "n5"});
  CHECK(replace_bad_nodes(pool, {"n2"}) == std::vector<std::string>{"n2 -> n4"});
  CHECK(pool.active == std::vector<std::string>{"n1", "n4", "n3"});
  CHECK(pool.retired == std::vector<std::string>{"n2"});
  CHECK(replace_bad_nodes(pool, {"gone"}) == std::vector<std::string>{"n1 -> n5"});  // blind
  CHECK(pool.active == std::vector<std::string>{"n5", "n4", "n3"});
  CHECK(replace_bad_nodes(pool, {"n3"}).empty());  // no spare left
  CHECK(pool.active == std::vector<std::string>{"n5", "n4", "n3"});

  NodePool two = split_pool({"a", "b", "c", "d"}, 2);
  CHECK(replace_bad_nodes(two, {"b", "a"}) == std::vector<std::string>{"b -> c", "a -> d"});
  CHECK(two.active == std::vector<std::string>{"d", "c"});

  CHECK_THROWS_WITH(split_pool({"a", "b"}, 2),
                    "--spares 2: the allocation has 2 hosts; at least one must stay active");
  CHECK_THROWS_WITH(split_pool({"a"}, 1),
                    "--spares 1: the allocation has 1 host; at least one must stay active");
}
