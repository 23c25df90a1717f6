#pragma once
// Splitting text at a separator: the one loop behind host-name labels, variable-name words,
// PATH entries and the lines of a file or a program's output. Header-only: ezpz-rankenv, the
// stager and the fuzz targets link only a few of lib/'s files.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace ezpz {

// The pieces of `text` between `separator`s, empty ones kept: n separators make n+1 pieces
// ("a..b" at '.' is "a", "", "b"; "" is one empty piece).
inline std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> pieces;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find(separator, start), text.size());
    pieces.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return pieces;
}

// The lines of `text`: split at '\n', without the empty piece after a final newline (or of
// an empty text).
inline std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines = split(text, '\n');
  if (lines.back().empty()) lines.pop_back();
  return lines;
}

// "1 rank", "2 ranks", "0 hosts": a count and its noun, plural unless the count is 1.
inline std::string plural(long count, std::string_view noun) {
  return std::to_string(count) + " " + std::string(noun) + (count == 1 ? "" : "s");
}

// A rank's line as ezpz reprints it in its own words: without terminal escapes (ECMA-48 CSI
// "ESC [ ... final", OSC "ESC ] ... BEL or ESC \\", "ESC ( B" and two-byte "ESC X") and without
// other control characters but tab. A rank's colours, cursor moves and titles are its terminal's.
inline std::string without_escapes(std::string_view line) {
  std::string out;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(line[i]);
    if (c != 0x1b) {
      if (c >= 0x20 || c == '\t') out += line[i];
      continue;
    }
    if (i + 1 >= line.size()) break;
    const char kind = line[++i];
    if (kind == '[') {  // parameters and intermediates, then one final byte 0x40-0x7e
      while (i + 1 < line.size() && !(line[i + 1] >= 0x40 && line[i + 1] <= 0x7e)) ++i;
      ++i;
    } else if (kind == ']') {  // up to BEL or ESC backslash
      while (i + 1 < line.size() && line[i + 1] != '\a' && line[i + 1] != 0x1b) ++i;
      ++i;
      if (i < line.size() && line[i] == 0x1b) ++i;
    } else if (kind == '(' || kind == ')' || kind == '*' || kind == '+') {
      ++i;  // a character set's designation: one more byte
    }
  }
  return out;
}

}  // namespace ezpz
