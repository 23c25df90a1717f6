#include "harness.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

namespace ezpz::bench {
namespace {

// The check run: its output captured, dying unless it exits 0.
void check_case(const Group& group, Case& c, const std::string& scratch) {
  std::string out = scratch + "/check.out";
  std::string err = scratch + "/check.err";
  Sample check = run_once(c.command, out, err);
  if (!succeeded(check.status)) {
    die(group.name + " / " + c.label + ": " + shell_words(c.command.argv) + ": " +
        describe_status(check.status) + "\n" + read_file(err) + read_file(out));
  }
}

// One run of `c`, its file to remove removed first (untimed).
Sample run_case(Case& c) {
  if (!c.remove_before.empty()) ::unlink(c.remove_before.c_str());
  return run_once(c.command, "/dev/null", "/dev/null");
}

std::vector<double> times_of(const Case& c) {
  std::vector<double> ms;
  for (const Sample& s : c.samples) ms.push_back(s.ms);
  return ms;
}

long max_rss_kb(const Case& c) {
  long rss = 0;
  for (const Sample& s : c.samples) rss = std::max(rss, s.maxrss_kb);
  return rss;
}

std::string signed_fixed(double value, int decimals) {
  std::string text = value >= 0 ? "+" : "";
  return text += fixed(value, decimals);
}

// A case against the baseline: each pair of samples ran back to back.
struct Paired {
  double added = 0;  // median of the per-round differences
  std::string added_text = "-";
  std::string added_mean = "-";  // their mean with a 95% confidence interval
  std::string ratio = "-";       // median / baseline median
};

Paired pair_with(const Case& c, const Case& base, double median) {
  std::vector<double> diffs;
  for (std::size_t i = 0; i < c.samples.size() && i < base.samples.size(); ++i) {
    diffs.push_back(c.samples[i].ms - base.samples[i].ms);
  }
  Paired paired{.added = percentile(diffs, 0.5)};
  paired.added_text = signed_fixed(paired.added, 3);
  double n = static_cast<double>(diffs.size());
  double mean = 0;
  for (double d : diffs) mean += d / n;
  double variance = 0;
  for (double d : diffs) variance += (d - mean) * (d - mean) / std::max(1.0, n - 1);
  paired.added_mean = signed_fixed(mean, 2) + "+-" + fixed(1.96 * std::sqrt(variance / n), 2);
  paired.ratio = fixed(median / percentile(times_of(base), 0.5), 2);
  return paired;
}

// The target column ("added<=2ms ok, ..."); each target checked goes into `verdict`.
std::string check_targets(const Case& c, double median, double rss_mb,
                          const std::optional<Paired>& paired, Verdict& verdict) {
  std::string target;
  auto check = [&](bool ok, const std::string& text) {
    verdict.met = verdict.met && ok;
    if (!target.empty()) target += ", ";
    target += text + (ok ? " ok" : " MISSED");
  };
  if (c.max_added && paired) {
    check(paired->added <= *c.max_added, "added<=" + fixed(*c.max_added, 0) + "ms");
  }
  if (c.max_median) check(median <= *c.max_median, "median<=" + fixed(*c.max_median, 0) + "ms");
  if (c.max_rss_mb) check(rss_mb <= *c.max_rss_mb, "RSS<=" + fixed(*c.max_rss_mb, 0) + "MB");
  return target;
}

// The summary's line for a case with a target.
std::string verdict_line(const Group& group, const Case& c, double median, double rss_mb,
                         const std::optional<Paired>& paired, const std::string& target) {
  std::string figures = "median " + fixed(median, 2) + " ms";
  if (paired) figures += ", added " + paired->added_text + " ms";
  if (c.max_rss_mb) figures += ", maxRSS " + fixed(rss_mb, 1) + " MB";
  return group.name + " / " + c.label + ": " + figures + " -> " + target;
}

void print_header(const Group& group, int width, FILE* out) {
  std::fprintf(out, "\n== %s: %s\n", group.name.c_str(), group.title.c_str());
  std::fprintf(out, "%-*s %9s %9s %9s %9s %10s %15s %7s  %s\n", width, "case", "median", "p10",
               "p90", "maxRSS", "added", "added mean", "ratio", "target");
  std::fprintf(out, "%-*s %9s %9s %9s %9s %10s %15s %7s\n", width, "", "ms", "ms", "ms", "MB", "ms",
               "ms, 95% CI", "x");
}

void print_row(const Case& c, const Case* base, int width, Verdict& verdict, const Group& group,
               FILE* out) {
  std::vector<double> ms = times_of(c);
  double median = percentile(ms, 0.5);
  double rss_mb = static_cast<double>(max_rss_kb(c)) / 1024.0;
  std::optional<Paired> paired;
  if (base != nullptr && &c != base) paired = pair_with(c, *base, median);
  std::string target = check_targets(c, median, rss_mb, paired, verdict);
  if (!target.empty())
    verdict.lines.push_back(verdict_line(group, c, median, rss_mb, paired, target));
  Paired shown = paired.value_or(Paired{});
  std::string label = c.label + (&c == base ? " *" : "");
  std::fprintf(out, "%-*s %9s %9s %9s %9s %10s %15s %7s  %s\n", width, label.c_str(),
               fixed(median, 3).c_str(), fixed(percentile(ms, 0.1), 3).c_str(),
               fixed(percentile(ms, 0.9), 3).c_str(), fixed(rss_mb, 1).c_str(),
               shown.added_text.c_str(), shown.added_mean.c_str(), shown.ratio.c_str(),
               target.c_str());
}

// What `c` sets on top of the group's environment, then its argv: a command line to paste.
std::string command_line(const Group& group, const Case& c) {
  std::string unset;
  for (const std::string& assignment : group.env) {
    std::string name = assignment.substr(0, assignment.find('=') + 1);
    bool kept = std::any_of(c.command.env.begin(), c.command.env.end(),
                            [&](const std::string& e) { return e.starts_with(name); });
    if (!kept) unset += "-u " + name.substr(0, name.size() - 1) + " ";
  }
  std::vector<std::string> words;
  for (const std::string& assignment : c.command.env) {
    if (std::find(group.env.begin(), group.env.end(), assignment) == group.env.end()) {
      words.push_back(assignment);
    }
  }
  words.insert(words.end(), c.command.argv.begin(), c.command.argv.end());
  return (unset.empty() ? "" : "env " + unset) + shell_words(words);
}

void print_commands(const Group& group, int width, FILE* out) {
  std::fprintf(out, "  commands, each in env -i %s plus what it shows:\n",
               shell_words(group.env).c_str());
  for (const Case& c : group.cases) {
    std::fprintf(out, "  %-*s $ %s\n", width, c.label.c_str(), command_line(group, c).c_str());
  }
}

}  // namespace

void run_group(Group& group, const Options& o, const std::string& scratch) {
  const int runs = o.runs_or(group.default_runs);
  for (Case& c : group.cases) {
    check_case(group, c, scratch);
    for (int i = 0; i < o.warmup; ++i) run_case(c);
    c.samples.reserve(static_cast<std::size_t>(runs));
  }
  std::fprintf(stderr, "%s: %d runs x %zu cases ", group.name.c_str(), runs, group.cases.size());
  for (int run = 0; run < runs; ++run) {
    for (Case& c : group.cases) {
      Sample sample = run_case(c);
      if (!succeeded(sample.status)) {
        die(group.name + " / " + c.label + ": run " + std::to_string(run) + ": " +
            describe_status(sample.status));
      }
      c.samples.push_back(sample);
    }
    if ((run + 1) % std::max(1, runs / 10) == 0) std::fputc('.', stderr);
  }
  std::fputs(" done\n", stderr);
}

Verdict print_group(const Group& group, bool show_commands, FILE* out) {
  Verdict verdict;
  auto base = std::find_if(group.cases.begin(), group.cases.end(),
                           [](const Case& c) { return c.baseline; });
  const Case* baseline = base == group.cases.end() ? nullptr : &*base;
  std::size_t width = 8;
  for (const Case& c : group.cases) width = std::max(width, c.label.size() + 2);
  print_header(group, static_cast<int>(width), out);
  for (const Case& c : group.cases) {
    print_row(c, baseline, static_cast<int>(width), verdict, group, out);
  }
  if (baseline != nullptr) {
    std::fprintf(out,
                 "  * baseline. added: median of the per-round differences to it (each pair "
                 "ran back to back);\n    added mean: their mean with a 95%% confidence "
                 "interval; ratio: median / baseline median\n");
  }
  for (const std::string& note : group.notes) std::fprintf(out, "  %s\n", note.c_str());
  if (show_commands) print_commands(group, static_cast<int>(width), out);
  return verdict;
}

void append_csv(const Group& group, const std::string& path) {
  bool fresh = !std::filesystem::exists(path);
  std::ofstream out(path, std::ios::app);
  if (fresh) out << "group,case,run,ms,maxrss_kb\n";
  for (const Case& c : group.cases) {
    for (std::size_t i = 0; i < c.samples.size(); ++i) {
      out << group.name << ",\"" << c.label << "\"," << i << ',' << fixed(c.samples[i].ms, 4) << ','
          << c.samples[i].maxrss_kb << '\n';
    }
  }
}

void append_lines(const std::vector<std::string>& lines, const std::string& path,
                  const std::string& header) {
  bool fresh = !std::filesystem::exists(path);
  std::ofstream out(path, std::ios::app);
  if (fresh) out << header << '\n';
  for (const std::string& line : lines) out << line << '\n';
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return NAN;
  std::sort(values.begin(), values.end());
  double pos = p * static_cast<double>(values.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  std::size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
}

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

}  // namespace ezpz::bench
