#pragma once
// yeet's progress on rank 0: one live line on a terminal ("tty"), a line
// every few seconds in a log ("lines"), or nothing ("none"). stderr only.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "ezpz/stage/yeet.hpp"

namespace ezpz::stager {

class Progress {
 public:
  Progress(std::string mode, int nodes)
      : mode_(std::move(mode)), done_(static_cast<std::size_t>(nodes), false) {
    state_.nodes = nodes;
  }
  void total(std::uint64_t bytes) { state_.total_bytes = bytes; }
  void bytes(std::uint64_t sent) {
    state_.bytes = sent;
    show(false);
  }
  // A node is done when it holds the source: up to date from the start, or
  // its copy is ready. Counted by rank, so no node is counted twice.
  void node_done(int rank) {
    auto index = static_cast<std::size_t>(rank);
    if (index >= done_.size() || done_[index]) return;
    done_[index] = true;
    ++state_.nodes_done;
    show(false);
  }
  // The last line, always shown (then a newline on a terminal).
  void done() {
    show(true);
    if (mode_ == "tty" && shown_) std::fputs("\n", stderr);
  }

 private:
  using Clock = std::chrono::steady_clock;
  void show(bool final) {
    if (mode_ == "none") return;
    auto now = Clock::now();
    auto interval = mode_ == "tty" ? std::chrono::milliseconds(200) : std::chrono::milliseconds(5000);
    if (!final && now - last_ < interval) return;
    if (final && mode_ == "lines" && !shown_) return;  // quick runs: the summary says it all
    last_ = now;
    shown_ = true;
    state_.seconds = std::chrono::duration<double>(now - start_).count();
    std::string line = "ezpz yeet: " + yeet::progress_line(state_);
    if (mode_ == "tty") {
      std::fprintf(stderr, "\r%s\033[K", line.c_str());
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
  }
  std::string mode_;
  std::vector<bool> done_;  // by rank
  yeet::Progress state_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_ = Clock::now();
  bool shown_ = false;
};

}  // namespace ezpz::stager
