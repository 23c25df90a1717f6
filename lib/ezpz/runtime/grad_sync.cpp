#include "ezpz/runtime/grad_sync.hpp"

#include <torch/csrc/autograd/generated/variable_factories.h>

#include "ezpz/smoke/report.hpp"

namespace ezpz::dist {

struct GradSync::State {
  struct Slot {
    std::size_t bucket = 0;
    std::int64_t offset = 0;
    torch::Tensor grad_view;  // the averaged gradient, shaped like the parameter
  };
  struct Bucket {
    torch::Tensor buffer;              // flat, on the communication device
    std::vector<std::size_t> members;  // parameter indices
    std::size_t pending = 0;           // gradients still to arrive this step
    c10::intrusive_ptr<c10d::Work> work;
    // {1 / world size} in the buffer's type, not a 0-dim tensor: a bf16
    // gradient then is widened before it is divided, not after.
    torch::Tensor scale;
  };

  c10::intrusive_ptr<c10d::ProcessGroup> group;
  // One rank has nothing to average: no buckets, no hooks, no collectives per
  // step (each cost a hand-off to Gloo's thread, ~0.3 ms).
  bool solo = false;
  std::vector<torch::Tensor> params;
  CommOptions comm;
  std::vector<Slot> slots;
  std::vector<Bucket> buckets;
  std::vector<bool> arrived;
  std::size_t next_launch = 0;
  // The loss rides in bucket 0's last element when that bucket is float32 or
  // float64: one collective fewer per step, and no small all-reduce competing
  // with backward for the CPU. Otherwise (bf16) it has its own all-reduce.
  bool loss_in_bucket = false;
  torch::Tensor loss;  // bucket 0's last element, or its own buffer
  c10::intrusive_ptr<c10d::Work> loss_work;
  std::vector<unsigned> hooks;

  torch::Tensor slice(std::size_t index) {
    const Slot& s = slots[index];
    return buckets[s.bucket].buffer.narrow(0, s.offset, params[index].numel());
  }

  // Gradients arrive roughly in reverse order of definition, so buckets are
  // filled from the last parameter backwards and the first bucket is ready first.
  void assign_buckets(std::size_t bucket_bytes) {
    slots.resize(params.size());
    std::vector<torch::TensorOptions> kinds;
    std::size_t bytes = 0;
    for (std::size_t i = params.size(); i-- > 0;) {
      const torch::Tensor& p = params[i];
      std::size_t element = comm.dtype ? c10::elementSize(*comm.dtype) : p.element_size();
      std::size_t size = static_cast<std::size_t>(p.numel()) * element;
      bool full = !buckets.empty() && bytes + size > bucket_bytes;
      bool other_dtype = !kinds.empty() && !comm.dtype && kinds.back().dtype() != p.dtype();
      if (buckets.empty() || full || other_dtype) {
        buckets.emplace_back();
        kinds.push_back(
            p.options().device(comm.device).dtype(comm.dtype.value_or(p.scalar_type())));
        bytes = 0;
      }
      slots[i].bucket = buckets.size() - 1;
      buckets.back().members.push_back(i);
      bytes += size;
    }
    allocate_buffers(kinds);
  }

  void allocate_buffers(const std::vector<torch::TensorOptions>& kinds) {
    for (std::size_t b = 0; b < buckets.size(); ++b) {
      std::int64_t numel = 0;
      for (std::size_t i : buckets[b].members) {
        slots[i].offset = numel;
        numel += params[i].numel();
      }
      bool carries_loss =
          b == 0 && (kinds[b].dtype() == torch::kFloat || kinds[b].dtype() == torch::kDouble);
      buckets[b].buffer = torch::empty({numel + (carries_loss ? 1 : 0)}, kinds[b]);
      buckets[b].scale = torch::full({1}, 1.0 / group->getSize(), kinds[b]);
      if (carries_loss) loss = buckets[b].buffer.narrow(0, numel, 1);
      loss_in_bucket = loss_in_bucket || carries_loss;
    }
    for (std::size_t i = 0; i < params.size(); ++i) {
      torch::Tensor view = slice(i).view(params[i].sizes());
      bool same = view.device() == params[i].device() && view.dtype() == params[i].dtype();
      slots[i].grad_view = same ? view : torch::Tensor();
    }
  }

  void broadcast_from_rank0() {
    torch::NoGradGuard no_grad;
    for (Bucket& bucket : buckets) {
      for (std::size_t i : bucket.members) slice(i).copy_(params[i].reshape(-1));
      std::vector<torch::Tensor> tensors{bucket.buffer};
      c10d::BroadcastOptions options;
      options.rootRank = 0;
      group->broadcast(tensors, options)->wait();
      for (std::size_t i : bucket.members) params[i].copy_(slice(i).view(params[i].sizes()));
    }
  }

  void launch_ready() {
    while (next_launch < buckets.size() && buckets[next_launch].pending == 0) {
      std::vector<torch::Tensor> tensors{buckets[next_launch].buffer};
      buckets[next_launch].work = group->allreduce(tensors);
      ++next_launch;
    }
  }

  // Each gradient is divided by the world size on its way into the bucket,
  // as DDP's Reducer does (at::mul_out): the sum over ranks is then the mean,
  // with no second pass over the bucket after the all-reduce.
  void on_grad(std::size_t index, const torch::Tensor& grad) {
    if (arrived[index]) return;  // a second backward before end_step() adds nothing
    torch::Tensor into = slice(index);
    at::mul_out(into, grad.reshape(-1), buckets[slots[index].bucket].scale);
    arrived[index] = true;
    if (--buckets[slots[index].bucket].pending == 0) launch_ready();
  }

  // A parameter that got no gradient contributes zeros, so that every rank
  // still reduces every bucket in the same order.
  void launch_stragglers() {
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (arrived[i]) continue;
      slice(i).zero_();
      arrived[i] = true;
      --buckets[slots[i].bucket].pending;
    }
    launch_ready();
  }

  void install_hooks() {
    for (std::size_t i = 0; i < params.size(); ++i) {
      hooks.push_back(params[i].register_hook([this, i](torch::Tensor grad) { on_grad(i, grad); }));
    }
  }
};

CommOptions comm_options(const std::string& backend, torch::Device device,
                         torch::ScalarType dtype) {
  CommOptions options;
  options.device = device;
  if (backend != "gloo") return options;
  if (!device.is_cpu() && !device.is_cuda()) options.device = torch::kCPU;
  if (dtype == torch::kBFloat16) options.dtype = torch::kFloat;
  return options;
}

GradSync::GradSync(c10::intrusive_ptr<c10d::ProcessGroup> group, std::vector<torch::Tensor> params,
                   const CommOptions& options)
    : state_(std::make_shared<State>()) {
  State& s = *state_;
  s.group = std::move(group);
  s.params = std::move(params);
  s.comm = options;
  s.solo = s.group->getSize() == 1;
  if (s.solo) return;
  s.arrived.assign(s.params.size(), false);
  s.assign_buckets(options.bucket_bytes);
  s.broadcast_from_rank0();
  s.install_hooks();
}

GradSync::~GradSync() {
  // The hooks point at this state: take them off before it goes.
  for (std::size_t i = 0; i < state_->hooks.size(); ++i) {
    state_->params[i].remove_hook(state_->hooks[i]);
  }
}

void GradSync::begin_step(const torch::Tensor& loss) {
  State& s = *state_;
  for (torch::Tensor& p : s.params) p.mutable_grad().reset();
  if (s.solo) {
    s.loss = loss.detach();
    return;
  }
  std::fill(s.arrived.begin(), s.arrived.end(), false);
  for (State::Bucket& bucket : s.buckets) {
    bucket.pending = bucket.members.size();
    bucket.work.reset();
  }
  s.next_launch = 0;
  if (s.loss_in_bucket) {
    at::mul_out(s.loss, loss.detach().reshape({1}), s.buckets[0].scale);
    return;
  }
  s.loss = loss.detach().to(s.comm.device, torch::kDouble).reshape({1}).clone();
  std::vector<torch::Tensor> tensors{s.loss};
  s.loss_work = s.group->allreduce(tensors);
}

void GradSync::end_step() {
  State& s = *state_;
  if (s.solo) return;
  s.launch_stragglers();
  if (s.loss_work) s.loss_work->wait();
  for (State::Bucket& bucket : s.buckets) bucket.work->wait();
  for (std::size_t i = 0; i < s.params.size(); ++i) {
    const State::Slot& slot = s.slots[i];
    s.params[i].mutable_grad() =
        slot.grad_view.defined() ? slot.grad_view
                                 : s.slice(i).view(s.params[i].sizes()).to(s.params[i].options());
  }
}

double GradSync::mean_loss() const {
  // In a bucket it was divided on its way in, as the gradients; on its own it was not.
  double sum_or_mean = state_->loss.item<double>();
  bool divided = state_->loss_in_bucket || state_->solo;
  return divided ? sum_or_mean : sum_or_mean / state_->group->getSize();
}

GradSync::Agreement GradSync::check_identical() const {
  std::uint64_t h = 0;
  for (const torch::Tensor& p : state_->params) {
    torch::Tensor bytes = p.detach().contiguous().cpu();
    h = report::fingerprint(bytes.data_ptr(), bytes.numel() * bytes.element_size(), h);
  }
  auto as_signed = static_cast<std::int64_t>(h);
  // Where the gradients travel: NCCL reduces only CUDA tensors.
  torch::Tensor extremes =
      torch::tensor({as_signed, ~as_signed}, torch::kLong).to(state_->comm.device);
  std::vector<torch::Tensor> tensors{extremes};
  c10d::AllreduceOptions options;
  options.reduceOp = c10d::ReduceOp::MAX;
  state_->group->allreduce(tensors, options)->wait();
  Agreement a;
  a.max = static_cast<std::uint64_t>(extremes[0].item<std::int64_t>());
  a.min = static_cast<std::uint64_t>(~extremes[1].item<std::int64_t>());
  a.identical = a.min == a.max;
  return a;
}

std::size_t GradSync::bucket_count() const {
  return state_->buckets.size();
}

}  // namespace ezpz::dist
