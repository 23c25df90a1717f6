#pragma once
// ezpz-smoke's flags: one table, read by the trainer (apps/smoke) to parse its
// command line and by `ezpz test` to accept and check the same flags before it
// launches anything. No libtorch here, so flag handling compiles in a second.
#include <chrono>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace ezpz::smoke {

struct SmokeOptions {
  std::string model;  // preset name, empty for the reference MLP
  std::vector<int> layers = {512, 256, 128};
  int input_size = 784;  // MNIST-shaped
  int classes = 10;
  int batch_size = 128;  // per rank
  int iters = 100;
  int warmup = 5;
  double lr = 1e-3;
  std::string dtype = "fp32";
  int threads = 1;
  unsigned long long seed = 1234;
  int log_freq = 1;
  std::string output_dir;
  bool probe = false;
  // Gradient bucket size: a bucket is all-reduced as soon as its gradients are
  // in, while backward goes on. 0: one bucket, reduced when backward ends.
  // DDP's 25 MiB: on 2 cores every extra bucket of the default 2.3 MB model
  // cost throughput (bench/README.md, issue 21), so it stays one bucket there.
  double bucket_mb = 25;
  bool collectives_only = false;  // measure the collectives, skip training
  bool no_collectives = false;    // train only
  double sweep_max_mb = 4;        // the collectives' largest message
  int perturb_rank = -1;  // test-only: this rank's gradients are nudged so parameters diverge
  int hang_rank = -1;     // test-only: this rank sleeps before its first gradient all-reduce
  std::chrono::steady_clock::time_point started;       // process start, for time-to-first-step
  std::chrono::steady_clock::time_point main_entered;  // after libtorch's static initialisers
};

// Which flags to declare: the trainer's own command line has them all; `ezpz test`
// leaves out --probe, which prints and exits instead of training.
enum class FlagSet { trainer, ezpz_test };

// Declares the trainer's flags on `app`, filling `options` (under `group` in --help).
void declare_flags(CLI::App& app, SmokeOptions& options, FlagSet set, const std::string& group);

// After app.parse: a --model preset fills what the command line left unsaid, then
// every value is checked. Throws Error naming each bad flag, "; "-separated.
void finish_options(const CLI::App& app, SmokeOptions& options);

// `words` (trainer flags, as the user typed them) parsed and checked as the trainer
// will: what `ezpz test` runs before launching. Throws Error (usage) with one line.
SmokeOptions parse_flags(const std::vector<std::string>& words);

// The words of the trainer flags given on `app` (declared by declare_flags), in
// table order: "--model", "debug", "--layers", "64,32" ...
std::vector<std::string> given_flag_words(const CLI::App& app);

// A --model preset: the Python ezpz test's layer sizes and batch sizes.
struct Preset {
  const char* name;
  int batch_size;
  int iters;
  std::vector<int> layers;
};

// The preset named `name` (aliases small, medium, large, xlarge accepted).
// Throws Error "--model NAME: unknown preset; expected one of debug, s, m, l, xl".
const Preset& find_preset(const std::string& name);

// Every problem with the settings, in flag order; empty when they are usable.
std::vector<std::string> validate(const SmokeOptions& options);

// "784-512-256-128-10".
std::string describe_layers(const SmokeOptions& options);

}  // namespace ezpz::smoke
