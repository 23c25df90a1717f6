#include "training.hpp"

#include <filesystem>

#include "benchmarks.hpp"

namespace ezpz::bench {

std::vector<std::string> model_flags(const std::string& layers, int batch, int steps, int warmup) {
  return {"--layers",     layers,
          "--batch-size", std::to_string(batch),
          "--iters",      std::to_string(steps),
          "--warmup",     std::to_string(warmup),
          "--lr",         "0.001",
          "--threads",    "1"};
}

std::string training_missing(const Setup& s) {
  if (s.smoke.empty()) return "ezpz-smoke not built (cmake -DEZPZ_WITH_SMOKE=ON)";
  if (!is_executable(s.python)) return s.python + " not found (apt-get install python3-torch)";
  if (!is_executable(s.ddp_script) && !std::filesystem::exists(s.ddp_script)) {
    return "the DDP script " + s.ddp_script + " not found (--ddp-script)";
  }
  if (!exits_zero({{s.python, "-c", "import torch.distributed as d; assert d.is_gloo_available()"},
                   base_env(s)})) {
    return s.python + " cannot import torch with Gloo (apt-get install python3-torch)";
  }
  return "";
}

}  // namespace ezpz::bench
