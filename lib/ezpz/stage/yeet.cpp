#include "ezpz/stage/yeet.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ezpz/core/allocation.hpp"
#include "ezpz/core/error.hpp"
#include "ezpz/core/json_text.hpp"
#include "ezpz/launch/render.hpp"

namespace ezpz::yeet {
namespace {

// Longest first, so ".tar.gz" wins over ".gz"-less ".tar" matching.
constexpr std::array<std::string_view, 9> k_tarball_suffixes = {
    ".tar.gz", ".tar.zst", ".tar.xz", ".tar.bz2", ".tgz", ".tzst", ".txz", ".tbz2", ".tar"};

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::string_view without_trailing_slashes(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  return path;
}

void replace_all(std::string& text, std::string_view from, std::string_view to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

}  // namespace

std::optional<std::string> default_source(const Env& env) {
  if (auto found = first_nonempty(env, {"VIRTUAL_ENV", "CONDA_PREFIX"})) return found->second;
  return std::nullopt;
}

std::optional<std::string> default_failed_file(const Env& env, std::string_view job_id) {
  return run_file_path(env, "yeet",
                       fmt::format("yeet-failed-nodes-{}.txt", job_id.empty() ? "local" : job_id));
}

bool is_tarball_name(std::string_view path) {
  for (std::string_view suffix : k_tarball_suffixes) {
    if (ends_with(path, suffix)) return true;
  }
  return false;
}

std::string source_name(std::string_view source) {
  std::string_view path = without_trailing_slashes(source);
  std::string_view name =
      path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1);
  for (std::string_view suffix : k_tarball_suffixes) {
    if (ends_with(name, suffix) && name.size() > suffix.size()) {
      name.remove_suffix(suffix.size());
      break;
    }
  }
  return std::string(name);
}

std::string default_destination(std::string_view source) {
  return "/tmp/" + source_name(source);
}

std::string expand_destination(std::string_view pattern, std::string_view host, int index) {
  std::string destination(pattern);
  replace_all(destination, "{host}", host);
  replace_all(destination, "{index}", std::to_string(index));
  return destination;
}

std::string node_name(const Env& env, std::string_view hostname) {
  if (auto found = first_nonempty(env, {"SLURMD_NODENAME", "MPIR_CVAR_CH3_INTERFACE_HOSTNAME"})) {
    return found->second;
  }
  return std::string(short_host_name(hostname));
}

long MinSuccess::nodes_required(long total) const {
  if (count) return *count;
  if (fraction) return static_cast<long>(std::ceil(*fraction * static_cast<double>(total) - 1e-9));
  return total;
}

MinSuccess parse_min_success(std::string_view text) {
  if (auto count = parse_count(text)) {
    if (*count < 1) throw Error("--min-success: expected at least 1 node, got 0");
    return {count, std::nullopt};
  }
  std::string copy(text);
  char* end = nullptr;
  double fraction = std::strtod(copy.c_str(), &end);
  if (copy.empty() || end != copy.c_str() + copy.size() || !(fraction > 0 && fraction <= 1)) {
    throw Error(fmt::format(
        "--min-success: expected a node count or a fraction in (0, 1], got \"{}\"", text));
  }
  return {std::nullopt, fraction};
}

Action decide(Holding holding, bool force) {
  switch (holding) {
    case Holding::current:
      return force ? Action::transfer : Action::skip;
    case Holding::foreign:
      return Action::refuse;
    case Holding::absent:
    case Holding::stale:
      return Action::transfer;
  }
  return Action::refuse;
}

std::string normal_destination(std::string_view destination) {
  if (destination.empty()) return "";
  std::string normal = std::filesystem::path(destination).lexically_normal().string();
  return std::string(without_trailing_slashes(normal));
}

namespace {

// "/" or "/name".
bool is_top_level(std::string_view path) {
  return path.rfind('/') == 0;
}

bool contains(const std::vector<FileId>& chain, const FileId& id) {
  return std::find(chain.begin(), chain.end(), id) != chain.end();
}

// Judged by identity, not by name: "/link-to-src/copy" is inside the source
// too, and so is the source's path through a bind mount.
std::optional<std::string> overlap_problem(const ResolvedPath& destination,
                                           const ResolvedPath& source,
                                           std::string_view source_name) {
  if (!source.exists || source.chain.empty()) return std::nullopt;
  if (contains(destination.chain, source.chain.back())) {
    return fmt::format("inside the source {}", source_name);
  }
  if (destination.exists && !destination.chain.empty() &&
      contains(source.chain, destination.chain.back())) {
    return fmt::format("holds the source {}; replacing it would delete the source", source_name);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> destination_problem(std::string_view destination,
                                               const ResolvedPath& resolved,
                                               const std::optional<ResolvedPath>& source,
                                               std::string_view source_name) {
  if (destination.empty() || destination.front() != '/') return "expected an absolute path";
  if (is_top_level(destination)) return "refusing a top-level directory; name one inside it";
  if (is_top_level(resolved.path)) {
    return fmt::format("resolves to the top-level directory {}; name one inside it", resolved.path);
  }
  if (!source) return std::nullopt;
  return overlap_problem(resolved, *source, source_name);
}

std::string destination_label(std::string_view given, std::string_view normal) {
  std::string_view shown = without_trailing_slashes(given);
  if (shown == normal || normal.empty()) return std::string(shown);
  return fmt::format("{} ({})", shown, normal);
}

namespace {

struct RefusedType {
  unsigned type;  // S_IFMT bits
  std::string_view name;
};
constexpr std::array<RefusedType, 4> k_refused_types = {{
    {S_IFCHR, "a character device"},
    {S_IFBLK, "a block device"},
    {S_IFIFO, "a FIFO"},
    {S_IFSOCK, "a socket"},
}};

}  // namespace

std::optional<std::string> refused_entry_type(unsigned mode) {
  for (const RefusedType& row : k_refused_types) {
    if ((mode & S_IFMT) == row.type) {
      return fmt::format("is {}; yeet copies only files, directories and symlinks", row.name);
    }
  }
  return std::nullopt;
}

unsigned staged_mode(unsigned mode, bool keep_setuid) {
  return keep_setuid ? mode : mode & ~static_cast<unsigned>(S_ISUID | S_ISGID);
}

std::string stamp_json(const Stamp& stamp) {
  nlohmann::ordered_json json = {{"made_by", "ezpz yeet"}, {"fingerprint", stamp.fingerprint},
                                 {"source", stamp.source}, {"stream_hash", stamp.stream_hash},
                                 {"bytes", stamp.bytes},   {"entries", stamp.entries}};
  return json_text(json, 2) + "\n";
}

std::optional<Stamp> parse_stamp(std::string_view text) {
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return std::nullopt;
  try {  // value() throws too, where a field is of another type ("made_by": 1)
    if (json.value("made_by", "") != "ezpz yeet") return std::nullopt;
    return Stamp{json.at("fingerprint").get<std::string>(), json.value("source", ""),
                 json.value("stream_hash", ""), json.value("bytes", std::uint64_t{0}),
                 json.value("entries", std::uint64_t{0})};
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

Holding classify(const std::optional<std::string>& stamp_text, bool exists, bool empty,
                 std::string_view fingerprint) {
  if (!exists || empty) return Holding::absent;
  std::optional<Stamp> stamp = stamp_text ? parse_stamp(*stamp_text) : std::nullopt;
  if (!stamp) return Holding::foreign;
  return stamp->fingerprint == fingerprint ? Holding::current : Holding::stale;
}

void Fingerprint::add(std::string_view field) {
  hash_.add(field);
  hash_.add_separator();
}

void Fingerprint::add_entry(std::string_view path, std::string_view type, unsigned mode,
                            std::uint64_t size, std::int64_t mtime_ns,
                            std::string_view link_target) {
  add(path);
  add(type);
  add(fmt::format("{:o} {} {}", mode, size, mtime_ns));
  add(link_target);
}

void Fingerprint::add_content(std::uint32_t crc) {
  add(fmt::format("{:08x}", crc));
}

std::string Fingerprint::value() const {
  return fmt::format("{:016x}", hash_.value());
}

const std::vector<std::string>& venv_text_files() {
  static const std::vector<std::string> files = {
      "bin/activate", "bin/activate.csh", "bin/activate.fish", "bin/Activate.ps1", "pyvenv.cfg"};
  return files;
}

std::optional<std::string> replace_prefix(std::string_view text, std::string_view old_prefix,
                                          std::string_view new_prefix) {
  if (old_prefix.empty() || old_prefix == new_prefix ||
      text.find(old_prefix) == std::string_view::npos) {
    return std::nullopt;
  }
  std::string replaced(text);
  replace_all(replaced, old_prefix, new_prefix);
  return replaced;
}

std::vector<CondaPrefixFile> conda_prefix_files(std::string_view record_json) {
  nlohmann::json record = nlohmann::json::parse(record_json, nullptr, /*allow_exceptions=*/false);
  if (record.is_discarded()) throw Error("not a JSON document");
  std::vector<CondaPrefixFile> files;
  const nlohmann::json* paths = nullptr;
  if (auto data = record.find("paths_data"); data != record.end() && data->is_object()) {
    if (auto found = data->find("paths"); found != data->end() && found->is_array())
      paths = &*found;
  }
  if (paths == nullptr) return files;
  for (const nlohmann::json& entry : *paths) {
    if (!entry.is_object() || !entry.contains("prefix_placeholder")) continue;
    auto path = entry.find("_path");
    if (path == entry.end() || !path->is_string()) continue;
    std::filesystem::path relative(path->get<std::string>());
    bool escapes = relative.empty() || relative.is_absolute() ||
                   std::any_of(relative.begin(), relative.end(),
                               [](const std::filesystem::path& part) { return part == ".."; });
    if (escapes) continue;
    auto mode = entry.find("file_mode");
    bool binary = mode != entry.end() && mode->is_string() && mode->get<std::string>() == "binary";
    files.push_back({relative.string(), binary});
  }
  return files;
}

std::optional<std::string> replace_prefix_padded(std::string_view data, std::string_view old_prefix,
                                                 std::string_view new_prefix) {
  if (old_prefix.empty() || old_prefix == new_prefix || new_prefix.size() > old_prefix.size() ||
      data.find(old_prefix) == std::string_view::npos) {
    return std::nullopt;
  }
  std::string out;
  out.reserve(data.size());
  while (!data.empty()) {
    std::size_t end = data.find('\0');
    std::string_view piece = data.substr(0, end);  // one C string, without its NUL
    if (piece.find(old_prefix) == std::string_view::npos) {
      out.append(piece);
    } else {
      std::string replaced(piece);
      replace_all(replaced, old_prefix, new_prefix);
      out += replaced;
      out.append(piece.size() - replaced.size(), '\0');
    }
    if (end == std::string_view::npos) break;
    out += '\0';
    data.remove_prefix(end + 1);
  }
  return out;
}

std::optional<std::string> rewrite_shebang(std::string_view content, std::string_view old_prefix,
                                           std::string_view new_prefix) {
  if (content.substr(0, 2) != "#!") return std::nullopt;
  std::size_t line_end = content.find('\n');
  if (line_end == std::string_view::npos) line_end = content.size();
  std::optional<std::string> line =
      replace_prefix(content.substr(0, line_end), old_prefix, new_prefix);
  if (!line) return std::nullopt;
  return *line + std::string(content.substr(line_end));
}

std::optional<std::string> venv_prefix_from_activate(std::string_view activate_text) {
  std::string text = "\n";  // so line one matches "\nVIRTUAL_ENV=" too
  text += activate_text;
  for (std::string_view key : {"\nVIRTUAL_ENV=\"", "\nVIRTUAL_ENV='", "\nVIRTUAL_ENV="}) {
    std::size_t at = text.find(key);
    if (at == std::string::npos) continue;
    std::string_view rest = std::string_view(text).substr(at + key.size());
    char quote = key.back() == '=' ? '\n' : key.back();
    std::string_view value = rest.substr(0, rest.find(quote));
    if (!value.empty()) return std::string(value);
  }
  return std::nullopt;
}

namespace {

// "PREFIX/bin/pythonX.Y" -> {PREFIX, "pythonX.Y"}, PREFIX absolute and not "/".
std::optional<ScriptPython> split_python_path(std::string_view interpreter) {
  std::size_t bin = interpreter.rfind("/bin/");
  if (interpreter.empty() || interpreter.front() != '/' || bin == std::string_view::npos ||
      bin == 0) {
    return std::nullopt;
  }
  std::string_view program = interpreter.substr(bin + 5);
  if (program.rfind("python", 0) != 0 ||
      program.find_first_not_of("0123456789.", 6) != std::string_view::npos) {
    return std::nullopt;
  }
  return ScriptPython{std::string(interpreter.substr(0, bin)), std::string(program)};
}

}  // namespace

std::optional<ScriptPython> python_of_script(std::string_view head) {
  if (head.rfind("#!", 0) != 0) return std::nullopt;
  std::size_t end = head.find('\n');
  std::string_view first = head.substr(2, end == std::string_view::npos ? end : end - 2);
  first.remove_prefix(std::min(first.find_first_not_of(" \t"), first.size()));
  std::string_view interpreter = first.substr(0, first.find_first_of(" \t\r"));
  if (interpreter == "/bin/sh" && end != std::string_view::npos) {
    constexpr std::string_view k_exec = "'''exec' \"";
    std::string_view second = head.substr(end + 1);
    if (second.rfind(k_exec, 0) != 0) return std::nullopt;
    second.remove_prefix(k_exec.size());
    std::size_t quote = second.find_first_of("\"\n");
    if (quote == std::string_view::npos || second[quote] != '"') return std::nullopt;
    interpreter = second.substr(0, quote);
  }
  return split_python_path(interpreter);
}

std::string host_in_shell(const Env& env) {
  return get_nonempty(env, "SLURMD_NODENAME") ? "${SLURMD_NODENAME:-$(hostname -s)}"
                                              : "$(hostname -s)";
}

std::string shell_destination(std::string_view destination, std::string_view host_expression) {
  constexpr std::string_view k_host = "{host}";
  if (destination.find(k_host) == std::string_view::npos) return shell_quote(destination);
  std::string word = "\"";
  for (std::size_t at = 0; at < destination.size(); ++at) {
    if (destination.substr(at, k_host.size()) == k_host) {
      word += host_expression;
      at += k_host.size() - 1;
      continue;
    }
    if (std::string_view("\"$`\\").find(destination[at]) != std::string_view::npos) word += '\\';
    word += destination[at];
  }
  return word + "\"";
}

std::string staged_nodes(int staged, int total) {
  if (staged >= total) return "every node";
  return fmt::format("{} of {} nodes (the failed ones have no copy)", staged, total);
}

std::string usage_hint(EnvKind kind, std::string_view destination, std::string_view host_expression,
                       std::string_view on_nodes) {
  const std::string where = std::string(destination);
  const std::string index_note =
      where.find("{index}") == std::string::npos
          ? ""
          : "\n({index} is each node's index in the job, 0 on the first: put it in by hand)";
  switch (kind) {
    case EnvKind::venv:
      return fmt::format(
          "To use it on {2}:\n"
          "  deactivate 2>/dev/null; source {0}\n"
          "  ezpz launch -- python3 train.py\n"
          "(the copy is node-local: activate it in the job, where the ranks run){1}",
          shell_destination(where + "/bin/activate", host_expression), index_note, on_nodes);
    case EnvKind::conda:
      return fmt::format(
          "To use it on {2}:\n"
          "  conda deactivate; conda activate {0}\n"
          "  ezpz launch -- python3 train.py{1}",
          shell_destination(where, host_expression), index_note, on_nodes);
    case EnvKind::other:
      break;
  }
  return fmt::format("Staged to {} on {}.", destination, on_nodes);
}

std::string format_bytes(double bytes) {
  constexpr std::array<std::string_view, 5> units = {"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t unit = 0;
  while (bytes >= 1024 && unit + 1 < units.size()) {
    bytes /= 1024;
    ++unit;
  }
  if (unit == 0) return fmt::format("{:.0f} B", bytes);
  return fmt::format("{:.1f} {}", bytes, units[unit]);
}

std::string progress_line(const Progress& p) {
  double rate = p.seconds > 0 ? static_cast<double>(p.bytes) / p.seconds : 0;
  std::string line = fmt::format("{}", format_bytes(static_cast<double>(p.bytes)));
  if (p.total_bytes > 0) {
    line += fmt::format(" of {} ({:.0f}%)", format_bytes(static_cast<double>(p.total_bytes)),
                        100.0 * static_cast<double>(p.bytes) / static_cast<double>(p.total_bytes));
  }
  line += fmt::format(", {}/s, nodes {}/{} done", format_bytes(rate), p.nodes_done, p.nodes);
  if (p.total_bytes > p.bytes && rate > 0) {
    line += fmt::format(", ETA {:.0f} s", static_cast<double>(p.total_bytes - p.bytes) / rate);
  }
  return line;
}

}  // namespace ezpz::yeet
