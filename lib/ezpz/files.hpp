#pragma once
// The seam through which pure code reads files: tests pass a map, main passes
// the real filesystem (lib/ezpz/sys/files.cpp).
#include <string>

namespace ezpz {

class FileReader {
 public:
  virtual ~FileReader() = default;
  // The whole file. Throws Error("<path>: <reason>") when it cannot be read.
  virtual std::string read(const std::string& path) const = 0;
};

}  // namespace ezpz
