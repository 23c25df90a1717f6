#pragma once
// The de-duplicated console read back: "[0-2,7] text" lines to each rank's texts, in the
// order shown. For the unit tests and the fuzzer, which check that every rank's lines come out
// once each, in its order.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ezpz::testing {

// nullopt when a line is not "[RANKS] TEXT" or the output does not end with a newline.
inline std::optional<std::map<long, std::vector<std::string>>> texts_per_rank(
    std::string_view shown) {
  std::map<long, std::vector<std::string>> texts;
  std::size_t start = 0;
  for (std::size_t end; (end = shown.find('\n', start)) != std::string_view::npos;
       start = end + 1) {
    const std::string_view line = shown.substr(start, end - start);
    const std::size_t close = line.find("] ");
    if (!line.starts_with('[') || close == std::string_view::npos) return std::nullopt;
    const std::string ranks(line.substr(1, close - 1));
    for (std::size_t at = 0; at < ranks.size();) {  // "a-b,c"
      std::size_t comma = ranks.find(',', at);
      if (comma == std::string::npos) comma = ranks.size();
      const std::string range = ranks.substr(at, comma - at);
      const std::size_t dash = range.find('-');
      const long low = std::stol(range.substr(0, dash));
      const long high = dash == std::string::npos ? low : std::stol(range.substr(dash + 1));
      for (long rank = low; rank <= high; ++rank) texts[rank].emplace_back(line.substr(close + 2));
      at = comma + 1;
    }
  }
  if (start != shown.size()) return std::nullopt;
  return texts;
}

}  // namespace ezpz::testing
