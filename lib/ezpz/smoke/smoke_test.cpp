#include "ezpz/smoke/smoke_test.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ezpz/core/text.hpp"

namespace ezpz {

std::string smoke_output_dir(std::time_t now) {
  std::tm local{};
  localtime_r(&now, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d-%H%M%S", &local);
  return std::string("outputs/ezpz-test/") + stamp;
}

SmokeCommand smoke_command(const std::string& trainer, const std::vector<std::string>& args,
                           const std::string& default_output_dir) {
  SmokeCommand command{{trainer}, ""};
  bool chosen = false;
  for (size_t i = 0; i < args.size(); ++i) {
    command.argv.push_back(args[i]);
    if (args[i] == "--output-dir" && i + 1 < args.size()) command.output_dir = args[i + 1];
    if (args[i].rfind("--output-dir=", 0) == 0) command.output_dir = args[i].substr(13);
    chosen = chosen || args[i].rfind("--output-dir", 0) == 0;
  }
  if (!chosen) {
    command.output_dir = default_output_dir;
    command.argv.insert(command.argv.end(), {"--output-dir", default_output_dir});
  }
  return command;
}

namespace {

Verdict failure(std::string reason) {
  return {false, "ezpz test: FAIL: " + std::move(reason)};
}

// " (the run: WHY)" where the launch said why it failed; else nothing.
std::string run_said(std::string_view run_ended) {
  return run_ended.empty() ? "" : fmt::format(" (the run: {})", run_ended);
}

Verdict judge_summary(const nlohmann::json& summary, int exit_status, std::string_view run_ended) {
  std::string status = summary.value("status", "");
  if (status != "pass") {
    return failure(fmt::format("{} (trainer exit {}; report {})",
                               summary.value("reason", "the trainer reported a failure"),
                               exit_status, summary.value("report", "none")));
  }
  if (exit_status != 0) {
    return failure(fmt::format("the trainer passed its checks but the launch exited {}{}",
                               exit_status, run_said(run_ended)));
  }
  if (!summary.value("trained", true)) {
    double busbw =
        summary.value(nlohmann::json::json_pointer("/collectives/all_reduce/peak_busbw_gbs"), 0.0);
    return {true, fmt::format("ezpz test: PASS: {}, collectives only, all_reduce peak bus "
                              "bandwidth {:.3f} GB/s, report {}",
                              plural(summary.value("world_size", 0L), "rank"), busbw,
                              summary.value("report", ""))};
  }
  return {true, fmt::format("ezpz test: PASS: {}, {:.0f} samples/s, final loss {:.4g}, "
                            "report {}",
                            plural(summary.value("world_size", 0L), "rank"),
                            summary.value("samples_per_s", 0.0), summary.value("final_loss", 0.0),
                            summary.value("report", ""))};
}

}  // namespace

Verdict judge_smoke_run(const std::optional<std::string>& summary, int exit_status,
                        std::string_view output_dir, std::string_view run_ended) {
  if (!summary) {
    return failure(fmt::format("the trainer exited {} without writing {}/summary.json{}",
                               exit_status, output_dir, run_said(run_ended)));
  }
  nlohmann::json json = nlohmann::json::parse(*summary, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) {
    return failure(fmt::format("{}/summary.json is not a JSON object (trainer exit {})", output_dir,
                               exit_status));
  }
  try {
    return judge_summary(json, exit_status, run_ended);
  } catch (const nlohmann::json::exception& error) {
    return failure(fmt::format("{}/summary.json: {}", output_dir, error.what()));
  }
}

}  // namespace ezpz
