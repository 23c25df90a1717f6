#pragma once
// Where start-up time goes (issue 19): per rank, the time from ezpz starting the launch to
// phases of the rank's start. ezpz-rankenv stamps two itself: `exec` (it was started by the
// launcher, just before it execs the program) and `first_output` (the program's first byte).
// A program stamps its own phases with one line on stdout or stderr:
//
//   EZPZ_STAMP <phase>            e.g. print("EZPZ_STAMP import_torch", flush=True)
//   EZPZ_STAMP <phase> <seconds>  the time it happened, in seconds since the Unix epoch
//
// <phase>: 1 to 32 of [a-z0-9_]. ezpz-rankenv takes such lines out of the output and sends
// them to ezpz as control records ("<rank>! <phase> <unix ns> [<host>]": rank_records.hpp),
// which the console never shows (where ezpz reads the rank's pipe itself, it takes them out and
// stamps `first_output` the same way: output_pump.cpp). A line that starts with "EZPZ_STAMP " but
// is not one of the two forms above is left in the output as it is: the user sees it, nothing is
// lost quietly.
//
// Clocks: a stamp carries the rank's own wall clock (CLOCK_REALTIME), ezpz subtracts its own
// start (its wall clock). On another node the two clocks differ by the nodes' skew (NTP keeps
// it to about a millisecond); a stamp is clamped to [0, when ezpz received it], so a skewed
// clock never puts a phase before the launch or after ezpz heard of it.
//
// Pure: no clock is read here. Standard library only: ezpz-rankenv links it.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ezpz::output {

inline constexpr std::string_view k_stamp_prefix = "EZPZ_STAMP ";
// ezpz-rankenv's stamp as the launcher starts the rank: a rank with one was started (the
// verdict's ranks_started).
inline constexpr std::string_view k_exec_phase = "exec";
// The rank's first byte of output, stamped by whichever of the two reads the rank's pipe.
inline constexpr std::string_view k_first_output_phase = "first_output";
inline constexpr std::size_t k_phase_max = 32;

// Whether a line may be a stamp line: one byte compared on most lines, so the check costs the
// output path nothing measurable.
inline bool has_stamp_prefix(std::string_view line) {
  return !line.empty() && line[0] == k_stamp_prefix[0] && line.starts_with(k_stamp_prefix);
}

// A program's stamp line, parsed: its phase and, when it gave one, its time.
struct ProgramStamp {
  std::string_view phase;
  std::optional<std::int64_t> unix_ns;
};

// nullopt: not a stamp line, or a malformed one (left in the output).
std::optional<ProgramStamp> parse_stamp_line(std::string_view line);

// A control record's text: "<phase> <unix_ns>", then " <host>" when `host` is not empty.
std::string stamp_text(std::string_view phase, std::int64_t unix_ns, std::string_view host);

// A program's stamp line as a control record's text, at `now_ns` where the line gives no time.
// nullopt: not a stamp line (left in the output).
std::optional<std::string> program_stamp_text(std::string_view line, std::int64_t now_ns);

// One phase of one rank, in seconds from ezpz's start.
struct Stamp {
  long rank = 0;
  std::string phase;
  double at_s = 0;
  std::string host;  // on `exec` only: where the rank runs
  bool operator==(const Stamp&) const = default;
};

// A control record's text as a Stamp: `start_ns` is ezpz's start and `arrival_ns` when ezpz
// read it, both on ezpz's wall clock. nullopt: a malformed text (dropped).
std::optional<Stamp> read_stamp(long rank, std::string_view text, std::int64_t start_ns,
                                std::int64_t arrival_ns);

}  // namespace ezpz::output
