#pragma once
// The benchmark families, one file each: the timed groups (launch_overhead.cpp,
// dry_run_scale.cpp, doctor.cpp) run through the harness; the training benchmarks
// (smoke_vs_ddp.cpp, first_step.cpp) run jobs of seconds and measure them themselves.
#include <string>
#include <vector>

#include "harness.hpp"
#include "options.hpp"
#include "setup.hpp"

namespace ezpz::bench {

// launch_overhead, ezpz_alone and rankenv_shim.
std::vector<Group> launch_overhead_groups(const Setup& s);

// ezpz launch --dry-run against allocation size (writes the nodefiles into the scratch).
std::vector<Group> dry_run_scale_groups(const Setup& s);

// ezpz doctor against importing torch; doctor_missing says why it cannot run (empty: it can).
std::vector<Group> doctor_groups(const Setup& s);
std::string doctor_missing(const Setup& s);

struct TrainOutcome {
  Verdict verdict;
  std::vector<std::string> csv;  // group,case,run,samples_per_s,step_ms,...
};

// ezpz-smoke against PyTorch DDP, and `ezpz test` start to the first step; both print their
// tables. training_missing says why they cannot run here (empty: they can).
TrainOutcome smoke_vs_ddp(const Setup& s, const Options& o);
TrainOutcome first_step(const Setup& s, const Options& o);
std::string training_missing(const Setup& s);

}  // namespace ezpz::bench
