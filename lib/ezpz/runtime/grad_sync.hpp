#pragma once
// Data-parallel training by hand over a c10d process group, what
// torch.nn.parallel.DistributedDataParallel does for Python:
//
//   GradSync sync(dist.group, model->parameters(),   // broadcasts rank 0's
//                 comm_options(dist.backend, dist.device, torch::kFloat));
//   for (...) {                                       // parameters
//     auto loss = ...;
//     sync.begin_step(loss);   // before backward
//     loss.backward();         // full buckets start reducing as grads arrive
//     sync.end_step();         // every grad is now the mean over ranks
//     optimizer.step();
//   }
//
// Gradients are copied into flat buckets (about 25 MB, filled in backward
// order) by hooks; a bucket is all-reduced as soon as its last gradient
// arrives, so communication overlaps the rest of backward. Buckets are
// launched in order, so every rank issues the same collectives in the same
// order. After end_step() each parameter's grad is a view of its bucket (a
// converted copy when the bucket lives on another device or in another type).
// The default model's 2.3 MB of gradients fit one bucket, so there nothing
// overlaps; the larger presets have several. With one rank nothing is copied
// or reduced at all.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/types.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

namespace ezpz::dist {

// Where and in what type gradients travel.
struct CommOptions {
  torch::Device device{torch::kCPU};       // where the buckets live
  std::optional<torch::ScalarType> dtype;  // the buckets' type; unset: the parameters'
  std::size_t bucket_bytes = 25u << 20;
};

// What `backend` can reduce for parameters on `device` of type `dtype`: Gloo
// reaches only CPU and CUDA memory, and torch 1.13's Gloo has no bfloat16, so
// those travel through the CPU or as float32.
CommOptions comm_options(const std::string& backend, torch::Device device, torch::ScalarType dtype);

class GradSync {
 public:
  // Broadcasts rank 0's parameters to every rank and installs the hooks.
  GradSync(c10::intrusive_ptr<c10d::ProcessGroup> group, std::vector<torch::Tensor> params,
           const CommOptions& options);
  ~GradSync();
  GradSync(const GradSync&) = delete;
  GradSync& operator=(const GradSync&) = delete;

  // Call after forward, before backward: clears the grads (the hooks fill the
  // buckets instead) and starts averaging `loss` over ranks.
  void begin_step(const torch::Tensor& loss);
  // Call after backward: waits for every bucket (each gradient was divided by
  // the world size on its way in) and points each grad at its averaged slice. Reduces any bucket
  // whose parameters got no gradient (as zeros), so ranks never disagree.
  void end_step();
  // The loss averaged over ranks, valid after end_step().
  double mean_loss() const;

  // A fingerprint of this rank's parameter bytes; `identical` when the
  // fingerprints of all ranks agree (two all-reduces: MAX of h and of ~h).
  struct Agreement {
    bool identical = false;
    std::uint64_t min = 0;
    std::uint64_t max = 0;
  };
  Agreement check_identical() const;

  std::size_t bucket_count() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace ezpz::dist
