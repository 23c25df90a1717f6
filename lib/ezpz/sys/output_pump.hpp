#pragma once
// Carries a launcher's stdout and stderr through pipes to ezpz's own, live,
// while copying both, in the order they arrive, into an optional record file
// and a bounded in-memory tail (what the attempt's classification reads).
// Knowing when output last arrived is what makes --idle-timeout possible.
#include <poll.h>

#include <array>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ezpz::sys {

class OutputPump {
 public:
  // `record_path` empty: no record file. The file is created (0600) or truncated.
  OutputPump(const std::string& record_path, std::size_t tail_bytes);
  ~OutputPump();
  OutputPump(const OutputPump&) = delete;
  OutputPump& operator=(const OutputPump&) = delete;

  // The pipes' write ends, for the child's stdout and stderr.
  int child_stdout() const { return pipes_[0].write_end; }
  int child_stderr() const { return pipes_[1].write_end; }
  // Once the child has them: the parent's copies would keep the pipes open forever.
  void close_child_ends();

  // Appends a pollfd for each pipe still open.
  void watch(std::vector<pollfd>& fds) const;
  // Moves what poll found ready on the watched pipes; returns the bytes moved.
  std::size_t transfer(const std::vector<pollfd>& fds);
  // Moves everything left until both pipes reach end of file or `deadline`
  // passes (a process that left the launcher's group may hold a pipe open).
  void drain(std::chrono::steady_clock::time_point deadline);

  bool open() const;
  // At least the last tail_bytes of both streams (fewer when there were fewer).
  std::string tail() const;

  // Shows `watcher` every whole line of the launcher's stderr (where launchers report failed
  // nodes) until it returns true; that line is then `tripped_line()`. stdout is not watched:
  // it carries the job's bulk output, and a regex per line would cost more than the copy.
  void watch_stderr_lines(std::function<bool(std::string_view)> watcher);
  const std::optional<std::string>& tripped_line() const { return tripped_; }

 private:
  struct Pipe {
    int read_end = -1;
    int write_end = -1;
    int passed_to = -1;  // ezpz's own stdout or stderr; -1 once it has gone (EPIPE)
  };
  std::size_t read_once(Pipe& pipe);
  std::size_t splice_once(Pipe& pipe);
  void pass_on(Pipe& pipe, std::size_t count);
  void record_copy(std::size_t count);
  void keep(std::string_view data);
  void show_lines(std::string_view data);

  std::array<Pipe, 2> pipes_{};
  int record_fd_ = -1;
  std::array<int, 2> copy_ = {-1, -1};  // tee's second copy of stdout, on its way to the record
  bool spliceable_ = false;
  bool spliced_ = false;
  std::size_t tail_bytes_;
  std::string tail_;
  std::vector<char> buffer_;
  std::function<bool(std::string_view)> watcher_;
  std::string partial_line_;  // stderr since its last newline, for the watcher
  std::optional<std::string> tripped_;
};

}  // namespace ezpz::sys
