#include "ezpz/output/rank_log.hpp"

#include <deque>

#include "ezpz/output/rank_records.hpp"

namespace ezpz::output {

std::string rank_output(std::string_view ranks_log, long rank) {
  std::string text;
  RecordAssembler assembler([&](const RankLine& line) {
    if (line.rank != rank) return;
    text.append(line.text);
    if (line.complete) text += '\n';
  });
  assembler.feed(ranks_log);
  assembler.finish();
  return text;
}

std::string pick_lines(std::string_view text, std::string_view grep,
                       std::optional<std::size_t> tail) {
  std::deque<std::string_view> picked;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::size_t size = end == std::string_view::npos ? text.size() : end + 1;
    const std::string_view line = text.substr(0, size);
    text.remove_prefix(size);
    if (!grep.empty() && line.find(grep) == std::string_view::npos) continue;
    picked.push_back(line);
    if (tail && picked.size() > *tail) picked.pop_front();
  }
  std::string out;
  for (std::string_view line : picked) out += line;
  return out;
}

}  // namespace ezpz::output
