// ezpz-smoke: the libtorch smoke-test trainer that `ezpz test` launches on
// every rank. It trains a small MLP data-parallel over a c10d process group,
// proves the ranks stayed in step and the loss fell, and leaves metrics.jsonl,
// report.md and summary.json in --output-dir. Flags are handled here, away
// from libtorch, from the table `ezpz test` checks them with
// (lib/ezpz/smoke/smoke_flags.cpp); the training is in trainer.cpp.
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "ezpz/core/error.hpp"
#include "ezpz/runtime/stamp.hpp"
#include "ezpz/smoke/smoke_flags.hpp"
#include "ezpz/smoke/smoke_test.hpp"
#include "trainer.hpp"

namespace {

using ezpz::smoke::SmokeOptions;

// The table's flags, then the default output directory (ezpz test always names one).
void finish(const CLI::App& app, SmokeOptions& o) {
  ezpz::smoke::finish_options(app, o);
  if (o.output_dir.empty()) o.output_dir = ezpz::smoke_output_dir(std::time(nullptr));
}

// When the kernel started this process: libtorch's static initialisers run
// before main and are part of the start-up users wait for. Linux /proc; the
// time main began elsewhere.
std::chrono::steady_clock::time_point process_start() {
  auto now = std::chrono::steady_clock::now();
  std::ifstream stat("/proc/self/stat"), uptime("/proc/uptime");
  std::string text;
  double up = 0;
  if (!std::getline(stat, text) || !(uptime >> up)) return now;
  // Field 22 (starttime, clock ticks since boot) follows the ")" ending field 2.
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string field;
  for (int i = 3; i < 22 && fields >> field; ++i) {
  }
  double ticks = 0;
  if (!(fields >> ticks)) return now;
  double age = up - ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
  if (age < 0 || age > 60) return now;
  return now - std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                   std::chrono::duration<double>(age));
}

int report(const char* message, int code) {
  std::fprintf(stderr, "ezpz-smoke: error: %s\n", message);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  // Keep freed gradient and activation buffers in the process: glibc would
  // otherwise unmap and re-fault them every step (~800 page faults a step;
  // bench/README.md measured 1.07x -> 1.30x of Python DDP at 2 ranks).
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  SmokeOptions options;
  options.main_entered = std::chrono::steady_clock::now();
  ezpz::dist::stamp("import_torch");  // libtorch's static initialisers have run
  options.started = process_start();
  CLI::App app{"ezpz-smoke: data-parallel libtorch smoke test (run by `ezpz test`)", "ezpz-smoke"};
  ezpz::smoke::declare_flags(app, options, ezpz::smoke::FlagSet::trainer, "Options");
  try {
    app.parse(argc, argv);
    finish(app, options);
    if (options.probe) ezpz::smoke::run_probe();
    return ezpz::smoke::run_smoke(options);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return report(e.what(), 2);
  } catch (const ezpz::Error& e) {
    return report(e.what(), static_cast<int>(e.code()));
  }
}
