#pragma once
// The wire format between ezpz-rankenv and ezpz for rank-aware output (issue 18). Under each
// rank, ezpz-rankenv reads the rank's stdout and stderr through its own pipes and writes each
// line to its own stdout or stderr as one record, in one write(2) of at most PIPE_BUF bytes, so
// records from different ranks never interleave inside the launcher's pipes:
//
//   <rank> ':' ' ' <text> '\n'   the end of a line of rank <rank> (text without its newline)
//   <rank> '+' ' ' <text> '\n'   a piece of a longer line (or a partial line flushed after a
//                                quiet spell); the rest follows in later records
//
// Readable as it is (srun --label's "3: text"), so a plan pasted without ezpz still prints
// usable lines. The rank is decimal, no sign, no leading zeros. Standard library only:
// ezpz-rankenv, started once per rank, links this.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace ezpz::output {

// The most bytes of one record: a write to a pipe of at most PIPE_BUF (4096 on Linux, 512 by
// POSIX) bytes is atomic. Records are cut to fit.
inline constexpr std::size_t k_record_max = 4096;

// One whole line of one rank, as the assembler hands it on.
struct RankLine {
  long rank = -1;          // -1: a line that was not a record (the launcher's own output)
  std::string_view text;   // without the newline
  bool complete = true;    // false: the rank ended (or went quiet) mid-line
};

// Encodes one line (or piece) of `rank` as records of at most k_record_max bytes each, calling
// `write` once per record (ezpz-rankenv: one write(2) each). `complete`: the text ends a line.
void encode_records(long rank, std::string_view text, bool complete,
                    const std::function<void(std::string_view record)>& write);

// Reads one stream of records (stdout or stderr of the launcher) in chunks of any size and hands
// on each rank's whole lines, a rank's pieces joined: a line from one rank is never split by, or
// merged with, another's. A line that is not a record (the launcher's own: "srun: error: ...")
// is handed on with rank -1. Pure: no I/O.
class RecordAssembler {
 public:
  using Sink = std::function<void(const RankLine&)>;
  explicit RecordAssembler(Sink sink);
  void feed(std::string_view bytes);
  // End of stream: pending pieces are handed on as incomplete lines.
  void finish();

 private:
  struct State;
  Sink sink_;
  std::string buffer_;  // an unfinished record
  std::string pending_; // pieces, per rank, in the implementation
};

}  // namespace ezpz::output
