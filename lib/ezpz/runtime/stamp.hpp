#pragma once
// ezpz::dist::stamp("process_group"): tells `ezpz launch` a start-up phase of this rank is done
// (lib/ezpz/output/stamp_line.hpp has the line format; `ezpz runs show` the table). One
// write(2) of "EZPZ_STAMP <phase>\n" to stdout, unbuffered, so the time ezpz-rankenv stamps is
// the time it happened; the rank's other output is not flushed. Without ezpz-rankenv's
// records (--output raw, a bare mpiexec) the line stays in the output.
#include <unistd.h>

#include <string>
#include <string_view>

#include "ezpz/output/stamp_line.hpp"

namespace ezpz::dist {

inline void stamp(std::string_view phase) {
  std::string line(output::k_stamp_prefix);
  line.append(phase).push_back('\n');
  (void)!::write(STDOUT_FILENO, line.data(), line.size());
}

}  // namespace ezpz::dist
