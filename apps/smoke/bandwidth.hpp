#pragma once
// The collectives sweep of ezpz-smoke: all-reduce and all-gather timed over
// message sizes on the process group the training uses (libtorch; the sizes,
// repetitions and bandwidth arithmetic are lib/ezpz/smoke/collectives.hpp).
#include <vector>

#include "ezpz/runtime/dist.hpp"
#include "ezpz/smoke/collectives.hpp"
#include "ezpz/smoke/smoke_flags.hpp"

namespace ezpz::smoke {

// Every rank calls it; every rank gets the same rows (each time is the slowest
// rank's).
std::vector<report::BandwidthRow> measure_collectives(const dist::Dist& d, const SmokeOptions& o);

}  // namespace ezpz::smoke
