// The cost of issue 19's start-up stamps in ezpz-rankenv, per rank, in process: the work each
// stamp adds (the wall clock, the host name for `exec`, the record, one write to a pipe), the
// parse of a program's "EZPZ_STAMP phase" line, and what the stamp check adds to every other
// line the relay encodes. Spawning ezpz-rankenv A/B cannot resolve 0.1 ms on a loaded machine
// (one spawn varies by milliseconds), so the work is timed here, many times over.
//   g++ -O2 -DNDEBUG -std=c++20 -Ilib bench/startup_stamps/stamps.cpp
//   lib/ezpz/output/rank_records.cpp \
//     lib/ezpz/output/stamp_line.cpp -o /tmp/stamps && /tmp/stamps
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "ezpz/output/rank_records.hpp"
#include "ezpz/output/stamp_line.hpp"

namespace {

std::int64_t unix_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return now.tv_sec * 1000000000LL + now.tv_nsec;
}

template <typename Work>
double median_us(int rounds, int n, Work work) {
  std::vector<double> times;
  for (int r = 0; r < rounds; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) work();
    times.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
        n);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main() {
  int fds[2];
  if (::pipe(fds) != 0) return 1;
  std::string sink;
  auto drain = [&] {
    char buffer[4096];
    (void)!::read(fds[0], buffer, sizeof buffer);
  };
  // `exec`: the clock, the host name, the record and its own write (as ezpz-rankenv sends it).
  const double exec_us = median_us(21, 20000, [&] {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    const std::string record =
        ezpz::output::control_record(0, ezpz::output::stamp_text("exec", unix_ns(), host));
    (void)!::write(fds[1], record.data(), record.size());
    drain();
  });
  // `first_output`: the clock and the record, in the batch of the first read.
  const double first_us = median_us(21, 20000, [&] {
    sink = ezpz::output::control_record(0, ezpz::output::stamp_text("first_output", unix_ns(), ""));
  });
  // A program's stamp line through the encoder (parsed, stamped, recorded).
  ezpz::output::RecordEncoder stamping(0, [&](std::string_view record) { sink.assign(record); });
  stamping.take_stamps([&](std::string_view line) {
    const auto stamp = ezpz::output::parse_stamp_line(line);
    if (stamp)
      sink = ezpz::output::control_record(0, ezpz::output::stamp_text(stamp->phase, unix_ns(), ""));
    return stamp.has_value();
  });
  const double program_us =
      median_us(21, 20000, [&] { stamping.feed("EZPZ_STAMP process_group\n"); });
  // Any other line: with the stamp check and without.
  ezpz::output::RecordEncoder plain(0, [&](std::string_view record) { sink.assign(record); });
  const std::string line = "step 10 loss 0.1234 | 12.3 ms\n";
  const double with_us = median_us(21, 200000, [&] { stamping.feed(line); });
  const double without_us = median_us(21, 200000, [&] { plain.feed(line); });
  std::printf("exec stamp          %.3f us\nfirst_output stamp  %.3f us\n", exec_us, first_us);
  std::printf("program stamp line  %.3f us each\n", program_us);
  std::printf("other line          %.4f us with the check, %.4f us without (%.4f us)\n", with_us,
              without_us, with_us - without_us);
  std::printf("per rank, 2 own stamps + 3 program stamps: %.1f us\n",
              exec_us + first_us + 3 * program_us);
}
