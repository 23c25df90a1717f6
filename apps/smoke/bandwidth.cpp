#include "bandwidth.hpp"

#include <chrono>

#include <torch/torch.h>

#include "ezpz/runtime/grad_sync.hpp"

namespace ezpz::smoke {
namespace {

using report::Collective;

// One operation, waited for (as the training waits for its buckets).
struct Operation {
  c10::intrusive_ptr<c10d::ProcessGroup> group;
  Collective collective;
  std::vector<torch::Tensor> input;
  std::vector<std::vector<torch::Tensor>> gathered;  // all-gather's outputs

  void run() {
    if (collective == Collective::all_reduce) {
      group->allreduce(input)->wait();
    } else {
      group->allgather(gathered, input)->wait();
    }
  }
};

Operation make_operation(const dist::Dist& d, torch::Device device, Collective c,
                         std::int64_t elements) {
  torch::TensorOptions options = torch::TensorOptions(torch::kFloat).device(device);
  Operation op{d.group, c, {torch::ones({elements}, options)}, {}};
  if (c == Collective::all_gather) {
    op.gathered.emplace_back();
    for (int r = 0; r < d.world_size; ++r)
      op.gathered[0].push_back(torch::empty({elements}, options));
  }
  return op;
}

void wait_for(torch::Device device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

// The slowest rank's time: what every rank waited for. On the collectives' device:
// NCCL reduces only CUDA tensors.
double slowest(const dist::Dist& d, torch::Device device, double seconds) {
  std::vector<torch::Tensor> t{torch::tensor({seconds}, torch::kDouble).to(device)};
  c10d::AllreduceOptions options;
  options.reduceOp = c10d::ReduceOp::MAX;
  d.group->allreduce(t, options)->wait();
  return t[0].item<double>();
}

report::BandwidthRow time_one(const dist::Dist& d, torch::Device device, Collective c,
                              std::size_t bytes) {
  std::int64_t elements = report::elements_per_rank(c, bytes, d.world_size);
  Operation op = make_operation(d, device, c, elements);
  op.run();  // connections, allocations
  wait_for(device);
  d.group->barrier()->wait();
  int iterations = report::sweep_iterations(bytes);
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) op.run();
  wait_for(device);
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {.collective = c,
          .bytes = report::array_bytes(c, elements, d.world_size),
          .time_s = slowest(d, device, elapsed / iterations),
          .ranks = d.world_size};
}

}  // namespace

std::vector<report::BandwidthRow> measure_collectives(const dist::Dist& d, const SmokeOptions& o) {
  // Where the gradients would travel: Gloo reaches only CPU and CUDA memory.
  torch::Device device = dist::comm_options(d.backend, d.device, torch::kFloat).device;
  auto max_bytes = static_cast<std::size_t>(o.sweep_max_mb * (1 << 20));
  std::vector<report::BandwidthRow> rows;
  for (Collective c : {Collective::all_reduce, Collective::all_gather}) {
    for (std::size_t bytes : report::sweep_sizes(max_bytes))
      rows.push_back(time_one(d, device, c, bytes));
  }
  return rows;
}

}  // namespace ezpz::smoke
