#pragma once
// Files and program output for pure code under test: maps from path, or from the words of
// a command line joined by spaces, to contents.
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

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

class FakeCommands : public CommandReader {
 public:
  FakeCommands() = default;
  FakeCommands(std::initializer_list<std::pair<const std::string, std::string>> outputs)
      : outputs_(std::move(outputs)) {}
  std::string output(const std::vector<std::string>& argv) const override {
    std::string line;
    for (const std::string& word : argv) line += (line.empty() ? "" : " ") + word;
    auto it = outputs_.find(line);
    if (it == outputs_.end()) throw Error(fmt::format("{} is not on PATH", argv.front()));
    return it->second;
  }

 private:
  std::map<std::string, std::string> outputs_;
};

}  // namespace ezpz::testing
