#pragma once
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "context.hpp"
#include "options.hpp"
#include "plan_options.hpp"

namespace ezpz {

struct YeetOptions {
  PlanOptions plan;
  std::optional<std::string> source;       // SRC
  std::optional<std::string> source_flag;  // --src (the Python ezpz's spelling)
  std::optional<std::string> destination;  // --dst
  bool force = false;
  bool keep_setuid = false;
  bool checksum = false;
  std::optional<std::string> min_success;
  std::optional<std::string> failed_file;  // default: yeet::default_failed_file
  std::size_t chunk_size = 4u << 20;
  std::size_t bwlimit = 0;
  const GlobalOptions* globals = nullptr;
};

// Declares `ezpz yeet` on `app`.
CLI::App* setup_yeet(CLI::App& app, YeetOptions& options, GlobalOptions& globals);

// Plans ezpz-stager with one rank per node and runs it (or prints the plan).
int run_yeet(const YeetOptions& options, const Context& context);

}  // namespace ezpz
