#include "ezpz/output/rank_records.hpp"

#include <cstring>

#include "ezpz/output/stamp_line.hpp"

namespace ezpz::output {

namespace {

// The digits of a rank, at most: more would not fit a long.
constexpr std::size_t k_rank_digits_max = 18;

// The text bytes one record can carry after `prefix` (the rank): "<rank>+ <text>\n".
std::size_t room_after(std::string_view prefix) {
  return k_record_max - prefix.size() - 3;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// One line of the stream as a record: rank, marker and text; rank -1 when it is not one.
struct Parsed {
  long rank = -1;
  bool complete = true;
  std::string_view text;
  bool control = false;
};

Parsed parse_record(std::string_view line) {
  std::size_t digits = 0;
  while (digits < line.size() && digits <= k_rank_digits_max && is_digit(line[digits])) ++digits;
  const bool header = digits > 0 && digits <= k_rank_digits_max && line.size() >= digits + 2 &&
                      (line[digits] == ':' || line[digits] == '+' || line[digits] == '!') &&
                      line[digits + 1] == ' ';
  // Records are cut to k_record_max with their newline, so a longer line was never one.
  if (!header || (line[0] == '0' && digits > 1) || line.size() >= k_record_max) return {};
  long rank = 0;
  for (std::size_t i = 0; i < digits; ++i) rank = rank * 10 + (line[i] - '0');
  return {.rank = rank,
          .complete = line[digits] != '+',
          .text = line.substr(digits + 2),
          .control = line[digits] == '!'};
}

// Hands each record of `text` to `put` as its marker and its text, pieces of at most `room`
// bytes: a '\n' in `text` ends a line there; `complete`: its end ends one too.
template <typename Put>
void encode(std::size_t room, std::string_view text, bool complete, Put&& put) {
  for (;;) {
    const std::size_t newline = text.find('\n');
    const bool ends = newline != std::string_view::npos || complete;
    std::string_view line = text.substr(0, newline);
    for (; line.size() > room; line.remove_prefix(room)) put('+', line.substr(0, room));
    if (ends) put(':', line);
    if (!ends && !line.empty()) put('+', line);
    if (newline == std::string_view::npos) return;
    text.remove_prefix(newline + 1);
  }
}

}  // namespace

std::string pipe_record(long rank) {
  return control_record(rank, "pipe");
}

std::optional<long> pipe_record_rank(std::string_view bytes) {
  const std::size_t end = bytes.find('\n');
  if (end == std::string_view::npos) return std::nullopt;
  const Parsed parsed = parse_record(bytes.substr(0, end));
  if (!parsed.control || parsed.text != "pipe") return std::nullopt;
  return parsed.rank;
}

std::string control_record(long rank, std::string_view text) {
  std::string record = std::to_string(rank);
  record.append("! ").append(text).push_back('\n');
  return record;
}

void encode_records(long rank, std::string_view text, bool complete,
                    const std::function<void(std::string_view record)>& write) {
  const std::string prefix = std::to_string(rank);
  std::string record;
  encode(room_after(prefix), text, complete, [&](char marker, std::string_view piece) {
    record.assign(prefix).append({marker, ' '}).append(piece).push_back('\n');
    write(record);
  });
}

RecordEncoder::RecordEncoder(long rank, Write write, std::size_t write_max)
    : prefix_(std::to_string(rank)),
      room_(room_after(prefix_)),
      write_max_(write_max),
      write_(std::move(write)),
      cutter_(room_) {
  batch_.reserve(write_max_);
}

// One byte compared on most lines: the stamp check costs the relay nothing measurable.
bool RecordEncoder::stamped(std::string_view line) const {
  return stamp_ && has_stamp_prefix(line) && stamp_(line);
}

// A record, straight into the batch: the relay's only copy of the rank's bytes.
void RecordEncoder::put(char marker, std::string_view text) {
  if (batch_.size() + prefix_.size() + text.size() + 3 > write_max_) send();
  batch_.append(prefix_);
  batch_ += marker;
  batch_ += ' ';
  batch_.append(text);
  batch_ += '\n';
}

void RecordEncoder::put_records(std::string_view text, bool complete) {
  encode(room_, text, complete,
         [this](char marker, std::string_view piece) { put(marker, piece); });
}

void RecordEncoder::send() {
  if (!batch_.empty()) write_(batch_);
  batch_.clear();
}

void RecordEncoder::control(std::string_view text) {
  put('!', text);
}

// A line (or a '\r' redraw, or a piece) of the rank's: one record when it fits (almost every
// line), else through encode().
void RecordEncoder::emit(std::string_view text, bool complete) {
  if (complete && stamped(text)) return;
  if (complete && text.size() <= room_) return put(':', text);
  put_records(text, complete);
}

// Whole lines and '\r' redraws go out at once; the rest waits in the cutter, less than a record.
void RecordEncoder::feed(std::string_view bytes) {
  cutter_.feed(bytes, [this](std::string_view text, bool complete) { emit(text, complete); });
}

void RecordEncoder::flush() {
  cutter_.flush([this](std::string_view text, bool complete) { emit(text, complete); });
  send();
}

RecordAssembler::RecordAssembler(Sink sink) : sink_(std::move(sink)) {}

void RecordAssembler::hand_on(long rank, std::string_view text, bool complete, bool control) {
  sink_(RankLine{.rank = rank, .text = text, .complete = complete, .control = control});
}

// Only a rank with a piece waiting has an entry in pending_: most lines need no lookup, no copy.
void RecordAssembler::record(long rank, bool complete, std::string_view text) {
  auto waiting = pending_.empty() ? pending_.end() : pending_.find(rank);
  const bool redraw = !text.empty() && text.back() == '\r';
  if (waiting == pending_.end()) {
    if (complete || redraw) return hand_on(rank, text, complete);
    if (text.empty()) return;
    waiting = pending_.emplace(rank, std::string()).first;
  }
  std::string& pending = waiting->second;
  pending.append(text);
  if (!complete && !redraw && pending.size() < k_pending_max) return;
  hand_on(rank, pending, complete);
  pending_.erase(waiting);
}

void RecordAssembler::line(std::string_view bytes) {
  const Parsed parsed = parse_record(bytes);
  if (parsed.rank < 0) return hand_on(-1, bytes, true);
  if (parsed.control) return hand_on(parsed.rank, parsed.text, true, true);  // never pending
  record(parsed.rank, parsed.complete, parsed.text);
}

void RecordAssembler::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    const std::size_t newline = bytes.find('\n');
    if (newline == std::string_view::npos) {
      if (foreign_) return hand_on(-1, bytes, false);
      buffer_.append(bytes);
      if (buffer_.size() < k_record_max) return;
      foreign_ = true;  // too long for a record: the launcher's own, handed on as it comes
      hand_on(-1, buffer_, false);
      buffer_.clear();
      return;
    }
    const std::string_view head = bytes.substr(0, newline);
    bytes.remove_prefix(newline + 1);
    if (foreign_) {
      foreign_ = false;
      hand_on(-1, head, true);
    } else if (buffer_.empty()) {
      line(head);
    } else {
      buffer_.append(head);
      line(buffer_);
      buffer_.clear();
    }
  }
}

void RecordAssembler::flush() {
  for (auto& [rank, pending] : pending_) hand_on(rank, pending, false);
  pending_.clear();
}

void RecordAssembler::finish() {
  if (!buffer_.empty()) {  // the stream ended mid-line: a record's piece, or the launcher's
    const Parsed parsed = parse_record(buffer_);
    if (parsed.rank < 0) hand_on(-1, buffer_, false);
    if (parsed.rank >= 0 && !parsed.control) record(parsed.rank, false, parsed.text);
    buffer_.clear();
  }
  foreign_ = false;
  flush();
}

namespace {

enum class TagMatch { no, partial, whole };

// "[JOB,RANK]<stdout>:" at the start of `text`: its length and rank when whole; partial when
// `text` ends inside what could still be one.
struct Tag {
  TagMatch match = TagMatch::no;
  std::size_t size = 0;
  long rank = -1;
};

// Digits at `at`, then `end`: the position after `end`, or npos (text ends: size()).
std::size_t digits_then(std::string_view text, std::size_t at, char end, long* value) {
  const std::size_t start = at;
  long number = 0;
  for (; at < text.size() && is_digit(text[at]) && at - start < k_rank_digits_max; ++at) {
    number = number * 10 + (text[at] - '0');
  }
  if (at == text.size()) return text.size();
  if (at == start || text[at] != end) return std::string_view::npos;
  if (value != nullptr) *value = number;
  return at + 1;
}

Tag open_mpi_tag(std::string_view text) {
  std::size_t at = digits_then(text, 1, ',', nullptr);
  long rank = -1;
  if (at < text.size()) at = digits_then(text, at, ']', &rank);
  if (at == std::string_view::npos) return {};
  if (at >= text.size()) return {.match = TagMatch::partial};
  for (std::string_view stream : {"<stdout>:", "<stderr>:"}) {
    const std::string_view rest = text.substr(at, stream.size());
    if (rest == stream) return {.match = TagMatch::whole, .size = at + stream.size(), .rank = rank};
    if (stream.starts_with(rest)) return {.match = TagMatch::partial};
  }
  return {};
}

}  // namespace

OpenMpiTagSplitter::OpenMpiTagSplitter(Sink sink) : sink_(std::move(sink)) {}

void OpenMpiTagSplitter::feed(std::string_view bytes) {
  std::string joined;  // a held start of a tag and this chunk
  if (!held_.empty()) {
    joined.assign(held_).append(bytes);
    held_.clear();
    bytes = joined;
  }
  std::size_t start = 0;  // of the bytes not yet handed on
  for (std::size_t at = bytes.find('['); at != std::string_view::npos; at = bytes.find('[', at)) {
    const Tag tag = open_mpi_tag(bytes.substr(at));
    if (tag.match == TagMatch::no) {
      ++at;
      continue;
    }
    if (at > start) sink_(rank_, bytes.substr(start, at - start));
    if (tag.match == TagMatch::partial) {
      held_.assign(bytes.substr(at));
      return;
    }
    rank_ = tag.rank;
    start = at = at + tag.size;
  }
  if (start < bytes.size()) sink_(rank_, bytes.substr(start));
}

void OpenMpiTagSplitter::finish() {
  if (!held_.empty()) sink_(rank_, held_);
  held_.clear();
}

}  // namespace ezpz::output
