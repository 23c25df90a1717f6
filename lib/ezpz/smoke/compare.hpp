#pragma once
// `ezpz test --compare`: what differs between two runs' summary.json, so that
// two machines (or one machine before and after a change) can be put side by
// side. Pure: texts in, lines out.
#include <string>
#include <vector>

namespace ezpz::report {

struct SummaryText {
  std::string name;  // where it came from, for messages
  std::string text;  // summary.json's content
};

// One line per field that differs, in `a`'s order then the fields only `b`
// has: "machine.device: cpu -> cuda:0", "samples_per_s: 30120 -> 28210 (-6.3%)",
// "collectives.all_reduce.1 MiB.busbw_gbs: (absent) -> 0.91". Paths, reasons
// and the per-size times (busbw says the same) are left out. Throws Error
// "NAME: not a summary.json (expected a JSON object)".
std::vector<std::string> compare_summaries(const SummaryText& a, const SummaryText& b);

// What `ezpz test --compare` prints: "ezpz test: A -> B: 3 differences" and the
// lines indented, or "ezpz test: A -> B: no differences".
std::string comparison_text(const SummaryText& a, const SummaryText& b);

}  // namespace ezpz::report
