#include "ezpz/supervise/attempt_facts.hpp"

#include <array>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ezpz/core/error.hpp"
#include "ezpz/core/json_text.hpp"
#include "ezpz/core/signals.hpp"
#include "ezpz/supervise/run_record.hpp"

namespace ezpz {
namespace {

using Json = nlohmann::ordered_json;

constexpr int k_version = 1;

constexpr std::array<Watchdog, 6> k_watchdogs = {Watchdog::none,          Watchdog::timeout,
                                                 Watchdog::idle,          Watchdog::signature,
                                                 Watchdog::stdout_closed, Watchdog::rank_failed};

Json optional_json(const auto& value) {
  return value ? Json(*value) : Json(nullptr);
}

Json sent_json(const std::vector<SentSignal>& sent) {
  Json list = Json::array();
  for (const SentSignal& s : sent) {
    list.push_back(
        {{"signal", s.signal}, {"name", signal_name(s.signal)}, {"at_s", s.at_s}, {"why", s.why}});
  }
  return list;
}

Json patterns_json(const std::vector<BadNodePattern>& patterns) {
  Json list = Json::array();
  for (const BadNodePattern& p : patterns) list.push_back({{"name", p.name}, {"regex", p.regex}});
  return list;
}

Watchdog watchdog_named(const Json& value) {
  if (value.is_null()) return Watchdog::none;
  for (Watchdog w : k_watchdogs) {
    if (to_string(w) == value.get<std::string>()) return w;
  }
  throw Json::other_error::create(501, "stopped_by: no such watchdog", &value);
}

template <typename T>
std::optional<T> optional_of(const Json& value) {
  return value.is_null() ? std::nullopt : std::optional<T>(value.get<T>());
}

std::vector<SentSignal> sent_of(const Json& list) {
  std::vector<SentSignal> sent;
  for (const Json& s : list) {
    sent.push_back({.signal = s.at("signal").get<int>(),
                    .at_s = s.at("at_s").get<double>(),
                    .why = s.at("why").get<std::string>()});
  }
  return sent;
}

std::vector<BadNodePattern> patterns_of(const Json& list) {
  std::vector<BadNodePattern> patterns;
  for (const Json& p : list) {
    patterns.push_back({p.at("name").get<std::string>(), p.at("regex").get<std::string>()});
  }
  return patterns;
}

AttemptFacts facts_of(const Json& j) {
  const Json& death = j.at("previous_death");
  return {.exit_status = j.at("launcher_exit").get<int>(),
          .interrupted = j.at("interrupted").get<bool>(),
          .forwarded_signal = j.at("forwarded_signal").get<int>(),
          .scheduler_job = j.at("scheduler_job").get<bool>(),
          .watchdog = watchdog_named(j.at("stopped_by")),
          .output = j.at("output").get<std::string>(),
          .hosts = j.at("hosts").get<std::vector<std::string>>(),
          .ppn = j.at("ppn").get<int>(),
          .launcher_signal = j.at("launcher_signal").get<int>(),
          .launcher_part = j.at("launcher_part").get<std::string>(),
          .world_size = j.at("world_size").get<int>(),
          .launcher_output = optional_of<std::string>(j.at("launcher_output")),
          .ranks_started = optional_of<std::size_t>(j.at("ranks_started")),
          .previous_death = {.ranks = death.at("ranks").get<std::string>(),
                             .host = death.at("host").get<std::string>(),
                             .signal = death.at("signal").get<int>()},
          .progress_pattern = j.at("progress_pattern").get<std::string>(),
          .address_hosts = j.at("address_hosts").get<AddressHosts>(),
          .sent = sent_of(j.at("signals_sent")),
          .failed_rank_status = optional_of<int>(j.at("failed_rank_status")),
          .cwd_missing = j.at("cwd_missing").get<bool>()};
}

}  // namespace

std::string facts_json(const AttemptFacts& f, const std::vector<BadNodePattern>& patterns) {
  const Json json = {
      {"version", k_version},
      {"launcher_exit", f.exit_status},
      {"launcher_signal", f.launcher_signal},
      {"launcher_part", f.launcher_part},
      {"stopped_by", f.watchdog == Watchdog::none ? Json(nullptr) : Json(to_string(f.watchdog))},
      {"interrupted", f.interrupted},
      {"forwarded_signal", f.forwarded_signal},
      {"signals_sent", sent_json(f.sent)},
      {"failed_rank_status", optional_json(f.failed_rank_status)},
      {"cwd_missing", f.cwd_missing},
      {"scheduler_job", f.scheduler_job},
      {"hosts", f.hosts},
      {"ppn", f.ppn},
      {"world_size", f.world_size},
      {"ranks_started", optional_json(f.ranks_started)},
      {"previous_death",
       {{"ranks", f.previous_death.ranks},
        {"host", f.previous_death.host},
        {"signal", f.previous_death.signal}}},
      {"progress_pattern", f.progress_pattern},
      {"address_hosts", f.address_hosts},
      {"bad_node_patterns", patterns_json(patterns)},
      {"launcher_output", optional_json(f.launcher_output)},
      {"output", f.output},
  };
  return json_text(json, 2) + "\n";
}

RecordedFacts parse_facts(std::string_view text, std::string_view source) {
  const Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    throw Error(fmt::format("{}: not an attempt's facts (not a JSON object)", source));
  }
  if (j.value("version", Json()) != Json(k_version)) {
    throw Error(fmt::format("{}: not an attempt's facts (version {} expected)", source, k_version));
  }
  try {
    return {facts_of(j), patterns_of(j.at("bad_node_patterns"))};
  } catch (const Json::exception& e) {
    throw Error(fmt::format("{}: not an attempt's facts ({})", source, e.what()));
  }
}

}  // namespace ezpz
