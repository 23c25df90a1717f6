#!/bin/bash
# An example Slurm job (Frontier, Perlmutter, ...): every GPU of every node runs one rank.
#SBATCH -N 2
#SBATCH -t 00:30:00
#SBATCH -p debug
#SBATCH -A YOUR_PROJECT
#SBATCH -J ezpz-example
ezpz launch -- python3 train.py
