#include "options.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "ezpz/error.hpp"

namespace ezpz::smoke {
namespace {

const std::array<Preset, 5>& presets() {
  static const std::array<Preset, 5> k_presets = {{
      {"debug", 16, 20, {128, 64}},
      {"s", 64, 400, {8192, 8192, 4096}},
      {"m", 32, 400, {16384, 8192, 8192, 4096}},
      {"l", 32, 400, {16384, 16384, 8192, 4096}},
      {"xl", 16, 400, {24576, 16384, 16384, 8192, 4096}},
  }};
  return k_presets;
}

struct Alias {
  const char* alias;
  const char* name;
};
constexpr std::array<Alias, 5> k_aliases = {{
    {"small", "s"},
    {"medium", "m"},
    {"large", "l"},
    {"xlarge", "xl"},
    {"extra-large", "xl"},
}};

}  // namespace

const Preset& find_preset(const std::string& name) {
  std::string canonical = name;
  for (const Alias& a : k_aliases) {
    if (name == a.alias) canonical = a.name;
  }
  for (const Preset& preset : presets()) {
    if (canonical == preset.name) return preset;
  }
  throw Error(fmt::format("--model {}: unknown preset; expected one of debug, s, m, l, xl", name));
}

std::vector<std::string> validate(const SmokeOptions& o) {
  std::vector<std::string> problems;
  auto positive = [&](const char* flag, long value) {
    if (value < 1)
      problems.push_back(fmt::format("{} {}: expected a positive integer", flag, value));
  };
  if (std::any_of(o.layers.begin(), o.layers.end(), [](int n) { return n < 1; })) {
    problems.push_back(fmt::format("--layers {}: expected positive sizes, e.g. 512,256,128",
                                   fmt::join(o.layers, ",")));
  }
  positive("--batch-size", o.batch_size);
  if (o.warmup < 0) problems.push_back(fmt::format("--warmup {}: expected 0 or more", o.warmup));
  if (o.iters < o.warmup + 2) {
    problems.push_back(fmt::format(
        "--iters {}: must exceed --warmup {} by at least 2 (the loss check compares steps "
        "after warm-up)",
        o.iters, o.warmup));
  }
  if (!(o.lr > 0)) problems.push_back(fmt::format("--lr {}: expected a positive number", o.lr));
  if (o.dtype != "fp32" && o.dtype != "bf16") {
    problems.push_back(fmt::format("--dtype {}: unknown dtype; expected fp32 or bf16", o.dtype));
  }
  positive("--threads", o.threads);
  positive("--log-freq", o.log_freq);
  return problems;
}

std::string describe_layers(const SmokeOptions& o) {
  return fmt::format("{}-{}-{}", o.input_size, fmt::join(o.layers, "-"), o.classes);
}

}  // namespace ezpz::smoke
