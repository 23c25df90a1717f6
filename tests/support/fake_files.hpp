#pragma once
// Files for pure code under test: a map from path to contents.
#include <initializer_list>
#include <map>
#include <string>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "ezpz/core/files.hpp"

namespace ezpz::testing {

class FakeFiles : public FileReader {
 public:
  FakeFiles() = default;
  FakeFiles(std::initializer_list<std::pair<const std::string, std::string>> files) : files_(std::move(files)) {}
  std::string read(const std::string& path) const override {
    auto it = files_.find(path);
    if (it == files_.end()) throw Error(fmt::format("{}: No such file or directory", path));
    return it->second;
  }

 private:
  std::map<std::string, std::string> files_;
};

}  // namespace ezpz::testing
