#pragma once
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "context.hpp"
#include "options.hpp"
#include "plan_options.hpp"

namespace ezpz {

struct DoctorOptions {
  PlanOptions plan;  // --json, and with --deep how the probe is launched
  bool deep = false;
  double timeout_s = 60;
  std::optional<std::string> failed_nodes;
};

// Declares `ezpz doctor` on `app`.
CLI::App* setup_doctor(CLI::App& app, DoctorOptions& options, GlobalOptions& globals);

// Probes, judges, prints the report. Returns 1 when a check is an error, else 0.
int run_doctor(const DoctorOptions& options, const Context& context);

}  // namespace ezpz
