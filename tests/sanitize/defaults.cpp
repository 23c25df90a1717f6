// Linked into every program of the sanitizer build (EZPZ_SANITIZE, run by
// scripts/sanitize). The options are compiled in rather than read from
// ASAN_OPTIONS and friends alone because the CLI tests run ezpz under `env -i`
// (tests/cli/lib.sh clean_env), which would drop them. The environment still
// adds to them.
//
// abort_on_error: a report ends the process with SIGABRT, an exit status no
// test expects, so a report can never pass for an expected failure exit (the
// sanitizers' own default, 1, is ezpz's ExitCode::failure).
//
// log_path: ASan and LeakSanitizer reports go to files, EZPZ_SANITIZE_REPORTS/
// asan.PID (CMake sets the directory, BUILD/sanitizer-reports), instead of
// stderr. scripts/sanitize fails when any is there, so a report counts even
// from a process whose exit status and stderr no test looks at: a helper ezpz
// outlives, a rank, a CLI test that captures stderr to compare it. gcc's
// UBSan runtime (libubsan, separate from libasan) ignores log_path next to
// ASan, so its reports stay on stderr; scripts/sanitize searches the tests'
// output for them.

#ifndef EZPZ_SANITIZE_REPORTS
#error "EZPZ_SANITIZE_REPORTS (the report directory) is set by the top-level CMakeLists"
#endif

extern "C" {

const char* __asan_default_options() {
  // check_initialization_order: static initialisers reading another file's
  // globals before those are constructed.
  return "abort_on_error=1:halt_on_error=1:detect_leaks=1:check_initialization_order=1"
         ":log_path='" EZPZ_SANITIZE_REPORTS "/asan'";
}

const char* __ubsan_default_options() {
  return "abort_on_error=1:halt_on_error=1:print_stacktrace=1";
}

// dlclose does nothing: libraries stay mapped until exit. MPICH's hwloc
// dlopens its PCI plugin, which loads libpciaccess; both are unloaded in
// MPI_Finalize while libpciaccess's globals still point to its device list.
// LeakSanitizer, scanning at exit, no longer sees those globals and reports
// the list (allocated in "<unknown module>") as leaked by any MPI program: a
// bare MPI_Init/MPI_Finalize does it, and so did ezpz-stager in every yeet
// test. A suppression cannot name a module that is gone; keeping it mapped
// removes the false report and leaves a real leak in such a library
// reported, with symbols. ezpz itself never dlcloses anything.
int dlclose(void* /*handle*/) { return 0; }

}  // extern "C"
