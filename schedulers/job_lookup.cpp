// The job holding this node, asked of qstat or squeue: on a compute node reached by ssh
// the job's variables are gone, but the scheduler still knows which job owns the node
// (the Python ezpz looks the same way).
#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "ezpz/core/hostlist.hpp"
#include "ezpz/core/text.hpp"
#include "schedulers/scheduler.hpp"

namespace ezpz {
namespace {

// One line's whitespace-separated words.
std::vector<std::string_view> words_of(std::string_view line) {
  std::vector<std::string_view> words;
  for (std::string_view word : split(line, ' ')) {
    if (!word.empty()) words.push_back(word);
  }
  return words;
}

// `qstat -fn1wru USER` lines, as the Python ezpz asks on ALCF's machines: "ID USER QUEUE NAME
// SESSID NDS TSK MEM TIME S ELAP host/0*64+host/1"; the running jobs' last word lists their
// hosts.
std::optional<RunningJob> pbs_job_in(std::string_view output, std::string_view host) {
  for (std::string_view line : split_lines(output)) {
    std::vector<std::string_view> words = words_of(line);
    if (words.size() < 3 || words[words.size() - 3] != "R") continue;
    std::vector<std::string> hosts;
    for (std::string_view chunk : split(words.back(), '+')) {
      hosts.emplace_back(chunk.substr(0, chunk.find('/')));
    }
    if (lists_host(hosts, host))
      return RunningJob{SchedulerKind::pbs, std::string(words[0]), hosts};
  }
  return std::nullopt;
}

// `squeue -h -t R -o "%i %N"` lines: "42 nid[001-002]".
std::optional<RunningJob> slurm_job_in(std::string_view output, std::string_view host) {
  for (std::string_view line : split_lines(output)) {
    std::vector<std::string_view> words = words_of(line);
    if (words.size() != 2) continue;
    std::vector<std::string> hosts = expand_hostlist(words[1]);
    if (lists_host(hosts, host))
      return RunningJob{SchedulerKind::slurm, std::string(words[0]), hosts};
  }
  return std::nullopt;
}

// How each scheduler is asked, and how its answer is read.
struct JobQuery {
  std::string_view program;
  std::vector<std::string> (*argv)(const std::optional<std::string>& user);
  std::optional<RunningJob> (*find)(std::string_view output, std::string_view host);
};
const std::array<JobQuery, 2> k_job_queries = {{
    {"qstat",
     [](const std::optional<std::string>& user) {
       if (!user) return std::vector<std::string>{"qstat", "-fn1wr"};
       return std::vector<std::string>{"qstat", "-fn1wru", *user};
     },
     pbs_job_in},
    {"squeue",
     [](const std::optional<std::string>& user) {
       std::vector<std::string> argv = {"squeue", "-h", "-t", "R", "-o", "%i %N"};
       if (user) argv.insert(argv.end(), {"-u", *user});
       return argv;
     },
     slurm_job_in},
}};

// A client that could not reach its server for a moment: PBS's qstat says "Communication
// failure." or "cannot connect to server pbs01 (errno=111)" while the server restarts or is
// loaded. Asked again, up to k_tries times in all.
constexpr std::array<std::string_view, 2> k_transient_words = {"Communication failure",
                                                               "cannot connect to server"};
constexpr int k_tries = 5;

bool transient(std::string_view words) {
  return std::any_of(k_transient_words.begin(), k_transient_words.end(),
                     [&](std::string_view w) { return words.find(w) != std::string_view::npos; });
}

// The query's output; throws the last Error, its words and the tries, when it never answered.
std::string ask(const std::vector<std::string>& argv, const CommandReader& commands,
                const std::function<void(double)>& pause) {
  for (int attempt = 1;; ++attempt) {
    try {
      return commands.output(argv);
    } catch (const Error& error) {
      if (!transient(error.what()) || attempt == k_tries) {
        throw Error(attempt == 1 ? error.what()
                                 : fmt::format("{} ({} tries)", error.what(), attempt));
      }
    }
    pause(0.2 * (1 << (attempt - 1)));  // 0.2, 0.4, 0.8, 1.6 s: 3 s at most
  }
}

}  // namespace

bool transient_lookup_failure(std::string_view words) {
  return transient(words);
}

JobLookup find_job_holding(std::string_view host, const Env& env, const CommandReader& commands,
                           const std::function<bool(std::string_view)>& on_path,
                           const std::function<void(double)>& pause) {
  JobLookup lookup;
  const std::optional<std::string> user = get_nonempty(env, "USER");
  for (const JobQuery& query : k_job_queries) {
    if (!on_path(query.program)) continue;
    std::string output;
    try {
      output = ask(query.argv(user), commands, pause);
    } catch (const Error& error) {  // a client with no server to ask: no answer, not an error
      lookup.failed.push_back(fmt::format("{}: {}", query.program, error.what()));
      continue;
    }
    lookup.asked.emplace_back(query.program);
    if (auto job = query.find(output, host)) {
      lookup.job = std::move(job);
      return lookup;
    }
  }
  return lookup;
}

}  // namespace ezpz
