#pragma once
// Reading one rank's output back from a run record's ranks.log (every rank's lines, as rank
// records: rank_records.hpp): `ezpz runs show ID --rank K [--grep TEXT] [--tail N]`. Pure.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace ezpz::output {

// Rank `rank`'s output in `ranks_log`, byte for byte as the rank wrote it (stdout and stderr in
// the order ezpz read them); empty when the rank printed nothing.
std::string rank_output(std::string_view ranks_log, long rank);

// The lines of `text` that contain `grep` (all when it is empty), then only the last `tail` of
// them (all when nullopt). A last line without its newline keeps it off.
std::string pick_lines(std::string_view text, std::string_view grep,
                       std::optional<std::size_t> tail);

}  // namespace ezpz::output
