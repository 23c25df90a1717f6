// GradSync's arithmetic over real ranks, run by tests/integration/test_grad_sync.sh
// under `ezpz launch -n N`:
//
//   ezpz_grad_sync_check DTYPE BUCKET_BYTES    (DTYPE: fp32 or bf16)
//
// Rank r's loss is (r + 1) x k x (sum of two all-ones parameters) at step k,
// so every gradient element is (r + 1) x k on rank r, and after end_step()
// it must read the mean over ranks, (N + 1) / 2 x k, as must mean_loss() the
// mean of the ranks' losses. A BUCKET_BYTES below the first parameter's size
// gives each parameter its own bucket. Prints one line per rank and step;
// exit status 1 on a wrong value.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <torch/torch.h>

#include "ezpz/runtime/dist.hpp"
#include "ezpz/runtime/grad_sync.hpp"

namespace {

bool close(double got, double want) {
  return std::abs(got - want) <= 1e-6 * std::abs(want);
}

// One step; true when every gradient and the loss are the means over ranks.
bool step(ezpz::dist::GradSync& sync, std::vector<torch::Tensor>& params, int rank, int world,
          int k) {
  torch::Tensor sum = params[0].sum().to(torch::kFloat) + params[1].sum().to(torch::kFloat);
  torch::Tensor loss = sum * static_cast<float>((rank + 1) * k);
  sync.begin_step(loss);
  loss.backward();
  sync.end_step();
  double mean_factor = (world + 1) / 2.0 * k;
  double lo = params[0].grad().min().item<double>(), hi = params[1].grad().max().item<double>();
  hi = std::max(hi, params[0].grad().max().item<double>());
  lo = std::min(lo, params[1].grad().min().item<double>());
  double want_loss = sum.item<double>() * mean_factor;
  bool ok = close(lo, mean_factor) && close(hi, mean_factor) && close(sync.mean_loss(), want_loss);
  std::printf("rank %d step %d: grads %g..%g (want %g), loss %g (want %g): %s\n", rank, k, lo, hi,
              mean_factor, sync.mean_loss(), want_loss, ok ? "ok" : "WRONG");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: ezpz_grad_sync_check fp32|bf16 BUCKET_BYTES\n");
    return 2;
  }
  torch::Dtype dtype = std::string(argv[1]) == "bf16" ? torch::kBFloat16 : torch::kFloat;
  ezpz::dist::Dist d = ezpz::dist::setup();
  // On the rank's device, as a trainer's parameters are (cuda:0 on a GPU machine).
  torch::TensorOptions on_device = torch::TensorOptions(dtype).device(d.device);
  std::vector<torch::Tensor> params{torch::ones({100}, on_device).requires_grad_(),
                                    torch::ones({10}, on_device).requires_grad_()};
  ezpz::dist::CommOptions options = ezpz::dist::comm_options(d.backend, d.device, dtype);
  options.bucket_bytes = std::strtoull(argv[2], nullptr, 10);
  ezpz::dist::GradSync sync(d.group, params, options);
  bool ok = true;
  for (int k = 1; k <= 2; ++k) ok = step(sync, params, d.rank, d.world_size, k) && ok;
  std::fflush(stdout);
  return ok ? 0 : 1;
}
