#pragma once
// One host's CPU binding in no launcher's dialect: the profile (or the user) says which cores
// each local rank gets; binding.cpp spells it in the dialect of the launcher that runs it.
#include <string>
#include <vector>

#include "ezpz/launchers/launcher_table.hpp"
#include "ezpz/profile/machine_profile.hpp"

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
  std::vector<std::vector<int>> cores{};  // depth and cores: each local rank's cores, in order
  std::string verbatim{};                 // verbatim: the user's value
  bool operator==(const CoreBinding&) const = default;
};

// The binding a profile implies for `ppn` ranks per host, each rank taking `slots_per_rank`
// consecutive slots (--gpus-per-rank K: the binding of ppn x K ranks, K blocks to a rank).
// Depth d: rank i gets cores [i*d, (i+1)*d). Style list splits each socket's cores (minus
// reserved ones) into equal blocks, ranks spread evenly over sockets: Aurora at 12 ranks gives
// 1-8, 9-16, ..., 93-100; at 6 ranks 1-17, 18-34, 35-51, 53-69, 70-86, 87-103. A socket with
// more ranks than cores gives its ranks none (they are left out of the list).
CoreBinding profile_core_binding(const CpuBind& bind, int ppn, int slots_per_rank = 1);

// A binding in a launcher's words, after its host flags.
struct BindingWords {
  std::vector<std::string> words{};
  bool places_ranks = false;  // the words put ppn ranks on each host: leave out the ppn flag
  std::string dropped_why{};  // a profile's binding the launcher cannot apply, and why
};

// The binding in the words of launcher `row`. A launcher that binds nothing (torchrun) drops a
// profile's binding, saying why. Throws Error, in one sentence naming the launcher, for a
// binding it cannot express and for a user's binding given to a launcher that takes none.
BindingWords binding_words(const LauncherRow& row, const CoreBinding& binding, int ppn);

}  // namespace ezpz
