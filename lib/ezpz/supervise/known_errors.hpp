#pragma once
// Errors the sites document with a remedy: a line of the launcher's output that says what to
// do next. After a failed attempt ezpz prints the remedy of each one found, once. Pure.
#include <string>
#include <string_view>
#include <vector>

namespace ezpz {

struct KnownError {
  std::string_view text;    // a piece of the line, exactly as the site's document quotes it
  std::string_view remedy;  // what to do, in ezpz's words where ezpz has them
  std::string_view source;  // the site's document and section
};

// Every known error, in the order their hints are printed.
const std::vector<KnownError>& known_errors();

// "hint: ...": one for each known error whose text `output` holds, in table order.
std::vector<std::string> known_error_hints(std::string_view output);

}  // namespace ezpz
