#include "bundled.hpp"

#include <optional>
#include <vector>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "ezpz/sys/world.hpp"

namespace ezpz {

namespace {

// Beside ezpz (a build tree), then PREFIX/libexec/ezpz (installed, wherever
// the tree was moved: both are relative to the running binary).
std::vector<std::string> candidates(const Context& context, std::string_view name) {
  return {fmt::format("{}/{}", context.self_dir, name),
          fmt::format("{}/../libexec/ezpz/{}", context.self_dir, name)};
}

std::optional<std::string> find_candidate(const Context& context,
                                          const std::vector<std::string>& paths) {
  for (const std::string& candidate : paths) {
    if (auto found = sys::find_program(candidate, context.env)) return found;
  }
  return std::nullopt;
}

}  // namespace

std::string bundled_program_path(const Context& context, std::string_view name) {
  std::vector<std::string> paths = candidates(context, name);
  if (auto found = find_candidate(context, paths)) return *found;
  return paths[0];
}

std::string find_bundled_program(const Context& context, std::string_view name,
                                 std::string_view how_to_build) {
  const std::vector<std::string> paths = candidates(context, name);
  if (auto found = find_candidate(context, paths)) return *found;
  throw Error(fmt::format("{} not found in {} or {}: {}", name, paths[0], paths[1],
                          how_to_build),
              ExitCode::not_found);
}

}  // namespace ezpz
