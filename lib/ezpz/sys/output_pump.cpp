#include "ezpz/sys/output_pump.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "ezpz/launchers/rank_env.hpp"
#include "ezpz/output/rank_index.hpp"
#include "ezpz/output/rank_records.hpp"
#include "ezpz/output/record_floor.hpp"
#include "ezpz/sys/local_socket.hpp"

namespace ezpz::sys {
namespace {

// The pipes' capacity and one read's worth: 100 MB of output then costs about a hundred wake-ups
// and reads rather than thousands (64 KiB, the default capacity, measured 16% over raw mpiexec).
constexpr std::size_t k_chunk = output::k_passed_pipe_size;
// Lines longer than this are no launcher's report: the stderr watcher lets them go. Short,
// because a pattern's matching time grows with the line (polynomially: nested repeats are
// refused when the profile loads), and the output waits while it runs.
constexpr std::size_t k_max_watched_line = 4 * 1024;

// Writes all of `data`; false on an error other than an interruption.
bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t written = ::write(fd, data.data(), data.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(written));
  }
  return true;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

output::Millis since_start() {
  using namespace std::chrono;
  static const steady_clock::time_point start = steady_clock::now();
  return duration_cast<milliseconds>(steady_clock::now() - start);
}

}  // namespace

// One stream of rank records on its way to the console. Each read is fed whole to the
// assembler; what it makes of it is gathered in three strings, each written once per read.
struct OutputPump::Stream {
  explicit Stream(output::ConsoleMode mode)
      : console(mode), assembler([this](const output::RankLine& line) { take(line); }) {}

  void take(const output::RankLine& line) {
    if (line.control) return take_stamp(line);
    text_seen = true;
    console.line(line, now, shown);  // and, where it keeps one, its index entries into `ranked`
    decode(line);
    if (line.rank < 0) {  // not a record: the launcher's own line (or ezpz-rankenv's report)
      launcher.append(line.text);
      if (line.complete) launcher += '\n';
    }
    if (line.rank >= 0 && keep == Keep::records) keep_rank_line(line);
  }

  // A start-up stamp: kept for the verdict, never shown; a malformed one is dropped.
  void take_stamp(const output::RankLine& line) { take_stamp(line.rank, line.text, wall_ns()); }
  void take_stamp(long rank, std::string_view text, std::int64_t arrival_ns) {
    auto stamp = output::read_stamp(rank, text, start_ns, arrival_ns);
    if (stamp) stamps.push_back(std::move(*stamp));
  }

  // A line of a rank whose pipe ezpz reads itself: its "EZPZ_STAMP" lines are stamps, as
  // ezpz-rankenv makes them where it relays the rank's output.
  void take_raw(long rank, std::string_view text, bool complete) {
    if (complete && output::has_stamp_prefix(text)) {
      const std::int64_t now = wall_ns();
      if (const auto stamp = output::program_stamp_text(text, now)) {
        return take_stamp(rank, *stamp, now);
      }
    }
    take(output::RankLine{.rank = rank, .text = text, .complete = complete});
  }

  // Whole lines of a rank whose pipe ezpz reads itself, each ending in '\n', no '\r' among
  // them: one loop, take()'s work for each, the run of them one line for the tail; in a
  // labelled console each written by Console::label_line (console.line() would get there too,
  // at 9% more of ezpz's instructions in a labelled job). A stamp, and every line where
  // ranks.log keeps them (take() writes its record), go one by one.
  void take_lines(long rank, std::string_view lines) {
    const bool labelled = console.mode() == output::ConsoleMode::label;
    const char* run = lines.data();  // the start of the lines not yet decoded
    while (!lines.empty()) {
      const auto end = static_cast<std::size_t>(
          static_cast<const char*>(std::memchr(lines.data(), '\n', lines.size())) - lines.data());
      const std::string_view text = lines.substr(0, end);
      if (output::has_stamp_prefix(text) || keep == Keep::records) {
        decode_run(run, text.data());
        take_raw(rank, text, true);
        run = text.data() + end + 1;
      } else if (labelled) {
        console.label_line(rank, text, true, shown);
      } else {
        console.line(output::RankLine{.rank = rank, .text = text}, now, shown);
      }
      lines.remove_prefix(end + 1);
    }
    decode_run(run, lines.data());
  }

  // The lines from `from` to `to` (each ending in '\n'), shown and indexed already.
  void decode_run(const char* from, const char* to) {
    if (from == to) return;
    text_seen = true;
    decoded.push_back({std::string_view(from, static_cast<std::size_t>(to - from) - 1), true});
  }

  static std::int64_t wall_ns() {
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    return std::chrono::duration_cast<std::chrono::nanoseconds>(now).count();
  }

  // The line for the tail: a view when its text lies in the read being taken (almost every line),
  // else a copy (a line joined from pieces, or cut by the read before).
  void decode(const output::RankLine& line) {
    const auto at = reinterpret_cast<std::uintptr_t>(line.text.data());
    const auto from = reinterpret_cast<std::uintptr_t>(reading.data());
    if (at < from || at + line.text.size() > from + reading.size()) {
      decoded.push_back({copies.emplace_back(line.text), line.complete});
    } else {
      decoded.push_back({line.text, line.complete});
    }
  }

  // Appends to `tail` the end of the lines decoded since the last call, at least `bytes` of it
  // (all when fewer) from the start of a line, each line copied once, from the read (`tail` is
  // dropped first when that alone fills it). An entry may be a run of lines (take_lines).
  void move_decoded_end(std::string& tail, std::size_t bytes) {
    std::size_t first = decoded.size();
    std::size_t size = 0;
    while (first > 0 && size < bytes) {
      --first;
      size += decoded[first].text.size() + (decoded[first].newline ? 1 : 0);
    }
    if (size >= bytes) tail.clear();
    for (std::size_t i = first; i < decoded.size(); ++i) {
      std::string_view text = decoded[i].text;
      if (i == first && size > bytes) {  // the run's lines that `bytes` does not reach stay out
        const std::size_t cut = text.rfind('\n', size - bytes - 1);
        text.remove_prefix(cut == std::string_view::npos ? 0 : cut + 1);
      }
      tail.append(text);
      if (decoded[i].newline) tail += '\n';
    }
    decoded.clear();
    copies.clear();
  }

  // A line that fits one record (almost all) is written here, without the encoder's copies.
  void keep_rank_line(const output::RankLine& line) {
    if (line.text.size() + 32 > output::k_record_max) {
      return output::encode_records(line.rank, line.text, line.complete, append_ranked);
    }
    if (!line.complete && line.text.empty()) return;  // an empty piece says nothing
    output::append_number(ranked, line.rank);
    ranked += line.complete ? ": " : "+ ";
    ranked += line.text;
    ranked += '\n';
  }

  output::Console console;
  output::RecordAssembler assembler;
  output::Millis now{0};
  output::Millis last_read{0};
  bool flushed = true;  // the assembler's partial lines since the last read were handed on
  // What is kept of each rank's lines beside output.log: nothing; ranks.log, the lines as
  // records; or, where output.log labels every rank's every line, ranks.idx, whose line is whose.
  enum class Keep { none, records, index } keep = Keep::none;
  bool text_seen = false;             // a line that was not a stamp
  std::int64_t start_ns = 0;          // ezpz's start on the wall clock, for the stamps
  std::vector<output::Stamp> stamps;  // start-up stamps, as they came
  std::string shown;                  // what the console shows
  // The lines as the ranks wrote them, for the tail: views into `reading` or into `copies`.
  struct Decoded {
    std::string_view text;
    bool newline;
  };
  std::vector<Decoded> decoded;
  std::deque<std::string> copies;  // a deque: a copy stays where it is as more are made
  std::string_view reading;        // the read being fed to the assembler
  std::string launcher;  // the lines that were not records: the watcher's, the launcher tail's
  std::string ranked;    // ranks.log's records, or ranks.idx's entries
  const std::function<void(std::string_view)> append_ranked = [this](std::string_view record) {
    ranked.append(record);
  };
};

OutputPump::OutputPump(const std::string& record_path, std::size_t tail_bytes,
                       std::uint64_t record_limit, std::optional<output::ConsoleMode> records,
                       std::uint64_t record_floor)
    : passes_raw_(records == output::ConsoleMode::raw),
      tail_bytes_(tail_bytes),
      buffer_(std::make_unique_for_overwrite<char[]>(k_chunk)),
      record_limit_(record_limit),
      record_floor_(record_floor) {
  const std::array<int, 2> destinations = {STDOUT_FILENO, STDERR_FILENO};
  for (std::size_t i = 0; i < pipes_.size(); ++i) {
    std::array<int, 2> ends{};
    if (::pipe2(ends.data(), O_CLOEXEC) != 0) {
      throw Error(
          fmt::format("cannot create a pipe for the launcher's output: {}", std::strerror(errno)),
          ExitCode::failure);
    }
    pipes_[i] = {.read_end = ends[0],
                 .write_end = ends[1],
                 .passed_to = destinations[i],
                 .records = nullptr,
                 .listener = -1,
                 .senders = {}};
    // Best effort: the system's limit (/proc/sys/fs/pipe-max-size) may be lower.
    ::fcntl(ends[1], F_SETPIPE_SZ, static_cast<int>(k_chunk));
    if (records) pipes_[i].records = std::make_unique<Stream>(*records);
  }
  record_to(record_path);
}

void OutputPump::record_to(const std::string& record_path) {
  if (record_path.empty()) return;
  if (carries_records()) open_ranks_record(record_path, pipes_[0].records->console.mode());
  // Read back too: with splice, the output's tail is read from the record.
  record_fd_ = ::open(record_path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (record_fd_ < 0) {  // a record is never worth refusing the job for
    fmt::print(stderr, "ezpz: warning: {}: {}; the job's output is not recorded\n", record_path,
               std::strerror(errno));
    return;
  }
  // Records are read to be re-assembled: nothing to splice.
  spliceable_ = !carries_records() && ::pipe2(copy_.data(), O_CLOEXEC) == 0;
  if (spliceable_) ::fcntl(copy_[1], F_SETPIPE_SZ, static_cast<int>(k_chunk));
}

OutputPump::~OutputPump() {
  for (Pipe& pipe : pipes_) {
    close_fd(pipe.read_end);
    close_fd(pipe.write_end);
    close_fd(pipe.listener);
    for (Sender& sender : pipe.senders) {
      close_fd(sender.fd);
      close_fd(sender.pipe);
    }
  }
  for (int& fd : copy_) close_fd(fd);
  close_fd(record_fd_);
  close_fd(ranks_fd_);
  if (given_limit_) ::setrlimit(RLIMIT_NOFILE, &*given_limit_);
}

// Beside output.log, what `ezpz runs show --rank` reads: where the console shows every rank's
// every line (labelled, or once for the ranks that printed it), output.log has them all and
// ranks.idx says whose each is (one copy of the output, not two); else ranks.log, every rank's
// every line as records.
void OutputPump::open_ranks_record(const std::string& record_path, output::ConsoleMode mode) {
  const bool indexed = mode != output::ConsoleMode::rank0;
  const std::string path =
      record_path.substr(0, record_path.rfind('/') + 1) + (indexed ? "ranks.idx" : "ranks.log");
  ranks_fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (ranks_fd_ < 0) {
    fmt::print(stderr, "ezpz: warning: {}: {}; the ranks' lines are not recorded\n", path,
               std::strerror(errno));
    return;
  }
  if (indexed) {
    write_all(ranks_fd_, mode == output::ConsoleMode::dedup ? output::k_rank_index_header_groups
                                                            : output::k_rank_index_header);
  }
  for (Pipe& pipe : pipes_) {
    Stream& stream = *pipe.records;
    stream.keep = indexed ? Stream::Keep::index : Stream::Keep::records;
    if (indexed) stream.console.index_into(&stream.ranked);
  }
}

std::optional<std::string> OutputPump::listen_for_ranks() {
  if (!pipes_[0].records) return std::nullopt;
  const std::optional<std::string> name = random_socket_name("output");
  if (!name) return std::nullopt;
  for (std::size_t i = 0; i < pipes_.size(); ++i) {
    pipes_[i].listener = listen_abstract(*name + output::k_output_socket_suffixes[i], SOMAXCONN);
    if (pipes_[i].listener >= 0) continue;
    for (Pipe& pipe : pipes_) close_fd(pipe.listener);
    return std::nullopt;
  }
  return name;
}

// Every rank waiting to connect, of ezpz's own user only. A listener that fails otherwise (no
// descriptors left) is closed, or poll would wake for it forever: ranks that connect later
// find nobody and send through the launcher.
void OutputPump::accept_senders(Pipe& pipe) {
  for (;;) {
    const int fd = ::accept4(pipe.listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0 && (errno == EINTR || errno == ECONNABORTED)) continue;
    if (fd < 0 && errno != EAGAIN) close_fd(pipe.listener);
    if (fd < 0) return;
    if (!peer_is_same_user(fd)) {
      ::close(fd);
      continue;
    }
    Stream* stream = pipe.records.get();
    pipe.senders.push_back(
        {.fd = fd, .assembler = output::RecordAssembler([stream](const output::RankLine& line) {
                     stream->take(line);
                   })});
  }
}

// One read of a rank's connection. What came before ezpz-rankenv's own lines (its report, after
// the rank has exited) is what the rank's pipe holds: taken first, one read being all a pipe
// holds. At the connection's end, a line the rank left unfinished is handed on as such.
std::size_t OutputPump::read_sender(Pipe& pipe, Sender& sender) {
  std::size_t moved = sender.pipe >= 0 ? read_rank_pipe(pipe, sender) : 0;
  const Received received = receive_with_fd(sender.fd, buffer_.get(), k_chunk);
  if (received.got < 0 && (errno == EINTR || errno == EAGAIN)) return moved;
  if (received.got > 0) {
    const std::string_view data(buffer_.get(), static_cast<std::size_t>(received.got));
    if (received.fd >= 0 || received.fd_lost) answer_pipe(sender, received.fd, data);
    take_records(pipe, sender.assembler, data);
    return moved + data.size();
  }
  if (received.fd >= 0) ::close(received.fd);
  sender.assembler.finish();
  show(pipe);
  close_fd(sender.fd);
  return moved;
}

// A pipe passed over with pipe_record() is read here from now on, and ezpz-rankenv is told so
// (output::k_pipe_taken), before which it holds the pipe too. Refused, and said so: one that is
// not a pipe, or not passed so, or a second, or one the kernel dropped (no descriptor left
// here); ezpz-rankenv then relays the rank's output itself, and nothing is lost.
void OutputPump::answer_pipe(Sender& sender, int fd, std::string_view data) {
  struct stat info {};
  const std::optional<long> rank = output::pipe_record_rank(data);
  const bool taken = fd >= 0 && sender.pipe < 0 && rank && ::fstat(fd, &info) == 0 &&
                     S_ISFIFO(info.st_mode) && ::fcntl(fd, F_SETFL, O_NONBLOCK) == 0;
  const char answer = taken ? output::k_pipe_taken : output::k_pipe_refused;
  if (::send(sender.fd, &answer, 1, MSG_NOSIGNAL | MSG_DONTWAIT) != 1 || !taken) {
    if (fd >= 0) ::close(fd);
    return;
  }
  sender.pipe = fd;
  sender.rank = *rank;
}

// One read of a rank's own pipe: its bytes as it wrote them, cut into its lines here. Its first
// is stamped, as ezpz-rankenv stamps it where it relays. At its end, a line the rank left
// unfinished is handed on as such.
std::size_t OutputPump::read_rank_pipe(Pipe& pipe, Sender& sender) {
  if (passes_raw_ && &pipe == &pipes_[0] && spliceable_) {  // as the launcher's stdout
    const std::optional<std::size_t> moved = splice_from(pipe, sender.pipe);
    if (moved == 0u) close_fd(sender.pipe);
    if (moved || spliceable_) return moved.value_or(0);
  }
  const ssize_t got = ::read(sender.pipe, buffer_.get(), k_chunk);
  if (got < 0 && (errno == EINTR || errno == EAGAIN)) return 0;
  if (got <= 0) {
    flush_cutter(pipe, sender);
    show(pipe);
    close_fd(sender.pipe);
    return 0;
  }
  if (passes_raw_)
    return pass_raw(pipe, std::string_view(buffer_.get(), static_cast<std::size_t>(got)));
  Stream& stream = *pipe.records;
  if (first_output_.insert(sender.rank).second) {
    const std::int64_t now = Stream::wall_ns();
    stream.take_stamp(sender.rank, output::stamp_text(output::k_first_output_phase, now, {}), now);
  }
  const std::string_view data(buffer_.get(), static_cast<std::size_t>(got));
  take_read(pipe, data, [&] {
    sender.cutter.feed(
        data,
        [&](std::string_view text, bool complete) { stream.take_raw(sender.rank, text, complete); },
        [&](std::string_view lines) { stream.take_lines(sender.rank, lines); });
  });
  return data.size();
}

// `--output raw`: a rank's bytes as they came, to the console, the record and the tail; never to
// the stderr watcher, which looks for the launcher's reports (a rank's own "ssh: connect to
// host ..." names no node of the job).
std::size_t OutputPump::pass_raw(Pipe& pipe, std::string_view data) {
  if (pipe.passed_to >= 0 && !write_all(pipe.passed_to, data)) lost_destination(pipe);
  output_seen_ = true;
  keep(data);
  return data.size();
}

// A quiet or ended pipe's unfinished line, handed on as such.
void OutputPump::flush_cutter(Pipe& pipe, Sender& sender) {
  Stream& stream = *pipe.records;
  sender.cutter.flush(
      [&](std::string_view text, bool complete) { stream.take_raw(sender.rank, text, complete); });
}

// Connections and pipes that have both ended; once the launcher's pipe and every connection have
// ended, so has the stream.
void OutputPump::prune_senders(Pipe& pipe) {
  const auto ended = [](const Sender& sender) { return sender.fd < 0 && sender.pipe < 0; };
  if (std::erase_if(pipe.senders, ended) > 0) end_if_done(pipe);
}

// The launcher's pipe reached its end (every process that held it has gone); the ranks' own
// connections may still be open, or still to come (stop_listening says when none can).
void OutputPump::pipe_ended(Pipe& pipe) {
  close_fd(pipe.read_end);
  end_if_done(pipe);
}

// The launcher has exited: the ranks of this host are done starting, each connected already
// (ezpz-rankenv connects as its rank starts) or never will. The pipe's end says nothing of
// that: a launcher may give its stdout away (`mpiexec ... >/dev/null` in a wrapper).
void OutputPump::stop_listening() {
  for (Pipe& pipe : pipes_) {
    if (pipe.listener < 0) continue;
    accept_senders(pipe);
    close_fd(pipe.listener);
    end_if_done(pipe);
  }
}

// A stream has ended once its pipe has, and every connection, and no more can come.
void OutputPump::end_if_done(Pipe& pipe) {
  if (pipe.records && pipe.read_end < 0 && pipe.listener < 0 && pipe.senders.empty())
    end_records(pipe);
}

void OutputPump::take_records(Pipe& pipe, output::RecordAssembler& assembler,
                              std::string_view data) {
  take_read(pipe, data, [&] { assembler.feed(data); });
}

// One read's lines, made by `cut`, shown.
void OutputPump::take_read(Pipe& pipe, std::string_view data, const std::function<void()>& cut) {
  Stream& stream = *pipe.records;
  stream.now = since_start();
  stream.last_read = stream.now;
  stream.flushed = false;
  stream.reading = data;
  cut();
  show(pipe);
  stream.reading = {};
}

// The stream's end: partial lines and waiting ones are shown.
void OutputPump::end_records(Pipe& pipe) {
  pipe.records->assembler.finish();
  for (Sender& sender : pipe.senders) {
    sender.assembler.finish();
    flush_cutter(pipe, sender);
  }
  pipe.records->console.finish(pipe.records->shown);
  show(pipe);
}

// Writes what the stream's last lines made: the console, the record (the console as shown),
// ranks.log, the tail and the stderr watcher (the lines as the ranks wrote them).
void OutputPump::show(Pipe& pipe) {
  Stream& stream = *pipe.records;
  const bool recording = record_fd_ >= 0;  // before this batch: it may fill the record
  const std::size_t taken = show_console(pipe);
  keep_ranked(stream, recording, taken);
  stream.move_decoded_end(tail_, tail_bytes_);
  trim_tail(tail_);
  keep_bounded(launcher_tail_, stream.launcher);
  // A rank's own line never trips the watcher: "ssh: connect to host github.com ..." printed by
  // the job is no launcher's report of a node.
  if (&pipe == &pipes_[1] && watching_lines()) show_lines(stream.launcher);
  stream.launcher.clear();
}

// The console's new lines, to ezpz's stdout or stderr and to output.log; returns how many bytes
// of them output.log took (fewer at --record-limit).
std::size_t OutputPump::show_console(Pipe& pipe) {
  std::string& shown = pipe.records->shown;
  if (shown.empty()) return 0;
  if (pipe.passed_to >= 0 && !write_all(pipe.passed_to, shown)) lost_destination(pipe);
  std::size_t taken = 0;
  if (record_fd_ >= 0) {
    taken = record_room(shown.size());
    if (!write_all(record_fd_, std::string_view(shown).substr(0, taken))) record_failed(errno);
    recorded_ += taken;
    if (taken < shown.size() && record_fd_ >= 0) record_full();
  }
  shown.clear();
  return taken;
}

// ranks.idx's entries of what output.log took (all, or up to --record-limit); ranks.log's
// records until --record-limit (output.log says where it stopped).
void OutputPump::keep_ranked(Stream& stream, bool recording, std::size_t taken) {
  if (!stream.ranked.empty() && ranks_fd_ >= 0) {
    if (stream.keep == Stream::Keep::index) {
      if (recording && record_fd_ < 0) stream.ranked = output::cut_index(stream.ranked, taken);
      if (recording) write_all(ranks_fd_, stream.ranked);
    } else {  // ranks.log, bounded by --record-limit on its own
      if (record_limit_ == 0 || ranks_recorded_ < record_limit_)
        write_all(ranks_fd_, stream.ranked);
      ranks_recorded_ += stream.ranked.size();
    }
  }
  stream.ranked.clear();
}

std::optional<std::chrono::milliseconds> OutputPump::due_in() const {
  std::optional<output::Millis> due;
  for (const Pipe& pipe : pipes_) {
    if (!pipe.records) continue;
    const Stream& stream = *pipe.records;
    std::optional<output::Millis> next = stream.console.due();
    if (!stream.flushed) {
      const output::Millis quiet = stream.last_read + output::Millis(output::k_quiet_ms);
      next = next ? std::min(*next, quiet) : quiet;
    }
    if (next) due = due ? std::min(*due, *next) : *next;
  }
  if (!due) return std::nullopt;
  return std::max(output::Millis(0), *due - since_start());
}

// A quiet stream's partial lines are handed on ("Loading... " shows before "done"); windows
// that have passed are shown.
void OutputPump::tick() {
  const output::Millis now = since_start();
  for (Pipe& pipe : pipes_) {
    if (!pipe.records) continue;
    Stream& stream = *pipe.records;
    stream.now = now;
    if (!stream.flushed && now - stream.last_read >= output::Millis(output::k_quiet_ms)) {
      stream.assembler.flush();
      for (Sender& sender : pipe.senders) {
        sender.assembler.flush();
        flush_cutter(pipe, sender);
      }
      stream.flushed = true;
    }
    stream.console.tick(now, stream.shown);
    show(pipe);
  }
}

void OutputPump::time_startup_from(std::int64_t start_unix_ns) {
  for (Pipe& pipe : pipes_) {
    if (pipe.records) pipe.records->start_ns = start_unix_ns;
  }
}

bool OutputPump::output_seen() const {
  return output_seen_ || std::any_of(pipes_.begin(), pipes_.end(), [](const Pipe& pipe) {
           return pipe.records && pipe.records->text_seen;
         });
}

std::vector<output::Stamp> OutputPump::startup() const {
  std::vector<output::Stamp> stamps;
  for (const Pipe& pipe : pipes_) {
    if (pipe.records)
      stamps.insert(stamps.end(), pipe.records->stamps.begin(), pipe.records->stamps.end());
  }
  return stamps;
}

void OutputPump::close_child_ends() {
  for (Pipe& pipe : pipes_) close_fd(pipe.write_end);
  if (pipes_[0].listener >= 0) raise_descriptor_limit();
}

// Each rank on this host may hold four of ezpz's descriptors (two connections, two pipes): under
// a soft limit of 1,024 that is 256 ranks before the rest fall back to relaying. The launcher
// has started with the limit ezpz was given; ezpz's own goes up to the hard limit until the
// pump ends (a retry's launcher starts with the limit ezpz was given, too).
void OutputPump::raise_descriptor_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  given_limit_ = limit;
  limit.rlim_cur = limit.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) given_limit_.reset();
}

bool OutputPump::open() const {
  return std::any_of(pipes_.begin(), pipes_.end(),
                     [](const Pipe& p) { return p.read_end >= 0 || !p.senders.empty(); });
}

void OutputPump::watch(std::vector<pollfd>& fds) const {
  for (const Pipe& pipe : pipes_) {
    if (pipe.read_end >= 0) fds.push_back({pipe.read_end, POLLIN, 0});
    if (pipe.listener >= 0) fds.push_back({pipe.listener, POLLIN, 0});
    for (const Sender& sender : pipe.senders) {
      if (sender.fd >= 0) fds.push_back({sender.fd, POLLIN, 0});
      if (sender.pipe >= 0) fds.push_back({sender.pipe, POLLIN, 0});
    }
  }
}

std::size_t OutputPump::transfer(const std::vector<pollfd>& fds) {
  std::size_t moved = 0;
  for (const pollfd& entry : fds) {
    if (entry.revents == 0 || entry.fd < 0) continue;
    for (Pipe& pipe : pipes_) {
      if (pipe.read_end == entry.fd) {
        moved += &pipe == &pipes_[0] && spliceable_ ? splice_once(pipe) : read_once(pipe);
      } else if (pipe.listener == entry.fd) {
        accept_senders(pipe);
      }
      for (Sender& sender : pipe.senders) {
        if (sender.pipe == entry.fd) moved += read_rank_pipe(pipe, sender);
        if (sender.fd == entry.fd) moved += read_sender(pipe, sender);
      }
    }
  }
  for (Pipe& pipe : pipes_) prune_senders(pipe);
  return moved;
}

// stdout with a record file: the kernel duplicates the bytes (tee) and moves both copies
// (splice), so ezpz never copies the job's bulk output. stderr stays on the read path: the
// bad-node watcher needs its lines, and there is little of it.
std::size_t OutputPump::splice_once(Pipe& pipe) {
  const std::optional<std::size_t> moved = splice_from(pipe, pipe.read_end);
  if (moved == 0u) pipe_ended(pipe);  // end of file: every writer has gone
  if (!moved && !spliceable_) return read_once(pipe);
  return moved.value_or(0);
}

// One pipe's worth from `from` (the launcher's pipe, or with `--output raw` a rank's passed here)
// to where `pipe` passes on and to the record: the bytes moved, 0 at the end of file; nullopt
// when there was none yet, or when the kernel cannot tee here (spliceable_ is then off: the
// caller reads instead).
std::optional<std::size_t> OutputPump::splice_from(Pipe& pipe, int from) {
  const ssize_t teed = ::tee(from, copy_[1], k_chunk, SPLICE_F_NONBLOCK);
  if (teed < 0) {
    if (errno != EAGAIN && errno != EINTR) spliceable_ = false;
    return std::nullopt;
  }
  const auto count = static_cast<std::size_t>(teed);
  if (count == 0) return 0;
  output_seen_ = true;
  pass_on(pipe, from, count);
  record_copy(count);
  spliced_ = true;
  return count;
}

// Moves `count` bytes from `from` to where `pipe` passes on, by splice when the kernel can
// (not to a terminal or an O_APPEND file): else by read and write; else (a closed stdout)
// read and dropped.
void OutputPump::pass_on(Pipe& pipe, int from, std::size_t count) {
  while (count > 0) {
    ssize_t moved = -1;
    if (pipe.passed_to >= 0) {
      moved = ::splice(from, nullptr, pipe.passed_to, nullptr, count, SPLICE_F_MOVE);
    }
    if (moved < 0 && errno == EINTR) continue;
    if (moved <= 0) {
      moved = ::read(from, buffer_.get(), std::min(count, k_chunk));
      if (moved <= 0) return;
      std::string_view data(buffer_.get(), static_cast<std::size_t>(moved));
      if (pipe.passed_to >= 0 && !write_all(pipe.passed_to, data)) lost_destination(pipe);
    }
    count -= static_cast<std::size_t>(moved);
  }
}

void OutputPump::record_copy(std::size_t count) {
  std::size_t left = record_room(count);
  const bool full = left < count;
  while (left > 0) {
    const ssize_t moved = ::splice(copy_[0], nullptr, record_fd_, nullptr, left, SPLICE_F_MOVE);
    if (moved < 0 && errno == EINTR) continue;
    if (moved <= 0) {  // the record's disk failed
      record_failed(errno);
      break;
    }
    left -= static_cast<std::size_t>(moved);
    recorded_ += static_cast<std::uint64_t>(moved);
    count -= static_cast<std::size_t>(moved);
  }
  if (full && record_fd_ >= 0) record_full();
  drain_copy(count);
}

// Takes `count` bytes the record did not, off the copy pipe: the tail still needs them.
void OutputPump::drain_copy(std::size_t count) {
  while (count > 0) {
    const ssize_t got = ::read(copy_[0], buffer_.get(), std::min(count, k_chunk));
    if (got <= 0) return;
    keep_tail(std::string_view(buffer_.get(), static_cast<std::size_t>(got)));
    count -= static_cast<std::size_t>(got);
  }
}

// ezpz's own stdout or stderr failed. A closed stdout ends the job, as it ends a pipeline's
// writer (stdout_closed); a failing stderr, or a full disk behind stdout, is no longer written.
void OutputPump::lost_destination(Pipe& pipe) {
  if (&pipe == &pipes_[0] && errno == EPIPE) stdout_closed_ = true;
  pipe.passed_to = -1;
}

// The record's room: under --record-limit, and above the floor of free space it leaves the job
// (looked at again every k_floor_check_bytes recorded, and when the room left is short).
std::size_t OutputPump::record_room(std::size_t count) {
  std::uint64_t room = count;
  if (record_limit_ != 0) room = recorded_ >= record_limit_ ? 0 : record_limit_ - recorded_;
  if (record_floor_ == 0 || record_fd_ < 0)
    return static_cast<std::size_t>(std::min<std::uint64_t>(count, room));
  const std::uint64_t since = recorded_ - disk_checked_at_;
  if (!disk_checked_ || since >= output::k_floor_check_bytes ||
      disk_room_ - std::min(disk_room_, since) < count) {
    struct statvfs disk {};
    if (::fstatvfs(record_fd_, &disk) == 0) {
      disk_room_ =
          output::record_disk_room(std::uint64_t{disk.f_bavail} * disk.f_frsize, record_floor_);
      disk_checked_at_ = recorded_;
      disk_checked_ = true;
    }
  }
  const std::uint64_t disk = disk_room_ - std::min(disk_room_, recorded_ - disk_checked_at_);
  return static_cast<std::size_t>(std::min({std::uint64_t{count}, room, disk}));
}

// Under the floor of free space: what the record took past it is given back (the file cut),
// said once, and nothing more is written. The job's output still reaches the console.
void OutputPump::record_floor_reached() {
  take_tail_from_record();
  struct statvfs disk {};
  if (::fstatvfs(record_fd_, &disk) == 0) {
    std::uint64_t free_bytes = std::uint64_t{disk.f_bavail} * disk.f_frsize;
    for (int fd : {record_fd_, ranks_fd_}) {  // output.log first, then ranks.log
      struct stat info {};
      if (fd < 0 || ::fstat(fd, &info) != 0) continue;
      const auto size = static_cast<std::uint64_t>(info.st_size);
      const std::uint64_t back = output::record_give_back(free_bytes, record_floor_, size);
      if (back > 0 && ::ftruncate(fd, static_cast<off_t>(size - back)) == 0) free_bytes += back;
    }
  }
  close_fd(ranks_fd_);
  fmt::print(stderr,
             "ezpz: the record's filesystem is down to its floor of free space ({} bytes, "
             "--record-floor): recording stopped, the job has the rest\n",
             record_floor_);
  stop_recording();
}

// A full disk must not stop the job: say so once and stop recording.
void OutputPump::record_failed(int error) {
  fmt::print(stderr, "ezpz: cannot record the job's output: {}; recording stopped\n",
             std::strerror(error));
  stop_recording();
}

void OutputPump::record_full() {
  if (record_limit_ == 0 || recorded_ < record_limit_) return record_floor_reached();
  take_tail_from_record();  // before the note: the tail is the job's output, not ezpz's words
  const std::string note = fmt::format(
      "\n[ezpz: the record stops here: it reached --record-limit ({} bytes); the rest of the "
      "output went only to the console]\n",
      record_limit_);
  write_all(record_fd_, note);
  fmt::print(stderr,
             "ezpz: the job's output reached --record-limit ({} bytes); the rest is not recorded\n",
             record_limit_);
  stop_recording();
}

void OutputPump::stop_recording() {
  take_tail_from_record();
  spliceable_ = false;
  close_fd(record_fd_);
}

// While stdout is spliced, its tail is the record's end; from here on it is kept in memory.
void OutputPump::take_tail_from_record() {
  if (!spliced_) return;
  tail_ = record_end();
  spliced_ = false;
}

std::string OutputPump::record_end() const {
  struct stat info {};
  if (::fstat(record_fd_, &info) != 0) return tail_;
  const auto size = static_cast<std::size_t>(info.st_size);
  std::string text(std::min(size, tail_bytes_), '\0');
  const ssize_t got =
      ::pread(record_fd_, text.data(), text.size(), static_cast<off_t>(size - text.size()));
  text.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  return text;
}

std::string OutputPump::tail() const {
  // The spliced bytes never passed through ezpz: the record's end is the tail.
  return spliced_ && record_fd_ >= 0 ? record_end() : tail_;
}

void OutputPump::drain(std::chrono::steady_clock::time_point deadline) {
  using namespace std::chrono;
  stop_listening();
  while (open()) {
    auto left = duration_cast<milliseconds>(deadline - steady_clock::now()).count();
    if (left <= 0) break;
    if (auto due = due_in()) left = std::min<long>(left, due->count());
    std::vector<pollfd> fds;
    watch(fds);
    if (::poll(fds.data(), fds.size(), static_cast<int>(left)) > 0) transfer(fds);
    tick();
  }
  // A pipe or a connection still held open by a stray process: what its stream has so far is
  // shown.
  for (Pipe& pipe : pipes_) {
    if (pipe.records && (pipe.read_end >= 0 || !pipe.senders.empty())) end_records(pipe);
  }
}

std::size_t OutputPump::read_once(Pipe& pipe) {
  const ssize_t got = ::read(pipe.read_end, buffer_.get(), k_chunk);
  if (got < 0 && (errno == EINTR || errno == EAGAIN)) return 0;
  if (got <= 0) {  // end of file: every writer has gone
    pipe_ended(pipe);
    return 0;
  }
  const std::string_view data(buffer_.get(), static_cast<std::size_t>(got));
  if (carries_records()) {
    take_records(pipe, pipe.records->assembler, data);
    return data.size();
  }
  if (pipe.passed_to >= 0 && !write_all(pipe.passed_to, data)) lost_destination(pipe);
  output_seen_ = true;
  keep(data);
  if (&pipe == &pipes_[1] && watching_lines()) show_lines(data);
  return data.size();
}

void OutputPump::watch_stderr_lines(std::function<bool(std::string_view)> watcher) {
  watcher_ = std::move(watcher);
}

// Until each watch has what it looks for: a bad node's line, a rank's failure.
bool OutputPump::watching_lines() const {
  return (watcher_ && !tripped_) || !rank_failure_;
}

void OutputPump::show_lines(std::string_view data) {
  partial_line_.append(data);
  std::size_t start = 0;
  for (std::size_t end; (end = partial_line_.find('\n', start)) != std::string::npos;
       start = end + 1) {
    std::string_view line(partial_line_.data() + start, end - start);
    if (line.size() <= k_max_watched_line) watch_line(line);
  }
  partial_line_.erase(0, start);
  if (partial_line_.size() > k_max_watched_line) partial_line_.clear();
}

void OutputPump::watch_line(std::string_view line) {
  if (watcher_ && !tripped_ && watcher_(line)) tripped_ = std::string(line);
  if (rank_failure_) return;
  if (const std::optional<int> status = exit_report_status(line)) {
    rank_failure_ = RankFailure{.line = std::string(line), .status = *status};
  }
}

void OutputPump::keep(std::string_view data) {
  if (record_fd_ >= 0) {
    const std::size_t room = record_room(data.size());
    if (!write_all(record_fd_, data.substr(0, room))) record_failed(errno);
    recorded_ += room;
    if (room < data.size() && record_fd_ >= 0) record_full();
  }
  keep_tail(data);
}

void OutputPump::keep_tail(std::string_view data) {
  keep_bounded(tail_, data);
}

void OutputPump::keep_bounded(std::string& tail, std::string_view data) const {
  if (tail_bytes_ == 0 || data.empty()) return;
  if (data.size() >= tail_bytes_) {  // a whole tail in one read: keep only its end
    tail.assign(data.substr(data.size() - tail_bytes_));
    return;
  }
  tail.append(data);
  trim_tail(tail);
}

// Trimmed in large steps so the tail is not shifted on every read.
void OutputPump::trim_tail(std::string& tail) const {
  if (tail.size() > 2 * tail_bytes_) tail.erase(0, tail.size() - tail_bytes_);
}

std::optional<std::string> OutputPump::launcher_tail() const {
  if (!carries_records()) return std::nullopt;
  return launcher_tail_;
}

}  // namespace ezpz::sys
