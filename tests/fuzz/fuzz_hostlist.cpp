// libFuzzer target: the Slurm hostlist codec (lib/ezpz/core/hostlist.hpp).
// The input is used twice:
//  - as a hostlist expression: expand_hostlist either throws ezpz::Error or
//    returns names that compress_hostlist folds back into an expression
//    expanding to the very same names;
//  - as host names, one per line: compress_hostlist either throws ezpz::Error
//    (a name it cannot represent) or keeps its contract,
//    expand_hostlist(compress_hostlist(h)) == h.
// Any other exception, a crash, a leak or undefined behaviour is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "ezpz/core/error.hpp"
#include "ezpz/core/hostlist.hpp"

namespace {

using ezpz::compress_hostlist;
using Hosts = std::vector<std::string>;

[[noreturn]] void finding(const char* what, std::string_view input, std::string_view detail) {
  std::fprintf(stderr, "fuzz_hostlist: %s\ninput: \"%.*s\"\ndetail: \"%.*s\"\n", what,
               static_cast<int>(input.size()), input.data(), static_cast<int>(detail.size()),
               detail.data());
  std::abort();  // libFuzzer saves the input as a crash artifact
}

// compress, then expand again: must give `hosts` back unchanged.
void check_round_trip(const Hosts& hosts, std::string_view input) {
  const std::string compressed = compress_hostlist(hosts);
  Hosts again;
  try {
    again = ezpz::expand_hostlist(compressed);
  } catch (const ezpz::Error& error) {
    finding("compress_hostlist wrote an expression expand_hostlist rejects", input, error.what());
  }
  if (again != hosts) finding("expand(compress(hosts)) != hosts", input, compressed);
}

Hosts lines_of(std::string_view text) {
  Hosts lines;
  while (true) {
    const auto newline = text.find('\n');
    lines.emplace_back(text.substr(0, newline));
    if (newline == std::string_view::npos) return lines;
    text.remove_prefix(newline + 1);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  Hosts expanded;
  bool valid = true;
  try {
    expanded = ezpz::expand_hostlist(input);
  } catch (const ezpz::Error&) {
    valid = false;  // malformed: the one allowed failure
  }
  if (valid) {
    if (expanded.empty()) finding("expand_hostlist accepted the input but gave no hosts", input, "");
    // Every name expand_hostlist gives is representable, so compressing it
    // must not throw: an ezpz::Error escaping here is a finding too.
    try {
      check_round_trip(expanded, input);
    } catch (const ezpz::Error& error) {
      finding("compress_hostlist rejected names expand_hostlist produced", input, error.what());
    }
  }

  const Hosts names = lines_of(input);
  bool representable = true;
  try {
    compress_hostlist(names);
  } catch (const ezpz::Error&) {
    representable = false;  // a name with '[', ']', ',' or edge whitespace, or an empty one
  }
  if (representable) check_round_trip(names, input);
  return 0;
}
