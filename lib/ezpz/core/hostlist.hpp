#pragma once
// The Slurm hostlist codec: "nid[001-003,007],login1" <-> a list of names.
#include <string>
#include <string_view>
#include <vector>

namespace ezpz {

// Expands a Slurm hostlist expression into host names, in order, keeping
// duplicates. Throws Error("hostlist \"<text>\": <what>") on malformed input.
std::vector<std::string> expand_hostlist(std::string_view text);

// The shortest-ish Slurm expression for `hosts`, in order: runs of names that
// differ only in one trailing number of equal width are folded into ranges.
// expand_hostlist(compress_hostlist(h)) == h for every h.
std::string compress_hostlist(const std::vector<std::string>& hosts);

}  // namespace ezpz
