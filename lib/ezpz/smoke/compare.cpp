#include "ezpz/smoke/compare.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ezpz/core/error.hpp"
#include "ezpz/core/text.hpp"
#include "ezpz/smoke/collectives.hpp"

namespace ezpz::report {
namespace {

using Json = nlohmann::ordered_json;
using Fields = std::vector<std::pair<std::string, Json>>;

// Where a run's files were, why it passed, and what another column already says.
constexpr const char* k_left_out[] = {"output_dir", "report", "reason", "time_us", "algbw_gbs"};

bool left_out(const std::string& key) {
  return std::find(std::begin(k_left_out), std::end(k_left_out), key) != std::end(k_left_out);
}

// Scalars by dotted path; a collective's sizes by their size ("all_reduce.1 MiB").
void flatten(const Json& j, const std::string& prefix, Fields& out) {
  for (const auto& [key, value] : j.items()) {
    if (left_out(key)) continue;
    std::string path = prefix + key;
    if (key == "sizes" && value.is_array()) {
      for (const Json& row : value) {
        flatten(row, prefix + size_label(row.value("bytes", std::size_t{0})) + ".", out);
      }
    } else if (value.is_object()) {
      flatten(value, path + ".", out);
    } else if (key != "bytes") {
      out.emplace_back(path, value);
    }
  }
}

Fields fields_of(const SummaryText& s) {
  Json j = Json::parse(s.text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object())
    throw Error(fmt::format("{}: not a summary.json (expected a JSON object)", s.name));
  Fields fields;
  flatten(j, "", fields);
  return fields;
}

const Json* find(const Fields& fields, const std::string& key) {
  for (const auto& [k, v] : fields) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::string show(const Json* value) {
  if (!value) return "(absent)";
  if (value->is_string()) return value->get<std::string>();
  if (value->is_number_float()) return fmt::format("{:.4g}", value->get<double>());
  return value->dump();
}

// "(+6.3%)" between two numbers, when the first is not zero.
std::string change(const Json* a, const Json* b) {
  if (!a || !b || !a->is_number() || !b->is_number()) return "";
  double from = a->get<double>(), to = b->get<double>();
  if (from == 0) return "";
  return fmt::format(" ({:+.1f}%)", (to / from - 1) * 100);
}

std::string difference(const std::string& key, const Json* a, const Json* b) {
  return fmt::format("{}: {} -> {}{}", key, show(a), show(b), change(a, b));
}

}  // namespace

std::vector<std::string> compare_summaries(const SummaryText& a, const SummaryText& b) {
  Fields left = fields_of(a), right = fields_of(b);
  std::vector<std::string> lines;
  for (const auto& [key, value] : left) {
    const Json* other = find(right, key);
    if (!other || *other != value) lines.push_back(difference(key, &value, other));
  }
  for (const auto& [key, value] : right) {
    if (!find(left, key)) lines.push_back(difference(key, nullptr, &value));
  }
  return lines;
}

std::string comparison_text(const SummaryText& a, const SummaryText& b) {
  std::vector<std::string> lines = compare_summaries(a, b);
  std::string count =
      lines.empty() ? "no differences" : plural(static_cast<long>(lines.size()), "difference");
  std::string out = fmt::format("ezpz test: {} -> {}: {}\n", a.name, b.name, count);
  for (const std::string& line : lines) out += "  " + line + "\n";
  return out;
}

}  // namespace ezpz::report
