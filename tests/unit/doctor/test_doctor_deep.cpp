// `ezpz doctor --deep` (probe lines in, node verdicts out) and the report's
// two renderings.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ezpz/core/allocation.hpp"
#include "ezpz/doctor/doctor_deep.hpp"
#include "ezpz/doctor/doctor_report.hpp"
#include "tests/catch.hpp"

using namespace ezpz;
using namespace ezpz::doctor;

namespace {

constexpr std::uint64_t k_gib = 1024ull * 1024 * 1024;

NodeReport node(std::string host, int nvidia = 0, bool joined = true, int size = 2) {
  NodeReport r;
  r.host = std::move(host);
  r.hostname = "machine";
  r.nvidia = nvidia;
  r.target = "/tmp";
  r.writable = true;
  r.free_bytes = 20 * k_gib;
  r.load1 = 0.5;
  r.cores = 8;
  r.joined = joined;
  r.size = joined ? size : 0;
  r.sum = joined ? size : 0;
  return r;
}

DeepRun run_on(std::vector<std::string> hosts, int status = 0, bool timed_out = false) {
  DeepRun run;
  run.hosts = std::move(hosts);
  run.launcher = "srun";
  run.exit_status = status;
  run.timed_out = timed_out;
  run.timeout_s = 60;
  run.failed_nodes_file = "/r/failed-nodes-7.txt";
  return run;
}

std::vector<std::string> messages(const DeepVerdict& v) {
  std::vector<std::string> lines;
  for (const NodeVerdict& n : v.nodes) {
    lines.push_back(fmt::format("{} {} {}", n.host, to_string(n.status), n.message));
  }
  return lines;
}

const std::string k_exclude =
    "leave them out: ezpz launch --exclude-file /r/failed-nodes-7.txt ...";

}  // namespace

TEST_CASE("doctor --deep: probe lines from interleaved, prefixed rank output", "[doctor]") {
  std::string text =
      R"({"ezpz_probe":"node","host":"n01","hostname":"h1","nvidia":4,"dri":0,"target":"/tmp",)"
      R"("writable":true,"free_bytes":1000,"target_error":"","load1":0.25,"cores":64})"
      "\n"
      "srun: warning: something\n"
      R"(1: {"ezpz_probe":"node","host":"n02.x","hostname":"h2","nvidia":0,"dri":6,"target":"/tmp",)"
      R"("writable":false,"free_bytes":0,"target_error":"/tmp: Permission denied","load1":1.5,)"
      R"("cores":64})"
      "\n"
      R"({"ezpz_probe":"allreduce","host":"n01","rank":0,"size":2,"sum":2})"
      "\n"
      R"({"not_probe":"node","host":"n09"})"
      "\n"
      R"({"ezpz_probe":"allreduce","host":"n02.x","rank":1,"size)"  // cut short: ignored
      "\n"
      R"({"ezpz_probe":"node","host":"n03","nvidia":"four"})"  // another version's: ignored
      "\n"
      R"({"ezpz_probe":"allreduce","host":"n02.x","size":"2"})"  // nothing of it kept
      "\n";
  std::vector<NodeReport> reports = parse_probe_output(text);
  REQUIRE(reports.size() == 2);
  NodeReport n01;
  n01.host = "n01";
  n01.hostname = "h1";
  n01.nvidia = 4;
  n01.target = "/tmp";
  n01.writable = true;
  n01.free_bytes = 1000;
  n01.load1 = 0.25;
  n01.cores = 64;
  n01.joined = true;
  n01.size = 2;
  n01.sum = 2;
  CHECK(reports[0] == n01);
  CHECK(reports[1].host == "n02.x");
  CHECK(reports[1].gpus() == 6);
  CHECK(reports[1].target_error == "/tmp: Permission denied");
  CHECK_FALSE(reports[1].joined);
  CHECK(parse_probe_output("").empty());
}

TEST_CASE("doctor --deep: every node answers and joins", "[doctor]") {
  DeepVerdict v = judge_nodes(run_on({"n01", "n02"}), {node("n02"), node("n01.cluster")});
  CHECK(v.check == CheckResult{"nodes", Status::ok,
                               "2 of 2 nodes answered and joined the all-reduce; 0 GPUs each", ""});
  CHECK(v.failed.empty());
  CHECK(messages(v) ==
        std::vector<std::string>{
            "n01 ok 0 GPUs, /tmp 20.0 GiB free, load 0.50 on 8 cores, all-reduce ok (size 2)",
            "n02 ok 0 GPUs, /tmp 20.0 GiB free, load 0.50 on 8 cores, all-reduce ok (size 2)"});
}

TEST_CASE("doctor --deep: one node, one GPU, said in the singular", "[doctor]") {
  DeepVerdict v = judge_nodes(run_on({"n01"}), {node("n01", 1, true, 1)});
  CHECK(v.check.message == "1 of 1 node answered and joined the all-reduce; 1 GPU each");
  CHECK(messages(v) == std::vector<std::string>{
                           "n01 ok 1 GPU, /tmp 20.0 GiB free, load 0.50 on 8 cores, all-reduce ok "
                           "(size 1)"});
}

TEST_CASE("doctor --deep: a node that never answers is named, its peers are not", "[doctor]") {
  DeepVerdict v =
      judge_nodes(run_on({"n01", "n02", "n03"}, 1), {node("n01", 0, false), node("n02", 0, false)});
  CHECK(v.check == CheckResult{"nodes", Status::error, "1 of 3 nodes failed: n03", k_exclude});
  CHECK(v.failed == std::vector<std::string>{"n03"});
  CHECK(messages(v) ==
        std::vector<std::string>{
            "n01 warn 0 GPUs, /tmp 20.0 GiB free, load 0.50 on 8 cores, all-reduce not done",
            "n02 warn 0 GPUs, /tmp 20.0 GiB free, load 0.50 on 8 cores, all-reduce not done",
            "n03 error no report: the launcher exited with status 1"});

  DeepVerdict late = judge_nodes(run_on({"n01", "n02"}, 143, true), {node("n01", 0, false)});
  CHECK(late.failed == std::vector<std::string>{"n02"});
  CHECK(late.nodes[1].message == "no report: the launch was stopped after 60 s");
}

TEST_CASE("doctor --deep: faults of the launch itself blame no node", "[doctor]") {
  DeepVerdict none = judge_nodes(run_on({"n01", "n02"}, 143, true), {});
  CHECK(none.check ==
        CheckResult{"nodes", Status::error,
                    "no node answered: the probe launch was stopped after 60 s",
                    "run ezpz doctor --deep --dry-run, then that command by hand, to see why"});
  CHECK(none.failed.empty());
  DeepVerdict exited = judge_nodes(run_on({"n01"}, 127), {});
  CHECK(exited.check.message == "no node answered: the probe launch exited with status 127");

  DeepVerdict stuck = judge_nodes(run_on({"n01", "n02"}, 143, true),
                                  {node("n01", 0, false), node("n02", 0, false)});
  CHECK(stuck.check ==
        CheckResult{"nodes", Status::error,
                    "every node answered, but the all-reduce never completed: MPI could not "
                    "connect the nodes",
                    "check that the launcher gives ezpz-probe's MPI its process manager (srun: "
                    "--launcher-arg=--mpi=pmi2), and that the nodes reach each other"});
  CHECK(stuck.failed.empty());

  DeepVerdict singletons =
      judge_nodes(run_on({"n01", "n02"}), {node("n01", 0, true, 1), node("n02", 0, true, 1)});
  CHECK(singletons.check ==
        CheckResult{"nodes", Status::error,
                    "the probes did not form one MPI job: n01 saw size 1 and sum 1, expected 2",
                    "the launcher and ezpz-probe's MPI disagree on the process manager (srun: "
                    "--launcher-arg=--mpi=pmi2)"});
  CHECK(singletons.failed.empty());

  // A node missing: it is the fault, whatever MPI size the others saw alone.
  DeepVerdict alone = judge_nodes(run_on({"n01", "n02"}, 1), {node("n01", 0, true, 1)});
  CHECK(alone.check == CheckResult{"nodes", Status::error, "1 of 2 nodes failed: n02", k_exclude});
  CHECK(alone.failed == std::vector<std::string>{"n02"});
}

TEST_CASE("doctor --deep: nodes that disagree or lack space are named", "[doctor]") {
  NodeReport full = node("n02", 4);
  full.free_bytes = k_gib;
  NodeReport readonly = node("n04", 4);
  readonly.writable = false;
  NodeReport broken = node("n05", 4);
  broken.target_error = "/tmp: Input/output error";
  DeepRun run = run_on({"n01", "n02", "n03", "n04", "n05"});
  run.needed_bytes = 2 * k_gib;
  std::vector<NodeReport> reports = {node("n01", 4, true, 5), full, node("n03", 2, true, 5),
                                     readonly, broken};
  for (NodeReport& r : reports) r.size = r.sum = 5;
  DeepVerdict v = judge_nodes(run, reports);
  CHECK(v.check ==
        CheckResult{"nodes", Status::error, "4 of 5 nodes failed: n02, n03, n04, n05", k_exclude});
  CHECK(v.failed == std::vector<std::string>{"n02", "n03", "n04", "n05"});
  CHECK(messages(v) ==
        std::vector<std::string>{
            "n01 ok 4 GPUs, /tmp 20.0 GiB free, load 0.50 on 8 cores, all-reduce ok (size 5)",
            "n02 error /tmp has 1.0 GiB free, the environment needs 2.0 GiB",
            "n03 error 2 GPUs, most nodes have 4", "n04 error /tmp is not writable",
            "n05 error /tmp: Input/output error"});
}

TEST_CASE("doctor --deep: a node that fails the all-reduce its peers finished", "[doctor]") {
  DeepVerdict v =
      judge_nodes(run_on({"n01", "n02", "n03"}, 1),
                  {node("n01", 0, true, 3), node("n02", 0, false), node("n03", 0, true, 3)});
  CHECK(v.failed == std::vector<std::string>{"n02"});
  CHECK(v.nodes[1].message == "did not join the all-reduce");
}

TEST_CASE("doctor --deep: warnings: busy nodes, a failing launcher", "[doctor]") {
  NodeReport busy = node("n02");
  busy.load1 = 17;
  DeepVerdict v = judge_nodes(run_on({"n01", "n02"}), {node("n01"), busy});
  CHECK(v.check == CheckResult{"nodes", Status::warn,
                               "2 of 2 nodes answered and joined the all-reduce; 0 GPUs each; "
                               "busy: n02",
                               "something else runs there: check with top or ps on those nodes"});
  CHECK(v.nodes[1].message ==
        "busy: 0 GPUs, /tmp 20.0 GiB free, load 17.00 on 8 cores, all-reduce ok (size 2)");
  CHECK(v.failed.empty());
  DeepVerdict exit = judge_nodes(run_on({"n01", "n02"}, 3), {node("n01"), node("n02")});
  CHECK(exit.check == CheckResult{"nodes", Status::warn,
                                  "2 of 2 nodes answered and joined the all-reduce; 0 GPUs each; "
                                  "but the launcher exited with status 3",
                                  "read the launcher's messages above"});
}

TEST_CASE("doctor --deep: the failed-nodes file, as --exclude-file reads it", "[doctor]") {
  CHECK(failed_nodes_text({"n03", "n07"}, "17") ==
        "# ezpz doctor --deep: nodes that failed (job 17); for ezpz launch --exclude-file\n"
        "n03\nn07\n");
  CHECK(failed_nodes_text({}, "") ==
        "# ezpz doctor --deep: nodes that failed (no job); for ezpz launch --exclude-file\n");
  CHECK(parse_hostfile(failed_nodes_text({"n03", "n07"}, "17")) ==
        std::vector<std::string>{"n03", "n07"});
  CHECK(default_failed_nodes_path({{"EZPZ_RUN_DIR", "/r"}, {"HOME", "/h"}}, "17") ==
        "/r/failed-nodes-17.txt");
  CHECK(default_failed_nodes_path({{"HOME", "/h"}}, "") ==
        "/h/.cache/ezpz/doctor/failed-nodes-local.txt");
  CHECK(default_failed_nodes_path({}, "17") == std::nullopt);
}

namespace {

Report small_report() {
  Report r;
  r.checks = {{"scheduler", Status::ok, "local: this host alone (nothing detected)", ""},
              {"port", Status::warn, "MASTER_PORT=1 cannot be bound", "unset MASTER_PORT"},
              {"trainer", Status::error, "ezpz-smoke --probe died of signal 9", "run it by hand"}};
  r.context = {{"user", "alice"}, {"host", "x1"}};
  r.elapsed_s = 0.6234;
  return r;
}

}  // namespace

TEST_CASE("doctor report: aligned text, remedies under problems, no colour unless asked",
          "[doctor]") {
  CHECK(render_text(small_report(), false) ==
        "ezpz doctor\n"
        "  user      alice\n"
        "  host      x1\n"
        "\n"
        "  ok     scheduler  local: this host alone (nothing detected)\n"
        "  WARN   port       MASTER_PORT=1 cannot be bound\n"
        "                    -> unset MASTER_PORT\n"
        "  ERROR  trainer    ezpz-smoke --probe died of signal 9\n"
        "                    -> run it by hand\n"
        "\n"
        "3 checks: 1 ok, 1 warning, 1 error (0.62 s)\n");
  std::string colored = render_text(small_report(), true);
  CHECK(colored.find("\033[32mok   \033[0m  scheduler  local") != std::string::npos);
  CHECK(colored.find("\033[33mWARN \033[0m  port") != std::string::npos);
  CHECK(colored.find("\033[1;31mERROR\033[0m  trainer") != std::string::npos);
  CHECK(render_text(small_report(), false).find('\033') == std::string::npos);
}

TEST_CASE("doctor report: --deep's nodes and the failed-nodes file", "[doctor]") {
  Report r = small_report();
  r.deep = judge_nodes(run_on({"n01", "n02"}, 1), {node("n01", 0, false)});
  r.checks.push_back(r.deep->check);
  r.failed_nodes_file = "/r/failed-nodes-7.txt";
  std::string text = render_text(r, false);
  CHECK(text.find("\nnodes (2 launched)\n"
                  "  WARN   n01  0 GPUs, /tmp 20.0 GiB free, load 0.50 on 8 cores, all-reduce not "
                  "done\n"
                  "  ERROR  n02  no report: the launcher exited with status 1\n"
                  "failed nodes (1) written to /r/failed-nodes-7.txt\n") != std::string::npos);
  CHECK(text.ends_with("4 checks: 1 ok, 1 warning, 2 errors (0.62 s)\n"));

  auto j = nlohmann::json::parse(render_json(r));
  CHECK(j["checks"].size() == 4);
  CHECK(j["checks"][0] == nlohmann::json{{"name", "scheduler"},
                                         {"status", "ok"},
                                         {"message", "local: this host alone (nothing detected)"},
                                         {"remedy", nullptr}});
  CHECK(j["checks"][3]["name"] == "nodes");
  CHECK(j["checks"][3]["remedy"] == k_exclude);
  CHECK(j["context"] == nlohmann::json{{"user", "alice"}, {"host", "x1"}});
  CHECK(j["nodes"][1] == nlohmann::json{{"host", "n02"},
                                        {"status", "error"},
                                        {"message", "no report: the launcher exited with status 1"},
                                        {"report", nullptr}});
  CHECK(j["nodes"][0]["report"]["joined"] == false);
  CHECK(j["nodes"][0]["report"]["free_bytes"] == 20 * k_gib);
  CHECK(j["failed_nodes"] == nlohmann::json{"n02"});
  CHECK(j["failed_nodes_file"] == "/r/failed-nodes-7.txt");
  CHECK(j["elapsed_s"] == 0.6234);
  CHECK_FALSE(nlohmann::json::parse(render_json(small_report())).contains("nodes"));
}

TEST_CASE("doctor report: the context block", "[doctor]") {
  Snapshot s;
  s.env = {{"VIRTUAL_ENV", "/p/venv"}};
  s.hostname = "x1";
  s.user = "alice";
  s.ezpz_version = "0.1.0 (abc)";
  s.scheduler = SchedulerKind::slurm;
  s.allocation = Allocation{SchedulerKind::slurm, "17", {"x1"}, std::nullopt, "", ""};
  s.launcher_program = "srun";
  s.launcher_path = "/usr/bin/srun";
  s.launcher_version.exit_code = 0;
  s.launcher_version.out = "slurm 22.05.8\n";
  s.trainer_probe.exit_code = 0;
  s.trainer_probe.out = R"({"libtorch":"1.13.0","devices":{"cpu":1},"backends":["gloo"]})";
  s.profile_files = {{"/m/generic-slurm.yaml", "scheduler: slurm\nlauncher: srun\n"}};
  s.python.python3 = "/p/venv/bin/python3";
  s.python.imports.exit_code = 0;
  s.python.imports.out = R"({"python": "3.11.2", "torch": "2.1.0"})";
  CHECK(context_of(s, derive(s)) == ContextList{{"user", "alice"},
                                                {"host", "x1"},
                                                {"machine", "generic-slurm"},
                                                {"job", "slurm 17"},
                                                {"ezpz", "0.1.0 (abc)"},
                                                {"libtorch", "1.13.0"},
                                                {"torch", "2.1.0"},
                                                {"launcher", "Slurm 22.05.8 (/usr/bin/srun)"},
                                                {"python", "/p/venv"}});
  s.python.imports.out = R"({"python": 3, "torch": 1})";  // not the probe's: no crash
  CHECK(context_of(s, derive(s))[6] == std::pair<std::string, std::string>{"torch", "-"});
  Snapshot bare;
  bare.hostname = "x1";
  CHECK(context_of(bare, derive(bare)) == ContextList{{"user", "-"},
                                                      {"host", "x1"},
                                                      {"machine", "-"},
                                                      {"job", "-"},
                                                      {"ezpz", ""},
                                                      {"libtorch", "-"},
                                                      {"torch", "-"},
                                                      {"launcher", "-"},
                                                      {"python", "-"}});
}
