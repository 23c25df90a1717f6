#pragma once
// The libtorch half of ezpz-smoke: one translation unit, so flags and reports
// build without torch headers.
#include "ezpz/smoke/smoke_flags.hpp"

namespace ezpz::smoke {

// Prints one JSON object: libtorch version, devices, backends, threads. Starts
// no process group. Ends the process (status 0) without static destructors.
[[noreturn]] void run_probe();

// Trains on this rank and checks the result; 0 when every check passed, 1
// when one failed. Throws ezpz::Error for setup and communication failures
// (after rank 0 has written a failing summary.json where it could).
int run_smoke(const SmokeOptions& options);

}  // namespace ezpz::smoke
