#include "ezpz/core/error.hpp"
#include "ezpz/smoke/compare.hpp"
#include "tests/catch.hpp"

using namespace ezpz::report;
using Lines = std::vector<std::string>;

namespace {

const char* k_laptop = R"({
  "status": "pass", "reason": "parameters identical", "world_size": 2,
  "samples_per_s": 1000.0, "output_dir": "/a", "report": "/a/report.md",
  "machine": {"hostname": "laptop", "device": "cpu", "backend": "gloo", "ranks_per_node": 2},
  "collectives": {"all_reduce": {"latency_us": 100.0, "peak_busbw_gbs": 1.0,
    "sizes": [{"bytes": 1024, "time_us": 100.0, "algbw_gbs": 0.01, "busbw_gbs": 0.01},
              {"bytes": 1048576, "time_us": 1000.0, "algbw_gbs": 1.0, "busbw_gbs": 1.0}]}}
})";

const char* k_node = R"({
  "status": "pass", "reason": "other words", "world_size": 2,
  "samples_per_s": 1500.0, "output_dir": "/b", "report": "/b/report.md",
  "machine": {"hostname": "x1000c0s0b0n0", "device": "cuda:0", "backend": "nccl",
              "ranks_per_node": 2},
  "collectives": {"all_reduce": {"latency_us": 100.0, "peak_busbw_gbs": 20.0,
    "sizes": [{"bytes": 1024, "time_us": 20.0, "algbw_gbs": 0.05, "busbw_gbs": 0.05},
              {"bytes": 1048576, "time_us": 50.0, "algbw_gbs": 20.0, "busbw_gbs": 20.0}]},
    "all_gather": {"latency_us": 10.0}}
})";

}  // namespace

TEST_CASE("--compare prints what differs between two summaries, in order", "[compare]") {
  CHECK(compare_summaries({"a", k_laptop}, {"b", k_node}) ==
        Lines{
            "samples_per_s: 1000 -> 1500 (+50.0%)",
            "machine.hostname: laptop -> x1000c0s0b0n0",
            "machine.device: cpu -> cuda:0",
            "machine.backend: gloo -> nccl",
            "collectives.all_reduce.peak_busbw_gbs: 1 -> 20 (+1900.0%)",
            "collectives.all_reduce.1 KiB.busbw_gbs: 0.01 -> 0.05 (+400.0%)",
            "collectives.all_reduce.1 MiB.busbw_gbs: 1 -> 20 (+1900.0%)",
            "collectives.all_gather.latency_us: (absent) -> 10",
        });
}

TEST_CASE("--compare of a summary with itself finds nothing", "[compare]") {
  CHECK(compare_summaries({"a", k_laptop}, {"a", k_laptop}).empty());
}

TEST_CASE("--compare names a file that is no summary", "[compare]") {
  CHECK_THROWS_WITH(compare_summaries({"old/summary.json", "[1, 2]"}, {"b", k_node}),
                    "old/summary.json: not a summary.json (expected a JSON object)");
  CHECK_THROWS_WITH(compare_summaries({"a", k_laptop}, {"new.json", "{oops"}),
                    "new.json: not a summary.json (expected a JSON object)");
}

TEST_CASE("--compare's text: a count, then the differences indented", "[compare]") {
  CHECK(comparison_text({"a", k_laptop}, {"a2", k_laptop}) ==
        "ezpz test: a -> a2: no differences\n");
  std::string text = comparison_text({"laptop.json", k_laptop}, {"node.json", k_node});
  CHECK(text.rfind("ezpz test: laptop.json -> node.json: 8 differences\n"
                   "  samples_per_s: 1000 -> 1500 (+50.0%)\n",
                   0) == 0);
}
