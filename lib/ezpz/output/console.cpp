#include "ezpz/output/console.hpp"

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

void append_rank_ranges(std::string& out, std::vector<long>& ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t end = i;
    while (end + 1 < ranks.size() && ranks[end + 1] == ranks[end] + 1) ++end;
    if (i != 0) out += ',';
    append_number(out, ranks[i]);
    if (end != i) {
      out += '-';
      append_number(out, ranks[end]);
    }
    i = end + 1;
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
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  out += text;
  out += '\n';
}

void labelled(std::vector<long>& ranks, std::string_view text, std::string& out) {
  out += '[';
  append_rank_ranges(out, ranks);
  out += "] ";
  shown_line(text, out);
}

// One rank's line: its number written in place, no range list to build (most lines).
void labelled(long rank, std::string_view text, std::string& out) {
  append_rank_label(out, rank);
  shown_line(text, out);
}

}  // namespace

// The text, its rank list and a map entry's worth of bookkeeping.
std::size_t Deduplicator::cost(const Group& group) {
  return sizeof(Group) + group.text.capacity() + group.ranks.capacity() * sizeof(long) + 64;
}

// The rank's line may join the oldest copy of its text that came after the rank's last line (so
// its order holds, and the rank is not in it yet: its groups are all at or before that line).
Deduplicator::Group* Deduplicator::joinable(long rank, const Key& key) {
  const auto entry = copies_.find(key);
  if (entry == copies_.end()) return nullptr;
  const std::vector<std::uint64_t>& seqs = entry->second.seqs;
  auto copy = seqs.begin() + static_cast<std::ptrdiff_t>(entry->second.head);
  const auto last = last_of_rank_.find(rank);
  if (last != last_of_rank_.end() && *copy <= last->second) {
    // Most often the rank is at the newest copy already (it printed the line first), or past
    // none: only in between is there a search.
    if (last->second >= seqs.back()) return nullptr;
    copy = std::upper_bound(copy, seqs.end(), last->second);
  }
  return &groups_[*copy - groups_.front().seq];
}

namespace {

// A spare buffer, emptied, or a new one.
template <typename Buffer>
Buffer take_spare(std::vector<Buffer>& spares) {
  if (spares.empty()) return Buffer();
  Buffer buffer = std::move(spares.back());
  spares.pop_back();
  buffer.clear();
  return buffer;
}

}  // namespace

void Deduplicator::start(long rank, const Key& key, Millis now) {
  Group& group = groups_.emplace_back(Group{.seq = next_seq_++,
                                            .first = now,
                                            .hash = key.hash,
                                            .text = take_spare(spare_texts_),
                                            .ranks = take_spare(spare_ranks_)});
  group.text.assign(key.text);
  group.ranks.push_back(rank);
  // A new entry's key is this group's text (the line's own is gone after this call); an entry
  // there already keeps its oldest copy's.
  const auto [entry, fresh] = copies_.try_emplace(Key{.text = group.text, .hash = key.hash});
  if (fresh) entry->second.seqs = take_spare(spare_seqs_);
  entry->second.seqs.push_back(group.seq);
  last_of_rank_[rank] = group.seq;
  bytes_ += cost(group);
}

// A shown group's buffers, for the next groups; a large one is let go (the bound above).
void Deduplicator::recycle(Group& group) {
  if (spare_texts_.size() < k_spares && group.text.capacity() <= k_spare_max)
    spare_texts_.push_back(std::move(group.text));
  if (spare_ranks_.size() < k_spares && group.ranks.capacity() * sizeof(long) <= k_spare_max)
    spare_ranks_.push_back(std::move(group.ranks));
}

void Deduplicator::add(long rank, std::string_view text, Millis now, std::string& out) {
  tick(now, out);
  const Key key{.text = text, .hash = std::hash<std::string_view>()(text)};
  if (Group* group = joinable(rank, key)) {
    bytes_ -= cost(*group);
    group->ranks.push_back(rank);
    bytes_ += cost(*group);
    last_of_rank_[rank] = group->seq;
  } else {
    start(rank, key, now);
  }
  while (groups_.size() > limits_.max_lines || (bytes_ > limits_.max_bytes && !groups_.empty())) {
    show_oldest(out);
  }
}

void Deduplicator::show_oldest(std::string& out) {
  Group& group = groups_.front();
  labelled(group.ranks, group.text, out);  // one rank or many: written in place either way
  forget_oldest_copy(group);
  bytes_ -= cost(group);
  recycle(group);
  groups_.pop_front();
}

// The oldest group, about to be shown, leaves its text's copies (their oldest); the entry's key
// moves to the next copy's text, or the entry goes with the last copy.
void Deduplicator::forget_oldest_copy(const Group& group) {
  const auto entry = copies_.find(Key{.text = group.text, .hash = group.hash});
  Copies& copies = entry->second;
  if (++copies.head == copies.seqs.size()) {
    if (spare_seqs_.size() < k_spares &&
        copies.seqs.capacity() * sizeof(std::uint64_t) <= k_spare_max)
      spare_seqs_.push_back(std::move(copies.seqs));
    copies_.erase(entry);
    return;
  }
  entry->first.text = groups_[copies.seqs[copies.head] - group.seq].text;
  if (copies.head >= 64 && copies.head * 2 >= copies.seqs.size()) {  // amortised O(1) a copy
    copies.seqs.erase(copies.seqs.begin(),
                      copies.seqs.begin() + static_cast<std::ptrdiff_t>(copies.head));
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

void Console::line(const RankLine& line, Millis now, std::string& out) {
  if (line.rank < 0) {  // the launcher's own: after what waited before it, byte for byte
    dedup_.finish(out);
    out += line.text;
    if (line.complete) out += '\n';
    return;
  }
  switch (mode_) {
    case ConsoleMode::raw:
    case ConsoleMode::label:
      labelled(line.rank, line.text, out);
      return;
    case ConsoleMode::rank0:
      if (line.rank == 0) shown_line(line.text, out);
      return;
    case ConsoleMode::dedup:
      dedup_.add(line.rank, line.text, now, out);
      return;
  }
}

}  // namespace ezpz::output
