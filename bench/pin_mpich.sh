# Sourced by bench/output_record and bench/yeet: `pin_mpich DIR` puts MPICH's Hydra first on
# PATH as `mpiexec` (a link in DIR), so what runs is never whichever MPI Debian's
# alternatives chose when Open MPI is installed too. Hydra starts the hydra_pmi_proxy
# beside the mpiexec it was run as, so that is linked too. Without mpiexec.hydra (not
# Debian), PATH is left as it is.
pin_mpich() {
  local hydra
  hydra=$(command -v mpiexec.hydra) || return 0
  mkdir -p "$1"
  ln -sf "$hydra" "$1/mpiexec"
  ln -sf "$(dirname "$hydra")/hydra_pmi_proxy" "$1/hydra_pmi_proxy"
  PATH="$1:$PATH"
}
