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
#include <span>
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
// The same appended to `out`, sorting `ranks` in place (a shown group's list: no copy of it, no
// string of its own).
void append_rank_ranges(std::string& out, std::span<long> ranks);
// Whether `ranges` (rank_ranges()'s form) lists `rank`; false for anything not of that form.
bool ranges_hold(std::string_view ranges, long rank);

using Millis = std::chrono::milliseconds;

// The de-duplicator's bounds: a line waits at most `window` after its first copy for the same
// line from other ranks; past `max_lines` distinct waiting lines or `max_bytes` of them (texts
// and rank lists), the oldest are shown at once. Room for what one read of each of two ranks'
// pipes holds (1 MiB: about 10,000 lines of 100 bytes): at 1,024 lines and 1 MiB, two ranks
// printing the same lines at full speed had each rank's shown before the other's came, and
// nothing was joined (bench/output_record). Memory: README.
struct DedupLimits {
  Millis window{150};
  std::size_t max_lines = 16384;
  std::size_t max_bytes = 8 * 1024 * 1024;
};

// A waiting line's ranks: the first k_inline in the line's own group, so that a rank joining a
// group made thousands of lines before touches the group alone, not a heap block of its own
// out of the cache (a third of Deduplicator::add's time went on that one miss: bench/README);
// past k_inline, all of them in a buffer (a spare, given by spill()).
class RankList {
 public:
  static constexpr std::size_t k_inline = 4;
  // Whether the next push_back needs a buffer: spill() gives it one (else it makes its own).
  bool full() const { return more_.empty() && size_ == k_inline; }
  // Moves the ranks into `buffer` (emptied), where the next ones go too.
  void spill(std::vector<long> buffer);
  void push_back(long rank) {
    if (full()) spill({});  // a buffer of its own, where no spare was given
    if (more_.empty()) {
      inline_[size_++] = rank;
    } else {
      more_.push_back(rank);
    }
  }
  std::span<long> ranks() { return more_.empty() ? std::span(inline_.data(), size_) : more_; }
  std::size_t size() const { return more_.empty() ? size_ : more_.size(); }
  long front() const { return more_.empty() ? inline_[0] : more_[0]; }
  // The buffer, for keeping as a spare; empty (no capacity) where none was given.
  std::vector<long>& buffer() { return more_; }
  std::size_t buffer_bytes() const { return more_.capacity() * sizeof(long); }

 private:
  std::array<long, k_inline> inline_{};
  std::size_t size_ = 0;  // of inline_, until spilled
  std::vector<long> more_;
};

// Identical lines of many ranks, shown once with the ranks in range form. A rank's lines stay in
// its order: a line joins the oldest waiting copy of its text that came after the rank's last
// line (so a rank printing the same line many times joins the other ranks' copies one by one);
// else it waits as a new one. No rank is waited for: only time and the bounds decide.
class Deduplicator {
 public:
  explicit Deduplicator(DedupLimits limits = {}) : limits_(limits) {}
  // Each line shown from now on adds its entry to `index` (ranks.idx: rank_index.hpp).
  void index_into(std::string* index) { index_ = index; }
  // `complete`: as RankLine's; a line joins only copies that end (or go on) as it does.
  void add(long rank, std::string_view text, bool complete, Millis now, std::string& out);
  // Shows the lines whose window has passed.
  void tick(Millis now, std::string& out);
  void finish(std::string& out);
  // When the oldest waiting line is due; nullopt when none waits.
  std::optional<Millis> due() const;
  // What the waiting lines hold (texts, rank lists, bookkeeping), for the memory bound.
  std::size_t pending_bytes() const { return bytes_; }
  std::size_t pending_lines() const { return groups_.size(); }
  // Shown lines' buffers and gone texts' map nodes kept for reuse: at most k_spare_bytes.
  std::size_t spare_bytes() const { return spare_bytes_; }
  static constexpr std::size_t k_spare_bytes = 4 * 1024 * 1024;

 private:
  // A text and its hash, computed once per line: the map's find, erase and insert reuse it.
  // `text` is the line's own while it is looked up, and the entry's copy (Copies::text) once
  // the entry is made: mutable, so that it is set in place (equal text, equal hash).
  struct Key {
    mutable std::string_view text;
    bool complete;
    std::size_t hash;
    bool operator==(const Key& other) const {
      return complete == other.complete && text == other.text;
    }
  };
  struct KeyHash {
    std::size_t operator()(const Key& key) const { return key.hash; }
  };
  // The waiting groups of one text, oldest first: seqs[head..]. Groups are shown oldest first,
  // so a text's copies leave from the front. They share the text, held once here: a line whose
  // text waits already costs no copy of it (a rank printing the same line over and over), and
  // the buffer stays with the node when the entry goes (spare_nodes_).
  struct Copies {
    std::string text;
    std::vector<std::uint64_t> seqs;
    std::size_t head = 0;
    std::uint64_t dropped = 0;  // seqs erased from the front so far: a position's offset
  };
  using CopiesMap = std::unordered_map<Key, Copies, KeyHash>;
  // A map entry: the map's nodes stay where they are until erased, so a group keeps a pointer
  // to its text's entry and is shown without a lookup.
  using Entry = CopiesMap::value_type;
  struct Group {
    std::uint64_t seq;
    Millis first;
    Entry* entry;  // its text's copies, and the text
    RankList ranks;
  };
  // A rank's newest group, shown or not: one shown is older than every waiting one, so it keeps
  // the rank from no copy. Where it is among its text's copies (`entry`, `position` counted
  // from the first ever, dropped ones too): the rank's next copy of that text is most often the
  // one after it, found without a search. A hint only: checked before it is used.
  struct LastOfRank {
    std::uint64_t seq = 0;
    const Entry* entry = nullptr;  // null until the rank's first line; compared, never followed
    std::uint64_t position = 0;
  };
  Entry* entry_of(Key& key);
  Entry* new_entry(const Key& key);
  std::size_t joinable(const Entry& entry, const LastOfRank& last) const;
  LastOfRank start(long rank, const Key& key, Entry* entry, Millis now);
  void show_oldest(std::string& out);
  const std::string& label_of(std::span<long> ranks);
  std::vector<long> label_ranks_;  // the ranks of the last group shown, as they joined...
  std::string label_;              // ...and its label
  void index_group(const Group& group, std::string_view text, std::size_t length);
  void recycle(Group& group);
  static std::size_t cost(const Group& group);

  DedupLimits limits_;
  std::string* index_ = nullptr;
  std::deque<Group> groups_;  // oldest first; a deque keeps each text where it is
  std::uint64_t next_seq_ = 0;
  void forget_oldest_copy(const Group& group);
  CopiesMap copies_;  // text -> its waiting groups
  // The entry the last line found or made: the next line of a run of equal lines (the same
  // line from rank after rank, or many times from one) finds it with one comparison, no hash.
  Entry* last_entry_ = nullptr;
  // An entry per rank that has printed, kept (no node per line).
  std::unordered_map<long, LastOfRank> last_of_rank_;
  // The rank of the last line and its entry: a rank's lines come in runs (one read of its pipe
  // holds many), each found without a lookup.
  long last_rank_ = -1;
  LastOfRank* last_of_last_rank_ = nullptr;
  LastOfRank& last_of(long rank);
  std::size_t bytes_ = 0;
  // Shown groups' rank buffers (groups of more than RankList::k_inline ranks) and gone texts'
  // nodes, reused by the next ones: a line costs no allocation. None over k_spare_max bytes,
  // k_spare_bytes in all (outside pending_bytes()): room for the buffers of the max_lines
  // groups a window's end shows at once, at 100-byte lines. With 64 spares, as before, the next
  // read's groups allocated and freed a text and a rank list each (a quarter of ezpz's
  // instructions in a de-duplicated 10 MiB job; bench/README).
  static constexpr std::size_t k_spare_max = 1024;
  std::size_t spare_bytes_ = 0;
  template <typename Buffer>
  Buffer take_spare(std::vector<Buffer>& spares);
  template <typename Buffer>
  void keep_spare(std::vector<Buffer>& spares, Buffer& buffer);
  std::vector<std::vector<long>> spare_ranks_;
  // Erased entries' nodes (each with its text's buffer and its list of copies), for the next
  // distinct texts: a text costs no node or buffer of its own.
  std::vector<CopiesMap::node_type> spare_nodes_;
  void keep_node(CopiesMap::node_type node);
  static std::size_t node_size(const CopiesMap::node_type& node);
};

// One stream (the launcher's stdout or its stderr) as the console shows it. A line that is not a
// rank's (rank -1: the launcher's own, ezpz-rankenv's reports) is shown as it came, at once,
// after what waited before it: failure reports stay readable and in place.
class Console {
 public:
  explicit Console(ConsoleMode mode, DedupLimits limits = {}) : mode_(mode), dedup_(limits) {}
  // Each line shown from now on adds its entry to `index` (ranks.idx: rank_index.hpp): in the
  // modes that show every rank's every line (not rank0).
  void index_into(std::string* index);
  void line(const RankLine& line, Millis now, std::string& out);
  // A line of `rank` in a labelled console (mode label), as line() shows it, in the fewest steps:
  // for a run of a rank's lines (its label kept from the last).
  void label_line(long rank, std::string_view text, bool complete, std::string& out);
  void tick(Millis now, std::string& out) { dedup_.tick(now, out); }
  void finish(std::string& out) { dedup_.finish(out); }
  std::optional<Millis> due() const { return dedup_.due(); }
  ConsoleMode mode() const { return mode_; }
  const Deduplicator& deduplicator() const { return dedup_; }

 private:
  ConsoleMode mode_;
  Deduplicator dedup_;
  std::string* index_ = nullptr;
  long label_rank_ = -1;  // whose label_ is
  std::string label_;
};

}  // namespace ezpz::output
