// The launcher's own processes and a lost peer's address, against the real system: a child
// SIGKILLed and left unreaped is found as its parent's killed part (what the executor watches
// in Hydra's hydra_pmi_proxy), and an address is matched to a host through the real resolver.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "ezpz/sys/addresses.hpp"
#include "ezpz/sys/processes.hpp"
#include "tests/catch.hpp"

using namespace std::chrono_literals;

namespace {

// A child running `sleep 30` (comm "sleep"), or `true` when `quick`.
pid_t start_child(bool quick) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (quick) ::execlp("true", "true", nullptr);
    ::execlp("sleep", "sleep", "30", nullptr);
    ::_exit(127);
  }
  return pid;
}

// Waits until `pid` is a zombie, without reaping it.
void until_zombie(pid_t pid) {
  siginfo_t info{};
  for (int i = 0; i < 200; ++i) {
    info.si_pid = 0;
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == pid) {
      return;
    }
    std::this_thread::sleep_for(10ms);
  }
  FAIL("the child never exited");
}

}  // namespace

TEST_CASE("a launcher's part killed by a signal is found while unreaped", "[sys][processes]") {
  const pid_t quick = start_child(true);
  until_zombie(quick);
  CHECK_FALSE(ezpz::sys::killed_part(::getpid(), {"true", "sleep"}));  // it exited: no death
  const pid_t child = start_child(false);
  std::this_thread::sleep_for(50ms);                           // exec'd: its comm is "sleep"
  CHECK_FALSE(ezpz::sys::killed_part(::getpid(), {"sleep"}));  // still running
  ::kill(child, SIGKILL);
  until_zombie(child);
  const auto part = ezpz::sys::killed_part(::getpid(), {"sleep"});
  REQUIRE(part);
  CHECK(part->pid == child);
  CHECK(part->name == "sleep");
  CHECK(part->signal == SIGKILL);
  CHECK_FALSE(ezpz::sys::killed_part(::getpid(), {"hydra_pmi_proxy"}));  // not one of the parts
  ::waitpid(child, nullptr, 0);
  ::waitpid(quick, nullptr, 0);
}

TEST_CASE("an address is one of the job's hosts only through the resolver", "[sys][addresses]") {
  using ezpz::sys::hosts_at_addresses;
  CHECK(hosts_at_addresses({"127.0.0.1"}, {"localhost"}) ==
        ezpz::AddressHosts{{"127.0.0.1", "localhost"}});
  CHECK(hosts_at_addresses({"127.0.0.1"}, {"nosuchhost.invalid"}).empty());
  CHECK(hosts_at_addresses({"127.0.0.1"}, {}).empty());  // hosts not known: none
  CHECK(hosts_at_addresses({"not-an-address"}, {"localhost"}).empty());
}
