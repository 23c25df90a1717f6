#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ezpz/smoke/report.hpp"
#include "tests/catch.hpp"

using namespace ezpz::report;

namespace {

StepRecord record(int step, double loss, double step_s) {
  StepRecord r;
  r.step = step;
  r.loss = loss;
  r.step_s = step_s;
  r.samples_per_s = 256 / step_s;
  return r;
}

}  // namespace

TEST_CASE("statistics: mean, min, max and population std", "[report]") {
  Stats empty = summarize({});
  CHECK(empty.count == 0);
  CHECK(empty.mean == 0);
  Stats s = summarize({1, 2, 3, 4});
  CHECK(s.count == 4);
  CHECK(s.mean == 2.5);
  CHECK(s.min == 1);
  CHECK(s.max == 4);
  CHECK(s.std == Approx(std::sqrt(1.25)));
}

TEST_CASE("a metrics.jsonl line is one JSON object with every measurement", "[report]") {
  StepRecord r{3, 2.5, 0.004, 0.0005, 0.001, 0.002, 0.00025, 0.00025, 64000};
  CHECK(
      step_json(r) ==
      R"({"step":3,"loss":2.5,"step_s":0.004,"data_s":0.0005,"forward_s":0.001,)"
      R"("backward_s":0.002,"allreduce_s":0.00025,"optimizer_s":0.00025,"samples_per_s":64000.0})");
}

TEST_CASE("the summary table leaves out warm-up steps and shows ms", "[report]") {
  std::vector<StepRecord> steps = {record(1, 9, 1.0), record(2, 2, 0.002), record(3, 1, 0.004)};
  std::vector<MetricSummary> rows = summarize_steps(steps, 1);
  REQUIRE(rows.size() == 8);
  CHECK(rows[0].name == "loss");
  CHECK(rows[0].stats.mean == 1.5);
  CHECK(rows[1].name == "step time (ms)");
  CHECK(rows[1].stats.max == Approx(4));
  CHECK(rows[7].name == "samples/s");
  CHECK(rows[7].stats.min == Approx(64000));
  std::vector<MetricSummary> two = {rows[0], rows[1]};
  CHECK(summary_table(two) ==
        "| metric | mean | min | max | std |\n"
        "|---|---:|---:|---:|---:|\n"
        "| loss | 1.5000 | 1.0000 | 2.0000 | 0.5000 |\n"
        "| step time (ms) | 3.000 | 2.000 | 4.000 | 1.000 |\n");
}

TEST_CASE("a text plot puts the extremes on the top and bottom rows", "[report]") {
  CHECK(text_plot({3, 2, 1}, "loss", 60, 3) ==
        "loss (steps 1-3)\n"
        "         3 +*  \n"
        "           | * \n"
        "         1 +  *\n"
        "           +---\n"
        "            1 3\n");
  // Columns average the steps they cover: 4 steps in 2 columns.
  CHECK(text_plot({4, 2, 1, 1}, "x", 2, 2) ==
        "x (steps 1-4)\n"
        "         3 +* \n"
        "         1 + *\n"
        "           +--\n"
        "            14\n");
  CHECK(text_plot({5, 5}, "flat", 10, 2) ==
        "flat (steps 1-2)\n"
        "         5 +  \n"
        "         5 +**\n"
        "           +--\n"
        "            12\n");
  CHECK(text_plot({30240, 15620}, "samples/s", 2, 2) ==
        "samples/s (steps 1-2)\n"
        "     30240 +* \n"
        "     15620 + *\n"
        "           +--\n"
        "            12\n");
  CHECK(text_plot({}, "none") == "none: no data\n");
}

TEST_CASE("the loss check compares the run's first and last windows", "[report]") {
  std::vector<double> falling = {9, 9, 4, 4, 3, 3, 2, 2, 1, 1};
  LossCheck check = check_loss(falling);
  CHECK(check.fell);
  CHECK(check.first_from == 1);
  CHECK(check.first_to == 2);
  CHECK(check.last_from == 9);
  CHECK(check.last_to == 10);
  CHECK(check.describe() == "mean 9.0000 over steps 1-2, 1.0000 over steps 9-10");
  // Converged early, then noise: still a fall from the untrained loss.
  std::vector<double> converged(300, 0.004);
  converged[0] = 2.3;
  converged[299] = 0.017;
  CHECK(check_loss(converged).fell);
  CHECK_FALSE(check_loss({1, 2, 3, 4}).fell);
  CHECK_FALSE(check_loss({2, 2, 2, 2}).fell);
  double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK_FALSE(check_loss({2, 1, nan, nan}).fell);
  // Windows are capped at 10 steps.
  std::vector<double> long_run(100, 1.0);
  long_run[0] = 2;
  LossCheck capped = check_loss(long_run);
  CHECK(capped.first_to == 10);
  CHECK(capped.last_from == 91);
  CHECK(capped.fell);
  CHECK_FALSE(check_loss({1}).fell);
}

TEST_CASE("fingerprints: equal bytes agree, one flipped bit does not", "[report]") {
  std::vector<float> a = {1.0f, 2.0f, 3.0f};
  std::vector<float> b = a;
  CHECK(fingerprint(a.data(), 12, 0) == fingerprint(b.data(), 12, 0));
  b[2] = std::nextafter(3.0f, 4.0f);
  CHECK(fingerprint(a.data(), 12, 0) != fingerprint(b.data(), 12, 0));
  // The tail after the last whole word counts, and so does the chain's seed.
  CHECK(fingerprint(a.data(), 12, 0) != fingerprint(a.data(), 8, 0));
  CHECK(fingerprint(a.data(), 12, 0) != fingerprint(a.data(), 12, 1));
  CHECK(fingerprint(nullptr, 0, 7) == fingerprint(nullptr, 0, 7));
}

TEST_CASE("the verdict needs identical parameters and a falling loss", "[report]") {
  LossCheck fell{true, 2.0, 0.5, 6, 15, 91, 100};
  LossCheck flat{false, 2.0, 2.0, 6, 15, 91, 100};
  Summary pass = judge(true, fell);
  CHECK(pass.passed);
  CHECK(pass.reason ==
        "parameters identical on every rank; loss fell (mean 2.0000 over steps 6-15, 0.5000 over "
        "steps 91-100)");
  CHECK(judge(false, fell).reason == "parameters differ between ranks after training");
  CHECK(judge(true, flat).reason ==
        "loss did not fall (mean 2.0000 over steps 6-15, 2.0000 over steps 91-100)");
  Summary both = judge(false, flat);
  CHECK_FALSE(both.passed);
  CHECK_FALSE(both.params_identical);
  CHECK_FALSE(both.loss_fell);
  CHECK(both.reason ==
        "parameters differ between ranks after training; loss did not fall (mean 2.0000 over "
        "steps 6-15, 2.0000 over steps 91-100)");
}

TEST_CASE("summary.json carries the fields ezpz test reads", "[report]") {
  Summary s = judge(true, {true, 2.0, 0.5, 6, 15, 91, 100});
  s.world_size = 2;
  s.samples_per_s = 1000.5;
  s.final_loss = 0.25;
  s.first_loss = 2.5;
  s.steps = 100;
  s.output_dir = "/tmp/out";
  s.report = "/tmp/out/report.md";
  s.machine = {.hostname = "n01",
               .device = "cpu",
               .backend = "gloo",
               .libtorch = "1.13.0",
               .ranks_per_node = 2,
               .threads = 1};
  CHECK(summary_json(s) ==
        "{\n"
        "  \"status\": \"pass\",\n"
        "  \"reason\": \"parameters identical on every rank; loss fell (mean 2.0000 over steps "
        "6-15, 0.5000 over steps 91-100)\",\n"
        "  \"world_size\": 2,\n"
        "  \"samples_per_s\": 1000.5,\n"
        "  \"final_loss\": 0.25,\n"
        "  \"first_loss\": 2.5,\n"
        "  \"steps\": 100,\n"
        "  \"output_dir\": \"/tmp/out\",\n"
        "  \"report\": \"/tmp/out/report.md\",\n"
        "  \"params_identical\": true,\n"
        "  \"loss_fell\": true,\n"
        "  \"trained\": true,\n"
        "  \"machine\": {\n"
        "    \"hostname\": \"n01\",\n"
        "    \"device\": \"cpu\",\n"
        "    \"backend\": \"gloo\",\n"
        "    \"libtorch\": \"1.13.0\",\n"
        "    \"ranks_per_node\": 2,\n"
        "    \"threads\": 1\n"
        "  }\n"
        "}\n");
}

TEST_CASE("summary.json carries the collectives by name and size", "[report]") {
  Summary s = judge_collectives_only();
  s.collectives = {{Collective::all_reduce, 1024, 100e-6, 2},
                   {Collective::all_reduce, 4096, 100e-6, 2},
                   {Collective::all_gather, 1024, 50e-6, 2}};
  nlohmann::json j = nlohmann::json::parse(summary_json(s));
  CHECK(j["status"] == "pass");
  CHECK(j["trained"] == false);
  CHECK(j["reason"] == "collectives measured; training skipped (--collectives-only)");
  CHECK(j["collectives"]["all_reduce"]["latency_us"].get<double>() == Approx(100));
  CHECK(j["collectives"]["all_reduce"]["peak_busbw_gbs"].get<double>() == Approx(0.04096));
  CHECK(j["collectives"]["all_reduce"]["sizes"].size() == 2);
  CHECK(j["collectives"]["all_gather"]["sizes"][0]["bytes"] == 1024);
  CHECK(j["collectives"]["all_gather"]["sizes"][0]["busbw_gbs"].get<double>() == Approx(0.01024));
  CHECK_FALSE(nlohmann::json::parse(summary_json(Summary{})).contains("collectives"));
}

TEST_CASE("report.md: the collectives' table and plot; without training, no training sections",
          "[report]") {
  ReportInputs in;
  in.summary = judge_collectives_only();
  in.summary.collectives = {{Collective::all_reduce, 1024, 100e-6, 2}};
  std::string md = report_markdown(in);
  CHECK(md.find("## Collectives\n\nMean time of one operation (the slowest rank's), algorithm "
                "bandwidth S/t and bus bandwidth as nccl-tests defines them") != std::string::npos);
  CHECK(md.find("| all_reduce | 1 KiB | 100.0 | 0.010 | 0.010 |\n") != std::string::npos);
  CHECK(md.find("```text\nbus bandwidth by message size") != std::string::npos);
  CHECK(md.find("## Checks") == std::string::npos);
  CHECK(md.find("## Loss") == std::string::npos);
  CHECK(md.substr(md.size() - 5) == "\n```\n");
  CHECK(console_summary(in).rfind("| collective | size |", 0) == 0);
}

TEST_CASE("report.md has status, configuration, environment, checks, table and plots", "[report]") {
  ReportInputs in;
  in.configuration = {{"layers", "784-512-10"}};
  in.environment = {{"hostname", "n01"}};
  in.steps = {record(1, 3, 0.01), record(2, 2, 0.004), record(3, 1, 0.004)};
  in.warmup = 1;
  in.loss = check_loss({3, 2, 1});
  in.fingerprint = "fingerprint 00000000000000ff on every rank";
  in.summary = judge(true, in.loss);
  std::string md = report_markdown(in);
  CHECK(md.rfind("# ezpz-smoke report\n\nStatus: **PASS**: parameters identical", 0) == 0);
  CHECK(md.find("## Configuration\n\n| | |\n|---|---|\n| layers | `784-512-10` |\n") !=
        std::string::npos);
  CHECK(md.find("| hostname | `n01` |") != std::string::npos);
  CHECK(md.find("- parameters identical on every rank: yes (fingerprint 00000000000000ff on "
                "every rank)\n- loss fell: yes (mean 3.0000 over steps 1-1, 1.0000 over steps "
                "3-3)\n") != std::string::npos);
  CHECK(md.find("## Summary over steps 2-3 (step 1 is warm-up)\n") != std::string::npos);
  CHECK(md.find("## Loss\n\n```text\nloss (steps 1-3)\n") != std::string::npos);
  CHECK(md.find("## Throughput\n\n```text\nsamples/s (steps 1-3)\n") != std::string::npos);
  std::string console = console_summary(in);
  CHECK(console.rfind("Summary over steps 2-3 (step 1 is warm-up):\n\n| metric |", 0) == 0);
  CHECK(console.find("loss (steps 1-3)\n") != std::string::npos);
}
