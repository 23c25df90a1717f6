#include "ezpz/output/console.hpp"

#include "ezpz/output/rank_index.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>

namespace ezpz::output {

std::optional<ConsoleMode> console_mode_named(std::string_view name) {
  for (const ConsoleModeRow& row : k_console_modes) {
    if (row.name == name) return row.mode;
  }
  return std::nullopt;
}

std::string_view console_mode_name(ConsoleMode mode) {
  for (const ConsoleModeRow& row : k_console_modes) {
    if (row.mode == mode) return row.name;
  }
  return "";
}

ConsoleMode default_console_mode(bool terminal) {
  return terminal ? ConsoleMode::dedup : ConsoleMode::label;
}

void append_number(std::string& out, long number) {
  std::array<char, 24> digits{};
  char* end = std::to_chars(digits.begin(), digits.end(), number).ptr;
  out.append(digits.data(), static_cast<std::size_t>(end - digits.data()));
}

void append_rank_label(std::string& out, long rank) {
  std::array<char, 32> label{};
  label[0] = '[';
  char* end = std::to_chars(label.data() + 1, label.data() + 24, rank).ptr;
  *end++ = ']';
  *end++ = ' ';
  out.append(label.data(), end);
}

void append_rank_ranges(std::string& out, std::span<long> ranks) {
  std::sort(ranks.begin(), ranks.end());
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t end = i;  // the run's last rank; a rank listed twice is in it once
    while (end + 1 < ranks.size() && ranks[end + 1] - ranks[end] <= 1) ++end;
    if (i != 0) out += ',';
    append_number(out, ranks[i]);
    if (ranks[end] != ranks[i]) {
      out += '-';
      append_number(out, ranks[end]);
    }
    i = end + 1;
  }
}

bool ranges_hold(std::string_view ranges, long rank) {
  const char* at = ranges.data();
  const char* const end = at + ranges.size();
  const auto number = [&](long& value) {  // digits only: no sign
    if (at == end || *at < '0' || *at > '9') return false;
    const auto got = std::from_chars(at, end, value);
    at = got.ptr;
    return got.ec == std::errc();
  };
  bool held = false;
  while (true) {
    long first = 0;
    if (!number(first)) return false;
    long last = first;
    if (at != end && *at == '-') {
      ++at;
      if (!number(last) || last < first) return false;
    }
    held = held || (first <= rank && rank <= last);
    if (at == end) return held;
    if (*at++ != ',') return false;
  }
}

std::string rank_ranges(std::vector<long> ranks) {
  std::string text;
  append_rank_ranges(text, ranks);
  return text;
}

namespace {

// A rank's line is shown whole, on a line of its own: a piece the assembler handed on before
// its newline (a progress bar's redraw ending in '\r', a partial line after a quiet spell) too,
// without the '\r' that would let the next line overwrite it.
void shown_line(std::string_view text, std::string& out) {
  out += text.ends_with('\r') ? text.substr(0, text.size() - 1) : text;
  out.push_back('\n');
}

}  // namespace

// The group, its rank list and a copy's worth of bookkeeping; its text is counted once for all
// of its text's copies, with the entry (new_entry, forget_oldest_copy).
std::size_t Deduplicator::cost(const Group& group) {
  return sizeof(Group) + group.ranks.buffer_bytes() + 64;
}

void RankList::spill(std::vector<long> buffer) {
  more_ = std::move(buffer);
  more_.assign(inline_.begin(), inline_.begin() + static_cast<std::ptrdiff_t>(size_));
}

// The rank's line may join the oldest copy of its text that came after the rank's last line (so
// its order holds, and the rank is not in it yet: its groups are all at or before that line).
// Returns that copy's index in the entry's seqs; none (their size) when there is none.
std::size_t Deduplicator::joinable(const Entry& entry, const LastOfRank& last) const {
  const Copies& copies = entry.second;
  const std::vector<std::uint64_t>& seqs = copies.seqs;
  if (last.entry == nullptr || seqs[copies.head] > last.seq) return copies.head;
  // The rank is at the newest copy already (it printed the line first): none to join.
  if (last.seq >= seqs.back()) return seqs.size();
  // Its last line is one of these copies: the next one, where the hint says so; else a search.
  if (last.entry == &entry && last.position >= copies.dropped) {
    const std::uint64_t at = last.position - copies.dropped;
    if (at + 1 < seqs.size() && seqs[at] == last.seq) return at + 1;
  }
  const auto from = seqs.begin() + static_cast<std::ptrdiff_t>(copies.head);
  return static_cast<std::size_t>(std::upper_bound(from, seqs.end(), last.seq) - seqs.begin());
}

namespace {

std::size_t key_hash(std::string_view text, bool complete) {
  return std::hash<std::string_view>()(text) ^ (complete ? 0 : 0x9e3779b97f4a7c15U);
}

}  // namespace

// The waiting copies' entry of `key`'s text; nullptr when none waits. Where it looks the map
// up, it sets `key.hash`: so always when it returns nullptr.
Deduplicator::Entry* Deduplicator::entry_of(Key& key) {
  if (last_entry_ != nullptr && last_entry_->first == key) return last_entry_;
  key.hash = key_hash(key.text, key.complete);
  const auto found = copies_.find(key);
  return found == copies_.end() ? nullptr : &*found;
}

namespace {

// What a spare buffer holds of memory, its bookkeeping included.
template <typename Buffer>
std::size_t spare_size(const Buffer& buffer) {
  return sizeof(Buffer) + buffer.capacity() * sizeof(typename Buffer::value_type);
}

}  // namespace

// A spare buffer, emptied, or a new one.
template <typename Buffer>
Buffer Deduplicator::take_spare(std::vector<Buffer>& spares) {
  if (spares.empty()) return Buffer();
  Buffer buffer = std::move(spares.back());
  spares.pop_back();
  spare_bytes_ -= spare_size(buffer);
  buffer.clear();
  return buffer;
}

// Keeps a shown group's buffer for the next groups, within the bounds (k_spare_bytes).
template <typename Buffer>
void Deduplicator::keep_spare(std::vector<Buffer>& spares, Buffer& buffer) {
  const std::size_t size = spare_size(buffer);
  if (size - sizeof(Buffer) > k_spare_max || spare_bytes_ + size > k_spare_bytes) return;
  spares.push_back(std::move(buffer));
  spare_bytes_ += size;
}

// A map entry for `key`, keyed by its own copy of the text: a spare node's (its buffers kept), or
// a new one.
Deduplicator::Entry* Deduplicator::new_entry(const Key& key) {
  Entry* entry = nullptr;
  if (spare_nodes_.empty()) {
    entry = &*copies_.try_emplace(key).first;
  } else {
    CopiesMap::node_type node = std::move(spare_nodes_.back());
    spare_nodes_.pop_back();
    spare_bytes_ -= node_size(node);
    node.key() = key;
    node.mapped().seqs.clear();
    node.mapped().head = 0;
    node.mapped().dropped = 0;
    entry = &*copies_.insert(std::move(node)).position;
  }
  entry->second.text.assign(key.text);
  entry->first.text = entry->second.text;  // the line's own is gone after this call
  bytes_ += entry->second.text.capacity();
  return entry;
}

// Keeps an erased entry's node for the next text, within the bounds (k_spare_bytes).
void Deduplicator::keep_node(CopiesMap::node_type node) {
  const std::size_t size = node_size(node);
  if (size > k_spare_max || spare_bytes_ + size > k_spare_bytes) return;
  spare_nodes_.push_back(std::move(node));
  spare_bytes_ += size;
}

std::size_t Deduplicator::node_size(const CopiesMap::node_type& node) {
  return sizeof(Entry) + 2 * sizeof(void*) + spare_size(node.mapped().seqs) +
         node.mapped().text.capacity();
}

// A new group of `key`'s text, waiting; `entry`: its copies, nullptr when it has none yet.
// Returns the rank's new last line.
Deduplicator::LastOfRank Deduplicator::start(long rank, const Key& key, Entry* entry, Millis now) {
  if (entry == nullptr) entry = new_entry(key);
  Group& group =
      groups_.emplace_back(Group{.seq = next_seq_++, .first = now, .entry = entry, .ranks = {}});
  group.ranks.push_back(rank);
  Copies& copies = entry->second;
  copies.seqs.push_back(group.seq);
  last_entry_ = entry;
  bytes_ += cost(group);
  return {.seq = group.seq, .entry = entry, .position = copies.dropped + copies.seqs.size() - 1};
}

// A shown group's rank buffer, for the next groups; a large one is let go (the bound above).
void Deduplicator::recycle(Group& group) {
  if (group.ranks.buffer().capacity() != 0) keep_spare(spare_ranks_, group.ranks.buffer());
}

Deduplicator::LastOfRank& Deduplicator::last_of(long rank) {
  if (last_of_last_rank_ == nullptr || rank != last_rank_) {
    last_of_last_rank_ = &last_of_rank_[rank];
    last_rank_ = rank;
  }
  return *last_of_last_rank_;
}

void Deduplicator::add(long rank, std::string_view text, bool complete, Millis now,
                       std::string& out) {
  tick(now, out);
  LastOfRank& last = last_of(rank);
  Key key{.text = text, .complete = complete, .hash = 0};
  Entry* entry = entry_of(key);
  const std::size_t copy = entry != nullptr ? joinable(*entry, last) : 0;
  if (entry != nullptr && copy < entry->second.seqs.size()) {
    const Copies& copies = entry->second;
    Group& group = groups_[copies.seqs[copy] - groups_.front().seq];
    bytes_ -= cost(group);
    if (group.ranks.full()) group.ranks.spill(take_spare(spare_ranks_));
    group.ranks.push_back(rank);
    bytes_ += cost(group);
    last = {.seq = group.seq, .entry = entry, .position = copies.dropped + copy};
    last_entry_ = entry;
  } else {
    last = start(rank, key, entry, now);
  }
  while (groups_.size() > limits_.max_lines || (bytes_ > limits_.max_bytes && !groups_.empty())) {
    show_oldest(out);
  }
}

// A shown group's entry: one rank's, as in a labelled console; several's, a group entry.
void Deduplicator::index_group(const Group& group, std::string_view text, std::size_t length) {
  const bool complete = group.entry->first.complete;
  if (group.ranks.size() == 1) {
    append_index_entry(
        *index_, RankLine{.rank = group.ranks.front(), .text = text, .complete = complete}, length);
  } else {
    append_group_entry(*index_, text, complete, length);
  }
}

// "[0-7] " for a group of those ranks; `ranks` is sorted in place. Kept from the last group
// shown, whose ranks, in the order they joined, are most often the next one's too.
const std::string& Deduplicator::label_of(std::span<long> ranks) {
  if (std::ranges::equal(ranks, label_ranks_)) return label_;
  label_ranks_.assign(ranks.begin(), ranks.end());
  label_.assign(1, '[');
  append_rank_ranges(label_, ranks);
  label_ += "] ";
  return label_;
}

void Deduplicator::show_oldest(std::string& out) {
  Group& group = groups_.front();
  const std::size_t before = out.size();
  const std::string& text = group.entry->second.text;
  out += label_of(group.ranks.ranks());  // one rank or many
  shown_line(text, out);
  if (index_ != nullptr) index_group(group, text, out.size() - before);
  forget_oldest_copy(group);
  bytes_ -= cost(group);
  recycle(group);
  groups_.pop_front();
}

// The oldest group, shown, leaves its text's copies (their oldest); the entry, and its text, go
// with the last copy.
void Deduplicator::forget_oldest_copy(const Group& group) {
  Copies& copies = group.entry->second;
  if (++copies.head == copies.seqs.size()) {
    if (last_entry_ == group.entry) last_entry_ = nullptr;
    bytes_ -= copies.text.capacity();
    keep_node(copies_.extract(copies_.find(group.entry->first)));
    return;
  }
  if (copies.head >= 64 && copies.head * 2 >= copies.seqs.size()) {  // amortised O(1) a copy
    copies.seqs.erase(copies.seqs.begin(),
                      copies.seqs.begin() + static_cast<std::ptrdiff_t>(copies.head));
    copies.dropped += copies.head;
    copies.head = 0;
  }
}

void Deduplicator::tick(Millis now, std::string& out) {
  while (!groups_.empty() && now - groups_.front().first >= limits_.window) show_oldest(out);
}

void Deduplicator::finish(std::string& out) {
  while (!groups_.empty()) show_oldest(out);
}

std::optional<Millis> Deduplicator::due() const {
  if (groups_.empty()) return std::nullopt;
  return groups_.front().first + limits_.window;
}

void Console::index_into(std::string* index) {
  index_ = index;
  dedup_.index_into(index);
}

void Console::label_line(long rank, std::string_view text, bool complete, std::string& out) {
  if (rank != label_rank_) {
    label_.clear();
    append_rank_label(label_, rank);
    label_rank_ = rank;
  }
  const std::size_t before = out.size();
  out += label_;
  shown_line(text, out);
  if (index_ != nullptr) {
    append_index_entry(*index_, RankLine{.rank = rank, .text = text, .complete = complete},
                       out.size() - before);
  }
}

void Console::line(const RankLine& line, Millis now, std::string& out) {
  if (line.rank < 0) {  // the launcher's own: after what waited before it, byte for byte
    dedup_.finish(out);
    const std::size_t own = out.size();
    out += line.text;
    if (line.complete) out += '\n';
    if (index_ != nullptr) append_index_entry(*index_, line, out.size() - own);
    return;
  }
  switch (mode_) {
    case ConsoleMode::raw:
    case ConsoleMode::label:
      return label_line(line.rank, line.text, line.complete, out);
    case ConsoleMode::rank0:
      if (line.rank == 0) shown_line(line.text, out);
      return;
    case ConsoleMode::dedup:
      dedup_.add(line.rank, line.text, line.complete, now, out);
      return;
  }
}

}  // namespace ezpz::output
