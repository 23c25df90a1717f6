#pragma once
// The seam through which pure code reads files: tests pass a map, main passes
// the real filesystem (lib/ezpz/sys/files.cpp).
#include <string>
#include <string_view>
#include <vector>

namespace ezpz {

class FileReader {
 public:
  virtual ~FileReader() = default;
  // The whole file. Throws Error("<path>: <reason>") when it cannot be read.
  virtual std::string read(const std::string& path) const = 0;
};

// files.read(path), with errors prefixed by what named the file:
// "PBS_NODEFILE: /x: No such file or directory".
std::string read_naming(const FileReader& files, const std::string& path, std::string_view origin);

// The seam through which pure code reads what a program prints, for a scheduler that names
// its hosts only when asked (Flux): tests pass a table, main runs the program
// (lib/ezpz/sys/world.cpp).
class CommandReader {
 public:
  virtual ~CommandReader() = default;
  // The standard output of argv (argv[0] found on PATH). Throws Error("<reason>") when the
  // program is missing, fails or does not answer in time.
  virtual std::string output(const std::vector<std::string>& argv) const = 0;
};

}  // namespace ezpz
