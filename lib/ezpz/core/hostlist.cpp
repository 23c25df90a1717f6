#include "ezpz/core/hostlist.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"

namespace ezpz {
namespace {

// A typo such as "nid[0-99999999]" must fail fast instead of exhausting memory.
constexpr std::uint64_t kMaxHosts = 1'000'000;

// Longer digit runs may not fit in 64 bits; compress leaves them literal.
constexpr std::size_t kMaxDigits = 18;

// Thrown by the parsing helpers, which do not know the whole text; expand_hostlist
// turns it into the user-facing Error that quotes the text.
struct Malformed {
  std::string what;
};

// "lo-hi" inside brackets, or a single number (first == last). Every number is
// zero-padded to `width`, the digit count of the lower bound as written.
struct NumberRange {
  std::uint64_t first;
  std::uint64_t last;
  std::size_t width;
};

// One piece of a host name: literal text, or a bracket group when `ranges` is
// non-empty.
struct Piece {
  std::string_view literal;
  std::vector<NumberRange> ranges;
};

// One host expression's pieces: a view into the pieces of the whole list.
using Pattern = std::span<const Piece>;

bool is_space(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r');
}

// A hand loop: find_first_not_of(" \t...") costs a memchr per character.
std::string_view trim(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

bool is_digits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Splits at commas outside brackets, checking on the way that brackets pair up.
std::vector<std::string_view> split_top_level(std::string_view text) {
  std::vector<std::string_view> items;
  items.reserve(static_cast<std::size_t>(std::count(text.begin(), text.end(), ',')) + 1);
  bool in_brackets = false;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '[') {
      if (in_brackets) throw Malformed{"nested '['"};
      in_brackets = true;
    } else if (c == ']') {
      if (!in_brackets) throw Malformed{"unexpected ']'"};
      in_brackets = false;
    } else if (c == ',' && !in_brackets) {
      items.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  if (in_brackets) throw Malformed{"unclosed '['"};
  items.push_back(text.substr(start));
  return items;
}

std::uint64_t parse_number(std::string_view digits) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error == std::errc::result_out_of_range) {
    throw Malformed{fmt::format("number {} is too large", digits)};
  }
  return value;
}

// Parses "7", "001" or "08-10" from inside brackets.
NumberRange parse_range(std::string_view item) {
  const auto dash = item.find('-');
  const auto low = item.substr(0, dash);
  const auto high = dash == std::string_view::npos ? low : item.substr(dash + 1);
  if (!is_digits(low) || !is_digits(high)) {
    throw Malformed{fmt::format("\"{}\" is not a number or range", item)};
  }
  const NumberRange range{parse_number(low), parse_number(high), low.size()};
  if (range.last < range.first) {
    throw Malformed{fmt::format("range {}-{} runs backwards", low, high)};
  }
  if (range.last - range.first >= kMaxHosts) {
    throw Malformed{fmt::format("expands to more than {} hosts", kMaxHosts)};
  }
  return range;
}

// Parses the text between '[' and ']': "1,3-4,7".
std::vector<NumberRange> parse_brackets(std::string_view body) {
  if (body.empty()) throw Malformed{"empty brackets"};
  std::vector<NumberRange> ranges;
  std::size_t start = 0;
  while (true) {
    const auto comma = body.find(',', start);
    const auto item = body.substr(start, comma - start);
    if (item.empty()) throw Malformed{fmt::format("empty item in [{}]", body)};
    ranges.push_back(parse_range(item));
    if (comma == std::string_view::npos) return ranges;
    start = comma + 1;
  }
}

// Parses one host expression such as "x1000c0s[0-1]b0n0", appending its pieces
// to `pattern`. Brackets are known to pair up and not nest: split_top_level checked.
void parse_pattern(std::string_view item, std::vector<Piece>& pattern) {
  std::size_t start = 0;
  while (start < item.size()) {
    const auto open = item.find('[', start);
    if (open != start) pattern.push_back({item.substr(start, open - start), {}});
    if (open == std::string_view::npos) break;
    const auto close = item.find(']', open);
    pattern.push_back({{}, parse_brackets(item.substr(open + 1, close - open - 1))});
    start = close + 1;
  }
}

// Counts saturate just past the limit, so that the arithmetic cannot overflow.
std::uint64_t capped(std::uint64_t count) {
  return std::min(count, kMaxHosts + 1);
}

std::uint64_t count_names(Pattern pattern) {
  std::uint64_t names = 1;
  for (const Piece& piece : pattern) {
    std::uint64_t choices = piece.ranges.empty() ? 1 : 0;
    for (const NumberRange& range : piece.ranges) {
      choices = capped(choices + (range.last - range.first + 1));
    }
    names = capped(names * choices);
  }
  return names;
}

void append_padded(std::string& out, std::uint64_t value, std::size_t width) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  const auto length = static_cast<std::size_t>(end - digits);
  if (length < width) out.append(width - length, '0');
  out.append(digits, length);
}

// The alternatives a piece contributes: its literal, or every bracketed number.
std::vector<std::string> choices_of(const Piece& piece) {
  if (piece.ranges.empty()) return {std::string(piece.literal)};
  std::vector<std::string> choices;
  for (const NumberRange& range : piece.ranges) {
    for (std::uint64_t value = range.first;; ++value) {
      append_padded(choices.emplace_back(), value, range.width);
      if (value == range.last) break;  // not `value <= last`: last may be UINT64_MAX
    }
  }
  return choices;
}

// Steps the odometer, rightmost piece fastest; false once it wraps around.
bool advance(std::vector<std::size_t>& index, const std::vector<std::vector<std::string>>& pieces) {
  for (std::size_t i = pieces.size(); i-- > 0;) {
    if (++index[i] < pieces[i].size()) return true;
    index[i] = 0;
  }
  return false;
}

// Appends the cartesian product of the pattern's pieces, in order.
void append_names(Pattern pattern, std::vector<std::string>& names) {
  // Most items in long comma lists are plain names: skip the odometer for them.
  if (pattern.size() == 1 && pattern.front().ranges.empty()) {
    names.emplace_back(pattern.front().literal);
    return;
  }
  std::vector<std::vector<std::string>> pieces;
  pieces.reserve(pattern.size());
  std::size_t longest = 0;
  for (const Piece& piece : pattern) {
    pieces.push_back(choices_of(piece));
    longest += std::max_element(pieces.back().begin(), pieces.back().end(),
                                [](const auto& a, const auto& b) { return a.size() < b.size(); })
                   ->size();
  }
  std::vector<std::size_t> index(pieces.size(), 0);
  do {
    std::string& name = names.emplace_back();
    name.reserve(longest);
    for (std::size_t i = 0; i < pieces.size(); ++i) name += pieces[i][index[i]];
  } while (advance(index, pieces));
}

std::vector<std::string> expand_checked(std::string_view text) {
  if (trim(text).empty()) throw Malformed{"empty"};
  const std::vector<std::string_view> items = split_top_level(text);
  // Every item's pieces in one vector, so that a plain name costs no allocation.
  std::vector<Piece> pieces;
  pieces.reserve(items.size());
  std::vector<std::size_t> item_starts;
  item_starts.reserve(items.size() + 1);
  std::uint64_t total = 0;
  for (std::string_view item : items) {
    item = trim(item);
    if (item.empty()) throw Malformed{"empty host name"};
    item_starts.push_back(pieces.size());
    parse_pattern(item, pieces);
    total = capped(total + count_names(Pattern(pieces).subspan(item_starts.back())));
    if (total > kMaxHosts) throw Malformed{fmt::format("expands to more than {} hosts", kMaxHosts)};
  }
  item_starts.push_back(pieces.size());
  std::vector<std::string> names;
  names.reserve(total);
  for (std::size_t i = 0; i + 1 < item_starts.size(); ++i) {
    append_names(Pattern(pieces).subspan(item_starts[i], item_starts[i + 1] - item_starts[i]),
                 names);
  }
  return names;
}

// ---- compression ----

// A host name split before its trailing digit run: "nid001" -> "nid", "001".
// `digits` is empty when the name cannot fold (no digits, or too many).
struct NumberedName {
  std::string_view name;
  std::string_view prefix;
  std::string_view digits;
  std::uint64_t value = 0;
};

void check_representable(std::string_view name) {
  if (name.find_first_of("[],") != std::string_view::npos) {
    throw Error(fmt::format("hostlist: host name \"{}\" contains '[', ']' or ','", name));
  }
  if (name.empty()) throw Error("hostlist: empty host name");
  // expand_hostlist trims items, so such a name would not come back unchanged.
  if (trim(name).size() != name.size()) {
    throw Error(fmt::format("hostlist: host name \"{}\" has leading or trailing whitespace", name));
  }
}

NumberedName split_trailing_number(std::string_view name) {
  check_representable(name);
  const auto last_non_digit = name.find_last_not_of("0123456789");
  const auto start = last_non_digit == std::string_view::npos ? 0 : last_non_digit + 1;
  const auto digits = name.substr(start);
  if (digits.empty() || digits.size() > kMaxDigits) return {name, name, {}, 0};
  // At most kMaxDigits digits: parse_number cannot overflow here.
  return {name, name.substr(0, start), digits, parse_number(digits)};
}

// True when expanding a range whose lower bound has `width` digits writes the
// number exactly as `digits`: same width, or wider without a leading zero
// (as "nid[9-10]" gives nid9, nid10).
bool written_at_width(std::string_view digits, std::size_t width) {
  return digits.size() == width || (digits.size() > width && digits.front() != '0');
}

// Writes the numbers of names[first, end) -- one prefix -- as bracket items,
// folding runs that increase by exactly one.
void append_bracket_items(const std::vector<NumberedName>& names, std::size_t first,
                          std::size_t end, std::string& out) {
  for (std::size_t run_start = first; run_start < end;) {
    const auto width = names[run_start].digits.size();
    std::size_t run_end = run_start + 1;
    while (run_end < end && names[run_end].value == names[run_end - 1].value + 1 &&
           written_at_width(names[run_end].digits, width)) {
      ++run_end;
    }
    if (run_start != first) out += ',';
    out += names[run_start].digits;
    if (run_end - run_start > 1) {
      out += '-';
      out += names[run_end - 1].digits;
    }
    run_start = run_end;
  }
}

// Writes the group of adjacent names starting at `first` that share a prefix;
// returns where the next group starts.
std::size_t append_group(const std::vector<NumberedName>& names, std::size_t first,
                         std::string& out) {
  const NumberedName& head = names[first];
  std::size_t end = first + 1;
  if (!head.digits.empty()) {
    while (end < names.size() && !names[end].digits.empty() && names[end].prefix == head.prefix) {
      ++end;
    }
  }
  if (end - first == 1) {
    out += head.name;
    return end;
  }
  out += head.prefix;
  out += '[';
  append_bracket_items(names, first, end, out);
  out += ']';
  return end;
}

}  // namespace

std::vector<std::string> expand_hostlist(std::string_view text) {
  try {
    return expand_checked(text);
  } catch (const Malformed& malformed) {
    throw Error(fmt::format("hostlist \"{}\": {}", text, malformed.what));
  }
}

std::string compress_hostlist(const std::vector<std::string>& hosts) {
  std::vector<NumberedName> names;
  names.reserve(hosts.size());
  for (const std::string& host : hosts) names.push_back(split_trailing_number(host));
  std::string out;
  for (std::size_t next = 0; next < names.size();) {
    if (next != 0) out += ',';
    next = append_group(names, next, out);
  }
  return out;
}

}  // namespace ezpz
