#pragma once
// FNV-1a, 64 bit: names files by their content (hostfiles, the profile cache
// key). Not cryptographic: it only has to tell different contents apart.
#include <cstdint>
#include <string_view>

namespace ezpz {

class ContentHash {
 public:
  void add(std::string_view bytes) {
    for (unsigned char c : bytes) add_byte(c);
  }
  // A separator byte, so that ("ab", "c") and ("a", "bc") hash differently.
  void add_separator() { add_byte(0); }
  std::uint64_t value() const { return value_; }

 private:
  void add_byte(unsigned char c) { value_ = (value_ ^ c) * 1099511628211ull; }
  std::uint64_t value_ = 14695981039346656037ull;
};

}  // namespace ezpz
