#pragma once
// ezpz::dist::stamp("process_group"): tells `ezpz launch` a start-up phase of this rank is done
// (lib/ezpz/output/stamp_line.hpp has the line format; `ezpz runs show` the table). One
// write(2) of "EZPZ_STAMP <phase>\n" to stdout, unbuffered, so the time ezpz-rankenv stamps is
// the time it happened; the rank's other output is not flushed. Written only where
// ezpz-rankenv relays records (EZPZ_OUTPUT_RECORDS=1, which it leaves set for its rank), so the
// line never lands in a program's own output outside ezpz (`ezpz-smoke --probe`'s JSON, a
// bare mpiexec); a Python program can ask the same.
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <string_view>

#include "ezpz/output/records_variable.hpp"
#include "ezpz/output/stamp_line.hpp"

namespace ezpz::dist {

inline void stamp(std::string_view phase) {
  const char* records = std::getenv(output::k_records_variable);
  if (records == nullptr || std::string_view(records) != output::k_records_on) return;
  std::string line(output::k_stamp_prefix);
  line.append(phase).push_back('\n');
  (void)!::write(STDOUT_FILENO, line.data(), line.size());
}

}  // namespace ezpz::dist
