#pragma once
// A profile that sets every key to a value other than its default, for the tests
// that the cache and `ezpz machines show` keep every key: a new key that is not
// added here fails check_every_key_set.
#include <type_traits>
#include <variant>

#include "ezpz/profile/machine_profile.hpp"
#include "tests/catch.hpp"

namespace ezpz::testing {

constexpr const char* k_every_key_profile = R"(description: every key set
match:
  hostnames: ["x9*"]
  env:
    PBS_O_HOST: "test*"
scheduler: slurm
launcher: openmpi
launcher_program: mpirun.openmpi
gpus_per_node: 4
device: cuda
backend: nccl
cpu_bind:
  style: list
  depth: 3
  sockets: 2
  cores_per_socket: 8
  reserved_cores: [0, 8]
gpu_bind:
  order: ["3", "2", "1", "0"]
  variables: [CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES]
  launcher_bind: closest
  ranks_per_gpu: 2
env:
  A: "1"
launcher_args: ["--tag-output"]
mpi_launcher_args: ["--mca", "btl", "self"]
network_suffix: .hsn.example.org
master_addr: 10.0.0.1
bad_node_patterns:
  down: 'node (\S+) is down'
libraries:
  libnccl-net.so: /soft/aws-ofi-nccl/lib
batch:
  filesystems: home:flare
  directives: ["-l place=scatter"]
  required: [account]
)";

template <typename T>
constexpr bool k_keyed = std::is_same_v<T, MachineMatch> || std::is_same_v<T, CpuBind> ||
                         std::is_same_v<T, GpuBind> || std::is_same_v<T, BatchDefaults>;

// Every key of `value` (and of the structs it holds) differs from its default.
template <typename T>
void check_every_key_set(const T& value) {
  for (const ProfileKey<T>& row : profile_keys<T>()) {
    std::visit(
        [&](auto member) {
          if constexpr (!std::is_same_v<decltype(member), std::monostate>) {
            using Value = std::remove_cvref_t<decltype(value.*member)>;
            INFO("key " << row.key);
            CHECK_FALSE(value.*member == Value{});
            if constexpr (k_keyed<Value>) check_every_key_set(value.*member);
          }
        },
        row.member);
  }
}

}  // namespace ezpz::testing
