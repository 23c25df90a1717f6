#pragma once
// What the smoke trainer measured, judged and written down: statistics over
// steps, the loss check, text plots, metrics.jsonl lines, report.md and
// summary.json. Pure: values in, strings out; the trainer writes the files.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ezpz/smoke/collectives.hpp"

namespace ezpz::report {

// One training step, as rank 0 measured it. Times are seconds; the loss is
// the mean over all ranks.
struct StepRecord {
  int step = 0;  // from 1
  double loss = 0;
  double step_s = 0;
  double data_s = 0;
  double forward_s = 0;
  double backward_s = 0;
  double allreduce_s = 0;  // waiting for gradients after backward (the exposed part)
  double optimizer_s = 0;
  double samples_per_s = 0;  // global: every rank's batch over this step's time
};

// metrics.jsonl: one JSON object per line, no trailing newline.
std::string step_json(const StepRecord& step);

struct Stats {
  std::size_t count = 0;
  double mean = 0;
  double min = 0;
  double max = 0;
  double std = 0;  // population standard deviation
};
Stats summarize(const std::vector<double>& values);

// One row of the summary table.
struct MetricSummary {
  std::string name;  // "step time (ms)"
  int precision;     // decimals shown
  Stats stats;       // already scaled (ms, not s)
};

// Every metric over the steps after the first `warmup`.
std::vector<MetricSummary> summarize_steps(const std::vector<StepRecord>& steps, int warmup);

// A Markdown table: metric | mean | min | max | std.
std::string summary_table(const std::vector<MetricSummary>& rows);

// An ASCII line plot of `values` against step (from 1), `width` x `height`
// characters of plot area; columns average the steps they cover.
std::string text_plot(const std::vector<double>& values, const std::string& title, int width = 60,
                      int height = 10);

// Did training learn? The mean loss over the last window of steps must be
// below the mean over the first window of the run: the untrained model's
// loss, so warm-up steps count. (Starting after a long warm-up compared two
// windows of an already-converged loss: noise.) A window is a quarter of the
// steps, 1 to 10.
struct LossCheck {
  bool fell = false;
  double first_mean = 0;
  double last_mean = 0;
  int first_from = 0, first_to = 0;  // steps, from 1, inclusive
  int last_from = 0, last_to = 0;
  std::string describe() const;  // "mean 2.3012 over steps 6-13, 0.0140 over steps 93-100"
};
// Needs at least 2 steps (the trainer's flags ensure it).
LossCheck check_loss(const std::vector<double>& losses);

// A 64-bit fingerprint of raw bytes, chained through `seed` so many tensors
// hash as one. Equal bytes give equal fingerprints; a changed bit almost
// surely changes it. Not cryptographic.
std::uint64_t fingerprint(const void* data, std::size_t bytes, std::uint64_t seed);

// Where a run ran: what two reports from two machines are compared by.
struct Machine {
  std::string hostname;
  std::string device;   // "cpu", "cuda:0"
  std::string backend;  // "gloo", "nccl"
  std::string libtorch;
  int ranks_per_node = 1;
  int threads = 1;
};

struct Summary {
  bool passed = false;
  std::string reason;  // why it failed, or what passed
  int world_size = 1;
  double samples_per_s = 0;  // mean over the steps after warm-up
  double final_loss = 0;     // the last step's loss
  double first_loss = 0;     // the first step's loss
  int steps = 0;
  std::string output_dir;
  std::string report;  // path of report.md
  bool params_identical = false;
  bool loss_fell = false;
  bool trained = true;  // false under --collectives-only
  Machine machine;
  std::vector<BandwidthRow> collectives;  // empty under --no-collectives
};

// The verdict from the two checks: both must hold.
Summary judge(bool params_identical, const LossCheck& loss);

// The verdict of a run that only measured the collectives: it passes once they ran.
Summary judge_collectives_only();

// summary.json: the contract `ezpz test` reads.
std::string summary_json(const Summary& summary);

using Table = std::vector<std::pair<std::string, std::string>>;

struct ReportInputs {
  Table configuration;
  Table environment;
  std::vector<StepRecord> steps;
  int warmup = 0;
  LossCheck loss;
  std::string fingerprint;  // hex, or how parameters differed
  Summary summary;
};

// report.md: status, configuration, environment, checks, summary table,
// text plots of loss and throughput, and the collectives' table and plot.
std::string report_markdown(const ReportInputs& inputs);

// What rank 0 prints to stdout at the end: the summary table, the loss plot
// and the collectives' table.
std::string console_summary(const ReportInputs& inputs);

}  // namespace ezpz::report
