#pragma once
// ezpz-smoke's settings, filled from the command line by main.cpp and read by
// the trainer. No libtorch here, so flag handling compiles in a second.
#include <chrono>
#include <string>
#include <vector>

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
  int perturb_rank = -1;  // test-only: this rank's gradients are nudged so parameters diverge
  std::chrono::steady_clock::time_point started;       // process start, for time-to-first-step
  std::chrono::steady_clock::time_point main_entered;  // after libtorch's static initialisers
};

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
