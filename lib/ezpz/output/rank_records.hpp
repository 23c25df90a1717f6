#pragma once
// The wire format between ezpz-rankenv and ezpz for rank-aware output (issue 18). Under each
// rank, ezpz-rankenv reads the rank's stdout and stderr through its own pipes and writes each
// line to its own stdout or stderr as a record, whole records batched into writes of at most
// PIPE_BUF bytes, so records from different ranks never interleave inside the launcher's pipes.
// Launchers that forward a rank's output in pieces of their own can still cut them: Hydra and
// srun without -u do not, srun -u and Open MPI (a pty per rank) do (README.md, "Whole lines
// from every rank", has the figures):
//
//   <rank> ':' ' ' <text> '\n'   the end of a line of rank <rank> (text without its newline)
//   <rank> '+' ' ' <text> '\n'   a piece of a longer line (or a partial line flushed after a
//                                quiet spell); the rest follows in later records
//
// Readable as it is (srun --label's "3: text"), so a plan pasted without ezpz still prints
// usable lines. The rank is decimal, no sign, no leading zeros. Standard library only:
// ezpz-rankenv, started once per rank, links this.
//
// Partial lines. A '\r' that is not part of "\r\n" ends a piece (its text keeps the '\r'): a
// progress bar redrawn in place reaches ezpz at every redraw, and the assembler hands a rank's
// text that ends in '\r' on at once (complete = false) rather than holding a whole bar's
// history. Output without a final newline reaches ezpz as a '+' piece after a quiet spell
// (k_quiet_ms), and ezpz's flush() hands such pieces on when its own stream goes quiet. In
// every case a rank's bytes are its RankLines' texts, each followed by '\n' when complete.
#include <cstddef>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "ezpz/output/records_variable.hpp"

namespace ezpz::output {

// The most bytes of one write of ezpz-rankenv's (whole records, batched): a write to a pipe of
// at most PIPE_BUF (4096 on Linux) bytes is atomic.
inline constexpr std::size_t k_write_max = 4096;

// The most bytes of one record, its newline included. Records are cut to fit. Less than a
// write, because launchers forward a rank's output in pieces of their own: slurmstepd sends
// whole lines of up to 1024 bytes (its MAX_MSG_LEN) without `srun -u`, so records of at most
// that size reach ezpz whole under srun too (bench/output_lines measures it).
inline constexpr std::size_t k_record_max = 1024;

// The most bytes of one rank's line the assembler holds before handing it on unfinished
// (complete = false; the rest follows): memory stays bounded by ranks x this.
inline constexpr std::size_t k_pending_max = 64 * 1024;

// How long ezpz-rankenv waits on a partial line (no newline yet) before sending it as a piece.
inline constexpr int k_quiet_ms = 200;

// Ranks on ezpz's own host reach ezpz straight (issue 18's throughput): set by ezpz's executor,
// not the plan, to "@NAME", an abstract Unix socket pair: ezpz listens on NAME followed by each
// suffix (stdout's, stderr's). ezpz-rankenv connects to both; a rank on another host, or in
// another network namespace, cannot, and its records go through the launcher as before. Over
// each connection ezpz-rankenv passes the rank's own pipe for that stream (pipe_record()), and
// ezpz reads the rank's bytes from it and cuts their lines itself (LineCutter): nothing copies
// them on the way. Where a pipe cannot be passed, the records go over the connection; past the
// launcher's forwarding (Hydra's proxy and mpiexec each read and write every byte) they need
// not be atomic: one connection is one rank's stream, and ezpz reassembles each connection
// apart. So they go in writes of up to k_direct_write_max.
inline constexpr const char* k_output_socket_variable = "EZPZ_OUTPUT_SOCKET";
inline constexpr const char* k_output_socket_suffixes[2] = {"-out", "-err"};
inline constexpr std::size_t k_direct_write_max = 64 * 1024;

// One whole line of one rank, as the assembler hands it on.
struct RankLine {
  long rank = -1;          // -1: a line that was not a record (the launcher's own output)
  std::string_view text;   // without the newline
  bool complete = true;    // false: the line goes on in this rank's next RankLine (a '\r'
                           // redraw, a quiet spell, k_pending_max), or the rank ended mid-line
  bool control = false;    // a control record ("<rank>! text"): a start-up stamp (startup.hpp),
                           // for ezpz, never shown
};

// A control record of `rank` carrying `text` (one line, shorter than a record): "<rank>! text\n".
std::string control_record(long rank, std::string_view text);

// Encodes `text` of `rank` (>= 0) as records of at most k_record_max bytes each, calling `write`
// once per record. A '\n' in `text` ends a line there; `complete`: the end of `text` ends a
// line too. An empty unfinished text writes nothing.
void encode_records(long rank, std::string_view text, bool complete,
                    const std::function<void(std::string_view record)>& write);

// Ranks on ezpz's host whose ezpz-rankenv passes ezpz their own pipes (k_output_socket_variable):
// the first message on each connection, with the read end of that stream's pipe attached
// (SCM_RIGHTS). A control record, so an ezpz that reads it as one drops it. ezpz answers with
// one byte: taken (it reads the pipe from now on; ezpz-rankenv lets go of it) or refused
// (ezpz-rankenv relays the pipe itself, as records over the connection).
std::string pipe_record(long rank);
inline constexpr char k_pipe_taken = 'y';
inline constexpr char k_pipe_refused = 'n';
// ezpz-rankenv sizes a pipe it passes to this, and ezpz reads that much at once: one read takes
// all the pipe holds, so ezpz reads a connection's pipe once before the connection's exit report
// and the report still comes after the rank's lines.
inline constexpr std::size_t k_passed_pipe_size = 1024 * 1024;
// The rank of pipe_record()'s text at the start of `bytes`; nullopt when they do not start so.
std::optional<long> pipe_record_rank(std::string_view bytes);

// Cuts one stream of a rank's bytes, read in chunks of any size, into lines (their text without
// the '\n'; complete), '\r' redraws (their text ends in the '\r'; not complete) and pieces of
// lines of `hold_max` bytes or more (not complete), each handed to `put(text, complete)` in
// order. What follows the last of them waits, less than `hold_max` bytes (a '\r' last in a chunk
// too: "\r\n" may follow), for more or for flush(). ezpz-rankenv's encoder makes records of
// them; ezpz cuts the lines of the ranks whose pipes it reads itself. Pure: no I/O.
class LineCutter {
 public:
  explicit LineCutter(std::size_t hold_max) : hold_max_(hold_max) {}
  template <typename Put>
  void feed(std::string_view bytes, Put&& put);
  // The same, but whole lines that follow each other with no '\r' in the chunk (almost all
  // output) go to `put_lines(lines)` in one piece, each ending in its '\n': the caller walks
  // them in one loop rather than a call each (ezpz's labelled console).
  template <typename Put, typename PutLines>
  void feed(std::string_view bytes, Put&& put, PutLines&& put_lines);
  // What waits, as a piece.
  template <typename Put>
  void flush(Put&& put) {
    if (!partial_.empty()) put(std::string_view(partial_), false);
    partial_.clear();
  }
  bool holding() const { return !partial_.empty(); }

 private:
  template <typename Put>
  void give(std::string_view text, bool complete, Put& put);
  std::size_t hold_max_;
  std::string partial_;  // the bytes of the line so far
};

// ezpz-rankenv's side: cuts one stream of a rank's output, read in chunks of any size, into
// records (whole lines, '\r' redraws, and pieces of lines longer than a record), gathered into
// writes of whole records of at most `write_max` bytes: `write` is called with each (the relay
// makes it one write(2)) when the next record would not fit, and at send() and flush(). A
// partial line waits for flush(), which the relay calls after k_quiet_ms of quiet and at the
// end. Holds at most a record's worth of a line and a write's worth of records (`write_max`:
// k_write_max into a pipe, k_direct_write_max straight to ezpz). Pure: no I/O.
class RecordEncoder {
 public:
  using Write = std::function<void(std::string_view records)>;
  RecordEncoder(long rank, Write write, std::size_t write_max = k_write_max);
  void feed(std::string_view bytes);
  // The records gathered so far, in one write.
  void send();
  // The partial line, as a piece; then send().
  void flush();
  // A control record (control_record()), after the records before it.
  void control(std::string_view text);
  bool holding() const { return cutter_.holding(); }
  // Whole lines that start with "EZPZ_STAMP " (startup.hpp) go to `stamp` first; it returns
  // false to leave one in the output (a malformed stamp).
  void take_stamps(std::function<bool(std::string_view line)> stamp) { stamp_ = std::move(stamp); }

 private:
  void emit(std::string_view text, bool complete);
  void put(char marker, std::string_view text);
  void put_records(std::string_view text, bool complete);  // encode()'s records, put()
  bool stamped(std::string_view line) const;
  std::string prefix_;  // the rank, in decimal
  std::size_t room_;    // the most text bytes of one record
  std::size_t write_max_;
  Write write_;
  std::function<bool(std::string_view line)> stamp_;
  LineCutter cutter_;  // holds less than a record's text of a line
  std::string batch_;  // whole records, less than write_max_ bytes
};

// Reads one stream of records (stdout or stderr of the launcher) in chunks of any size and hands
// on each rank's whole lines, a rank's pieces joined: a line from one rank is never split by, or
// merged with, another's. A line that is not a record (the launcher's own: "srun: error: ...")
// is handed on with rank -1. Pure: no I/O.
class RecordAssembler {
 public:
  using Sink = std::function<void(const RankLine&)>;
  explicit RecordAssembler(Sink sink);
  void feed(std::string_view bytes);
  // The stream went quiet: each rank's pending pieces are handed on (complete = false).
  void flush();
  // End of stream: pending pieces are handed on as incomplete lines.
  void finish();

 private:
  void line(std::string_view bytes);  // one line of the stream, without its newline
  void record(long rank, bool complete, std::string_view text);
  void hand_on(long rank, std::string_view text, bool complete, bool control = false);
  Sink sink_;
  std::string buffer_;                   // an unfinished line of the stream
  bool foreign_ = false;                 // buffer_ overflowed: the rest of this line is rank -1's
  std::map<long, std::string> pending_;  // the pieces so far of each rank that has some
};

// Open MPI's --tag-output: "[JOB,RANK]<stdout>:" ("<stderr>:") before every piece it forwards,
// even inside a line, so where the relay's records can be cut (a pty per rank) the rank of every
// byte is still known. Splits one stream at its tags and hands on each rank's bytes, in order
// (bytes before the first tag: rank -1); a tag cut by a chunk's end waits for the next chunk.
// Each rank's bytes can go through a RecordEncoder into a RecordAssembler for whole lines.
// Text that looks exactly like a tag is taken for one. Pure: no I/O.
class OpenMpiTagSplitter {
 public:
  using Sink = std::function<void(long rank, std::string_view bytes)>;
  explicit OpenMpiTagSplitter(Sink sink);
  void feed(std::string_view bytes);
  void finish();  // a held start of a tag was text after all

 private:
  Sink sink_;
  long rank_ = -1;
  std::string held_;  // the start of what may be a tag, cut at the end of the last chunk
};

template <typename Put>
void LineCutter::give(std::string_view text, bool complete, Put& put) {
  if (partial_.empty()) return put(text, complete);
  partial_.append(text);
  put(std::string_view(partial_), complete);
  partial_.clear();
}

template <typename Put>
void LineCutter::feed(std::string_view bytes, Put&& put) {
  // A '\r' last in the previous chunk: a redraw unless this chunk's '\n' makes it "\r\n".
  if (!bytes.empty() && !partial_.empty() && partial_.back() == '\r' && bytes[0] != '\n')
    flush(put);
  // Most output has no '\r' at all: one look at the chunk spares a search per line.
  const bool redraws = std::memchr(bytes.data(), '\r', bytes.size()) != nullptr;
  while (!bytes.empty()) {
    const void* found = std::memchr(bytes.data(), '\n', bytes.size());
    const std::size_t end = found ? static_cast<const char*>(found) - bytes.data() : bytes.size();
    const void* cr = redraws ? std::memchr(bytes.data(), '\r', end) : nullptr;
    if (cr != nullptr) {
      const std::size_t at = static_cast<const char*>(cr) - bytes.data();
      if (at + 1 == bytes.size()) break;  // the next chunk says whether "\r\n" follows
      if (bytes[at + 1] != '\n') {
        give(bytes.substr(0, at + 1), false, put);
        bytes.remove_prefix(at + 1);
        continue;
      }
    }
    if (!found) break;
    give(bytes.substr(0, end), true, put);
    bytes.remove_prefix(end + 1);
  }
  partial_.append(bytes);
  const std::size_t whole = partial_.size() / hold_max_ * hold_max_;
  if (whole == 0) return;
  put(std::string_view(partial_).substr(0, whole), false);
  partial_.erase(0, whole);
}

template <typename Put, typename PutLines>
void LineCutter::feed(std::string_view bytes, Put&& put, PutLines&& put_lines) {
  const bool after_cr = !partial_.empty() && partial_.back() == '\r';
  if (after_cr || std::memchr(bytes.data(), '\r', bytes.size()) != nullptr) return feed(bytes, put);
  const void* last = ::memrchr(bytes.data(), '\n', bytes.size());
  if (last == nullptr) return feed(bytes, put);
  std::size_t whole = static_cast<const char*>(last) - bytes.data() + 1;
  if (!partial_.empty()) {  // the line the last chunk began ends first
    const std::size_t end =
        static_cast<const char*>(std::memchr(bytes.data(), '\n', whole)) - bytes.data();
    give(bytes.substr(0, end), true, put);
    bytes.remove_prefix(end + 1);
    whole -= end + 1;
  }
  if (whole > 0) put_lines(bytes.substr(0, whole));
  feed(bytes.substr(whole), put);
}

}  // namespace ezpz::output
