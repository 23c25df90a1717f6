#!/bin/bash
# An example PBS job (Aurora, Polaris, ...): every GPU of every node runs one rank.
#PBS -l select=2
#PBS -l walltime=00:30:00
#PBS -l filesystems=home:flare
#PBS -q debug
#PBS -A YOUR_PROJECT
#PBS -N ezpz-example
cd "${PBS_O_WORKDIR}"
ezpz launch -- python3 train.py
