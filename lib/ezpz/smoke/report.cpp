#include "ezpz/smoke/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ezpz/core/json_text.hpp"

namespace ezpz::report {

std::string step_json(const StepRecord& s) {
  nlohmann::ordered_json j = {
      {"step", s.step},
      {"loss", s.loss},
      {"step_s", s.step_s},
      {"data_s", s.data_s},
      {"forward_s", s.forward_s},
      {"backward_s", s.backward_s},
      {"allreduce_s", s.allreduce_s},
      {"optimizer_s", s.optimizer_s},
      {"samples_per_s", s.samples_per_s},
  };
  return json_text(j);
}

Stats summarize(const std::vector<double>& values) {
  Stats s;
  s.count = values.size();
  if (values.empty()) return s;
  auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  s.min = *lo;
  s.max = *hi;
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(values.size());
  double squares = 0;
  for (double v : values) squares += (v - s.mean) * (v - s.mean);
  s.std = std::sqrt(squares / static_cast<double>(values.size()));
  return s;
}

namespace {

struct MetricColumn {
  const char* name;
  int precision;
  double scale;
  double StepRecord::*field;
};

constexpr MetricColumn k_columns[] = {
    {"loss", 4, 1, &StepRecord::loss},
    {"step time (ms)", 3, 1e3, &StepRecord::step_s},
    {"data (ms)", 3, 1e3, &StepRecord::data_s},
    {"forward (ms)", 3, 1e3, &StepRecord::forward_s},
    {"backward (ms)", 3, 1e3, &StepRecord::backward_s},
    {"all-reduce wait (ms)", 3, 1e3, &StepRecord::allreduce_s},
    {"optimizer (ms)", 3, 1e3, &StepRecord::optimizer_s},
    {"samples/s", 1, 1, &StepRecord::samples_per_s},
};

std::vector<double> column(const std::vector<StepRecord>& steps, int warmup,
                           const MetricColumn& c) {
  std::vector<double> values;
  for (size_t i = static_cast<size_t>(std::max(warmup, 0)); i < steps.size(); ++i) {
    values.push_back(steps[i].*c.field * c.scale);
  }
  return values;
}

}  // namespace

std::vector<MetricSummary> summarize_steps(const std::vector<StepRecord>& steps, int warmup) {
  std::vector<MetricSummary> rows;
  for (const MetricColumn& c : k_columns) {
    rows.push_back({c.name, c.precision, summarize(column(steps, warmup, c))});
  }
  return rows;
}

std::string summary_table(const std::vector<MetricSummary>& rows) {
  std::string out = "| metric | mean | min | max | std |\n|---|---:|---:|---:|---:|\n";
  for (const MetricSummary& r : rows) {
    const Stats& s = r.stats;
    int p = r.precision;
    out += fmt::format("| {} | {:.{}f} | {:.{}f} | {:.{}f} | {:.{}f} |\n", r.name, s.mean, p, s.min,
                       p, s.max, p, s.std, p);
  }
  return out;
}

namespace {

// Column c's value: the mean of the steps that fall in it.
std::vector<double> resample(const std::vector<double>& values, int width) {
  size_t columns = std::min(values.size(), static_cast<size_t>(width));
  std::vector<double> out(columns, 0);
  for (size_t c = 0; c < columns; ++c) {
    size_t from = c * values.size() / columns;
    size_t to = (c + 1) * values.size() / columns;
    double sum = 0;
    for (size_t i = from; i < to; ++i) sum += values[i];
    out[c] = sum / static_cast<double>(to - from);
  }
  return out;
}

// Throughput reads better as 30240 than as 3.024e+04.
std::string format_tick(double value) {
  double size = std::abs(value);
  if (size >= 1000 && size < 1e10) return fmt::format("{:>10.0f}", value);
  return fmt::format("{:>10.4g}", value);
}

}  // namespace

std::string text_plot(const std::vector<double>& values, const std::string& title, int width,
                      int height) {
  if (values.empty() || width < 1 || height < 2) return title + ": no data\n";
  std::vector<double> ys = resample(values, width);
  auto [lo_it, hi_it] = std::minmax_element(ys.begin(), ys.end());
  double lo = *lo_it, hi = *hi_it;
  double span = hi > lo ? hi - lo : 1.0;  // a flat line sits on the bottom row
  std::vector<std::string> grid(static_cast<size_t>(height), std::string(ys.size(), ' '));
  for (size_t c = 0; c < ys.size(); ++c) {
    long row = std::lround((hi - ys[c]) / span * (height - 1));
    if (hi == lo) row = height - 1;
    grid[static_cast<size_t>(row)][c] = '*';
  }
  std::string out = fmt::format("{} (steps 1-{})\n", title, values.size());
  for (int r = 0; r < height; ++r) {
    bool labelled = r == 0 || r == height - 1;
    std::string label = labelled ? format_tick(r == 0 ? hi : lo) : std::string(10, ' ');
    out += fmt::format("{} {}{}\n", label, labelled ? '+' : '|', grid[static_cast<size_t>(r)]);
  }
  out += std::string(11, ' ') + '+' + std::string(ys.size(), '-') + "\n";
  std::string last = std::to_string(values.size());
  size_t pad = ys.size() > last.size() ? ys.size() - last.size() : 0;
  out += fmt::format("{}1{}{}\n", std::string(12, ' '), std::string(pad > 0 ? pad - 1 : 0, ' '),
                     ys.size() > 1 ? last : "");
  return out;
}

std::string LossCheck::describe() const {
  return fmt::format("mean {:.4f} over steps {}-{}, {:.4f} over steps {}-{}", first_mean,
                     first_from, first_to, last_mean, last_from, last_to);
}

LossCheck check_loss(const std::vector<double>& losses) {
  LossCheck check;
  int n = static_cast<int>(losses.size());
  const int start = 0;
  if (n < 2) return check;
  int window = std::clamp(n / 4, 1, 10);
  auto mean = [&](int from) {
    double sum = 0;
    for (int i = from; i < from + window; ++i) sum += losses[static_cast<size_t>(i)];
    return sum / window;
  };
  check.first_mean = mean(start);
  check.last_mean = mean(n - window);
  check.first_from = start + 1;
  check.first_to = start + window;
  check.last_from = n - window + 1;
  check.last_to = n;
  // NaN compares false, so a diverged run does not pass.
  check.fell = check.last_mean < check.first_mean;
  return check;
}

std::uint64_t fingerprint(const void* data, std::size_t bytes, std::uint64_t seed) {
  // One multiply per 8-byte word keeps this near memory speed for the
  // hundreds of MB the large presets hold.
  constexpr std::uint64_t k_mul = 0x9E3779B97F4A7C15ULL;
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t h = seed ^ (bytes * k_mul);
  std::size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    std::uint64_t word;
    std::memcpy(&word, p + i, 8);
    h = (h ^ word) * k_mul;
    h ^= h >> 29;
  }
  std::uint64_t tail = 0;
  // memcpy from a null pointer is undefined even for 0 bytes (an empty tensor's data).
  if (i < bytes) std::memcpy(&tail, p + i, bytes - i);
  h = (h ^ tail) * k_mul;
  return h ^ (h >> 32);
}

Summary judge(bool params_identical, const LossCheck& loss) {
  Summary s;
  s.params_identical = params_identical;
  s.loss_fell = loss.fell;
  s.passed = params_identical && loss.fell;
  std::vector<std::string> failures;
  if (!params_identical) failures.push_back("parameters differ between ranks after training");
  if (!loss.fell) failures.push_back("loss did not fall (" + loss.describe() + ")");
  if (s.passed) {
    s.reason = "parameters identical on every rank; loss fell (" + loss.describe() + ")";
  } else {
    s.reason = failures.front();
    if (failures.size() > 1) s.reason += "; " + failures.back();
  }
  return s;
}

namespace {

nlohmann::ordered_json machine_json(const Machine& m) {
  return {
      {"hostname", m.hostname},
      {"device", m.device},
      {"backend", m.backend},
      {"libtorch", m.libtorch},
      {"ranks_per_node", m.ranks_per_node},
      {"threads", m.threads},
  };
}

// {"all_reduce": {"latency_us", "peak_busbw_gbs", "sizes": [...]}, "all_gather": ...}
nlohmann::ordered_json collectives_json(const std::vector<BandwidthRow>& rows) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const BandwidthRow& r : rows) {
    nlohmann::ordered_json& c = j[collective_name(r.collective)];
    if (c.is_null()) {
      CollectiveHeadline h = headline(rows, r.collective);
      c = {{"latency_us", h.latency_us}, {"peak_busbw_gbs", h.peak_busbw_gbs}, {"sizes", {}}};
    }
    c["sizes"].push_back({{"bytes", r.bytes},
                          {"time_us", r.time_s * 1e6},
                          {"algbw_gbs", r.algbw_gbs()},
                          {"busbw_gbs", r.busbw_gbs()}});
  }
  return j;
}

}  // namespace

Summary judge_collectives_only() {
  Summary s;
  s.passed = true;
  s.trained = false;
  s.reason = "collectives measured; training skipped (--collectives-only)";
  return s;
}

std::string summary_json(const Summary& s) {
  nlohmann::ordered_json j = {
      {"status", s.passed ? "pass" : "fail"},
      {"reason", s.reason},
      {"world_size", s.world_size},
      {"samples_per_s", s.samples_per_s},
      {"final_loss", s.final_loss},
      {"first_loss", s.first_loss},
      {"steps", s.steps},
      {"output_dir", s.output_dir},
      {"report", s.report},
      {"params_identical", s.params_identical},
      {"loss_fell", s.loss_fell},
      {"trained", s.trained},
      {"machine", machine_json(s.machine)},
  };
  if (!s.collectives.empty()) j["collectives"] = collectives_json(s.collectives);
  return json_text(j, 2) + "\n";
}

namespace {

std::string key_value_table(const Table& rows) {
  std::string out = "| | |\n|---|---|\n";
  for (const auto& [key, value] : rows) out += fmt::format("| {} | `{}` |\n", key, value);
  return out;
}

std::vector<double> series(const std::vector<StepRecord>& steps, double StepRecord::*field) {
  std::vector<double> values;
  for (const StepRecord& s : steps) values.push_back(s.*field);
  return values;
}

std::string summary_heading(const ReportInputs& in) {
  int n = static_cast<int>(in.steps.size());
  if (in.warmup <= 0) return fmt::format("Summary over all {} steps", n);
  if (in.warmup == 1) return fmt::format("Summary over steps 2-{} (step 1 is warm-up)", n);
  return fmt::format("Summary over steps {}-{} (steps 1-{} are warm-up)", in.warmup + 1, n,
                     in.warmup);
}

std::string checks_section(const ReportInputs& in) {
  const Summary& s = in.summary;
  return fmt::format("- parameters identical on every rank: {} ({})\n- loss fell: {} ({})\n",
                     s.params_identical ? "yes" : "**no**", in.fingerprint,
                     s.loss_fell ? "yes" : "**no**", in.loss.describe());
}

std::string fenced(const std::string& text) {
  return "```text\n" + text + "```\n";
}

std::string collectives_section(const std::vector<BandwidthRow>& rows) {
  if (rows.empty()) return "";
  return "## Collectives\n\n"
         "Mean time of one operation (the slowest rank's), algorithm bandwidth S/t and bus "
         "bandwidth as nccl-tests defines them: all-reduce algbw x 2(n-1)/n, all-gather "
         "algbw x (n-1)/n (S: the whole array).\n\n" +
         bandwidth_table(rows) + "\n" + fenced(bandwidth_plot(rows)) + "\n";
}

std::string training_sections(const ReportInputs& in) {
  if (!in.summary.trained) return "";
  std::string out = "## Checks\n\n" + checks_section(in) + "\n";
  out += "## " + summary_heading(in) + "\n\n";
  out += summary_table(summarize_steps(in.steps, in.warmup)) + "\n";
  out += "## Loss\n\n" + fenced(text_plot(series(in.steps, &StepRecord::loss), "loss")) + "\n";
  out += "## Throughput\n\n" +
         fenced(text_plot(series(in.steps, &StepRecord::samples_per_s), "samples/s")) + "\n";
  return out;
}

}  // namespace

std::string report_markdown(const ReportInputs& in) {
  const Summary& s = in.summary;
  std::string out = "# ezpz-smoke report\n\n";
  out += fmt::format("Status: **{}**: {}\n\n", s.passed ? "PASS" : "FAIL", s.reason);
  out += "## Configuration\n\n" + key_value_table(in.configuration) + "\n";
  out += "## Environment\n\n" + key_value_table(in.environment) + "\n";
  out += training_sections(in) + collectives_section(s.collectives);
  out.pop_back();  // one newline at the end
  return out;
}

std::string console_summary(const ReportInputs& in) {
  std::string out;
  if (in.summary.trained) {
    out += summary_heading(in) + ":\n\n";
    out += summary_table(summarize_steps(in.steps, in.warmup)) + "\n";
    out += text_plot(series(in.steps, &StepRecord::loss), "loss");
  }
  if (in.summary.collectives.empty()) return out;
  if (!out.empty()) out += "\n";
  return out + bandwidth_table(in.summary.collectives);
}

}  // namespace ezpz::report
