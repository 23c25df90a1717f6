#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "ezpz/core/hostlist.hpp"
#include "tests/catch.hpp"

using ezpz::compress_hostlist;
using ezpz::expand_hostlist;
using Hosts = std::vector<std::string>;

namespace {

struct ExpandCase {
  std::string_view text;
  Hosts expected;
};

struct ErrorCase {
  std::string_view text;
  std::string message;
};

struct CompressCase {
  Hosts hosts;
  std::string expected;
};

// "prefix000".."prefixNNN": the hosts a range of `count` would give.
Hosts numbered(std::string_view prefix, int first, int count, int width) {
  Hosts hosts;
  for (int i = first; i < first + count; ++i)
    hosts.push_back(fmt::format("{}{:0{}}", prefix, i, width));
  return hosts;
}

// A random host list built to stress folding: shared prefixes, runs, gaps,
// duplicates, leading zeros, widths that grow, and names without numbers.
Hosts random_hosts(std::mt19937& rng) {
  static const std::vector<std::string> prefixes = {"nid", "x1000c0s", "login", "a-b",
                                                    "",    "n1x",      "gpu-"};
  auto pick = [&](int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng); };
  Hosts hosts;
  const int runs = pick(1, 12);
  for (int run = 0; run < runs; ++run) {
    const std::string& prefix = prefixes[pick(0, static_cast<int>(prefixes.size()) - 1)];
    if (pick(0, 9) == 0) {
      hosts.push_back(prefix.empty() ? "login" : prefix);
      continue;
    }
    const int width = pick(0, 4);
    const int start = pick(0, 1) ? pick(0, 12) : pick(90, 1005);
    const int length = pick(1, 15);
    for (int i = 0; i < length; ++i) {
      const int number = start + (pick(0, 5) == 0 ? pick(0, 3) : i);
      hosts.push_back(fmt::format("{}{:0{}}", prefix, number, width));
    }
  }
  return hosts;
}

}  // namespace

TEST_CASE("expand_hostlist turns each expression into its host names in order", "[hostlist]") {
  const std::vector<ExpandCase> cases = {
      {"a", {"a"}},
      {"a,b", {"a", "b"}},
      {"b,a,b", {"b", "a", "b"}},
      {"nid[001-002],nid010", {"nid001", "nid002", "nid010"}},
      {"a[1-2]b[3-4]", {"a1b3", "a1b4", "a2b3", "a2b4"}},
      {"x1000c0s[0-1]b0n0", {"x1000c0s0b0n0", "x1000c0s1b0n0"}},
      {"nid[1,3-4,7]", {"nid1", "nid3", "nid4", "nid7"}},
      {"nid[001-003]", {"nid001", "nid002", "nid003"}},
      {"nid[1-10]",
       {"nid1", "nid2", "nid3", "nid4", "nid5", "nid6", "nid7", "nid8", "nid9", "nid10"}},
      {"nid[08-10]", {"nid08", "nid09", "nid10"}},
      {"n[0098-0101]", {"n0098", "n0099", "n0100", "n0101"}},
      {"nid[001-3]", {"nid001", "nid002", "nid003"}},
      {"nid[007,1]", {"nid007", "nid1"}},
      {"nid[5]", {"nid5"}},
      {"nid[5-5]", {"nid5"}},
      {"[1-2]", {"1", "2"}},
      {"[1-2]x", {"1x", "2x"}},
      {"rack[1-2]-node[01-02]", {"rack1-node01", "rack1-node02", "rack2-node01", "rack2-node02"}},
      {"a-b", {"a-b"}},
      {"  a , b[1-2]  ", {"a", "b1", "b2"}},
      {"\ta\n", {"a"}},
      {"x4102c5s2b0n0", {"x4102c5s2b0n0"}},
      {"x3006c0s13b0n0", {"x3006c0s13b0n0"}},
      {"x3006c0s[13,19]b0n0", {"x3006c0s13b0n0", "x3006c0s19b0n0"}},
      {"nid[001234-001237]", {"nid001234", "nid001235", "nid001236", "nid001237"}},
      {"frontier[00001-00004]",
       {"frontier00001", "frontier00002", "frontier00003", "frontier00004"}},
      {"frontier[00001-00002,00010],login[1-2]",
       {"frontier00001", "frontier00002", "frontier00010", "login1", "login2"}},
      {"n[18446744073709551614-18446744073709551615]",
       {"n18446744073709551614", "n18446744073709551615"}},
  };
  for (const ExpandCase& c : cases) {
    CAPTURE(c.text);
    CHECK(expand_hostlist(c.text) == c.expected);
  }
}

TEST_CASE("expand_hostlist pads every number to the width of its range's lower bound",
          "[hostlist]") {
  CHECK(expand_hostlist("x[00000-09999]") == numbered("x", 0, 10'000, 5));
  CHECK(expand_hostlist("x[0-9999]") == numbered("x", 0, 10'000, 1));
  CHECK(expand_hostlist("x[0998-1001]") == numbered("x", 998, 4, 4));
}

TEST_CASE("expand_hostlist rejects malformed expressions with a message naming the text",
          "[hostlist]") {
  const std::vector<ErrorCase> cases = {
      {"", R"(hostlist "": empty)"},
      {"   ", R"(hostlist "   ": empty)"},
      {"nid[1-", R"(hostlist "nid[1-": unclosed '[')"},
      {"nid[1-2],b[", R"(hostlist "nid[1-2],b[": unclosed '[')"},
      {"nid[3-1]", R"(hostlist "nid[3-1]": range 3-1 runs backwards)"},
      {"nid[010-009]", R"(hostlist "nid[010-009]": range 010-009 runs backwards)"},
      {"nid[a-b]", R"(hostlist "nid[a-b]": "a-b" is not a number or range)"},
      {"nid[1-2-3]", R"(hostlist "nid[1-2-3]": "1-2-3" is not a number or range)"},
      {"nid[-3]", R"(hostlist "nid[-3]": "-3" is not a number or range)"},
      {"nid[3-]", R"(hostlist "nid[3-]": "3-" is not a number or range)"},
      {"nid[ 3]", R"(hostlist "nid[ 3]": " 3" is not a number or range)"},
      {"nid[+3]", R"(hostlist "nid[+3]": "+3" is not a number or range)"},
      {"nid1]", R"(hostlist "nid1]": unexpected ']')"},
      {"nid[1]]", R"(hostlist "nid[1]]": unexpected ']')"},
      {"nid[1[2]]", R"(hostlist "nid[1[2]]": nested '[')"},
      {"a,,b", R"(hostlist "a,,b": empty host name)"},
      {",a", R"(hostlist ",a": empty host name)"},
      {"a,", R"(hostlist "a,": empty host name)"},
      {"a, ,b", R"(hostlist "a, ,b": empty host name)"},
      {"nid[]", R"(hostlist "nid[]": empty brackets)"},
      {"nid[1,,2]", R"(hostlist "nid[1,,2]": empty item in [1,,2])"},
      {"nid[1,]", R"(hostlist "nid[1,]": empty item in [1,])"},
      {"n[99999999999999999999]",
       R"(hostlist "n[99999999999999999999]": number 99999999999999999999 is too large)"},
      {"n[0-1000000]", R"(hostlist "n[0-1000000]": expands to more than 1000000 hosts)"},
      {"n[0-18446744073709551615]",
       R"(hostlist "n[0-18446744073709551615]": expands to more than 1000000 hosts)"},
      {"a[0-999]b[0-9999]", R"(hostlist "a[0-999]b[0-9999]": expands to more than 1000000 hosts)"},
      {"a[1-999999,0-1]", R"(hostlist "a[1-999999,0-1]": expands to more than 1000000 hosts)"},
      {"a[1-999999],b,c", R"(hostlist "a[1-999999],b,c": expands to more than 1000000 hosts)"},
  };
  for (const ErrorCase& c : cases) {
    CAPTURE(c.text);
    CHECK_THROWS_WITH(expand_hostlist(c.text), c.message);
  }
}

TEST_CASE("expand_hostlist errors are usage errors", "[hostlist]") {
  try {
    expand_hostlist("nid[1-");
    FAIL("expand_hostlist accepted an unclosed bracket");
  } catch (const ezpz::Error& error) {
    CHECK(error.code() == ezpz::ExitCode::usage);
  }
}

TEST_CASE("compress_hostlist folds consecutive numbers into ranges in order", "[hostlist]") {
  const std::vector<CompressCase> cases = {
      {{}, ""},
      {{"a"}, "a"},
      {{"nid001"}, "nid001"},
      {{"a", "b", "a"}, "a,b,a"},
      {{"nid001", "nid002", "nid003", "nid007"}, "nid[001-003,007]"},
      {{"n01", "n02", "login1"}, "n[01-02],login1"},
      {{"x1000c0s0b0n0", "x1000c0s1b0n0"}, "x1000c0s0b0n0,x1000c0s1b0n0"},
      {{"nid9", "nid10", "nid11"}, "nid[9-11]"},
      {{"nid09", "nid10"}, "nid[09-10]"},
      {{"nid099", "nid100"}, "nid[099-100]"},
      {{"nid99", "nid100"}, "nid[99-100]"},
      {{"nid0", "nid1"}, "nid[0-1]"},
      {{"nid9", "nid010"}, "nid[9,010]"},
      {{"nid3", "nid2", "nid1"}, "nid[3,2,1]"},
      {{"nid1", "nid1"}, "nid[1,1]"},
      {{"nid1", "login", "nid2"}, "nid1,login,nid2"},
      {{"x3006c0s13b0n0", "x3006c0s13b0n1"}, "x3006c0s13b0n[0-1]"},
      {{"nid001234", "nid001235", "nid001236", "nid001237"}, "nid[001234-001237]"},
      {{"frontier00001", "frontier00002", "frontier00004"}, "frontier[00001-00002,00004]"},
      {{"1", "2"}, "[1-2]"},
      {{"n1234567890123456789", "n1234567890123456790"},
       "n1234567890123456789,n1234567890123456790"},
  };
  for (const CompressCase& c : cases) {
    CAPTURE(c.hosts);
    CHECK(compress_hostlist(c.hosts) == c.expected);
  }
}

TEST_CASE("compress_hostlist rejects names a hostlist cannot carry", "[hostlist]") {
  const std::vector<ErrorCase> cases = {
      {"a[1]", R"(hostlist: host name "a[1]" contains '[', ']' or ',')"},
      {"a]", R"(hostlist: host name "a]" contains '[', ']' or ',')"},
      {"a,b", R"(hostlist: host name "a,b" contains '[', ']' or ',')"},
      {"", "hostlist: empty host name"},
      {" a", R"(hostlist: host name " a" has leading or trailing whitespace)"},
      {"a\t", "hostlist: host name \"a\t\" has leading or trailing whitespace"},
  };
  for (const ErrorCase& c : cases) {
    CAPTURE(c.text);
    CHECK_THROWS_WITH(compress_hostlist({"ok1", std::string(c.text)}), c.message);
  }
}

TEST_CASE("expanding a compressed host list gives back the same list", "[hostlist]") {
  std::vector<Hosts> lists = {
      {"a"},
      numbered("x", 0, 10'000, 5),
      numbered("nid", 0, 10'000, 0),
      numbered("nid", 95, 10, 2),
      {"nid9", "nid10", "nid010", "nid11", "nid0011", "nid12"},
      {"n0", "n00", "n000", "n1", "n01"},
      {"x4102c5s2b0n0", "x3006c0s13b0n0", "login1", "login2", "nid001234"},
  };
  std::mt19937 rng(20240601);
  for (int i = 0; i < 2000; ++i) lists.push_back(random_hosts(rng));
  for (const Hosts& hosts : lists) {
    const std::string compressed = compress_hostlist(hosts);
    CAPTURE(compressed);
    REQUIRE(expand_hostlist(compressed) == hosts);
  }
}

TEST_CASE("compress_hostlist folds ten thousand numbered hosts into one range", "[hostlist]") {
  CHECK(compress_hostlist(numbered("x", 0, 10'000, 5)) == "x[00000-09999]");
  CHECK(compress_hostlist(numbered("nid", 1, 10'000, 0)) == "nid[1-10000]");
}

// Speed is measured in bench/, never asserted here.
TEST_CASE("a ten-thousand-name comma list expands to exactly those names", "[hostlist]") {
  const Hosts hosts = numbered("nid", 0, 10'000, 6);
  std::string comma_list;
  for (const std::string& host : hosts) comma_list += host + ",";
  comma_list.pop_back();
  CHECK(expand_hostlist(comma_list) == hosts);
  CHECK(expand_hostlist("x[00000-09999]").size() == 10'000);
}
