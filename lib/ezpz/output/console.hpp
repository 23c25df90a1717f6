#pragma once
// What the console shows of the ranks' lines (issue 18): `ezpz launch --output MODE`. Pure: the
// lines come from a RecordAssembler, the time is a parameter (a fake clock in the tests), and
// what to show is appended to a string the caller writes once per read, so the output pump
// makes no call per byte and no write per line.
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ezpz/output/rank_records.hpp"

namespace ezpz::output {

enum class ConsoleMode {
  raw,    // the launcher's bytes as they come: no records, nothing parsed (as before issue 18)
  label,  // every line whole, "[3] text"
  rank0,  // rank 0's lines only ("[0]" left off); the others' go to the record only
  dedup,  // identical lines of many ranks within a short window once: "[0-4095] text"
};

struct ConsoleModeRow {
  ConsoleMode mode;
  std::string_view name;
  std::string_view help;
};

inline constexpr std::array<ConsoleModeRow, 4> k_console_modes = {{
    {ConsoleMode::raw, "raw", "the launcher's bytes as they come (lines of ranks may merge)"},
    {ConsoleMode::label, "label", "every line whole, with its rank: [3] text"},
    {ConsoleMode::rank0, "rank0", "rank 0's lines only; every rank's are in the run record"},
    {ConsoleMode::dedup, "dedup", "a line many ranks print, once with their ranks: [0-7] text"},
}};

// nullopt: no mode of that name.
std::optional<ConsoleMode> console_mode_named(std::string_view name);
std::string_view console_mode_name(ConsoleMode mode);
// Without --output: de-duplicated on a terminal (a person reads it as it comes), every line
// labelled in a batch log or a pipe (read later, grepped: nothing held back, nothing merged).
ConsoleMode default_console_mode(bool terminal);

// Appends `number` in decimal. Without fmt: the pump runs it once per line.
void append_number(std::string& out, long number);
// Appends a rank's label, "[K] ": the console's, and what the rank index takes off again.
void append_rank_label(std::string& out, long rank);

// Ranks in hostlist form, sorted, runs of consecutive ranks joined: {0,1,2,3,7,9,10} ->
// "0-3,7,9-10". `ranks` need not be sorted; duplicates count once.
std::string rank_ranges(std::vector<long> ranks);
// The same appended to `out`, sorting `ranks` and dropping its duplicates in place (a shown
// group's list: no copy of it, no string of its own).
void append_rank_ranges(std::string& out, std::vector<long>& ranks);

using Millis = std::chrono::milliseconds;

// The de-duplicator's bounds: a line waits at most `window` after its first copy for the same
// line from other ranks; past `max_lines` distinct waiting lines or `max_bytes` of them (texts
// and rank lists), the oldest are shown at once.
struct DedupLimits {
  Millis window{150};
  std::size_t max_lines = 1024;
  std::size_t max_bytes = 1024 * 1024;
};

// Identical lines of many ranks, shown once with the ranks in range form. A rank's lines stay in
// its order: a line joins the oldest waiting copy of its text that came after the rank's last
// line (so a rank printing the same line many times joins the other ranks' copies one by one);
// else it waits as a new one. No rank is waited for: only time and the bounds decide.
class Deduplicator {
 public:
  explicit Deduplicator(DedupLimits limits = {}) : limits_(limits) {}
  void add(long rank, std::string_view text, Millis now, std::string& out);
  // Shows the lines whose window has passed.
  void tick(Millis now, std::string& out);
  void finish(std::string& out);
  // When the oldest waiting line is due; nullopt when none waits.
  std::optional<Millis> due() const;
  // What the waiting lines hold (texts, rank lists, bookkeeping), for the memory bound.
  std::size_t pending_bytes() const { return bytes_; }
  std::size_t pending_lines() const { return groups_.size(); }

 private:
  // A text and its hash, computed once per line: the map's find, erase and insert reuse it.
  // `text` is mutable so that the next copy's group can take over the entry of an equal text
  // (equal hash, equal key) in place when the oldest is shown.
  struct Key {
    mutable std::string_view text;
    std::size_t hash;
    bool operator==(const Key& other) const { return text == other.text; }
  };
  struct KeyHash {
    std::size_t operator()(const Key& key) const { return key.hash; }
  };
  struct Group {
    std::uint64_t seq;
    Millis first;
    std::size_t hash;  // of text
    std::string text;
    std::vector<long> ranks;
  };
  Group* joinable(long rank, const Key& key);
  void start(long rank, const Key& key, Millis now);
  void show_oldest(std::string& out);
  void recycle(Group& group);
  static std::size_t cost(const Group& group);

  DedupLimits limits_;
  std::deque<Group> groups_;  // oldest first; a deque keeps each text where it is
  std::uint64_t next_seq_ = 0;
  // The waiting groups of one text, oldest first: seqs[head..]. Groups are shown oldest first,
  // so a text's copies leave from the front.
  struct Copies {
    std::vector<std::uint64_t> seqs;
    std::size_t head = 0;
  };
  void forget_oldest_copy(const Group& group);
  std::unordered_map<Key, Copies, KeyHash> copies_;  // text -> its waiting groups
  // rank -> its newest group, shown or not: one shown is older than every waiting one, so it
  // keeps the rank from no copy. An entry per rank that has printed, kept (no node per line).
  std::unordered_map<long, std::uint64_t> last_of_rank_;
  std::size_t bytes_ = 0;
  // Shown groups' buffers, reused by the next ones: a line costs no allocation. At most
  // k_spares of each, none over k_spare_max bytes: outside pending_bytes(), at most 192 KiB.
  static constexpr std::size_t k_spares = 64;
  static constexpr std::size_t k_spare_max = 1024;
  std::vector<std::string> spare_texts_;
  std::vector<std::vector<long>> spare_ranks_;
  std::vector<std::vector<std::uint64_t>> spare_seqs_;
};

// One stream (the launcher's stdout or its stderr) as the console shows it. A line that is not a
// rank's (rank -1: the launcher's own, ezpz-rankenv's reports) is shown as it came, at once,
// after what waited before it: failure reports stay readable and in place.
class Console {
 public:
  explicit Console(ConsoleMode mode, DedupLimits limits = {}) : mode_(mode), dedup_(limits) {}
  void line(const RankLine& line, Millis now, std::string& out);
  void tick(Millis now, std::string& out) { dedup_.tick(now, out); }
  void finish(std::string& out) { dedup_.finish(out); }
  std::optional<Millis> due() const { return dedup_.due(); }
  ConsoleMode mode() const { return mode_; }
  const Deduplicator& deduplicator() const { return dedup_; }

 private:
  ConsoleMode mode_;
  Deduplicator dedup_;
};

}  // namespace ezpz::output
