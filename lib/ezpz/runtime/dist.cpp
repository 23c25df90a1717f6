#include "ezpz/runtime/dist.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <type_traits>

#include <ATen/Context.h>
#include <torch/cuda.h>
#include <torch/version.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef USE_C10D_NCCL
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include "ezpz/core/address.hpp"
#include "ezpz/core/error.hpp"
#include "ezpz/core/text.hpp"
#include "ezpz/runtime/listener.hpp"

extern char** environ;

namespace ezpz::dist {
namespace {

using std::chrono::milliseconds;

std::string seconds(long ms) {
  return fmt::format("{:g} s", static_cast<double>(ms) / 1000.0);
}

// c10::Error::what() carries a C++ backtrace; users need the first line.
std::string torch_message(const std::exception& error) {
  if (const auto* c10 = dynamic_cast<const c10::Error*>(&error)) {
    return c10->what_without_backtrace();
  }
  return error.what();
}

milliseconds left_until(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
  return std::max(left, milliseconds(1));
}

// TCPStore's own wait for workers gives up silently (torch 1.13), which left
// rank 0 waiting in Gloo's connect for the collective timeout instead. Here
// the last rank to arrive opens the gate, and every rank fails on the
// rendezvous deadline, saying how many came.
void await_all_ranks(c10d::Store& store, const Dist& d,
                     std::chrono::steady_clock::time_point deadline) {
  if (store.add("ezpz/joined", 1) == d.world_size) {
    store.set("ezpz/all-joined", std::vector<uint8_t>{1});
    return;
  }
  try {
    store.wait({"ezpz/all-joined"}, left_until(deadline));
  } catch (const std::exception&) {
    throw Error(
        fmt::format("only {} of {} ranks joined", store.add("ezpz/joined", 0), d.world_size));
  }
}

// Rank 0 serves the store; every rank, rank 0 too, connects as a client.
c10::intrusive_ptr<c10d::Store> open_store(const Dist& d) {
  auto deadline = std::chrono::steady_clock::now() + milliseconds(d.timeouts.rendezvous_ms);
  if (d.rank != 0) {
    wait_for_listener(d.rendezvous.master_addr, d.rendezvous.master_port, d.timeouts.rendezvous_ms);
  }
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(d.rendezvous.master_port);
  options.isServer = d.rank == 0;
  options.numWorkers = static_cast<std::size_t>(d.world_size);
  options.waitWorkers = false;  // await_all_ranks does it, and does not give up silently
  options.timeout = left_until(deadline);
  auto store = c10::make_intrusive<c10d::TCPStore>(d.rendezvous.master_addr, options);
  await_all_ranks(*store, d, deadline);
  // From here the store serves Gloo's connection set-up, bounded by the collective timeout.
  store->setTimeout(milliseconds(d.timeouts.collective_ms));
  return store;
}

c10::intrusive_ptr<c10d::Store> connect_store(const Dist& d) {
  try {
    return open_store(d);
  } catch (const std::exception& error) {
    throw Error(
        fmt::format("rendezvous at MASTER_ADDR={} MASTER_PORT={} failed ({}, timeout {}): {}",
                    d.rendezvous.master_addr, d.rendezvous.master_port,
                    d.rank == 0 ? "serving" : "joining", seconds(d.timeouts.rendezvous_ms),
                    torch_message(error)),
        ExitCode::failure);
  }
}

// Gloo's own transport: GLOO_SOCKET_IFNAME as torch honours it; loopback when
// rank 0 is on loopback (then every rank is on this host); otherwise the
// address this host's name resolves to.
std::shared_ptr<gloo::transport::Device> gloo_device(const Env& env, const Dist& d) {
  using Gloo = c10d::ProcessGroupGloo;
  if (auto ifname = get_nonempty(env, "GLOO_SOCKET_IFNAME")) {
    return Gloo::createDeviceForInterface(*ifname);
  }
  if (d.world_size == 1 || loopback_address(d.rendezvous.master_addr)) {
    return Gloo::createDeviceForHostname("127.0.0.1");
  }
  return Gloo::createDefaultDevice();
}

using Group = c10::intrusive_ptr<c10d::ProcessGroup>;

// torch 2 made ProcessGroupGloo and ProcessGroupNCCL c10d::Backends: a ProcessGroup
// routes each collective to the backend registered for its tensors' device, as
// torch.distributed's init_process_group sets it up (Gloo for cpu and cuda, NCCL for
// cuda). torch 1's are ProcessGroups themselves. Checked with torch 1.13 (Debian) and
// 2.11 (CUDA, on a GPU machine).
template <typename Backend>
Group as_group(c10::intrusive_ptr<Backend> backend, const c10::intrusive_ptr<c10d::Store>& store,
               const Dist& d, std::initializer_list<c10::DeviceType> devices) {
#if TORCH_VERSION_MAJOR >= 2
  using Type = c10d::ProcessGroup::BackendType;
  const Type type = std::is_same_v<Backend, c10d::ProcessGroupGloo> ? Type::GLOO : Type::NCCL;
  auto group = c10::make_intrusive<c10d::ProcessGroup>(store, d.rank, d.world_size);
  group->setDefaultBackend(type);
  c10::intrusive_ptr<c10d::Backend> base = std::move(backend);
  for (c10::DeviceType device : devices) group->setBackend(device, type, base);
  return group;
#else
  (void)store, (void)d, (void)devices;
  return backend;
#endif
}

Group make_gloo(const Env& env, const Dist& d, const c10::intrusive_ptr<c10d::Store>& store) {
  auto options = c10d::ProcessGroupGloo::Options::create(milliseconds(d.timeouts.collective_ms));
  options->devices.push_back(gloo_device(env, d));
  // Gradient buckets are reduced one after another; a second thread lets the
  // next bucket start while the last one finishes.
  options->threads = 2;
  return as_group(c10::make_intrusive<c10d::ProcessGroupGloo>(store, d.rank, d.world_size, options),
                  store, d, {c10::DeviceType::CPU, c10::DeviceType::CUDA});
}

#ifdef USE_C10D_NCCL
Group make_nccl(const Dist& d, const c10::intrusive_ptr<c10d::Store>& store) {
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = milliseconds(d.timeouts.collective_ms);
  return as_group(c10::make_intrusive<c10d::ProcessGroupNCCL>(store, d.rank, d.world_size, options),
                  store, d, {c10::DeviceType::CUDA});
}
#endif

Group make_group(const Env& env, const Dist& d) {
  // One rank needs no network: an in-memory store gives the same code path.
  c10::intrusive_ptr<c10d::Store> store;
  if (d.world_size == 1) {
    store = c10::make_intrusive<c10d::HashStore>();
  } else {
    store = connect_store(d);
  }
  try {
#ifdef USE_C10D_NCCL
    if (d.backend == "nccl") return make_nccl(d, store);
#endif
    return make_gloo(env, d, store);
  } catch (const std::exception& error) {
    throw Error(fmt::format("{} process group of {} (rank {}, MASTER_ADDR={}): {}", d.backend,
                            plural(d.world_size, "rank"), d.rank, d.rendezvous.master_addr,
                            torch_message(error)),
                ExitCode::failure);
  }
}

c10::Device to_device(const runtime::DeviceChoice& choice) {
  c10::Device device(choice.type);
  if (choice.index >= 0) device.set_index(static_cast<c10::DeviceIndex>(choice.index));
  return device;
}

}  // namespace

// Only what this binary can construct counts: NCCL when built against a CUDA
// libtorch; MPI, XCCL and oneCCL never (their process groups are not in
// Debian's libtorch).
runtime::Availability probe() {
  runtime::Availability a;
#ifdef EZPZ_TORCH_CUDA
  a.cuda_built = true;
  a.cuda_devices = static_cast<int>(torch::cuda::device_count());
#endif
#ifdef __APPLE__
  a.mps_built = true;
  a.mps_available = at::hasMPS();
#endif
#ifdef USE_C10D_NCCL
  a.nccl = a.cuda_devices > 0;
#endif
  return a;
}

std::string libtorch_version() {
  return TORCH_VERSION;
}

namespace {

void read_rank(Dist& d, const Env& env) {
  d.rank_info = runtime::rank_info_from_env(env);
  d.rank = d.rank_info.rank;
  d.world_size = d.rank_info.world_size;
  d.local_rank = d.rank_info.local_rank;
  d.local_world_size = d.rank_info.local_world_size;
  d.node_index = d.rank_info.node_index;
  d.log = runtime::log_policy(env, d.rank);
  d.timeouts = runtime::timeouts_from_env(env);
  d.rendezvous = runtime::rendezvous_from_env(env, d.rank_info);
}

void choose_device_and_backend(Dist& d, const Env& env) {
  runtime::Availability available = probe();
  runtime::DeviceChoice device = runtime::choose_device(env, available, d.local_rank);
  runtime::BackendChoice backend =
      runtime::choose_backend(get_nonempty(env, "TORCH_BACKEND"), device, available,
                              runtime::shared_gpu(env, d.local_rank, d.local_world_size));
  d.device = to_device(device);
  d.device_source = device.source;
  d.backend = backend.name;
  d.backend_source = backend.source;
#ifdef USE_C10D_NCCL
  // NCCL binds to the current device: set it before the group exists.
  if (d.device.is_cuda()) c10::cuda::set_device(d.device.index());
#endif
}

}  // namespace

Dist setup(const Env& env) {
  Dist d;
  read_rank(d, env);
  choose_device_and_backend(d, env);
  d.group = make_group(env, d);
  return d;
}

Dist setup() {
  return setup(process_environment());
}

Env process_environment() {
  Env env;
  for (char** entry = environ; entry && *entry; ++entry) {
    const char* eq = std::strchr(*entry, '=');
    if (eq) env.emplace(std::string(*entry, static_cast<std::size_t>(eq - *entry)), eq + 1);
  }
  return env;
}

}  // namespace ezpz::dist
