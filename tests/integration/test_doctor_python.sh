#!/usr/bin/env bash
# `ezpz doctor` judges the python3 the ranks would run, with real Pythons:
# Debian's /usr/bin/python3 with python3-torch (torch imports: ok, its version
# and backends), a venv made from it without torch (the ModuleNotFoundError
# line a launch would die of), a venv that sees the system's torch, a venv
# named by VIRTUAL_ENV but not first on PATH, no python3 at all, a fake mpi4py
# built against Open MPI under the hydra launcher, and module systems with and
# without a MODULEPATH (a real exported bash function among them).
#
# Needs only /usr/bin/python3 (libpython3.11-stdlib has venv); the parts that
# need torch say SKIP without python3-torch.
source "$(dirname "$0")/common.sh"
announce_passes
if ! command -v jq >/dev/null; then
  echo "skipped: jq is not installed (scripts/setup installs it)"
  exit 77
fi
if [ ! -x /usr/bin/python3 ]; then
  echo "skipped: /usr/bin/python3 is not installed"
  exit 77
fi
launch_env() { clean_env "$@"; }
check_of() { jq -r --arg name "$1" ".checks[] | select(.name == \$name) | .$2" <<<"$out"; }
# What a Python says of itself, to compare doctor's line with.
python_version() { "$1" -c 'import sys; print("%d.%d.%d" % tuple(sys.version_info[:3]))'; }
torch_line() {
  "$1" -c 'import torch, torch.distributed as d
names = [n for n in ("gloo", "nccl", "mpi", "ucc", "xccl") if getattr(d, "is_%s_available" % n, bool)()]
print("torch %s; backends %s" % (torch.__version__, ", ".join(names) or "none"))'
}
version=$(python_version /usr/bin/python3)
not_found="ModuleNotFoundError: No module named 'torch'"
install_remedy="pip install torch into this Python, or activate the environment that has torch before ezpz launch"

# --- A venv without torch: what `ezpz launch -- python3 ddp.py` dies of ------------------
venv="$scratch/venv"
/usr/bin/python3 -m venv --without-pip "$venv" || fail "python3 -m venv --without-pip $venv"
run_ezpz venv-no-torch "VIRTUAL_ENV=$venv" "PATH=$venv/bin:/usr/bin:/bin" doctor --json
expect_eq "venv without torch: a warning, exit 0" 0 "$rc"
expect_eq "venv without torch: the failing line" \
  "warn $venv/bin/python3: Python $version; cannot import torch: $not_found" \
  "$(check_of torch status) $(check_of torch message)"
expect_eq "venv without torch: remedy" "$install_remedy" "$(check_of torch remedy)"
expect_eq "venv without torch: what the ranks would see" "$not_found" \
  "$(clean_env "PATH=$venv/bin:/usr/bin:/bin" python3 -c 'import torch' 2>&1 | tail -1)"
expect_eq "venv without torch: context" "- $venv" \
  "$(jq -r '"\(.context.torch) \(.context.python)"' <<<"$out")"
run_ezpz venv-no-torch-text "VIRTUAL_ENV=$venv" "PATH=$venv/bin:/usr/bin:/bin" doctor
expect_eq "venv without torch: text line and remedy" \
  "  WARN   torch       $venv/bin/python3: Python $version; cannot import torch: $not_found
                     -> $install_remedy" "$(grep -A1 '^  WARN   torch' <<<"$out")"

# --- VIRTUAL_ENV set, but another python3 first on PATH ------------------------------------
run_ezpz venv-not-on-path "VIRTUAL_ENV=$venv" "PATH=/usr/bin:/bin" doctor --json
expect_match "VIRTUAL_ENV not first on PATH: named" \
  "^warn /usr/bin/python3: Python $version[^;]*(; [^;]*)*; VIRTUAL_ENV is $venv, but the ranks run this python3, first on PATH\$" \
  "$(check_of torch status) $(check_of torch message)"
expect_match "VIRTUAL_ENV not first on PATH: remedy" \
  "(^|; )put $venv/bin first on PATH \\(source $venv/bin/activate\\)\$" "$(check_of torch remedy)"

# --- No python3 at all ---------------------------------------------------------------------
empty_bin="$scratch/empty-bin"
mkdir -p "$empty_bin"
run_ezpz no-python "PATH=$empty_bin" doctor --json
expect_eq "no python3: one clear line" "warn no python3 on PATH: ranks that run python3 will not start" \
  "$(check_of torch status) $(check_of torch message)"
expect_eq "no python3: remedy" \
  "activate the environment that has torch (or load its module) before ezpz launch" \
  "$(check_of torch remedy)"

# --- mpi4py built against Open MPI, under the hydra launcher --------------------------------
# A stand-in mpi4py: its MPI module refuses to load when MPI_Init would run at import.
pylib="$scratch/pylib"
mkdir -p "$pylib/mpi4py"
printf '__version__ = "3.1.4"\nclass rc:\n    initialize = True\n    finalize = True\n' \
  >"$pylib/mpi4py/__init__.py"
cat >"$pylib/mpi4py/MPI.py" <<'EOF'
import mpi4py
if mpi4py.rc.initialize:
    raise RuntimeError("MPI_Init at import")
def Get_library_version():
    return "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022\n"
EOF
mpi_env=("VIRTUAL_ENV=$venv" "PATH=$venv/bin:/usr/bin:/bin" "PYTHONPATH=$pylib")
run_ezpz mpi4py-openmpi "${mpi_env[@]}" doctor --json
expect_eq "mpi4py on Open MPI under hydra: named" \
  "warn $venv/bin/python3: Python $version; mpi4py 3.1.4 (Open MPI v4.1.4); cannot import torch: $not_found; mpi4py uses Open MPI, but the hydra launcher does not start Open MPI programs (each rank would be alone)" \
  "$(check_of torch status) $(check_of torch message)"
expect_eq "mpi4py on Open MPI under hydra: remedies" \
  "$install_remedy; pass --launcher openmpi, or rebuild mpi4py against the launcher's MPI (pip install --no-binary mpi4py mpi4py)" \
  "$(check_of torch remedy)"
run_ezpz mpi4py-openmpi-launcher "${mpi_env[@]}" doctor --launcher openmpi --json
expect_eq "mpi4py on Open MPI under --launcher openmpi: only torch is missing" \
  "warn $venv/bin/python3: Python $version; mpi4py 3.1.4 (Open MPI v4.1.4); cannot import torch: $not_found" \
  "$(check_of torch status) $(check_of torch message)"

# --- Module systems ------------------------------------------------------------------------
trap_words="MODULEPATH is empty: module load finds nothing, and the job runs whatever python3 is left on PATH"
init_remedy="start the job script with #!/bin/bash -l, or source the module system's init script (\$MODULESHOME/init/bash), before module load"
# A `module` function exported by a real bash, as a login shell's init leaves it.
module_doctor() {
  local name=$1; shift
  clean_env "$@" bash -c 'module() { echo "module $*"; }; export -f module; exec "$0" doctor --json' \
    "$EZPZ_BIN" >"$scratch/$name.out" 2>"$scratch/$name.err"
  rc=$?
  out=$(cat "$scratch/$name.out")
}
module_doctor module-function MODULEPATH=
expect_eq "exported module function, empty MODULEPATH: warned" \
  "0 warn a module shell function (BASH_FUNC_module%% is set), but $trap_words" \
  "$rc $(check_of modules status) $(check_of modules message)"
expect_eq "exported module function: remedy" "$init_remedy" "$(check_of modules remedy)"
run_ezpz lmod-empty LMOD_CMD=/usr/share/lmod/lmod/libexec/lmod MODULESHOME=/usr/share/lmod/lmod doctor --json
expect_eq "Lmod without MODULEPATH: warned" "warn Lmod (LMOD_CMD is set), but $trap_words" \
  "$(check_of modules status) $(check_of modules message)"
module_doctor module-sane "MODULESHOME=$scratch/modules" "MODULEPATH=$scratch/mf1:$scratch/mf2" \
  LOADEDMODULES=gcc/12:openmpi/4.1
expect_eq "modules with a MODULEPATH: ok" \
  "ok Environment Modules (MODULESHOME is set); MODULEPATH has 2 directories; loaded: gcc/12, openmpi/4.1" \
  "$(check_of modules status) $(check_of modules message)"
run_ezpz no-modules doctor --json
expect_eq "no module system: ok" "ok no module system (no module function, LMOD_CMD or MODULESHOME)" \
  "$(check_of modules status) $(check_of modules message)"

# --- Debian's python3-torch ------------------------------------------------------------------
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "SKIP: /usr/bin/python3 has no torch (apt-get install python3-torch)"
  finish
  exit
fi
debian_torch=$(torch_line /usr/bin/python3)
run_ezpz debian "PATH=/usr/bin:/bin" doctor --json
expect_eq "Debian's python3 with torch: ok" "ok /usr/bin/python3: Python $version, $debian_torch" \
  "$(check_of torch status) $(check_of torch message)"
expect_eq "Debian's python3 with torch: context" \
  "$(/usr/bin/python3 -c 'import torch; print(torch.__version__)')" "$(jq -r .context.torch <<<"$out")"
system_venv="$scratch/venv-system"
/usr/bin/python3 -m venv --without-pip --system-site-packages "$system_venv" ||
  fail "python3 -m venv --system-site-packages $system_venv"
run_ezpz venv-system "VIRTUAL_ENV=$system_venv" "PATH=$system_venv/bin:/usr/bin:/bin" doctor --json
expect_eq "venv with the system's torch: ok, its own python3" \
  "ok $system_venv/bin/python3: Python $version, $debian_torch" \
  "$(check_of torch status) $(check_of torch message)"
finish
