#include "ezpz/supervise/stacks.hpp"

#include <algorithm>
#include <array>
#include <functional>

#include <fmt/format.h>

#include "ezpz/core/env.hpp"
#include "ezpz/core/text.hpp"
#include "ezpz/output/console.hpp"

namespace ezpz::stacks {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::string_view last_component(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Frames that say how a rank waits or which wrapper it went through, not where it is.
constexpr std::array<std::string_view, 1> k_python_wrapper_files = {
    "c10d_logger.py",  // torch 2's @_exception_logger around every collective
};
constexpr std::array<std::string_view, 4> k_native_waiting_libraries = {"libc.so", "libpthread.so",
                                                                        "ld-linux", "libstdc++.so"};
// glibc's sources, as its debug information names them ("../sysdeps/posix/sleep.c",
// "./nptl/futex-internal.c"): one "./" or "../" and a directory of glibc's tree. A program's own
// sources may be relative too ("../../apps/smoke/trainer.cpp", built with ccache's base_dir).
constexpr std::array<std::string_view, 12> k_libc_source_dirs = {
    "sysdeps/", "nptl/",   "csu/",    "posix/",  "misc/",   "io/",
    "libio/",   "signal/", "socket/", "stdlib/", "string/", "time/"};

// --- faulthandler: '  File "PATH", line N in FUNCTION' under "... (most recent call first):".
using Thread = std::vector<Frame>;

std::optional<Frame> python_frame(std::string_view line) {
  constexpr std::string_view k_file = "  File \"";
  const std::size_t quote = line.find("\", line ");
  const std::size_t in = line.find(" in ", quote == std::string_view::npos ? 0 : quote);
  if (!starts_with(line, k_file) || quote == std::string_view::npos ||
      in == std::string_view::npos) {
    return std::nullopt;
  }
  const std::string_view path = line.substr(k_file.size(), quote - k_file.size());
  const std::string_view number = line.substr(quote + 8, in - quote - 8);
  return Frame{.function = std::string(line.substr(in + 4)),
               .where = fmt::format("{}:{}", last_component(path), number)};
}

std::vector<Thread> python_threads(std::string_view text) {
  std::vector<Thread> threads;
  for (std::string_view line : split_lines(text)) {
    if (ends_with(line, "(most recent call first):")) threads.emplace_back();
    if (auto frame = python_frame(line); frame && !threads.empty())
      threads.back().push_back(*frame);
  }
  return threads;
}

bool python_wrapper(const Frame& frame) {
  return std::any_of(k_python_wrapper_files.begin(), k_python_wrapper_files.end(),
                     [&](std::string_view file) { return starts_with(frame.where, file); });
}

std::optional<Frame> innermost_python(std::string_view text) {
  const std::vector<Thread> threads = python_threads(text);
  if (threads.empty()) return std::nullopt;
  auto main = std::find_if(threads.begin(), threads.end(), [](const Thread& t) {
    return !t.empty() && t.back().function == "<module>";
  });
  const Thread& thread = main == threads.end() ? threads.front() : *main;
  auto frame = std::find_if(thread.begin(), thread.end(), std::not_fn(python_wrapper));
  if (frame == thread.end()) return std::nullopt;
  return *frame;
}

// --- gdb's `thread apply all bt`: "Thread N (...):" then "#K  [0xADDR in ]FUNCTION (ARGS)
// [at FILE:LINE | from LIBRARY]".
struct NativeFrame {
  std::string_view function;
  std::string_view source;   // FILE:LINE as gdb gives it; empty without debug information
  std::string_view library;  // the shared object's path; empty when gdb names a source
};

NativeFrame native_frame(std::string_view line) {
  std::string_view rest = line.substr(std::min(line.find("  "), line.size()));
  rest.remove_prefix(std::min(rest.find_first_not_of(' '), rest.size()));
  if (starts_with(rest, "0x") && rest.find(" in ") != std::string_view::npos) {
    rest.remove_prefix(rest.find(" in ") + 4);
  }
  NativeFrame frame{.function = rest.substr(0, rest.find(" (")), .source = {}, .library = {}};
  if (const std::size_t at = rest.rfind(") at "); at != std::string_view::npos) {
    frame.source = rest.substr(at + 5);
  } else if (const std::size_t from = rest.rfind(" from "); from != std::string_view::npos) {
    frame.library = rest.substr(from + 6);
  }
  return frame;
}

bool libc_source(std::string_view source) {
  const std::size_t dots = starts_with(source, "./") ? 2 : starts_with(source, "../") ? 3 : 0;
  if (dots == 0) return false;
  source.remove_prefix(dots);
  return std::any_of(k_libc_source_dirs.begin(), k_libc_source_dirs.end(),
                     [&](std::string_view dir) { return starts_with(source, dir); });
}

bool native_waiting(const NativeFrame& f) {
  const std::string_view library = last_component(f.library);
  return f.function.empty() || f.function == "??" || libc_source(f.source) ||
         std::any_of(k_native_waiting_libraries.begin(), k_native_waiting_libraries.end(),
                     [&](std::string_view name) { return starts_with(library, name); });
}

// The frames of gdb's "Thread 1", else of the first thread it lists.
std::vector<std::string_view> main_thread_lines(std::string_view text) {
  std::vector<std::string_view> first, one;
  std::vector<std::string_view>* into = nullptr;
  for (std::string_view line : split_lines(text)) {
    if (starts_with(line, "Thread ")) {
      into = starts_with(line, "Thread 1 (") ? &one : first.empty() ? &first : nullptr;
    } else if (into && starts_with(line, "#")) {
      into->push_back(line);
    }
  }
  return one.empty() ? first : one;
}

// gdb's main thread, frame by frame.
std::vector<NativeFrame> gdb_main_thread(std::string_view text) {
  std::vector<NativeFrame> frames;
  for (std::string_view line : main_thread_lines(text)) frames.push_back(native_frame(line));
  return frames;
}

// --- eu-stack -i -s -m: "PID P - process", "TID T:", then "#K  0xADDR [FUNCTION] - MODULE",
// followed by "    FILE:LINE:COLUMN" where the module has debug information.
NativeFrame eu_stack_frame(std::string_view line) {
  std::string_view rest = line.substr(std::min(line.find(" 0x"), line.size()));
  rest.remove_prefix(std::min(rest.find_first_not_of(' '), rest.size()));
  rest.remove_prefix(std::min(rest.find(' '), rest.size()));  // the address
  rest.remove_prefix(std::min(rest.find_first_not_of(' '), rest.size()));
  if (starts_with(rest, "- ")) return {.function = {}, .source = {}, .library = rest.substr(2)};
  const std::size_t dash = rest.rfind(" - ");
  if (dash == std::string_view::npos) return {.function = rest, .source = {}, .library = {}};
  return {.function = rest.substr(0, dash), .source = {}, .library = rest.substr(dash + 3)};
}

// "hang.c:9:3" -> "hang.c:9", as gdb gives it.
std::string_view without_column(std::string_view source) {
  const std::size_t colon = source.rfind(':');
  const std::size_t line = colon == std::string_view::npos || colon == 0
                               ? std::string_view::npos
                               : source.rfind(':', colon - 1);
  if (line == std::string_view::npos || source.find('/', line) != std::string_view::npos) {
    return source;
  }
  return source.substr(0, colon);
}

bool is_eu_stack(std::string_view text) {
  for (std::string_view line : split_lines(text)) {
    if (starts_with(line, "TID ") && ends_with(line, ":")) return true;
  }
  return false;
}

// The frames of the thread whose TID is the process's PID, else of the first thread listed.
std::vector<NativeFrame> eu_stack_main_thread(std::string_view text) {
  std::string_view pid;
  std::vector<NativeFrame> first, main;
  std::vector<NativeFrame>* into = nullptr;
  for (std::string_view line : split_lines(text)) {
    if (starts_with(line, "PID ")) {
      pid = line.substr(4, line.find(' ', 4) - 4);
    } else if (starts_with(line, "TID ") && ends_with(line, ":")) {
      const bool is_main = line.substr(4, line.size() - 5) == pid;
      into = is_main ? &main : first.empty() ? &first : nullptr;
    } else if (into && starts_with(line, "#")) {
      into->push_back(eu_stack_frame(line));
    } else if (into && !into->empty() && starts_with(line, "    ")) {
      into->back().source = without_column(line.substr(line.find_first_not_of(' ')));
    }
  }
  return main.empty() ? first : main;
}

// "ns::(anonymous namespace)::f(int)" -> "ns::(anonymous namespace)::f": the parameter list
// gdb gives a frame without debug information goes, an anonymous namespace stays.
std::string_view without_parameters(std::string_view function) {
  constexpr std::string_view k_anonymous = "(anonymous namespace)";
  std::size_t at = function.find('(');
  while (at != std::string_view::npos && function.substr(at, k_anonymous.size()) == k_anonymous) {
    at = function.find('(', at + k_anonymous.size());
  }
  return function.substr(0, at);
}

std::optional<Frame> innermost_native(std::string_view text) {
  for (const NativeFrame& f :
       is_eu_stack(text) ? eu_stack_main_thread(text) : gdb_main_thread(text)) {
    if (native_waiting(f)) continue;
    std::string_view function = without_parameters(f.function);
    if (starts_with(f.function, "operator")) function = f.function;
    return Frame{.function = std::string(function),
                 .where = std::string(f.source.empty() ? last_component(f.library)
                                                       : last_component(f.source))};
  }
  return std::nullopt;
}

}  // namespace

std::string tag_lines(int rank, std::string_view text) {
  std::string tagged;
  for (std::string_view line : split_lines(text)) {
    tagged += fmt::format("{}{}\t{}\n", k_line_tag, rank, line);
  }
  return tagged;
}

std::map<int, std::string> untag(std::string_view output) {
  std::map<int, std::string> texts;
  for (std::string_view line : split_lines(output)) {
    const std::size_t tab = line.find('\t');
    if (!starts_with(line, k_line_tag) || tab == std::string_view::npos) continue;
    const std::optional<long> rank =
        parse_count(line.substr(k_line_tag.size(), tab - k_line_tag.size()));
    if (!rank) continue;
    texts[static_cast<int>(*rank)] += std::string(line.substr(tab + 1)) + "\n";
  }
  return texts;
}

std::optional<Frame> innermost(std::string_view text) {
  if (auto python = innermost_python(text)) return python;
  return innermost_native(text);
}

std::string rank_ranges(const std::vector<int>& ranks) {
  return output::rank_ranges(std::vector<long>(ranks.begin(), ranks.end()));
}

namespace {

// A frame gdb finds in the program itself, built without debug information (a Release build),
// names no file and no library: the function alone, not "in straggle ()".
std::string frame_words(const std::optional<Frame>& frame) {
  if (!frame) return "no stack";
  if (frame->where.empty()) return fmt::format("in {}", frame->function);
  return fmt::format("in {} ({})", frame->function, frame->where);
}

}  // namespace

std::vector<std::string> summary(const std::map<int, std::optional<Frame>>& frames) {
  std::vector<std::pair<std::string, std::vector<int>>> groups;  // in order of first rank
  for (const auto& [rank, frame] : frames) {
    const std::string what = frame_words(frame);
    auto group =
        std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == what; });
    if (group == groups.end()) group = groups.insert(groups.end(), {what, {}});
    group->second.push_back(rank);
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  std::vector<std::string> lines;
  for (const auto& [what, ranks] : groups) {
    lines.push_back(
        fmt::format("{} {}: {}", ranks.size() == 1 ? "rank" : "ranks", rank_ranges(ranks), what));
  }
  return lines;
}

}  // namespace ezpz::stacks
