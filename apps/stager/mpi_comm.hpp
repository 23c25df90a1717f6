#pragma once
// The few MPI operations the stager needs, each waiting politely: MPICH's
// blocking calls spin a core, and on a node every core is needed to extract.
#include <functional>
#include <string>
#include <vector>

#include <mpi.h>

namespace ezpz::stager {

class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  int rank_ = 0;
  int size_ = 1;
};

// Completes `request`, testing it with short sleeps instead of spinning.
void wait(MPI_Request& request);

void broadcast(void* data, int bytes, MPI_Comm comm);  // from rank 0 of `comm`
std::string broadcast_string(std::string text, MPI_Comm comm);

// Every rank's `text` at rank 0 of `comm` (elsewhere: empty).
// `arrived(rank, report)` is called on rank 0 as each rank's report comes in
// (its own first), for progress.
using Arrived = std::function<void(int rank, const std::string& report)>;
std::vector<std::string> collect(const std::string& text, MPI_Comm comm,
                                 const Arrived& arrived = {});

}  // namespace ezpz::stager
