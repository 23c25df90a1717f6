// libFuzzer target: the hostfile parser (lib/ezpz/core/allocation.hpp), which reads
// PBS nodefiles, Hydra/Open MPI hostfiles and --hostfile/--exclude-file text.
// It throws only ezpz::Error (a line that is not a host name); any other
// exception, crash, leak or undefined behaviour is a finding, and so is a
// result that breaks the documented contract.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "ezpz/core/allocation.hpp"
#include "ezpz/core/error.hpp"

namespace {

[[noreturn]] void finding(const char* what, std::string_view host) {
  std::fprintf(stderr, "fuzz_hostfile: %s: \"%.*s\"\n", what, static_cast<int>(host.size()),
               host.data());
  std::abort();  // libFuzzer saves the input as a crash artifact
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> hosts;
  try {
    hosts = ezpz::parse_hostfile(input);
  } catch (const ezpz::Error&) {
    return 0;  // a line that is not a host name: refused with its line number
  }

  // A host is the first word of a line, up to ' ', '\t', ':' or '#': never
  // empty, never holding those, never spanning lines, never starting with a
  // blank, and a host name by RFC 1123's rules (plus '_').
  for (const std::string& host : hosts) {
    if (host.empty()) finding("empty host name", host);
    if (host.find_first_of(" \t\n:#") != std::string::npos) finding("separator in host", host);
    if (host.front() == '\r') finding("untrimmed host", host);
    if (input.find(host) == std::string_view::npos) finding("host not in the input", host);
    if (ezpz::host_name_problem(host)) finding("accepted a name that is not a host name", host);
  }
  const auto lines = static_cast<std::size_t>(std::count(input.begin(), input.end(), '\n')) + 1;
  if (hosts.size() > lines) finding("more hosts than lines", "");

  // unique_hosts keeps the first spelling of each short name, in order.
  const std::vector<std::string> unique = ezpz::unique_hosts(hosts);
  std::unordered_set<std::string_view> seen;
  std::size_t next = 0;  // where the next unique host must appear in `hosts`
  for (const std::string& host : unique) {
    if (!seen.insert(ezpz::short_host_name(host)).second) finding("repeated short name", host);
    while (next < hosts.size() && hosts[next] != host) {
      if (!seen.contains(ezpz::short_host_name(hosts[next]))) finding("host dropped", hosts[next]);
      ++next;
    }
    if (next == hosts.size()) finding("unique host out of order", host);
    ++next;
  }
  for (; next < hosts.size(); ++next) {
    if (!seen.contains(ezpz::short_host_name(hosts[next]))) finding("host dropped", hosts[next]);
  }
  return 0;
}
