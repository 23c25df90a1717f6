#pragma once
// Recognising a trainer's progress line among what `ezpz launch` passes on (the training
// benchmarks' clock for the first step, and the moment they look at the ranks). Header-only,
// so the unit tests check it without linking the harness.
#include <algorithm>
#include <cctype>
#include <string>

namespace ezpz::bench {

// Where the text after `ezpz launch`'s rank prefix ("[0] step    1/300 ...") starts; 0
// when the line has none.
inline std::size_t after_rank_prefix(const std::string& text) {
  std::size_t close = text.find("] ");
  if (!text.starts_with("[") || close == std::string::npos || close < 2) return 0;
  auto digits = text.substr(1, close - 1);
  bool rank =
      std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); });
  return rank ? close + 2 : 0;
}

// A trainer's "step    N/..." line for `step`, with or without the rank prefix.
inline bool is_step_line(const std::string& text, int step) {
  std::size_t i = after_rank_prefix(text);
  if (text.compare(i, 5, "step ") != 0) return false;
  i += 5;
  while (i < text.size() && text[i] == ' ') ++i;
  return text.compare(i, std::to_string(step).size() + 1, std::to_string(step) + "/") == 0;
}

}  // namespace ezpz::bench
