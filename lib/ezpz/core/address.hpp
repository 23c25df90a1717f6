#pragma once
// Host addresses as text, for the launcher and for the runtime ezpz_runtime users link (which
// carries this file, not the rest of core: lib/runtime.cmake).
#include <string_view>

namespace ezpz {

// An IPv4 literal ("192.0.2.1": four numbers 0-255) or an IPv6 one (holds a ':').
bool ip_literal(std::string_view host);

// 127.x.y.z, ::1 or "localhost": an address that is this machine, whatever its name. A host
// of a nodefile that resolves to one is this host (simulated nodes n01.. on one machine).
bool loopback_address(std::string_view address);

}  // namespace ezpz
