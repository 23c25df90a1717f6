#pragma once
// Lines in which a rank says it lost its peer, naming the peer by its IP address (gloo's
// "Connection closed by peer [10.0.0.2]:41384"): the victim is the host at that address, the
// rank that printed it is the teardown. Rows of data, each with the real line it was taken
// from. Pure: turning an address back into one of the job's hosts is the caller's lookup
// (sys/addresses.hpp), handed in as a table.
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ezpz {

// One line that named a lost peer.
struct PeerLost {
  std::string address;  // "10.0.0.2", "fe80::1", as the line wrote it
  std::string pattern;  // the row's name: "gloo-closed-by-peer"
  std::string line;
};

// Every line of `output` that names a lost peer, in order (each line's first 4 KiB).
std::vector<PeerLost> peers_lost(std::string_view output);

// The addresses those lines name, first seen first, once each: what the caller looks up.
std::vector<std::string> lost_peer_addresses(std::string_view output);

// address -> the job's host at that address (the caller's lookup; an address not in it is
// none of the job's hosts, and never a bad node).
using AddressHosts = std::map<std::string, std::string, std::less<>>;

}  // namespace ezpz
