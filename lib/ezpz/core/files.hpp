#pragma once
// The seam through which pure code reads files: tests pass a map, main passes
// the real filesystem (lib/ezpz/sys/files.cpp).
#include <string>
#include <string_view>

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

}  // namespace ezpz
