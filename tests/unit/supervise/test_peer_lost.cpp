// A lost peer named by its address (gloo's "Connection closed by peer [IP]:PORT"): read from
// the ranks' lines, turned into one of the job's hosts through the caller's lookup (a fake
// table here), never a raw address and never a host outside the job.
#include <string>

#include "ezpz/supervise/attempts.hpp"
#include "ezpz/supervise/peer_lost.hpp"
#include "tests/catch.hpp"

using namespace ezpz;
using Hosts = std::vector<std::string>;

namespace {

// gloo's own words, as PyTorch raises them (peer_lost.cpp cites pair.cc).
const std::string k_closed_old =
    "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by "
    "peer [127.0.0.3]:41384";
const std::string k_closed_new =
    "RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed "
    "by peer rank 1 ([127.0.0.3]:41384). This is typically caused by a remote worker crashing. "
    "Check the logs of the remote worker before reporting an error. GLHF!";

// Three surviving ranks of four (n01, n03, n04) each raise gloo's error and exit 1; rank 1 on
// n02, at 127.0.0.3, went away.
std::string survivors(const std::string& gloo_line) {
  std::string out;
  for (const char* rank : {"0 (pid 10) on n01", "2 (pid 12) on n03", "3 (pid 13) on n04"}) {
    out += "Traceback (most recent call last):\n" + gloo_line + "\n";
    out += std::string("ezpz-rankenv: rank ") + rank + ": exited with code 1\n";
  }
  return out;
}

Classification classify(const std::string& output, AddressHosts lookup, int exit_status = 1) {
  AttemptFacts facts{.exit_status = exit_status, .scheduler_job = true, .output = output};
  facts.hosts = {"n01", "n02", "n03", "n04"};
  facts.ppn = 1;
  facts.world_size = 4;
  facts.address_hosts = std::move(lookup);
  return classify_attempt(facts, {});
}

}  // namespace

TEST_CASE("gloo's lost-peer lines give the peer's address", "[peer_lost]") {
  struct Row {
    const char* name;
    std::string line;
    Hosts addresses;
  };
  const Row rows[] = {
      {"gloo before peerDescription()", k_closed_old, {"127.0.0.3"}},
      {"gloo since: rank N ([IP]:PORT)", k_closed_new, {"127.0.0.3"}},
      {"IPv6", "RuntimeError: [pair.cc:598] Connection closed by peer [fe80::1]:5000", {"fe80::1"}},
      {"a hard death: reset",
       "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Read error "
       "[10.1.2.3]:4242: Connection reset by peer",
       {"10.1.2.3"}},
      {"another program's words, no address", "Connection closed by peer", {}},
      {"ssh's", "Connection closed by 10.1.2.3 port 22", {}},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    CHECK(lost_peer_addresses(row.line + "\n") == row.addresses);
  }
  // Each address once, first seen first.
  CHECK(lost_peer_addresses(survivors(k_closed_old) + k_closed_new) == Hosts{"127.0.0.3"});
  const std::vector<PeerLost> peers = peers_lost("x\n" + k_closed_old + "\n");
  REQUIRE(peers.size() == 1);
  CHECK(peers[0].pattern == "gloo-closed-by-peer");
  CHECK(peers[0].line == k_closed_old);
}

TEST_CASE("a lost peer's host is the victim, the ranks that lost it the teardown", "[peer_lost]") {
  struct Row {
    const char* name;
    std::string output;
    AddressHosts lookup;  // the fake resolver's answers
    Ending ending;
    const char* rule;
    Hosts bad_hosts;
    const char* first_failed;  // the victim's host
  };
  const std::string victim_killed = "ezpz-rankenv: rank 1 (pid 11) on n02: killed by signal 9\n";
  const std::string victim_raised =
      "Traceback (most recent call last):\nValueError: bad shape\n"
      "ezpz-rankenv: rank 1 (pid 11) on n02: exited with code 1\n";
  const Row rows[] = {
      {"the address is n02: the victim, named by the pattern",
       survivors(k_closed_old),
       {{"127.0.0.3", "n02"}},
       Ending::bad_node,
       "peer_lost gloo-closed-by-peer",
       {"n02"},
       "n01"},
      {"gloo's newer words",
       survivors(k_closed_new),
       {{"127.0.0.3", "n02"}},
       Ending::bad_node,
       "peer_lost gloo-closed-by-peer",
       {"n02"},
       "n01"},
      // Before: the survivors' three tracebacks of four were "a Python traceback in most ranks".
      {"the address resolves to none of the job's hosts: no bad node",
       survivors(k_closed_old),
       {},
       Ending::application_error,
       "",
       {},
       "n01"},
      {"a host outside the job is never a bad node",
       survivors(k_closed_old),
       {{"127.0.0.3", "n09"}},
       Ending::application_error,
       "",
       {},
       "n01"},
      {"the victim's own report decides: SIGKILL, its node",
       survivors(k_closed_old) + victim_killed,
       {{"127.0.0.3", "n02"}},
       Ending::bad_node,
       "signal_death",
       {"n02"},
       "n02"},
      {"the victim's own traceback: the program's",
       survivors(k_closed_old) + victim_raised,
       {{"127.0.0.3", "n02"}},
       Ending::application_error,
       "",
       {},
       "n02"},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    const Classification c = classify(row.output, row.lookup);
    CHECK(c.ending == row.ending);
    CHECK(c.rule == row.rule);
    CHECK(c.bad_hosts == row.bad_hosts);
    REQUIRE_FALSE(c.failed.empty());
    CHECK(c.failed.front().host == row.first_failed);
  }
  const Classification c = classify(survivors(k_closed_old), {{"127.0.0.3", "n02"}});
  CHECK(c.reason == "exit status 1: the ranks lost their peer on n02: \"" + k_closed_old + "\"");
  CHECK(c.line == k_closed_old);
  // Tracebacks beyond the lost peers' still count: all four ranks raised their own.
  std::string own = survivors(k_closed_old);
  for (int i = 0; i < 3; ++i) own += "Traceback (most recent call last):\n";
  CHECK(classify(own, {{"127.0.0.3", "n02"}}).rule == "job_faults traceback");
}
