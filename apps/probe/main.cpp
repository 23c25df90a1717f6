// ezpz-probe: one rank per node under `ezpz doctor --deep`. Each rank prints
// what its node looks like, then joins a tiny all-reduce over every rank and
// prints that it did. The first line comes before MPI_Init, so a node whose
// peers never arrive (a dead node, a broken fabric) still reports; ezpz doctor
// judges the lines (lib/ezpz/doctor/doctor_deep.cpp) and kills the launch at its
// timeout.
#include <dirent.h>
#include <mpi.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "ezpz/core/json_text.hpp"

namespace {

// The name the launcher placed this rank on, which is how the allocation
// names the node (several "nodes" may share one machine in a simulation):
// Slurm's node name, then MPICH Hydra's, then the kernel's host name.
std::string node_name() {
  for (const char* name : {"SLURMD_NODENAME", "MPIR_CVAR_CH3_INTERFACE_HOSTNAME"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return value;
  }
  char host[HOST_NAME_MAX + 1] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

std::string kernel_host_name() {
  char host[HOST_NAME_MAX + 1] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

// Entries of `dir` named `prefix` and a number (nvidia0, renderD128): one device file per GPU.
int count_entries(const char* dir, std::string_view prefix) {
  DIR* handle = ::opendir(dir);
  if (handle == nullptr) return 0;
  int count = 0;
  while (const dirent* entry = ::readdir(handle)) {
    std::string_view name = entry->d_name;
    if (name.size() > prefix.size() && name.starts_with(prefix) &&
        name.find_first_not_of("0123456789", prefix.size()) == std::string_view::npos) {
      ++count;
    }
  }
  ::closedir(handle);
  return count;
}

// One line, written at once, so that lines of different ranks do not mix.
void print_line(const nlohmann::ordered_json& line) {
  std::string text = ezpz::json_text(line) + "\n";
  for (std::size_t done = 0; done < text.size();) {
    ssize_t n = ::write(STDOUT_FILENO, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

nlohmann::ordered_json node_line(const std::string& host, const std::string& target) {
  nlohmann::ordered_json j = {{"ezpz_probe", "node"},
                              {"host", host},
                              {"hostname", kernel_host_name()},
                              {"nvidia", count_entries("/dev", "nvidia")},
                              {"dri", count_entries("/dev/dri", "renderD")},
                              {"target", target},
                              {"writable", ::access(target.c_str(), W_OK) == 0},
                              {"free_bytes", 0},
                              {"target_error", ""}};
  struct statvfs info {};
  if (::statvfs(target.c_str(), &info) == 0) {
    j["free_bytes"] = static_cast<unsigned long long>(info.f_bavail) * info.f_frsize;
  } else {
    j["target_error"] = target + ": " + std::strerror(errno);
  }
  double load[1] = {0};
  j["load1"] = ::getloadavg(load, 1) == 1 ? load[0] : 0.0;
  j["cores"] = ::sysconf(_SC_NPROCESSORS_ONLN);
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ezpz-probe: one rank per node under `ezpz doctor --deep`", "ezpz-probe"};
  std::string target = "/tmp";
  app.add_option("--target", target, "Directory whose free space to report (yeet's destination)");
  CLI11_PARSE(app, argc, argv);

  const std::string host = node_name();
  print_line(node_line(host, target));

  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, one = 1, sum = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  print_line(
      {{"ezpz_probe", "allreduce"}, {"host", host}, {"rank", rank}, {"size", size}, {"sum", sum}});
  MPI_Finalize();
  return 0;
}
