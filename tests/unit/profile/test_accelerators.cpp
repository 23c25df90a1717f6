// Counting devices in the vendor tools' output, from samples of real runs.
#include "ezpz/profile/accelerators.hpp"

#include <string_view>
#include <vector>

#include "tests/catch.hpp"

namespace {

struct Sample {
  std::string_view what;
  std::string_view output;
  int devices;
};

void check_samples(int (*count)(std::string_view), const std::vector<Sample>& samples) {
  for (const auto& sample : samples) {
    INFO(sample.what);
    CHECK(count(sample.output) == sample.devices);
  }
}

}  // namespace

TEST_CASE("nvidia-smi -L output", "[accelerators]") {
  check_samples(
      ezpz::count_nvidia_smi_devices,
      {
          {"Polaris node, 4 x A100",
           "GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-4f1b7f54-4e8b-2a1f-6f0c-31a9bb1bd0a2)\n"
           "GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-b9f1d3a4-5c2e-0a1e-7d64-0f6a1c5e8b3d)\n"
           "GPU 2: NVIDIA A100-SXM4-40GB (UUID: GPU-0c6e2a7b-91d4-f3a8-52b1-6e7d8c9a0b1f)\n"
           "GPU 3: NVIDIA A100-SXM4-40GB (UUID: GPU-7a3d9e1c-2b4f-6c8d-0e1a-3f5b7d9c1e2a)\n",
           4},
          {"one H100, no trailing newline",
           "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-2d1e6a3b-7c9f-48e2-b0d1-5a6c7e8f9a0b)", 1},
          {"MIG instances are listed under their GPU, not counted",
           "GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-4f1b7f54-4e8b-2a1f-6f0c-31a9bb1bd0a2)\n"
           "  MIG 3g.20gb     Device  0: (UUID: MIG-1c2d3e4f-5a6b-5c7d-8e9f-0a1b2c3d4e5f)\n"
           "  MIG 3g.20gb     Device  1: (UUID: MIG-6a7b8c9d-0e1f-5a2b-3c4d-5e6f7a8b9c0d)\n"
           "GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-b9f1d3a4-5c2e-0a1e-7d64-0f6a1c5e8b3d)\n",
           2},
          {"CRLF line ends",
           "GPU 0: Tesla V100-SXM2-16GB (UUID: GPU-a)\r\nGPU 1: Tesla V100-SXM2-16GB "
           "(UUID: GPU-b)\r\n",
           2},
          {"no devices", "No devices were found\n", 0},
          {"no driver",
           "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA "
           "driver. Make sure that the latest NVIDIA driver is installed and running.\n",
           0},
          {"a sentence that starts with GPU", "GPU access blocked by the OS\n", 0},
          {"empty", "", 0},
      });
}

TEST_CASE("rocm-smi --showid output", "[accelerators]") {
  check_samples(ezpz::count_rocm_smi_devices,
                {
                    {"ROCm 5, Frontier node, 8 x MI250X GCD",
                     "\n\n"
                     "======================= ROCm System Management Interface "
                     "=======================\n"
                     "=================================== ID "
                     "===================================\n"
                     "GPU[0]\t\t: GPU ID: 0x740c\n"
                     "GPU[1]\t\t: GPU ID: 0x740c\n"
                     "GPU[2]\t\t: GPU ID: 0x740c\n"
                     "GPU[3]\t\t: GPU ID: 0x740c\n"
                     "GPU[4]\t\t: GPU ID: 0x740c\n"
                     "GPU[5]\t\t: GPU ID: 0x740c\n"
                     "GPU[6]\t\t: GPU ID: 0x740c\n"
                     "GPU[7]\t\t: GPU ID: 0x740c\n"
                     "========================================================================"
                     "========\n"
                     "============================= End of ROCm SMI Log "
                     "==============================\n",
                     8},
                    {"ROCm 6 prints several fields per device",
                     "============================ ROCm System Management Interface "
                     "============================\n"
                     "=========================================== ID "
                     "===========================================\n"
                     "GPU[0]\t\t: Device Name: \t\tAMD Instinct MI250X\n"
                     "GPU[0]\t\t: Device ID: \t\t0x740c\n"
                     "GPU[0]\t\t: Device Rev: \t\t0x01\n"
                     "GPU[0]\t\t: Subsystem ID: \t0x0000\n"
                     "GPU[0]\t\t: GUID: \t\t41034\n"
                     "GPU[1]\t\t: Device Name: \t\tAMD Instinct MI250X\n"
                     "GPU[1]\t\t: Device ID: \t\t0x740c\n"
                     "GPU[1]\t\t: Device Rev: \t\t0x01\n"
                     "GPU[1]\t\t: Subsystem ID: \t0x0000\n"
                     "GPU[1]\t\t: GUID: \t\t60711\n"
                     "========================================================================"
                     "==================\n"
                     "================================== End of ROCm SMI Log "
                     "===================================\n",
                     2},
                    {"ids need not start at 0 (card0 an integrated GPU)",
                     "GPU[1] \t\t: GPU ID: 0x66af\nGPU[2] \t\t: GPU ID: 0x66af\n", 2},
                    {"warnings are not devices",
                     "WARNING: AMD GPU device(s) is/are in a low-power state. Check power "
                     "control/runtime_status\n\nGPU[0]\t\t: GPU ID: 0x74a1\n",
                     1},
                    {"no GPUs",
                     "======================= ROCm System Management Interface "
                     "=======================\n"
                     "============================= End of ROCm SMI Log "
                     "==============================\n",
                     0},
                    {"empty", "", 0},
                });
}

TEST_CASE("xpu-smi discovery --dump 1 output", "[accelerators]") {
  check_samples(ezpz::count_xpu_smi_devices,
                {
                    {"Aurora node, 6 x Max 1550", "Device ID\n0\n1\n2\n3\n4\n5\n", 6},
                    {"more fields, quoted",
                     "Device ID,Device Name\n"
                     "\"0\",\"Intel(R) Data Center GPU Max 1550\"\n"
                     "\"1\",\"Intel(R) Data Center GPU Max 1550\"\n",
                     2},
                    {"padded, CRLF", "Device ID\r\n 0\r\n 1\r\n", 2},
                    {"a repeated id counts once", "Device ID\n0\n0\n", 1},
                    {"header only", "Device ID\n", 0},
                    {"error", "Error: Level Zero Initialization Error\n", 0},
                    {"empty", "", 0},
                });
}

TEST_CASE("accelerator probes are tried NVIDIA, AMD, Intel", "[accelerators]") {
  const auto& probes = ezpz::accelerator_probes();
  REQUIRE(probes.size() == 3);
  CHECK(probes[0].program == "nvidia-smi");
  CHECK(probes[0].args == std::vector<std::string_view>{"-L"});
  CHECK(probes[1].program == "rocm-smi");
  CHECK(probes[1].args == std::vector<std::string_view>{"--showid"});
  CHECK(probes[2].program == "xpu-smi");
  CHECK(probes[2].args == std::vector<std::string_view>{"discovery", "--dump", "1"});
}
