#!/usr/bin/env bash
# The labelled console and per-rank records in a simulated two-node PBS job (test_pbs_simulated
# explains the simulation): 4 ranks over n01 and n02 print thousands of lines at once, a third
# in two write()s, some longer than PIPE_BUF; every console line is whole, each rank's lines are
# what it wrote, in order, and `ezpz runs show --rank K` prints exactly that.
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/console_common.sh"

require_mpiexec
start_fake_pbs_job
launch_env() { clean_env env -u MASTER_PORT -u EZPZ_MACHINE "${pbs_env[@]}" "$@"; }
check_labelled 1500 -n 4 --ppn 2
finish
