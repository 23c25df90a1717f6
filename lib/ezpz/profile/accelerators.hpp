#pragma once
// Counting accelerators from the vendor tools' output. Pure: the tools are run
// by lib/ezpz/sys/world.cpp, which hands their stdout to these functions.
#include <string_view>
#include <vector>

namespace ezpz {

// `nvidia-smi -L`: one "GPU <n>: <name> (UUID: ...)" line per device; MIG
// instances are indented "  MIG ..." lines under their GPU and not counted.
int count_nvidia_smi_devices(std::string_view output);

// `rocm-smi --showid`: one or more "GPU[<n>]\t\t: <field>: <value>" lines per
// device (ROCm 6 prints several fields per device), so distinct <n> are counted.
int count_rocm_smi_devices(std::string_view output);

// `xpu-smi discovery --dump 1`: CSV with a "Device ID" header, then one device
// id per line; distinct ids are counted.
int count_xpu_smi_devices(std::string_view output);

struct AcceleratorProbe {
  std::string_view program;            // looked up on PATH
  std::vector<std::string_view> args;  // argv[1..]
  int (*count)(std::string_view output);
};

// The probes in the order they are tried.
const std::vector<AcceleratorProbe>& accelerator_probes();

}  // namespace ezpz
