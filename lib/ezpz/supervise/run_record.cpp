#include "ezpz/supervise/run_record.hpp"

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <optional>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ezpz/core/error.hpp"
#include "ezpz/core/json_text.hpp"
#include "ezpz/launch/render.hpp"

namespace ezpz {

std::string attempt_dir_name(int attempt) {
  return fmt::format("attempt-{}", attempt);
}

std::string attempt_dir(const std::string& run_dir, int attempt) {
  return run_dir + "/" + attempt_dir_name(attempt);
}

std::string attempt_plan_file(int attempt) {
  return attempt == 1 ? "plan.json" : attempt_dir_name(attempt) + "/plan.json";
}
namespace {

using Json = nlohmann::ordered_json;

Json failed_json(const std::vector<FailedRank>& failed) {
  Json list = Json::array();
  for (const FailedRank& rank : failed) {
    list.push_back({{"ranks", rank.ranks},
                    {"host", rank.host},
                    {"pid", rank.pid},
                    {"what", rank.what},
                    {"died_of_signal", rank.died_of_signal}});
  }
  return list;
}

Json optional_number(const std::optional<double>& value) {
  return value ? Json(*value) : Json(nullptr);
}

// Rounded to the millisecond: the file is for people and scripts, not for replay.
double ms(double seconds) {
  return static_cast<double>(static_cast<long long>(seconds * 1000)) / 1000;
}

std::string command_line(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& word : words) {
    if (!line.empty()) line += ' ';  // not `"" + std::string`: GCC 12 warns (-Wrestrict) wrongly
    line += shell_quote(word);
  }
  return line;
}

std::string exit_text(const RunSummary& run) {
  return run.exit_code ? std::to_string(*run.exit_code) : "-";
}

// The ENDING column: how it ended, or what can be told of a run without an end.
std::string ending_word(const ListedRun& run) {
  if (run.state == RunState::finished) return run.summary.ending;
  return std::string(to_string(run.state == RunState::elsewhere ? RunState::unknown : run.state));
}

// A verdict's field as T, else `fallback`: where it is absent or of another type (a record
// another version wrote, or one edited by hand), `ezpz runs show` says less rather than end in
// nlohmann's type_error.
template <typename T>
T field_or(const Json& json, const char* key, T fallback) {
  const auto it = json.find(key);
  if (it == json.end()) return fallback;
  try {
    return it->template get<T>();
  } catch (const nlohmann::json::exception&) {
    return fallback;
  }
}

// One attempt's lines of `ezpz runs show`, from its verdict.json; nothing from one that is not a
// JSON object.
std::string attempt_details(std::string_view text) {
  const Json v = Json::parse(text, nullptr, false);
  if (v.is_discarded() || !v.is_object()) return "";
  const std::string next = field_or(v, "next", std::string());
  std::string out =
      fmt::format("attempt {}: exit {}, {}: {} ({:.1f} s){}\n", field_or(v, "attempt", 0),
                  field_or(v, "exit_code", 0), field_or(v, "classification", std::string("?")),
                  field_or(v, "reason", std::string()),
                  field_or(field_or(v, "timings", Json::object()), "total_s", 0.0),
                  next.empty() ? "" : "; " + next);
  // --signal's warning, when one was sent: "warned at T-600 s with SIGUSR1".
  if (const std::string warning = field_or(v, "warning", std::string()); !warning.empty()) {
    out += fmt::format("  {}\n", warning);
  }
  return out + output::startup_table(output::stamps_from_json(field_or(v, "startup", Json())));
}

std::string result_text(const ListedRun& run) {
  const RunSummary& r = run.summary;
  switch (run.state) {
    case RunState::finished:
      return fmt::format("exit {}: {}: {}", r.exit_code.value_or(-1), r.ending, r.reason);
    case RunState::running:
      return "still running";
    case RunState::lost:
      return fmt::format(
          "lost: ezpz ended without recording an exit (killed, or its node went "
          "down); ranks it left may still run: ezpz kill {}",
          r.id);
    case RunState::elsewhere:
      return fmt::format("unknown: launched on {}; whether it still runs can only be told there",
                         r.launched_on);
    case RunState::unknown:
      break;
  }
  return "unknown: no lock to tell whether its ezpz still runs (an older ezpz's record, or a "
         "filesystem without flock)";
}

}  // namespace

std::string_view to_string(Watchdog watchdog) {
  switch (watchdog) {
    case Watchdog::timeout:
      return "timeout";
    case Watchdog::idle:
      return "idle_timeout";
    case Watchdog::signature:
      return "bad_node_signature";
    case Watchdog::stdout_closed:
      return "stdout_closed";
    case Watchdog::rank_failed:
      return "rank_failed";
    case Watchdog::none:
      break;
  }
  return "";
}

namespace {

// The verdict's words, as verdict.json and `ezpz runs explain --json` both give them: the one
// classifier's answer, field for field (a test compares the two over every recorded attempt).
void add_classification(Json& json, const Classification& c) {
  Json evidence = Json::array();
  for (std::size_t i = 0; i < c.bad_hosts.size(); ++i) {
    evidence.push_back(
        {{"host", c.bad_hosts[i]}, {"evidence", i < c.evidence.size() ? c.evidence[i] : ""}});
  }
  json.update(Json{{"classification", to_string(c.ending)},
                   {"reason", c.reason},
                   {"rule", c.rule},
                   {"line", c.line},
                   {"bad_hosts", c.bad_hosts},
                   {"evidence", evidence},
                   {"failed_ranks", failed_json(c.failed)},
                   {"innocent", failed_json(c.innocent)}});
}

}  // namespace

std::string verdict_json(const AttemptVerdict& v) {
  const Classification& c = v.classification;
  Json json = {
      {"attempt", v.attempt},
      {"hosts", v.hosts},
      {"exit_code", v.exit_code},
      {"launcher_exit", v.launcher_exit},
      {"signal", v.forwarded_signal},
      {"stopped_by", v.watchdog == Watchdog::none ? Json(nullptr) : Json(to_string(v.watchdog))},
  };
  add_classification(json, c);
  json.update(Json{
      {"swaps", v.swaps},
      {"failover", v.failover.empty() ? Json(nullptr) : Json(v.failover)},
      {"next", v.next},
      {"leftovers", v.leftovers},
      {"warning", v.warning.empty() ? Json(nullptr) : Json(v.warning)},
      {"timings",
       {{"to_spawn_s", ms(v.to_spawn_s)},
        {"to_first_output_s",
         optional_number(v.to_first_output_s ? std::optional(ms(*v.to_first_output_s))
                                             : std::nullopt)},
        {"total_s", ms(v.total_s)}}},
      {"startup", output::startup_json(v.startup)},
      {"ranks_started", v.ranks_started ? Json(*v.ranks_started) : Json(nullptr)},
      {"exhausted", v.exhausted},
  });
  return json_text(json, 2) + "\n";
}

std::string explanation_json(const Explanation& e, const std::string& source) {
  const Classification& c = e.classification;
  Json json = {{"source", source}};
  add_classification(json, c);
  json["exit_code"] = c.exit_code;
  json.update(Json{{"victims", failed_json(e.victims)}});
  return json_text(json, 2) + "\n";
}

std::string summary_json(const RunSummary& r) {
  Json json = {
      {"id", r.id},
      {"started", r.started},
      {"started_ns", r.started_ns},
      {"cwd", r.cwd},
      {"command", r.command},
      {"machine", r.machine},
      {"scheduler", r.scheduler},
      {"job_id", r.job_id},
      {"hosts", r.hosts},
      {"spares", r.spares},
      {"attempts", r.attempts},
      {"exit_code", r.exit_code ? Json(*r.exit_code) : Json(nullptr)},
      {"ending", r.ending},
      {"reason", r.reason},
      {"launched_on", r.launched_on},
  };
  return json_text(json, 2) + "\n";
}

RunSummary parse_summary(std::string_view text, std::string_view source) {
  try {
    const Json json = Json::parse(text);
    RunSummary r;
    json.at("id").get_to(r.id);
    json.at("started").get_to(r.started);
    r.started_ns = json.value("started_ns", std::int64_t{0});
    json.at("cwd").get_to(r.cwd);
    json.at("command").get_to(r.command);
    json.at("machine").get_to(r.machine);
    json.at("scheduler").get_to(r.scheduler);
    json.at("job_id").get_to(r.job_id);
    json.at("hosts").get_to(r.hosts);
    json.at("spares").get_to(r.spares);
    json.at("attempts").get_to(r.attempts);
    if (!json.at("exit_code").is_null()) r.exit_code = json.at("exit_code").get<int>();
    json.at("ending").get_to(r.ending);
    json.at("reason").get_to(r.reason);
    r.launched_on = json.value("launched_on", "");  // absent before the lock
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: not an ezpz run record: {}", source, e.what()));
  }
}

namespace {

// Reads a summary's top-level "started_ns" and stops there, at its third key: nothing after it
// is tokenized. Anything else where the number should be (or no such key) leaves 0.
class StartedNsReader final : public nlohmann::json_sax<Json> {
 public:
  std::int64_t started_ns() const { return started_ns_; }

  bool null() override { return passed(); }
  bool boolean(bool) override { return passed(); }
  bool number_integer(number_integer_t n) override { return passed(n); }
  bool number_unsigned(number_unsigned_t n) override {
    return n <= static_cast<number_unsigned_t>(INT64_MAX) ? passed(static_cast<std::int64_t>(n))
                                                          : passed();
  }
  bool number_float(number_float_t, const string_t&) override { return passed(); }
  bool string(string_t&) override { return passed(); }
  bool binary(binary_t&) override { return passed(); }
  bool start_object(std::size_t) override { return deeper(); }
  bool end_object() override { return shallower(); }
  bool start_array(std::size_t) override { return deeper(); }
  bool end_array() override { return shallower(); }
  bool key(string_t& name) override {
    at_key_ = depth_ == 1 && name == "started_ns";
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  // A value has been read: false (stop) when it was started_ns's, taken if it is an integer.
  bool passed(std::optional<std::int64_t> value = std::nullopt) {
    if (!at_key_) return true;
    started_ns_ = value.value_or(0);
    return false;
  }

  // An object or an array opens: a value too, so started_ns's ends the reading.
  bool deeper() {
    ++depth_;
    return passed();
  }
  bool shallower() {
    --depth_;
    return true;
  }

  std::int64_t started_ns_ = 0;
  int depth_ = 0;
  bool at_key_ = false;
};

}  // namespace

std::int64_t summary_started_ns(std::string_view text) {
  StartedNsReader reader;
  Json::sax_parse(text, &reader);
  return reader.started_ns();
}

ExplainInput recorded_attempt(std::string_view verdict, std::string_view source) {
  try {
    const Json json = Json::parse(verdict);
    ExplainInput in;
    json.at("launcher_exit").get_to(in.exit_status);
    json.at("hosts").get_to(in.hosts);
    // Absent in records before it was kept, null without rank records: not known.
    if (const auto it = json.find("ranks_started"); it != json.end() && !it->is_null())
      in.ranks_started = it->get<std::size_t>();
    return in;
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: not an attempt's verdict: {}", source, e.what()));
  }
}

void read_recorded_plan(std::string_view plan, std::string_view source, ExplainInput& in) {
  try {
    const Json json = Json::parse(plan);
    json.at("world_size").get_to(in.world_size);
    json.at("ppn").get_to(in.ppn);
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: not a launch plan: {}", source, e.what()));
  }
}

std::string_view to_string(RunState state) {
  switch (state) {
    case RunState::finished:
      return "finished";
    case RunState::running:
      return "running";
    case RunState::lost:
      return "lost";
    case RunState::elsewhere:
      return "elsewhere";
    case RunState::unknown:
      break;
  }
  return "unknown";
}

RunState run_state(const RunSummary& summary, std::string_view this_host,
                   const std::function<std::optional<bool>()>& lock_held) {
  if (summary.exit_code) return RunState::finished;
  // An older record names no host: its lock file is missing too, so the probe says so.
  if (!summary.launched_on.empty() && summary.launched_on != this_host) return RunState::elsewhere;
  const std::optional<bool> held = lock_held();
  if (!held) return RunState::unknown;
  return *held ? RunState::running : RunState::lost;
}

std::string_view run_second(std::string_view id) {
  return id.substr(0, std::string_view("YYYYmmdd-HHMMSS").size());
}

bool started_after(const RunSummary& a, const RunSummary& b) {
  const auto key = [](const RunSummary& r) {
    return std::tuple(run_second(r.id), r.started_ns, std::string_view(r.id));
  };
  return key(a) > key(b);
}

std::string runs_table(const std::vector<ListedRun>& runs) {
  if (runs.empty()) return "no runs recorded\n";
  std::size_t id_width = 2;
  for (const ListedRun& run : runs) id_width = std::max(id_width, run.summary.id.size());
  std::string out = fmt::format("{:<{}}  {:<19}  {:>8}  {:<17}  {:>4}  {}\n", "ID", id_width,
                                "STARTED", "ATTEMPTS", "ENDING", "EXIT", "COMMAND");
  for (const ListedRun& run : runs) {
    const RunSummary& r = run.summary;
    out += fmt::format("{:<{}}  {:<19}  {:>8}  {:<17}  {:>4}  {}\n", r.id, id_width,
                       r.started.substr(0, 19), r.attempts, ending_word(run), exit_text(r),
                       command_line(r.command));
  }
  return out;
}

std::optional<std::string> match_run_id(const std::vector<std::string>& ids,
                                        std::string_view prefix, std::string_view command,
                                        std::string_view place) {
  std::vector<std::string> matches;
  for (const std::string& id : ids) {
    if (id == prefix) return id;
    if (id.starts_with(prefix)) matches.push_back(id);
  }
  std::sort(matches.begin(), matches.end());
  matches.erase(std::unique(matches.begin(), matches.end()), matches.end());  // one per process
  if (matches.size() <= 1) return matches.empty() ? std::nullopt : std::optional(matches.front());
  throw Error(fmt::format("{}: {} matches {} runs {}; give more of the id", command, prefix,
                          matches.size(), place));
}

std::string run_id_choice(std::string_view base, int n) {
  return n <= 1 ? std::string(base) : fmt::format("{}-{}", base, n);
}

std::string run_details(const ListedRun& run, const std::vector<std::string>& verdicts,
                        std::string_view directory) {
  const RunSummary& r = run.summary;
  std::string out = fmt::format(
      "run {}\n  started   {}\n  command   {}\n  directory {}\n  machine   {} ({}{})\n"
      "  hosts     {}\n",
      r.id, r.started, command_line(r.command), r.cwd, r.machine, r.scheduler,
      r.job_id.empty() ? "" : ", job " + r.job_id, fmt::join(r.hosts, " "));
  if (!r.spares.empty()) out += fmt::format("  spares    {}\n", fmt::join(r.spares, " "));
  out += fmt::format("  result    {}\n", result_text(run));
  for (const std::string& text : verdicts) out += attempt_details(text);
  out += fmt::format("records in {}\n", directory);
  return out;
}

}  // namespace ezpz
