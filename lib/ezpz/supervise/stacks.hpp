#pragma once
// Stacks of hung ranks, the pure part: what every rank was doing when --idle-timeout fired or
// the user asked (`ezpz stacks`, SIGQUIT to ezpz). Each node's `ezpz stacks --on-node` prints
// its ranks' stacks as tagged lines (one launcher step, so the nodes' lines may interleave);
// ezpz sorts them back into one text per rank, finds each rank's innermost meaningful frame in
// faulthandler's, eu-stack's or gdb's words, and groups the ranks by it: the odd rank out
// stands alone.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ezpz::stacks {

// Every line a node prints for rank K starts "ezpz-stack K\t".
inline constexpr std::string_view k_line_tag = "ezpz-stack ";

// `text` (one rank's stacks, any number of lines) as tagged lines, each ending in '\n'.
std::string tag_lines(int rank, std::string_view text);

// The tagged lines of `output` sorted back into each rank's text; other lines are dropped.
std::map<int, std::string> untag(std::string_view output);

// A frame as the summary names it: "all_reduce (distributed_c10d.py:1541)".
struct Frame {
  std::string function;
  std::string where;  // "file.py:1541" (the file's last component), or a library's name
  bool operator==(const Frame&) const = default;
};

// The innermost meaningful frame of a rank's stacks, in the thread that runs its program (the
// main thread: faulthandler's thread whose oldest frame is <module>, gdb's "Thread 1" (the
// first gdb finds on attaching), eu-stack's thread whose TID is the PID, else the first
// thread): frames inside libc, the dynamic loader and unnamed ones (??) are skipped, they say
// how it waits, not where. Python stacks (faulthandler's "(most recent call first):") win over
// native ones (gdb's or eu-stack's "#0  ..." lines) when the text holds both.
std::optional<Frame> innermost(std::string_view text);

// "ranks 0,2-3: in all_reduce (distributed_c10d.py:1541)", one line per distinct frame, the
// largest group first (the odd ranks last); "rank 4: no stack (...)" for ranks without one.
std::vector<std::string> summary(const std::map<int, std::optional<Frame>>& frames);

// "0-6,8,10-15".
std::string rank_ranges(const std::vector<int>& ranks);

}  // namespace ezpz::stacks
