#pragma once
// JSON text of what ezpz writes: run records, plans, reports. They hold strings ezpz did not
// choose (a command's words, a directory, a host's name, an error naming a path), and POSIX lets
// those be any bytes. nlohmann's dump() throws on a string that is not UTF-8, which ended a
// launch in abort() after its launcher had started (`ezpz launch -- echo $'caf\xe9'`). Here each
// byte that is not UTF-8 is written as U+FFFD: the JSON stays valid, the rest of the string is
// kept, and nothing throws.
#include <string>

namespace ezpz {

// `indent` as dump()'s: -1, one line; N, N spaces a level.
template <typename Json>
std::string json_text(const Json& json, int indent = -1) {
  return json.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace ezpz
