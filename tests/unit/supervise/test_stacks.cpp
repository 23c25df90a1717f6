// Stacks of hung ranks: the innermost meaningful frame from real faulthandler, gdb and eu-stack
// output (taken from tests/fixtures/python/ddp_hang.py, tests/fixtures/native/hang.c and
// ezpz-smoke --hang-rank, hung), and
// the summary that groups ranks by it.
#include <map>
#include <optional>
#include <string>

#include "ezpz/supervise/stacks.hpp"
#include "tests/catch.hpp"

using ezpz::stacks::Frame;

namespace {

// faulthandler, on SIGQUIT, in a rank waiting in the all_reduce (torch 1.13, Debian 12).
constexpr const char* k_python_all_reduce =
    R"(# rank 0 (pid 19829) on n01: Python stacks (faulthandler)
Current thread 0x00007fef60f6a040 (most recent call first):
  File "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", line 1541 in all_reduce
  File "/tmp/stk/ddp_hang.py", line 20 in main
  File "/tmp/stk/ddp_hang.py", line 25 in <module>
)";

// ... in the rank that sleeps before it, with a second Python thread listed first.
constexpr const char* k_python_straggler = R"(Thread 0x00007f81423ff6c0 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 324 in wait
  File "/usr/lib/python3.11/threading.py", line 622 in wait
  File "/usr/lib/python3.11/threading.py", line 1402 in run
  File "/usr/lib/python3.11/threading.py", line 1038 in _bootstrap_inner
  File "/usr/lib/python3.11/threading.py", line 995 in _bootstrap

Current thread 0x00007f8150bd2040 (most recent call first):
  File "/tmp/stk/ddp_hang.py", line 11 in straggle
  File "/tmp/stk/ddp_hang.py", line 19 in main
  File "/tmp/stk/ddp_hang.py", line 25 in <module>
)";

// torch 2 wraps each collective in c10d_logger.py's wrapper: the collective is the frame.
constexpr const char* k_python_torch2 = R"(Current thread 0x00007f0a (most recent call first):
  File "/opt/torch/distributed/c10d_logger.py", line 83 in wrapper
  File "/opt/torch/distributed/distributed_c10d.py", line 2501 in all_reduce
  File "train.py", line 7 in <module>
)";

// gdb -batch -ex "thread apply all bt" on the same all_reduce rank, no Python hook (abridged:
// the threads and frames are gdb's, fewer of them).
constexpr const char* k_gdb_python = R"([New LWP 19832]
[Thread debugging using libthread_db enabled]
Using host libthread_db library "/lib/x86_64-linux-gnu/libthread_db.so.1".
__futex_abstimed_wait_common64 (private=0, cancel=true, abstime=0x0, op=393, expected=0, futex_word=0x2932a588) at ./nptl/futex-internal.c:57

Thread 7 (Thread 0x7fef320326c0 (LWP 19958) "python3"):
#0  __futex_abstimed_wait_common64 (private=0, cancel=true, abstime=0x0, op=393, expected=0, futex_word=0x2a384a68) at ./nptl/futex-internal.c:57
#4  ___pthread_cond_wait (cond=0x2a384a40, mutex=0x2a384a18) at ./nptl/pthread_cond_wait.c:618
#5  0x00007fef5ca6cac1 in c10d::ProcessGroupGloo::runLoop(int) () from /lib/x86_64-linux-gnu/libtorch_cpu.so.1.13
#6  0x00007fef57ed44a3 in ?? () from /lib/x86_64-linux-gnu/libstdc++.so.6

Thread 1 (Thread 0x7fef60f6a040 (LWP 19829) "python3"):
#0  __futex_abstimed_wait_common64 (private=0, cancel=true, abstime=0x0, op=393, expected=0, futex_word=0x2932a588) at ./nptl/futex-internal.c:57
#3  0x00007fef60ff35d8 in __pthread_cond_wait_common (abstime=0x0, clockid=0, mutex=0x2932a538, cond=0x2932a560) at ./nptl/pthread_cond_wait.c:503
#4  ___pthread_cond_wait (cond=0x2932a560, mutex=0x2932a538) at ./nptl/pthread_cond_wait.c:618
#5  0x00007fef5cac2843 in c10d::Work::wait(std::chrono::duration<long, std::ratio<1l, 1000l> >) () from /lib/x86_64-linux-gnu/libtorch_cpu.so.1.13
#6  0x00007fef603a9b4e in ?? () from /lib/x86_64-linux-gnu/libtorch_python.so.1.13
#8  0x0000000000547b96 in ?? ()
#9  0x0000000000517fc3 in _PyObject_MakeTpCall ()
[Inferior 1 (process 19829) detached]
)";

// gdb on tests/fixtures/native/hang.c (built -g), the waiting rank and the sleeping one.
constexpr const char* k_gdb_native_waiting = R"(Thread 1 (Thread 0x7f48b721d740 (LWP 23495) "hang"):
#0  0x00007f48b72f3dd0 in __libc_pause () at ../sysdeps/unix/sysv/linux/pause.c:29
#1  0x000055c5333821aa in wait_for_peers () at /work/wtS/tests/fixtures/native/hang.c:11
#2  0x000055c533382257 in main () at /work/wtS/tests/fixtures/native/hang.c:20
)";
constexpr const char* k_gdb_native_sleeping =
    R"(Thread 1 (Thread 0x7fb5c79bc740 (LWP 23496) "hang"):
#0  __GI___clock_nanosleep (clock_id=clock_id@entry=0, flags=flags@entry=0, req=req@entry=0x7ffe5ac3dc90, rem=rem@entry=0x7ffe5ac3dc90) at ../sysdeps/unix/sysv/linux/clock_nanosleep.c:71
#1  0x00007fb5c7a92e53 in __GI___nanosleep (req=req@entry=0x7ffe5ac3dc90, rem=rem@entry=0x7ffe5ac3dc90) at ../sysdeps/unix/sysv/linux/nanosleep.c:25
#2  0x00007fb5c7a92d8a in __sleep (seconds=0) at ../sysdeps/posix/sleep.c:55
#3  0x000055b824ca319e in straggle (seconds=600) at /work/wtS/tests/fixtures/native/hang.c:8
#4  0x000055b824ca3252 in main () at /work/wtS/tests/fixtures/native/hang.c:19
)";
// ... and without libc's debug symbols (libc6-dbg): libc's frames name libc.so.6 instead.
constexpr const char* k_gdb_no_libc_symbols =
    R"(Thread 1 (Thread 0x7f48b721d740 (LWP 23495) "hang"):
#0  0x00007f48b72f3dd0 in pause () from /lib/x86_64-linux-gnu/libc.so.6
#1  0x000055c5333821aa in wait_for_peers () at hang.c:11
)";

// gdb on ezpz-smoke --hang-rank 1 (built through ccache, whose base_dir makes the sources
// relative), the sleeping rank and the one waiting in the gradient all-reduce (abridged).
constexpr const char* k_gdb_smoke_straggler =
    R"(Thread 1 (Thread 0x7fc1b69ebdc0 (LWP 3887) "ezpz-smoke"):
#0  0x00007fc1d02ed545 in __GI___clock_nanosleep (clock_id=clock_id@entry=0, flags=flags@entry=0, req=req@entry=0x7ffef146a500, rem=rem@entry=0x7ffef146a500) at ../sysdeps/unix/sysv/linux/clock_nanosleep.c:48
#1  0x00007fc1d02f1e53 in __GI___nanosleep (req=req@entry=0x7ffef146a500, rem=rem@entry=0x7ffef146a500) at ../sysdeps/unix/sysv/linux/nanosleep.c:25
#2  0x00007fc1d02f1d8a in __sleep (seconds=0) at ../sysdeps/posix/sleep.c:55
#3  0x000055befab03522 in ezpz::smoke::(anonymous namespace)::Trainer::straggle () at ../../../apps/smoke/trainer.cpp:187
#4  0x000055befab07c66 in ezpz::smoke::(anonymous namespace)::Trainer::step (this=this@entry=0x7ffef146a980, index=index@entry=1) at ../../../apps/smoke/trainer.cpp:215
#8  0x000055befaadc605 in main (argc=8, argv=0x7ffef146bbb8) at ../../../apps/smoke/main.cpp:79
)";
constexpr const char* k_gdb_smoke_waiting =
    R"(Thread 1 (Thread 0x7fd0a2cfcdc0 (LWP 3888) "ezpz-smoke"):
#0  __futex_abstimed_wait_common64 (private=0, cancel=true, abstime=0x0, op=393, expected=0, futex_word=0x561a55f06968) at ./nptl/futex-internal.c:57
#4  ___pthread_cond_wait (cond=0x561a55f06940, mutex=0x561a55f06918) at ./nptl/pthread_cond_wait.c:618
#5  0x00007fd0c0cc2843 in c10d::Work::wait(std::chrono::duration<long, std::ratio<1l, 1000l> >) () from /lib/x86_64-linux-gnu/libtorch_cpu.so.1.13
#6  0x0000561a4627bcd6 in ezpz::dist::GradSync::end_step (this=this@entry=0x7ffe1433bbf0) at ../../lib/ezpz/runtime/grad_sync.cpp:197
)";

// ... the straggler of a Release build, without debug information: gdb names neither a source
// nor a library for the program's own frames.
constexpr const char* k_gdb_smoke_no_debug =
    R"(Thread 1 (Thread 0x7f3b1d2fbdc0 (LWP 31234) "ezpz-smoke"):
#0  0x00007f3b2edd4545 in __GI___clock_nanosleep (clock_id=clock_id@entry=0, flags=flags@entry=0, req=0x7ffd3a0a4f40, rem=0x7ffd3a0a4f40) at ../sysdeps/unix/sysv/linux/clock_nanosleep.c:48
#1  0x00007f3b2edd8d8a in __sleep (seconds=0) at ../sysdeps/posix/sleep.c:55
#2  0x000055d0c1a3f522 in ezpz::smoke::(anonymous namespace)::Trainer::straggle() ()
#3  0x000055d0c1a43c66 in ezpz::smoke::(anonymous namespace)::Trainer::step(int) ()
)";

// eu-stack -i -s -m on the same two ranks (abridged): DWARF's short names, a source line under
// each frame of a module with debug information.
constexpr const char* k_eu_smoke_straggler = R"(PID 4646 - process
TID 4646:
#0  0x00007f09900ed545 __GI___clock_nanosleep - /usr/lib/x86_64-linux-gnu/libc.so.6
    ../sysdeps/unix/sysv/linux/clock_nanosleep.c:48:7
#2  0x00007f09900f1d8a __sleep - /usr/lib/x86_64-linux-gnu/libc.so.6
    ../sysdeps/posix/sleep.c:55:11
#3  0x000055b726400522 straggle - /work/wtA/build/ezpz-smoke
    ../../../apps/smoke/trainer.cpp:187:21
#4  0x000055b726404c66 step - /work/wtA/build/ezpz-smoke
    ../../../apps/smoke/trainer.cpp:215:54
TID 4650:
#0  0x00007f09900a3f16 __futex_abstimed_wait_common64 - /usr/lib/x86_64-linux-gnu/libc.so.6
    ./nptl/futex-internal.c:57:12
#4  0x00007f0994a6cac1 c10d::ProcessGroupGloo::runLoop(int) - /usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13.0
)";
// ... the waiting rank, its Gloo thread moved before its main thread (whose TID is the PID).
constexpr const char* k_eu_smoke_waiting = R"(PID 4645 - process
TID 4649:
#0  0x00007fe9d90a3f16 __futex_abstimed_wait_common64 - /usr/lib/x86_64-linux-gnu/libc.so.6
    ./nptl/futex-internal.c:57:12
#4  0x00007fe9dda6cac1 c10d::ProcessGroupGloo::runLoop(int) - /usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13.0
TID 4645:
#3  0x00007fe9d90a65d8 ___pthread_cond_wait - /usr/lib/x86_64-linux-gnu/libc.so.6
    ./nptl/pthread_cond_wait.c:618:10
#4  0x00007fe9ddac2843 c10d::Work::wait(std::chrono::duration<long, std::ratio<1l, 1000l> >) - /usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13.0
#5  0x0000557e533abcd6 ezpz::dist::GradSync::end_step() - /work/wtA/build/ezpz-smoke
    ../../lib/ezpz/runtime/grad_sync.cpp:197:22
)";
// ... on python3 sleeping: frames without a symbol name only their module.
constexpr const char* k_eu_unnamed = R"(PID 2839 - process
TID 2839:
#0  0x00007f1ed4df1503 __GI___clock_nanosleep - /usr/lib/x86_64-linux-gnu/libc.so.6
    ../sysdeps/unix/sysv/linux/clock_nanosleep.c:71:10
#1  0x00000000005d64b4 - /usr/bin/python3.11
#3  0x000000000053acbc PyObject_Vectorcall - /usr/bin/python3.11
)";

}  // namespace

TEST_CASE("stacks: the innermost meaningful frame of real stacks") {
  struct Row {
    const char* name;
    std::string text;
    std::optional<Frame> expected;
  };
  const Row rows[] = {
      {"python: in the all_reduce", k_python_all_reduce,
       Frame{.function = "all_reduce", .where = "distributed_c10d.py:1541"}},
      {"python: the main thread, not the first listed", k_python_straggler,
       Frame{.function = "straggle", .where = "ddp_hang.py:11"}},
      {"python: torch 2's wrapper skipped", k_python_torch2,
       Frame{.function = "all_reduce", .where = "distributed_c10d.py:2501"}},
      {"gdb: Thread 1, past libc's frames, without its argument list", k_gdb_python,
       Frame{.function = "c10d::Work::wait", .where = "libtorch_cpu.so.1.13"}},
      {"gdb: a -g program waiting", k_gdb_native_waiting,
       Frame{.function = "wait_for_peers", .where = "hang.c:11"}},
      {"gdb: a -g program sleeping", k_gdb_native_sleeping,
       Frame{.function = "straggle", .where = "hang.c:8"}},
      {"gdb: libc without symbols", k_gdb_no_libc_symbols,
       Frame{.function = "wait_for_peers", .where = "hang.c:11"}},
      {"gdb: relative sources of the program's own, an anonymous namespace kept",
       k_gdb_smoke_straggler,
       Frame{.function = "ezpz::smoke::(anonymous namespace)::Trainer::straggle",
             .where = "trainer.cpp:187"}},
      {"gdb: the program's own frame without debug information: no place to give",
       k_gdb_smoke_no_debug,
       Frame{.function = "ezpz::smoke::(anonymous namespace)::Trainer::straggle", .where = ""}},
      {"gdb: libtorch's wait", k_gdb_smoke_waiting,
       Frame{.function = "c10d::Work::wait", .where = "libtorch_cpu.so.1.13"}},
      {"eu-stack: past libc, the line without its column", k_eu_smoke_straggler,
       Frame{.function = "straggle", .where = "trainer.cpp:187"}},
      {"eu-stack: the thread whose TID is the PID, a module without debug information",
       k_eu_smoke_waiting,
       Frame{.function = "c10d::Work::wait", .where = "libtorch_cpu.so.1.13.0"}},
      {"eu-stack: frames without a name skipped", k_eu_unnamed,
       Frame{.function = "PyObject_Vectorcall", .where = "python3.11"}},
      {"python wins over native in one text",
       std::string(k_gdb_native_waiting) + k_python_all_reduce,
       Frame{.function = "all_reduce", .where = "distributed_c10d.py:1541"}},
      {"nothing recognisable", "# rank 3 (pid 7) on n01: gone before its stack was taken\n",
       std::nullopt},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    CHECK(ezpz::stacks::innermost(row.text) == row.expected);
  }
}

TEST_CASE("stacks: the summary groups ranks by frame, the largest group first") {
  const Frame reduce{.function = "all_reduce", .where = "distributed_c10d.py:1541"};
  const Frame straggle{.function = "straggle", .where = "ddp_hang.py:11"};
  std::map<int, std::optional<Frame>> frames;
  for (int rank = 0; rank < 16; ++rank) frames[rank] = reduce;
  frames[7] = straggle;
  frames[9] = std::nullopt;
  CHECK(ezpz::stacks::summary(frames) ==
        std::vector<std::string>{"ranks 0-6,8,10-15: in all_reduce (distributed_c10d.py:1541)",
                                 "rank 7: in straggle (ddp_hang.py:11)", "rank 9: no stack"});
  CHECK(ezpz::stacks::summary({}).empty());
  frames = {{2, Frame{.function = "straggle", .where = ""}}, {3, std::nullopt}};
  CHECK(ezpz::stacks::summary(frames) ==
        std::vector<std::string>{"rank 2: in straggle", "rank 3: no stack"});
}

TEST_CASE("stacks: rank ranges") {
  CHECK(ezpz::stacks::rank_ranges({}) == "");
  CHECK(ezpz::stacks::rank_ranges({3}) == "3");
  CHECK(ezpz::stacks::rank_ranges({5, 0, 1, 2, 7, 8}) == "0-2,5,7-8");
}

TEST_CASE("stacks: tagged lines from interleaved nodes sort back into each rank's text") {
  const std::string a = ezpz::stacks::tag_lines(2, "one\ntwo\n");
  const std::string b = ezpz::stacks::tag_lines(10, "ten");
  CHECK(a == "ezpz-stack 2\tone\nezpz-stack 2\ttwo\n");
  const std::string mixed = "ezpz-stack 2\tone\n" + b +
                            "noise from a launcher\nezpz-stack x\tbad\n" + "ezpz-stack 2\ttwo\n";
  CHECK(ezpz::stacks::untag(mixed) == std::map<int, std::string>{{2, "one\ntwo\n"}, {10, "ten\n"}});
}
