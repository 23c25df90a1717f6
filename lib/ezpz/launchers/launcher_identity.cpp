#include "ezpz/launchers/launcher_identity.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ezpz/core/text.hpp"
#include "ezpz/launchers/launchers.hpp"

namespace ezpz {

LauncherIdentity identify_launcher(std::string_view version_output) {
  const std::optional<FoundFlavour> flavour = find_flavour(version_output);
  if (!flavour) return {};
  return {std::string(flavour->name), find_version(version_output)};
}

namespace {

// v1: path, device, inode, size, mtime and ctime in ns, flavour, version.
constexpr std::string_view k_cache_header = "ezpz-launcher-identity-v1";
constexpr std::size_t k_cache_fields = 8;

template <typename Number>
std::optional<Number> parse_number(std::string_view text) {
  Number value{};
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::optional<IdentityEntry> decode_entry(std::string_view line) {
  const std::vector<std::string_view> f = split(line, '\t');
  if (f.size() != k_cache_fields || f[0].empty()) return std::nullopt;
  auto device = parse_number<std::uint64_t>(f[1]);
  auto inode = parse_number<std::uint64_t>(f[2]);
  auto size = parse_number<std::uint64_t>(f[3]);
  auto mtime = parse_number<std::int64_t>(f[4]);
  auto ctime = parse_number<std::int64_t>(f[5]);
  if (!device || !inode || !size || !mtime || !ctime) return std::nullopt;
  return IdentityEntry{.path = std::string(f[0]),
                       .stamp = {*device, *inode, *size, *mtime, *ctime},
                       .identity = {std::string(f[6]), std::string(f[7])}};
}

bool encodable(const IdentityEntry& e) {
  auto plain = [](std::string_view text) { return text.find_first_of("\t\n") == text.npos; };
  return !e.path.empty() && plain(e.path) && plain(e.identity.flavour) && plain(e.identity.version);
}

}  // namespace

std::string encode_identity_cache(const std::vector<IdentityEntry>& entries) {
  std::string text = fmt::format("{}\n", k_cache_header);
  for (const IdentityEntry& e : entries) {
    if (!encodable(e)) continue;
    text += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n", e.path, e.stamp.device, e.stamp.inode,
                        e.stamp.size, e.stamp.mtime_ns, e.stamp.ctime_ns, e.identity.flavour,
                        e.identity.version);
  }
  return text;
}

std::optional<std::vector<IdentityEntry>> decode_identity_cache(std::string_view text) {
  if (!text.ends_with('\n')) return std::nullopt;  // a truncated write
  const std::vector<std::string_view> lines = split_lines(text);
  if (lines.empty() || lines.front() != k_cache_header) return std::nullopt;
  std::vector<IdentityEntry> entries;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    std::optional<IdentityEntry> entry = decode_entry(lines[i]);
    if (!entry) return std::nullopt;
    entries.push_back(std::move(*entry));
  }
  return entries;
}

std::vector<IdentityEntry> with_identity(std::vector<IdentityEntry> entries, IdentityEntry entry) {
  std::erase_if(entries, [&](const IdentityEntry& e) { return e.path == entry.path; });
  entries.push_back(std::move(entry));
  if (entries.size() > k_identity_cache_entries) {
    entries.erase(entries.begin(), entries.end() - k_identity_cache_entries);
  }
  return entries;
}

namespace {

// The dialect an identity takes the flags of; empty when unknown.
std::string_view dialect_of(const LauncherIdentity& identity) {
  const std::optional<FoundFlavour> flavour = flavour_named(identity.flavour);
  return flavour ? flavour->dialect : "";
}

}  // namespace

bool may_run_dialect(const LauncherIdentity& identity, std::string_view dialect) {
  const std::string_view other = dialect_of(identity);
  return expected_flavour(dialect).empty() || other.empty() || other == canonical_launcher(dialect);
}

namespace {

std::string describe(const ProgramSeen& p, std::string_view named_by) {
  std::string by = named_by.empty() ? "" : fmt::format(" ({})", named_by);
  return fmt::format("{}{} is {} {}", *p.path, by, p.identity.flavour, p.identity.version);
}

std::string refusal(std::string_view dialect, const std::vector<const ProgramSeen*>& found,
                    std::string_view named_by) {
  const std::string_view expected = expected_flavour(dialect);
  const std::string program(launcher_programs(dialect).front());
  std::vector<std::string> what;
  for (const ProgramSeen* p : found) what.push_back(describe(*p, named_by));
  const std::string_view other = dialect_of(found.front()->identity);
  std::string remedy = named_by.empty()
                           ? fmt::format("{}, or name {}'s {} with --launcher-program PATH",
                                         launcher_install_hint(dialect), expected, program)
                           : fmt::format("name {}'s {} instead", expected, program);
  if (!other.empty()) remedy += fmt::format(", or pass --launcher {}", other);
  return fmt::format("the {} launcher needs {}'s {}: {} ({})", dialect, expected, program,
                     fmt::join(what, ", "), remedy);
}

}  // namespace

std::optional<NamedProgram> named_launcher_program(const std::optional<std::string>& option,
                                                   const MachineProfile& profile,
                                                   std::string_view dialect) {
  if (option) return NamedProgram{*option, "--launcher-program"};
  if (profile.launcher_program.empty() || profile.launcher != dialect) return std::nullopt;
  return NamedProgram{profile.launcher_program,
                      fmt::format("launcher_program of profile {}", profile.name)};
}

LauncherProgramChoice choose_launcher_program(std::string_view typed,
                                              const std::vector<ProgramSeen>& seen,
                                              std::string_view named_by) {
  const std::string dialect = canonical_launcher(typed);
  std::vector<const ProgramSeen*> found;
  for (const ProgramSeen& p : seen) {
    if (p.path) found.push_back(&p);
  }
  auto runs = std::find_if(found.begin(), found.end(), [&](const ProgramSeen* p) {
    return may_run_dialect(p->identity, dialect);
  });
  if (runs != found.end()) return {(*runs)->name, *(*runs)->path, ""};
  if (found.empty()) return {seen.empty() ? "" : seen.front().name, "", ""};
  return {found.front()->name, *found.front()->path, refusal(dialect, found, named_by)};
}

}  // namespace ezpz
