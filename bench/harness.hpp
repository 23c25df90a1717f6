#pragma once
// The timed groups: cases alternated run by run (A, B, C, A, B, C, ...), so that drift
// (CPU frequency, page cache, other load) hits every case alike, then one table per group
// (median, p10, p90, peak RSS, added over the baseline, ratio, target).
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "options.hpp"
#include "spawn.hpp"

namespace ezpz::bench {

struct Case {
  Case(std::string label_, Command command_)
      : label(std::move(label_)), command(std::move(command_)) {}
  std::string label;
  Command command;
  bool baseline = false;             // the group's reference ("base" column)
  std::optional<double> max_added;   // target: paired median added over the baseline, ms
  std::optional<double> max_median;  // target: median, ms
  std::optional<double> max_rss_mb;  // target: peak RSS, MB
  std::string remove_before;         // a file unlinked before every run, untimed
  std::vector<Sample> samples;
};

struct Group {
  std::string name;
  std::string title;
  std::vector<std::string> env;  // the environment every case starts from
  std::vector<Case> cases;
  std::vector<std::string> notes;
  int default_runs = 200;  // without --runs
};

struct Verdict {
  bool met = true;
  std::vector<std::string> lines;  // one per case with a target, for the summary
};

// Warm-up, one checked run of each case, then `runs` rounds of every case in turn.
void run_group(Group& group, const Options& o, const std::string& scratch);

// The group's table (and with `show_commands` every case's command line) on `out`.
Verdict print_group(const Group& group, bool show_commands, FILE* out);

// Appends every sample to the CSV file at `path` (group,case,run,ms,maxrss_kb).
void append_csv(const Group& group, const std::string& path);

// Appends `lines` to `path`, after `header` when the file is new.
void append_lines(const std::vector<std::string>& lines, const std::string& path,
                  const std::string& header);

// Linear interpolation between closest ranks (R-7, numpy's default).
double percentile(std::vector<double> values, double p);

// `value` with `decimals` digits after the point.
std::string fixed(double value, int decimals);

}  // namespace ezpz::bench
