#pragma once
// What the two training benchmarks (smoke_vs_ddp.cpp, first_step.cpp) share. They run
// real training jobs, seconds each, so they are measured differently from the timed
// groups: every job's stdout and stderr come back on one pipe and each line is stamped
// with the harness's clock as it arrives (run_traced); rank 0 of either trainer writes
// metrics.jsonl (one line per step, ezpz-smoke's keys), which is where samples/s and
// the per-phase times come from.
#include <string>
#include <vector>

#include "step_line.hpp"

namespace ezpz::bench {

// The model and training flags ezpz-smoke and bench/python_ddp.py both take.
std::vector<std::string> model_flags(const std::string& layers, int batch, int steps, int warmup);

}  // namespace ezpz::bench
