#pragma once
// Which of the job's hosts an IP address is (supervise/peer_lost.hpp: gloo names a lost peer
// by its address): the resolver's side of it.
#include <string>
#include <vector>

#include "ezpz/supervise/peer_lost.hpp"

namespace ezpz::sys {

// Each address that is one of `hosts`, with that host: by its name (the resolver's reverse
// lookup, matched by short name) or else by one of each host's own addresses (a node's fast
// network has a name of its own: x3104c0s1b0n0.hsn.cm...). An address that is none of them,
// or that does not resolve, is left out; so is every address when `hosts` is empty.
AddressHosts hosts_at_addresses(const std::vector<std::string>& addresses,
                                const std::vector<std::string>& hosts);

}  // namespace ezpz::sys
