#include "ezpz/supervise/peer_lost.hpp"

#include <algorithm>
#include <array>
#include <regex>

namespace ezpz {
namespace {

struct PeerLostRow {
  std::string_view name;
  std::string_view marker;  // plain text every such line holds: most lines skip the regex
  std::string_view regex;   // group 1: the peer's address
};

// gloo's TCP transport (gloo/transport/tcp/pair.cc, Pair::read()), as PyTorch's ranks raise it
// when the rank at the other end of a pair went away. Before gloo's peerDescription() (PyTorch
// up to 2.5), GLOO_ERROR_MSG("Connection closed by peer ", peer_.str()):
//   RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by
//     peer [10.0.0.2]:41384
// and since, "Connection closed by peer ", peerDescription() (gloo/transport/pair.cc: "rank N
// (" address ")"):
//   ... Connection closed by peer rank 1 ([10.0.0.2]:41384). This is typically caused by a
//     remote worker crashing. ...
// A peer that died hard resets the connection: "Read error ", peer, ": ", strerror(errno):
//   RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Read error
//     [10.0.0.2]:41384: Connection reset by peer
// Address::str() writes "[" address "]:" port, IPv6 addresses inside the brackets too.
constexpr std::array<PeerLostRow, 2> k_rows = {{
    {.name = "gloo-closed-by-peer",
     .marker = "Connection closed by peer",
     .regex = R"(Connection closed by peer (?:rank \d+ \()?\[([0-9A-Fa-f.:]+)\]:\d+)"},
    {.name = "gloo-reset-by-peer",
     .marker = "Connection reset by peer",
     .regex =
         R"(Read error (?:rank \d+ \()?\[([0-9A-Fa-f.:]+)\]:\d+\)?: Connection reset by peer)"},
}};

constexpr std::size_t k_max_line = 4096;  // as attempts.cpp: libstdc++'s matcher recurses

const std::vector<std::regex>& compiled() {
  static const std::vector<std::regex> regexes = [] {
    std::vector<std::regex> all;
    for (const PeerLostRow& row : k_rows) all.emplace_back(row.regex.begin(), row.regex.end());
    return all;
  }();
  return regexes;
}

void scan_line(std::string_view line, std::vector<PeerLost>& found) {
  std::cmatch m;
  for (std::size_t i = 0; i < k_rows.size(); ++i) {
    if (line.find(k_rows[i].marker) == std::string_view::npos) continue;
    if (!std::regex_search(line.data(), line.data() + line.size(), m, compiled()[i])) continue;
    found.push_back(
        {.address = m[1].str(), .pattern = std::string(k_rows[i].name), .line = std::string(line)});
    return;
  }
}

}  // namespace

std::vector<PeerLost> peers_lost(std::string_view output) {
  std::vector<PeerLost> found;
  while (!output.empty()) {
    const std::size_t end = std::min(output.find('\n'), output.size());
    scan_line(output.substr(0, std::min(end, k_max_line)), found);
    output.remove_prefix(std::min(end + 1, output.size()));
  }
  return found;
}

std::vector<std::string> lost_peer_addresses(std::string_view output) {
  std::vector<std::string> addresses;
  for (PeerLost& peer : peers_lost(output)) {
    if (std::find(addresses.begin(), addresses.end(), peer.address) == addresses.end()) {
      addresses.push_back(std::move(peer.address));
    }
  }
  return addresses;
}

}  // namespace ezpz
