#pragma once
// `ezpz doctor`'s report, for people (aligned, coloured on a terminal) and
// for programs (--json). Pure.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ezpz/doctor/doctor.hpp"
#include "ezpz/doctor/doctor_deep.hpp"

namespace ezpz::doctor {

// The context block: (label, value) pairs in display order (user, host,
// machine, job, ezpz, libtorch, torch, launcher, python).
using ContextList = std::vector<std::pair<std::string, std::string>>;
ContextList context_of(const Snapshot& snapshot, const Derived& derived);

struct Report {
  std::vector<CheckResult> checks;  // with --deep, the "nodes" check last
  ContextList context;
  std::optional<DeepVerdict> deep;
  std::string failed_nodes_file;  // written by --deep; empty when none was
  double elapsed_s = 0;
};

// The context block, one aligned line per check (remedies under warnings and
// errors), --deep's nodes, and a summary line. `color`: ANSI colours on the
// status words (the caller decides: a terminal, and no NO_COLOR).
std::string render_text(const Report& report, bool color);

// One document: {"checks": [...], "context": {...}, "elapsed_s": ..., and with
// --deep "nodes": [...] and "failed_nodes_file"}.
std::string render_json(const Report& report);

}  // namespace ezpz::doctor
