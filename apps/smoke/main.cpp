// ezpz-smoke: the libtorch smoke-test trainer that `ezpz test` launches on
// every rank. It trains a small MLP data-parallel over a c10d process group,
// proves the ranks stayed in step and the loss fell, and leaves metrics.jsonl,
// report.md and summary.json in --output-dir. Flags are handled here, away
// from libtorch; the training is in trainer.cpp.
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "ezpz/smoke_test.hpp"
#include "ezpz/error.hpp"
#include "options.hpp"
#include "trainer.hpp"

namespace {

using ezpz::smoke::SmokeOptions;

// Flags whose value a --model preset may supply, to tell "given" from "default".
struct PresetFlags {
  CLI::Option* layers;
  CLI::Option* batch_size;
  CLI::Option* iters;
};

PresetFlags declare_flags(CLI::App& app, SmokeOptions& o) {
  app.add_option("--model", o.model, "Preset: debug, s, m, l, xl (default: 784-512-256-128-10)");
  PresetFlags given{
      app.add_option("--layers", o.layers, "Hidden layer sizes, e.g. 512,256,128")->delimiter(','),
      app.add_option("--batch-size", o.batch_size, "Samples per rank per step (default 128)"),
      app.add_option("--iters", o.iters, "Training steps (default 100; presets 20 or 400)")};
  app.add_option("--warmup", o.warmup, "Steps left out of the statistics (default 5)");
  app.add_option("--lr", o.lr, "Adam learning rate (default 1e-3)");
  app.add_option("--dtype", o.dtype, "fp32 or bf16 (default fp32)");
  app.add_option("--threads", o.threads, "Compute threads per rank (default 1)");
  app.add_option("--seed", o.seed, "Base seed; rank r uses seed x (r + 1) (default 1234)");
  app.add_option("--log-freq", o.log_freq, "Log and record every Nth step (default 1)");
  app.add_option("--output-dir", o.output_dir,
                 "Where rank 0 writes metrics.jsonl, report.md, summary.json "
                 "(default outputs/ezpz-test/<YYYY-MM-DD-HHMMSS>)");
  app.add_flag("--probe", o.probe, "Print what this libtorch can use as JSON and exit");
  // Test-only: proves the parameter check catches ranks that drift apart.
  app.add_option("--perturb-rank", o.perturb_rank)->group("");
  return given;
}

// A preset fills what the command line left unsaid.
void apply_preset(SmokeOptions& o, const PresetFlags& given) {
  if (o.model.empty()) return;
  const ezpz::smoke::Preset& preset = ezpz::smoke::find_preset(o.model);
  if (given.layers->count() == 0) o.layers = preset.layers;
  if (given.batch_size->count() == 0) o.batch_size = preset.batch_size;
  if (given.iters->count() == 0) o.iters = preset.iters;
}


void finish_options(SmokeOptions& o, const PresetFlags& given) {
  apply_preset(o, given);
  std::vector<std::string> problems = ezpz::smoke::validate(o);
  if (!problems.empty()) throw ezpz::Error(fmt::format("{}", fmt::join(problems, "; ")));
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
  options.started = process_start();
  CLI::App app{"ezpz-smoke: data-parallel libtorch smoke test (run by `ezpz test`)", "ezpz-smoke"};
  PresetFlags given = declare_flags(app, options);
  try {
    app.parse(argc, argv);
    finish_options(options, given);
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
