#pragma once
// Carries a launcher's stdout and stderr through pipes to ezpz's own, live,
// while copying both, in the order they arrive, into an optional record file
// and a bounded in-memory tail (what the attempt's classification reads).
// With rank records, the ranks on ezpz's host send theirs over sockets instead
// (listen_for_ranks), past the launcher's copies.
// Knowing when output last arrived is what makes --idle-timeout possible.
#include <poll.h>
#include <sys/resource.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ezpz/output/console.hpp"
#include "ezpz/output/rank_records.hpp"
#include "ezpz/output/startup.hpp"

namespace ezpz::sys {

class OutputPump {
 public:
  // `record_path` empty: no record file. The file is created (0600) or truncated; one that
  // cannot be is said in one line and the job runs unrecorded. The record takes at most
  // `record_limit` bytes (0: no limit), then a line saying the rest was dropped.
  //
  // `records` (issue 18): the ranks write rank records (ezpz-rankenv with EZPZ_OUTPUT_RECORDS=1);
  // each stream is re-assembled into whole lines, shown in that console mode, and the record
  // file keeps the console as shown, with every rank's lines, in records, in ranks.log beside
  // it. The tail and the stderr watcher see the lines as the ranks wrote them.
  // ConsoleMode::raw: the launcher's output is bytes, passed on as they come; the ranks on this
  // host pass ezpz their pipes (listen_for_ranks; ezpz-rankenv with EZPZ_OUTPUT_RECORDS=pipes),
  // whose bytes are passed on as they come too, and their connections carry ezpz-rankenv's
  // reports, as records.
  // `record_floor`: the free space the record leaves on its filesystem (record_floor.hpp); 0:
  // none.
  OutputPump(const std::string& record_path, std::size_t tail_bytes, std::uint64_t record_limit = 0,
             std::optional<output::ConsoleMode> records = std::nullopt,
             std::uint64_t record_floor = 0);
  ~OutputPump();
  OutputPump(const OutputPump&) = delete;
  OutputPump& operator=(const OutputPump&) = delete;

  // Starts the record file (as the constructor's `record_path`), at most once, before the
  // first transfer: the output waits in the pipes meanwhile, so the launcher may start first.
  void record_to(const std::string& record_path);

  // With records: listens for the ranks on this host, whose ezpz-rankenv then sends their records
  // straight here rather than through the launcher (rank_records.hpp's
  // k_output_socket_variable); returns the name for that variable. nullopt without records, or
  // when no socket can be made: every rank's records then come through the launcher, as they
  // do from other hosts.
  std::optional<std::string> listen_for_ranks();

  // The pipes' write ends, for the child's stdout and stderr.
  int child_stdout() const { return pipes_[0].write_end; }
  int child_stderr() const { return pipes_[1].write_end; }
  // Once the child has them: the parent's copies would keep the pipes open forever.
  void close_child_ends();

  // Appends a pollfd for each pipe still open.
  void watch(std::vector<pollfd>& fds) const;
  // Moves what poll found ready on the watched pipes; returns the bytes moved.
  std::size_t transfer(const std::vector<pollfd>& fds);
  // Once the launcher has exited: moves everything left until both pipes, and the ranks'
  // connections, reach end of file or `deadline` passes (a process that left the launcher's
  // group may hold a pipe open).
  void drain(std::chrono::steady_clock::time_point deadline);

  bool open() const;
  // With records: how long until the console has lines due (a de-duplication window ending, a
  // quiet stream's partial lines); nullopt: none. Then tick() shows them.
  std::optional<std::chrono::milliseconds> due_in() const;
  void tick();
  // At least the last tail_bytes of both streams (fewer when there were fewer).
  std::string tail() const;
  // With records: the same of the lines that were not records (the launcher's own, and
  // ezpz-rankenv's exit reports); nullopt without records, where no line can be told apart.
  std::optional<std::string> launcher_tail() const;

  // Shows `watcher` every whole line of the launcher's stderr (where launchers report failed
  // nodes; with records, only the lines that are not a rank's) until it returns true; that line is
  // then `tripped_line()`. stdout is not watched: it carries the job's bulk output, and a regex per
  // line would cost more than the copy.
  void watch_stderr_lines(std::function<bool(std::string_view)> watcher);
  const std::optional<std::string>& tripped_line() const { return tripped_; }

  // The first rank failure ezpz-rankenv reports on the launcher's stderr (rank_env.hpp's
  // exit_report), for --kill-on-bad-exit and ezpz's exit status: its line and the status it
  // carries. With records its lines are told apart from the ranks'; without, a report printed
  // mid-line is missed.
  struct RankFailure {
    std::string line;
    int status = 0;
  };
  const std::optional<RankFailure>& rank_failure() const { return rank_failure_; }

  // With records: the ranks' start-up stamps (output/startup.hpp) are measured from
  // `start_unix_ns` (ezpz's start, on the wall clock) and kept, not shown.
  void time_startup_from(std::int64_t start_unix_ns);
  std::vector<output::Stamp> startup() const;
  // The job printed something: with records, a line that was not a stamp (ezpz-rankenv's
  // `exec` stamp comes before the rank's first byte).
  bool output_seen() const;

  // ezpz's own stdout was closed by its reader (EPIPE): `ezpz launch ... | head`.
  bool stdout_closed() const { return stdout_closed_; }

 private:
  struct Stream;  // with records: one stream's assembler and console
  // One rank's connection for one stream: its records, straight from its ezpz-rankenv, through
  // an assembler of its own (a read cuts records anywhere; the launcher's pipe, and every other
  // connection, must not see the piece). Or, once ezpz-rankenv has passed it over, the rank's own
  // pipe, read here and cut into lines by a cutter of its own, the connection carrying only
  // ezpz-rankenv's stamps and report. Gone once both have ended.
  struct Sender {
    int fd = -1;  // the connection; -1 once it has ended
    output::RecordAssembler assembler;
    int pipe = -1;  // the rank's pipe for this stream
    long rank = -1;
    output::LineCutter cutter{output::k_pending_max};
  };
  struct Pipe {
    int read_end = -1;
    int write_end = -1;
    int passed_to = -1;  // ezpz's own stdout or stderr; -1 once it has gone (EPIPE)
    std::unique_ptr<Stream> records;
    int listener = -1;            // listen_for_ranks()'s socket for this stream
    std::vector<Sender> senders;  // the ranks connected to it
  };
  void open_ranks_record(const std::string& record_path, output::ConsoleMode mode);
  void take_records(Pipe& pipe, output::RecordAssembler& assembler, std::string_view data);
  void take_read(Pipe& pipe, std::string_view data, const std::function<void()>& cut);
  void accept_senders(Pipe& pipe);
  std::size_t read_sender(Pipe& pipe, Sender& sender);
  void answer_pipe(Sender& sender, int fd, std::string_view data);
  std::size_t read_rank_pipe(Pipe& pipe, Sender& sender);
  std::size_t pass_raw(Pipe& pipe, std::string_view data);
  void flush_cutter(Pipe& pipe, Sender& sender);
  void raise_descriptor_limit();
  void prune_senders(Pipe& pipe);
  void pipe_ended(Pipe& pipe);
  void stop_listening();
  void end_if_done(Pipe& pipe);
  void end_records(Pipe& pipe);
  void show(Pipe& pipe);
  std::size_t show_console(Pipe& pipe);
  void keep_ranked(Stream& stream, bool recording, std::size_t taken);
  std::size_t read_once(Pipe& pipe);
  std::size_t splice_once(Pipe& pipe);
  std::optional<std::size_t> splice_from(Pipe& pipe, int from);
  void pass_on(Pipe& pipe, int from, std::size_t count);
  void record_copy(std::size_t count);
  void drain_copy(std::size_t count);
  void lost_destination(Pipe& pipe);
  std::size_t record_room(std::size_t count);
  void record_floor_reached();
  void record_failed(int error);
  void record_full();
  void stop_recording();
  void take_tail_from_record();
  std::string record_end() const;
  void keep(std::string_view data);
  void keep_tail(std::string_view data);
  void keep_bounded(std::string& tail, std::string_view data) const;
  void trim_tail(std::string& tail) const;
  void show_lines(std::string_view data);
  bool watching_lines() const;
  void watch_line(std::string_view line);

  // The launcher's output carries rank records, re-assembled here; else it is bytes.
  bool carries_records() const { return pipes_[0].records && !passes_raw_; }

  const bool passes_raw_;  // the ranks' pipes passed here are passed on as bytes (ConsoleMode::raw)
  std::array<Pipe, 2> pipes_{};
  int record_fd_ = -1;
  std::array<int, 2> copy_ = {-1, -1};  // tee's second copy of stdout, on its way to the record
  bool spliceable_ = false;
  bool spliced_ = false;
  std::size_t tail_bytes_;
  std::string tail_;
  std::string launcher_tail_;  // with records: the lines that were not records
  // Left uninitialised: zeroing 1 MiB faulted in 256 pages before every launch (~0.5 ms); a
  // read touches only the pages it fills.
  std::unique_ptr<char[]> buffer_;
  std::function<bool(std::string_view)> watcher_;
  std::string partial_line_;  // stderr since its last newline, for the watcher
  std::optional<std::string> tripped_;
  std::optional<RankFailure> rank_failure_;
  std::uint64_t record_limit_ = 0;
  std::uint64_t recorded_ = 0;
  std::uint64_t record_floor_ = 0;
  std::uint64_t disk_room_ = UINT64_MAX;  // what the record may write past disk_checked_at_
  std::uint64_t disk_checked_at_ = 0;     // recorded_ when the free space was last looked at
  bool disk_checked_ = false;
  bool stdout_closed_ = false;
  bool output_seen_ = false;  // without records: a byte moved
  int ranks_fd_ = -1;         // ranks.log (every rank's lines, as records) or ranks.idx
  std::set<long> first_output_;        // ranks whose pipe ezpz reads that have printed: stamped
  std::optional<rlimit> given_limit_;  // RLIMIT_NOFILE as ezpz was given it, once raised
  std::uint64_t ranks_recorded_ = 0;
};

}  // namespace ezpz::sys
