#pragma once
// One host's CPU binding in no launcher's dialect: the profile (or the user) says which cores
// each local rank gets; binding.cpp spells it in the dialect of the launcher that runs it.
#include <string>
#include <vector>

namespace ezpz {

struct CoreBinding {
  enum class Kind {
    none,      // no binding flag
    depth,     // `depth` consecutive cores per rank, from core 0 (PALS --cpu-bind=depth)
    cores,     // local rank i gets cores[i] (PALS --cpu-bind=list:...)
    verbatim,  // the user's --cpu-bind, passed as written in the launcher's own dialect
  };
  Kind kind = Kind::none;
  int depth = 0;                        // depth: cores per rank
  std::vector<std::vector<int>> cores;  // depth and cores: each local rank's cores, in order
  std::string verbatim;                 // verbatim: the user's value
  bool operator==(const CoreBinding&) const = default;
};

}  // namespace ezpz
