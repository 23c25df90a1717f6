#include "ezpz/output/stamp_line.hpp"

#include <algorithm>
#include <charconv>

namespace ezpz::output {
namespace {

bool valid_phase(std::string_view phase) {
  if (phase.empty() || phase.size() > k_phase_max) return false;
  return std::all_of(phase.begin(), phase.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// The next word of `text` (split at single spaces), taken off its front.
std::string_view next_word(std::string_view& text) {
  const std::size_t space = text.find(' ');
  const std::string_view word = text.substr(0, space);
  text.remove_prefix(space == std::string_view::npos ? text.size() : space + 1);
  return word;
}

std::optional<std::int64_t> whole_number(std::string_view word) {
  std::int64_t value{};
  const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (word.empty() || error != std::errc() || end != word.data() + word.size()) return {};
  return value;
}

// Seconds since the epoch, "S" or "S.F", as nanoseconds: exact (a double holds today's time
// to 256 ns only), and no from_chars of a double, which links ~90 KB more into ezpz-rankenv.
std::optional<std::int64_t> seconds_in(std::string_view word) {
  const std::size_t point = word.find('.');
  const std::string_view fraction = point == std::string_view::npos ? "" : word.substr(point + 1);
  const std::optional<std::int64_t> whole = whole_number(word.substr(0, point));
  const bool digits =
      std::all_of(fraction.begin(), fraction.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!whole || *whole <= 0 || *whole > 100'000'000'000 || !digits) return {};
  if (point != std::string_view::npos && fraction.empty()) return {};
  std::int64_t ns = 0;  // the first nine digits of the fraction; more are below a nanosecond
  for (std::size_t i = 0; i < 9; ++i) ns = ns * 10 + (i < fraction.size() ? fraction[i] - '0' : 0);
  return *whole * 1'000'000'000 + ns;
}

}  // namespace

std::optional<ProgramStamp> parse_stamp_line(std::string_view line) {
  if (!line.starts_with(k_stamp_prefix)) return {};
  line.remove_prefix(k_stamp_prefix.size());
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  ProgramStamp stamp{.phase = next_word(line), .unix_ns = {}};
  if (!valid_phase(stamp.phase)) return {};
  if (line.empty()) return stamp;
  stamp.unix_ns = seconds_in(line);
  if (!stamp.unix_ns) return {};
  return stamp;
}

std::string stamp_text(std::string_view phase, std::int64_t unix_ns, std::string_view host) {
  std::string text(phase);
  text.append(" ").append(std::to_string(unix_ns));
  if (!host.empty()) text.append(" ").append(host);
  return text;
}

std::optional<Stamp> read_stamp(long rank, std::string_view text, std::int64_t start_ns,
                                std::int64_t arrival_ns) {
  const std::string_view phase = next_word(text);
  const std::optional<std::int64_t> ns = whole_number(next_word(text));
  if (!valid_phase(phase) || !ns || text.find(' ') != std::string_view::npos) return {};
  const std::int64_t at =
      std::clamp(*ns - start_ns, std::int64_t{0}, std::max(std::int64_t{0}, arrival_ns - start_ns));
  return Stamp{.rank = rank,
               .phase = std::string(phase),
               .at_s = static_cast<double>(at) / 1e9,
               .host = std::string(text)};
}

std::optional<std::string> program_stamp_text(std::string_view line, std::int64_t now_ns) {
  const auto stamp = parse_stamp_line(line);
  if (!stamp) return std::nullopt;
  return stamp_text(stamp->phase, stamp->unix_ns.value_or(now_ns), {});
}

}  // namespace ezpz::output
