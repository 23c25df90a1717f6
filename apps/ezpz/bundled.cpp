#include "bundled.hpp"

#include <vector>

#include <fmt/format.h>

#include "ezpz/error.hpp"
#include "ezpz/sys/world.hpp"

namespace ezpz {

std::string find_bundled_program(const Context& context, std::string_view name,
                                 std::string_view how_to_build) {
  const std::vector<std::string> candidates = {
      fmt::format("{}/{}", context.self_dir, name),
      fmt::format("{}/../libexec/ezpz/{}", context.self_dir, name)};
  for (const std::string& candidate : candidates) {
    if (auto found = sys::find_program(candidate, context.env)) return *found;
  }
  throw Error(fmt::format("{} not found in {} or {}: {}", name, candidates[0], candidates[1],
                          how_to_build),
              ExitCode::not_found);
}

}  // namespace ezpz
