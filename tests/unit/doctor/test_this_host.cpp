// Whether a nodefile lists this host: by name, or by a look-up that lands on loopback.
#include "ezpz/doctor/this_host.hpp"
#include "tests/catch.hpp"

using namespace ezpz;
using doctor::HostLookup;

TEST_CASE("a nodefile lists this host by short name, or by a loopback look-up", "[doctor]") {
  using R = HostLookup::Result;
  struct Row {
    std::vector<std::string> hosts;
    std::string hostname;
    std::vector<HostLookup> lookups;
    bool listed, looked_up;
  };
  const std::vector<Row> rows = {
      {{"x1.cm", "x2.cm"}, "x2", {}, true, false},
      {{"x1"}, "x1.hsn.cm", {}, true, false},
      {{"x1"}, "", {}, true, false},  // no name to judge by
      {{"192.0.2.1"}, "me", {{"192.0.2.1", R::resolved, "192.0.2.1"}}, false, true},
      {{"n01", "n02"}, "me", {{"n01", R::resolved, "127.0.0.2"}}, true, true},
      {{"localhost"}, "me", {{"localhost", R::resolved, "::1"}}, true, true},
      {{"n01"}, "me", {{"n01", R::failed, "Name or service not known"}}, false, true},
      {{"n01"}, "me", {{"n01", R::timed_out, ""}}, false, true},
  };
  for (const Row& row : rows) {
    INFO(row.hosts.front() << " on " << row.hostname);
    bool asked = false;
    const auto look_up = [&] {
      asked = true;
      return row.lookups;
    };
    CHECK(doctor::lists_this_host(row.hosts, row.hostname, look_up) == row.listed);
    CHECK(asked == row.looked_up);
  }
}
