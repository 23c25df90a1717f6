#pragma once
// The variable that asks ezpz-rankenv for rank-aware output (issue 18), apart from the wire
// format (rank_records.hpp) so that a program's own header (runtime/stamp.hpp) can read it
// without the rest.

namespace ezpz::output {

// Set in a rank's environment. k_records_on, by ezpz's plan (rank-aware output): ezpz-rankenv
// relays the rank's output as records. k_pipes_only, by ezpz's executor where it listens for the
// ranks (k_output_socket_variable) and the plan has no records (`--output raw`): ezpz-rankenv on
// ezpz's host passes ezpz the rank's own pipes, whose bytes ezpz passes on as they come, past
// the launcher's forwarding; elsewhere, and without the variable, ezpz-rankenv leaves the rank's
// stdout and stderr alone.
inline constexpr const char* k_records_variable = "EZPZ_OUTPUT_RECORDS";
inline constexpr const char* k_records_on = "1";
inline constexpr const char* k_pipes_only = "pipes";

}  // namespace ezpz::output
