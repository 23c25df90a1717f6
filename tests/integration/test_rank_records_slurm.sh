#!/usr/bin/env bash
# ezpz-rankenv's record relay (EZPZ_OUTPUT_RECORDS=1) under srun on the real Slurm cluster
# (tests/slurm/cluster.sh, see slurm_common.sh): 4 ranks over 2 nodes each print thousands of
# numbered lines, a third in two write()s, some longer than PIPE_BUF; srun without -u forwards
# whole lines of up to 1024 bytes, so the records (at most 1024 bytes) arrive whole and
# `ezpz-rankenv --decode` gives back every rank's bytes, in order.
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/slurm_common.sh"

source "$(dirname "$0")/rank_records_common.sh"

relay_run "srun relay" env SLURM_CONF="$SLURM_CONF" srun -J "$job_name" -N 2 -n 4
finish
