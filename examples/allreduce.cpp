// Every rank that `ezpz launch` (or mpiexec, srun, torchrun) started joins
// one process group through ezpz::dist::setup(), then all of them add up
// rank + 1: with N ranks each must see N(N+1)/2.
//
//   $ ezpz launch -n 2 -- ./allreduce
//   rank 0 of 2 (local 0 of 2) on cpu over gloo: sum 3, expected 3
//   rank 1 of 2 (local 1 of 2) on cpu over gloo: sum 3, expected 3
#include <cstdio>
#include <exception>
#include <vector>

#include <ezpz/core/error.hpp>
#include <ezpz/runtime/dist.hpp>

int main() {
  try {
    ezpz::dist::Dist dist = ezpz::dist::setup();
    ezpz::dist::log(dist, "{} ranks, backend {} ({})", dist.world_size, dist.backend,
                    dist.backend_source);

    std::vector<at::Tensor> tensors = {
        at::full({1}, dist.rank + 1.0, at::TensorOptions().dtype(at::kDouble).device(dist.device))};
    dist.group->allreduce(tensors)->wait();
    const double sum = tensors[0].item<double>();
    const double expected = dist.world_size * (dist.world_size + 1) / 2.0;

    std::printf("rank %d of %d (local %d of %d) on %s over %s: sum %g, expected %g\n", dist.rank,
                dist.world_size, dist.local_rank, dist.local_world_size, dist.device.str().c_str(),
                dist.backend.c_str(), sum, expected);
    return sum == expected ? 0 : 1;
  } catch (const ezpz::Error& error) {  // setup(): "where: what"
    std::fprintf(stderr, "allreduce: %s\n", error.what());
    return 1;
  } catch (const std::exception& error) {  // libtorch's own
    std::fprintf(stderr, "allreduce: %s\n", error.what());
    return 1;
  }
}
