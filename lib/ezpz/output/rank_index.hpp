#pragma once
// ranks.idx: which rank wrote each piece of a labelled output.log, so `ezpz runs show --rank K`
// reads one rank's output back from the console as recorded, and a labelled run writes its
// output once to the record rather than twice (output.log and ranks.log: a third of ezpz's CPU
// on a chatty job, and twice the disk; bench/README.md). Kept where output.log shows every
// rank's every line in order: `--output label`, and `--output dedup`, whose line shown once for
// many ranks is each of theirs (a rank's lines keep their order there too); `rank0` keeps
// ranks.log.
//
// The file is a header line, then one entry per piece of output.log, in order:
//
//   "ezpz-rank-index 1\n"  then, per piece:  varint(rank + 1)  flags  varint(length)
//
// (varints: LEB128, 7 bits a byte, low first; rank + 1 = 0: the launcher's own text; flags: bit
// 0 the rank's line ended there, bit 1 its text ended in '\r', which the console drops, bit 2
// the piece is a line of several ranks, "[0-3,7] text\n", whose ranks its label lists: rank + 1
// is 0 there). A rank's piece is one console line, "[K] text\n"; `length` is its bytes in
// output.log. An index that may hold pieces of several ranks says "ezpz-rank-index 2". Pure.
#include <cstddef>
#include <string>
#include <string_view>

#include "ezpz/output/rank_records.hpp"

namespace ezpz::output {

inline constexpr std::string_view k_rank_index_header = "ezpz-rank-index 1\n";
inline constexpr std::string_view k_rank_index_header_groups = "ezpz-rank-index 2\n";
static_assert(k_rank_index_header.size() == k_rank_index_header_groups.size());  // one prefix

// Appends the entry of `line`, shown as `length` bytes of output.log, to `index`.
void append_index_entry(std::string& index, const RankLine& line, std::size_t length);
// Appends the entry of a line several ranks printed, shown once as `length` bytes with their
// ranks in its label: `text` and `complete` are each one's.
void append_group_entry(std::string& index, std::string_view text, bool complete,
                        std::size_t length);

// The entries of `entries` (no header) that cover the first `length` bytes they describe, the
// last cut to fit: what a record stopped at --record-limit holds.
std::string cut_index(std::string_view entries, std::size_t length);

// Rank `rank`'s output, byte for byte as it wrote it, from a labelled output.log and its index.
// An index that is not one, or that runs past the log (a record cut at --record-limit), yields
// what it covers.
std::string indexed_rank_output(std::string_view output_log, std::string_view index, long rank);

}  // namespace ezpz::output
