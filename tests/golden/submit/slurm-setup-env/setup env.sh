module load frameworks
