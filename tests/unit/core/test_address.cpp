#include "ezpz/core/address.hpp"
#include "tests/catch.hpp"

using namespace ezpz;

TEST_CASE("IP literals and loopback addresses, as text", "[address]") {
  struct Row {
    std::string text;
    bool ip, loopback;
  };
  const std::vector<Row> rows = {
      {"192.0.2.1", true, false},    {"127.0.0.1", true, true}, {"127.0.1.1", true, true},
      {"::1", true, true},           {"fe80::1", true, false},  {"localhost", false, true},
      {"256.0.0.1", false, false},   {"1.2.3", false, false},   {"1.2.3.4.5", false, false},
      {"n01.example", false, false}, {"", false, false},
  };
  for (const Row& row : rows) {
    INFO(row.text);
    CHECK(ip_literal(row.text) == row.ip);
    CHECK(loopback_address(row.text) == row.loopback);
  }
}
