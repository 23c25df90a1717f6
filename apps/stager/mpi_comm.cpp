#include "mpi_comm.hpp"

#include <chrono>
#include <climits>
#include <thread>

#include <sched.h>

namespace ezpz::stager {
namespace {

constexpr int k_report_tag = 17;

// A few yields keep latency low for quick operations; then sleep, so a rank
// waiting for data leaves its core to the extractor.
void pause(int attempt) {
  if (attempt < 32) {
    sched_yield();
  } else {
    // Long waits (a slow node, --bwlimit) back off to 1 ms: still prompt, and
    // idle ranks cost no CPU.
    std::this_thread::sleep_for(std::chrono::microseconds(attempt < 256 ? 20 : attempt < 2048 ? 200 : 1000));
  }
}

}  // namespace

MpiSession::MpiSession(int& argc, char**& argv) {
  int provided = 0;
  // One thread calls MPI; the reader and the extractor never do.
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() { MPI_Finalize(); }

void wait(MPI_Request& request) {
  int done = 0;
  for (int attempt = 0;; ++attempt) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    pause(attempt);
  }
}

void broadcast(void* data, int bytes, MPI_Comm comm) {
  MPI_Request request;
  MPI_Ibcast(data, bytes, MPI_BYTE, 0, comm, &request);
  wait(request);
}

std::string broadcast_string(std::string text, MPI_Comm comm) {
  unsigned long long size = text.size();
  broadcast(&size, sizeof size, comm);
  text.resize(size);
  broadcast(text.data(), static_cast<int>(size), comm);
  return text;
}

std::vector<std::string> collect(const std::string& text, MPI_Comm comm, const Arrived& arrived) {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (rank != 0) {
    MPI_Request request;
    MPI_Isend(text.data(), static_cast<int>(text.size()), MPI_BYTE, 0, k_report_tag, comm, &request);
    wait(request);
    return {};
  }
  std::vector<std::string> reports(static_cast<std::size_t>(size));
  reports[0] = text;
  int received = 1;
  if (arrived) arrived(0, text);
  for (int attempt = 0; received < size; ++attempt) {
    int ready = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, k_report_tag, comm, &ready, &status);
    if (!ready) {
      pause(attempt);
      continue;
    }
    int bytes = 0;
    MPI_Get_count(&status, MPI_BYTE, &bytes);
    std::string& report = reports[static_cast<std::size_t>(status.MPI_SOURCE)];
    report.resize(static_cast<std::size_t>(bytes));
    MPI_Recv(report.data(), bytes, MPI_BYTE, status.MPI_SOURCE, k_report_tag, comm, MPI_STATUS_IGNORE);
    ++received;
    attempt = 0;
    if (arrived) arrived(status.MPI_SOURCE, report);
  }
  return reports;
}

}  // namespace ezpz::stager
