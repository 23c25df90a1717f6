#pragma once
// Waiting for rank 0's TCPStore to listen. libtorch's own client sleeps a
// whole second after each refused connection, and ranks other than 0 usually
// start before rank 0 listens: polling here first takes that second off every
// job's start-up. No libtorch, only sockets.
#include <string>

namespace ezpz::dist {

// Returns once something accepts TCP connections at host:port; throws Error
// ("nothing accepted a connection at HOST:PORT within 5 s", "cannot resolve
// HOST: ...") otherwise. Each attempt is bounded, so an address that drops
// packets fails on time too.
void wait_for_listener(const std::string& host, int port, long timeout_ms);

}  // namespace ezpz::dist
