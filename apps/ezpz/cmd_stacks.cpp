#include "cmd_stacks.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "ezpz/core/log.hpp"
#include "ezpz/core/text.hpp"
#include "ezpz/stage/yeet.hpp"
#include "ezpz/supervise/attempt_loop.hpp"
#include "ezpz/supervise/stacks.hpp"
#include "ezpz/sys/executor.hpp"
#include "ezpz/sys/processes.hpp"
#include "ezpz/sys/run_records.hpp"
#include "ezpz/sys/stacks.hpp"
#include "ezpz/sys/world.hpp"
#include "plan_options.hpp"

namespace ezpz {

CLI::App* setup_stacks(CLI::App& app, StacksOptions& o, GlobalOptions& globals) {
  CLI::App* cmd = app.add_subcommand(
      "stacks", "What every rank of a running job is doing: its stacks, grouped (run goes on)");
  add_verbosity_flags(*cmd, globals);
  cmd->add_option("RUN_ID", o.run_id, "The run: its id, or any unique start of it")->required();
  cmd->add_option("--runs-dir", o.runs_dir, "Where run records go (EZPZ_RUNS_DIR, .ezpz/runs)");
  cmd->add_flag("--on-node", o.on_node)->group("");  // the per-node copy the capture starts
  cmd->footer(
      "Examples:\n"
      "  ezpz stacks 20261122-061500-n01-4242   # inside the job, from another shell\n"
      "  kill -QUIT <ezpz's pid>                # the same, from ezpz itself (Ctrl-\\)\n"
      "The stacks go to the run record (attempt-N/stacks/rank-K.txt), the summary to stderr.");
  return cmd;
}

namespace {

// The capture's launcher step may take this long (gdb reads libtorch's symbols in seconds).
constexpr std::chrono::seconds k_capture_limit{120};

// Best effort, as the run record's other files: a full disk must not lose the summary.
void write_record(const std::string& directory, const std::map<int, std::string>& texts,
                  const std::vector<std::string>& summary) {
  std::vector<FileToWrite> files;
  for (const auto& [rank, text] : texts) {
    files.push_back({.path = fmt::format("{}/rank-{}.txt", directory, rank), .contents = text});
  }
  files.push_back({.path = directory + "/summary.txt",
                   .contents = fmt::format("{}\n", fmt::join(summary, "\n"))});
  try {
    sys::write_files(files);
  } catch (const Error& e) {
    log::warn("stacks: {}", e.what());
  }
}

// The newest attempt-N of a run record (attempt-1 when it has none yet).
std::string newest_attempt(const std::string& run_dir) {
  int attempt = 1;
  std::error_code unreadable;  // the throwing form ends ezpz in abort() on EACCES
  while (std::filesystem::exists(attempt_dir(run_dir, attempt + 1), unreadable)) ++attempt;
  return attempt_dir(run_dir, attempt);
}

}  // namespace

bool take_stacks(const std::string& run_id, const std::string& directory, const Context& context) {
  const std::map<int, std::string> texts = stacks::untag(node_step_output(
      {context.self_dir + "/ezpz", "stacks", "--on-node", run_id}, k_capture_limit, context));
  std::map<int, std::optional<stacks::Frame>> frames;
  for (const auto& [rank, text] : texts) frames[rank] = stacks::innermost(text);
  const std::vector<std::string> summary = stacks::summary(frames);
  if (!directory.empty() && !texts.empty()) write_record(directory, texts, summary);
  if (texts.empty()) {
    log::warn("stacks: no rank of run {} found on any node", run_id);
    return false;
  }
  std::string where = directory.empty() ? "" : fmt::format(" (in {})", directory);
  log::write(
      "ezpz: ",
      fmt::format("stacks of {}{}:", plural(static_cast<long>(texts.size()), "rank"), where));
  for (const std::string& line : summary) log::write("ezpz:   ", line);
  return true;
}

int run_stacks(const StacksOptions& o, const Context& context) {
  if (o.on_node) {
    const std::string node = yeet::node_name(context.env, sys::hostname());
    std::fputs(sys::node_stacks(o.run_id, node, context.env).c_str(), stdout);
    return 0;
  }
  std::string run_id = o.run_id;
  std::string directory;
  try {  // the record, when this node has it: the stacks go into its newest attempt
    const std::string run_dir =
        sys::find_run(sys::runs_directory(o.runs_dir, context.env), o.run_id);
    run_id = std::filesystem::path(run_dir).filename().string();
    directory = newest_attempt(run_dir) + "/stacks";
  } catch (const Error&) {
  }
  return take_stacks(run_id, directory, context) ? 0 : 1;
}

}  // namespace ezpz
