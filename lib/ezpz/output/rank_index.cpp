#include "ezpz/output/rank_index.hpp"

#include <optional>

#include "ezpz/core/varint.hpp"
#include "ezpz/output/console.hpp"

namespace ezpz::output {
namespace {

constexpr unsigned k_line_ends = 1;
constexpr unsigned k_carriage_return = 2;
constexpr unsigned k_ranks_in_label = 4;

struct Entry {
  long rank;  // -1: the launcher's
  unsigned flags;
  std::size_t length;
};

std::optional<Entry> take_entry(std::string_view& in) {
  const auto rank = take_varint(in);
  if (!rank || in.empty()) return std::nullopt;
  const auto flags = static_cast<unsigned char>(in.front());
  in.remove_prefix(1);
  const auto length = take_varint(in);
  if (!length) return std::nullopt;
  return Entry{.rank = static_cast<long>(*rank) - 1, .flags = flags, .length = *length};
}

// In one append: the pump adds an entry per line. Most entries are three bytes (a rank under 127,
// a line under 128 bytes): pushed one by one, with no copy to call.
void append_entry(std::string& out, const Entry& entry) {
  const auto rank = static_cast<std::size_t>(entry.rank + 1);
  if (rank < 0x80 && entry.length < 0x80) {
    out.push_back(static_cast<char>(rank));
    out.push_back(static_cast<char>(entry.flags));
    out.push_back(static_cast<char>(entry.length));
    return;
  }
  char bytes[2 * k_varint_max + 1];
  char* end = write_varint(bytes, static_cast<std::size_t>(entry.rank + 1));
  *end++ = static_cast<char>(entry.flags);
  out.append(bytes, write_varint(end, entry.length));
}

// The rank's bytes of its console line, `label` then its text then "\n" (cut short at the
// log's end, possibly).
void append_rank_text(std::string_view shown, std::string_view label, unsigned flags,
                      std::string& out) {
  if (!shown.starts_with(label)) return;  // not this index's log
  shown.remove_prefix(label.size());
  const bool whole = shown.ends_with('\n');
  if (whole) shown.remove_suffix(1);
  out.append(shown);
  if (!whole) return;
  if (flags & k_carriage_return) out += '\r';
  if (flags & k_line_ends) out += '\n';
}

unsigned line_flags(std::string_view text, bool complete) {
  unsigned flags = complete ? k_line_ends : 0;
  if (!text.empty() && text.back() == '\r') flags |= k_carriage_return;
  return flags;
}

// A piece of several ranks: its label, "[0-3,7] ", when it lists `rank`; else nothing.
std::string_view group_label(std::string_view shown, long rank) {
  const std::size_t end = shown.find("] ");
  if (!shown.starts_with('[') || end == std::string_view::npos) return {};
  if (!ranges_hold(shown.substr(1, end - 1), rank)) return {};
  return shown.substr(0, end + 2);
}

}  // namespace

void append_index_entry(std::string& index, const RankLine& line, std::size_t length) {
  append_entry(
      index,
      Entry{.rank = line.rank, .flags = line_flags(line.text, line.complete), .length = length});
}

void append_group_entry(std::string& index, std::string_view text, bool complete,
                        std::size_t length) {
  append_entry(
      index,
      Entry{.rank = -1, .flags = line_flags(text, complete) | k_ranks_in_label, .length = length});
}

std::string cut_index(std::string_view entries, std::size_t length) {
  std::string kept;
  while (length > 0) {
    std::optional<Entry> entry = take_entry(entries);
    if (!entry) break;
    if (entry->length > length) {
      entry =
          Entry{.rank = entry->rank, .flags = entry->flags & k_ranks_in_label, .length = length};
    }
    append_entry(kept, *entry);
    length -= entry->length;
  }
  return kept;
}

std::string indexed_rank_output(std::string_view output_log, std::string_view index, long rank) {
  std::string text;
  if (!index.starts_with(k_rank_index_header) && !index.starts_with(k_rank_index_header_groups))
    return text;
  index.remove_prefix(k_rank_index_header.size());
  std::string label;
  append_rank_label(label, rank);
  while (!output_log.empty()) {
    const std::optional<Entry> entry = take_entry(index);
    if (!entry) break;
    const std::string_view shown = output_log.substr(0, entry->length);
    output_log.remove_prefix(shown.size());
    if (entry->flags & k_ranks_in_label) {
      const std::string_view group = group_label(shown, rank);
      if (!group.empty()) append_rank_text(shown, group, entry->flags, text);
    } else if (entry->rank == rank) {
      append_rank_text(shown, label, entry->flags, text);
    }
  }
  return text;
}

}  // namespace ezpz::output
