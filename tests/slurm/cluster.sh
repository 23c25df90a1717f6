#!/usr/bin/env bash
# A real 4-node Slurm cluster on this one machine, for the integration tests:
#
#   tests/slurm/cluster.sh up       start it (idempotent); prints `export SLURM_CONF=...`
#   tests/slurm/cluster.sh down     stop what `up` started, remove its /etc/hosts line
#   tests/slurm/cluster.sh status   sinfo
#
# munge authenticates (the system munged when one answers, else one started
# here as user munge), one slurmctld schedules, and one `slurmd -N nXX` per
# node n01..n04 runs the steps. Every daemon listens on loopback on its own
# port; the nodes share this host (NodeHostname) but each has its own spool,
# pid and log file (%n). n01..n04 also resolve to 127.0.0.1 (a marked
# /etc/hosts line), because ranks are given MASTER_ADDR=n01.
#
# Each node has the shape of a 4-GPU node: 8 CPUs (SlurmdParameters=
# config_overrides: slurmd reports the configured CPUs, not the host's 2) and
# GRES gpu:4, whose device files are stand-ins (make_gpu_files), so that
# `srun --gpus-per-task` and `--gpu-bind` set CUDA_VISIBLE_DEVICES and friends
# per task as on a GPU machine. Nothing binds or confines: task/none, no cgroup.
#
# Everything lives in $EZPZ_SLURM_DIR (default /tmp/ezpz-slurm): slurm.conf,
# `env` (source it for SLURM_CONF), logs, state, pid files. /etc/slurm is not
# touched. Needs root (daemons, /etc/hosts); without it, exits 77 (skipped).
set -u

dir=${EZPZ_SLURM_DIR:-/tmp/ezpz-slurm}
port_base=${EZPZ_SLURM_PORT_BASE:-17000}  # slurmctld; slurmd on n0K: base + K
nodes=(n01 n02 n03 n04)
hosts_mark="# ezpz-slurm"
hosts_line="127.0.0.1 ${nodes[*]} $hosts_mark"
up_timeout=${EZPZ_SLURM_UP_TIMEOUT:-60}
cpus_per_node=8
gpus_per_node=4
# task/none binds nothing; task/affinity applies srun's --cpu-bind (tests/integration/test_binding.sh).
task_plugin=${EZPZ_SLURM_TASK_PLUGIN:-task/none}
export SLURM_CONF="$dir/slurm.conf"

say() { printf 'cluster.sh: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

need_root() {
  if [ "$(id -u)" -ne 0 ]; then
    say "skipped: starting slurmctld, slurmd and munged and editing /etc/hosts needs root"
    exit 77
  fi
  local tool
  for tool in slurmctld slurmd munged sinfo scontrol; do
    if ! command -v "$tool" >/dev/null && [ ! -x "/usr/sbin/$tool" ]; then
      say "skipped: $tool is not installed (apt-get install slurm-wlm munge)"
      exit 77
    fi
  done
}
export PATH="$PATH:/usr/sbin:/sbin"

# alive_pidfile FILE: the pid in FILE names a live process.
alive_pidfile() {
  local pid
  [ -s "$1" ] && pid=$(cat "$1" 2>/dev/null) && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

# wait_for SECONDS CMD...: poll CMD every 0.2 s until it succeeds or time runs out.
wait_for() {
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do
    [ "$SECONDS" -ge "$deadline" ] && return 1
    sleep 0.2
  done
}

# Stand-ins for each node's GPUs: slurmd stats a GRES's File= but never opens
# it (no cgroup device constraint), so /dev/null's device numbers under the
# names gpu0..gpuN-1 do; the number in the name is the GPU's index. The nodes
# share them (one host).
make_gpu_files() {
  local i
  mkdir -p "$dir/dev"
  for ((i = 0; i < gpus_per_node; i++)); do
    [ -c "$dir/dev/gpu$i" ] || mknod -m 0666 "$dir/dev/gpu$i" c 1 3 || die "mknod $dir/dev/gpu$i failed"
  done
}

# install_changed NEW FILE: NEW replaces FILE; true when FILE's content changed.
install_changed() {
  if cmp -s "$1" "$2"; then rm -f "$1"; return 1; fi
  mv "$1" "$2"
}

write_config() {
  local host
  host=$(hostname)
  mkdir -p "$dir/state" "$dir/log" "$dir/run" "$dir/spool"
  local node
  for node in "${nodes[@]}"; do mkdir -p "$dir/spool/$node"; done
  make_gpu_files
  cat >"$dir/slurm.conf.new" <<EOF
# Written by tests/slurm/cluster.sh: a 4-node cluster on one host ($host).
ClusterName=ezpz
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port_base
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdSpoolDir=$dir/spool/%n
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmdLogFile=$dir/log/slurmd-%n.log
PlugStackConfig=$dir/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=$task_plugin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
SchedulerParameters=batch_sched_delay=0
MpiDefault=none
SlurmdParameters=config_overrides
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=60
MessageTimeout=10
InactiveLimit=0
KillWait=5
MinJobAge=60
SlurmctldDebug=info
SlurmdDebug=info
LogTimeFormat=iso8601_ms
GresTypes=gpu
NodeName=n[01-04] NodeHostname=$host NodeAddr=127.0.0.1 Port=$((port_base + 1))-$((port_base + ${#nodes[@]})) CPUs=$cpus_per_node Gres=gpu:$gpus_per_node State=UNKNOWN
PartitionName=debug Nodes=n[01-04] Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
EOF
  # Read from slurm.conf's directory. No AutoDetect: there is no NVML here.
  printf 'Name=gpu File=%s/dev/gpu[0-%d]\n' "$dir" $((gpus_per_node - 1)) >"$dir/gres.conf.new"
  config_changed=false
  install_changed "$dir/slurm.conf.new" "$dir/slurm.conf" && config_changed=true
  install_changed "$dir/gres.conf.new" "$dir/gres.conf" && config_changed=true
  : >"$dir/plugstack.conf"  # no SPANK plugins from /etc/slurm
  printf 'export SLURM_CONF=%s\n' "$dir/slurm.conf" >"$dir/env"
}

# --- /etc/hosts: rewritten in place, not replaced (it may be a bind mount) ----
remove_hosts_line() {
  grep -qF -- "$hosts_mark" /etc/hosts || return 0
  local kept
  kept=$(grep -vF -- "$hosts_mark" /etc/hosts)
  printf '%s\n' "$kept" >/etc/hosts
}
add_hosts_line() {
  grep -qxF -- "$hosts_line" /etc/hosts && return 0
  remove_hosts_line
  [ -s /etc/hosts ] && [ "$(tail -c 1 /etc/hosts)" != "" ] && echo >>/etc/hosts  # no final newline
  printf '%s\n' "$hosts_line" >>/etc/hosts
}

# --- munge ------------------------------------------------------------------
munge_works() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }
start_munge() {
  if munge_works; then return 0; fi
  if [ ! -s /etc/munge/munge.key ]; then
    mungekey -c || die "mungekey -c failed"
    chown munge:munge /etc/munge/munge.key
  fi
  install -d -o munge -g munge -m 0755 /run/munge
  install -d -o munge -g munge -m 0700 /var/log/munge /var/lib/munge
  # munged keeps every descriptor it inherits: close ours first, or a caller's
  # lock (flock around a test run) would be held as long as munged lives.
  ( for fd in $(ls "/proc/$BASHPID/fd"); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done 2>/dev/null
    exec runuser -u munge -- munged --force ) ||
    die "munged failed to start (see /var/log/munge/munged.log)"
  cp /run/munge/munged.pid "$dir/run/munged.pid" 2>/dev/null  # started here: `down` stops it
  wait_for 10 munge_works || die "munged started but munge -n | unmunge fails"
}

# --- slurm ------------------------------------------------------------------
start_slurmctld() {
  alive_pidfile "$dir/run/slurmctld.pid" && return 0
  # -c: forget jobs and node states from an earlier run.
  slurmctld -c -f "$dir/slurm.conf" || die "slurmctld failed to start"
}
start_slurmd() {
  local node=$1
  alive_pidfile "$dir/run/slurmd-$node.pid" && return 0
  slurmd -N "$node" -f "$dir/slurm.conf" || die "slurmd -N $node failed to start"
}

node_states() { sinfo -h -N -o '%N %T' 2>/dev/null; }
all_idle() {
  [ "$(node_states | awk '$2 == "idle"' | sort -u | wc -l)" -eq "${#nodes[@]}" ]
}

show_logs() {
  local log
  for log in "$dir/log/slurmctld.log" "$dir"/log/slurmd-n0*.log /var/log/munge/munged.log; do
    [ -f "$log" ] || continue
    printf '==> %s <==\n' "$log" >&2
    tail -n 20 "$log" >&2
  done
}

cmd_up() {
  need_root
  write_config
  if $config_changed && any_alive "${daemon_pidfiles[@]}"; then
    # Daemons read their configuration only when they start (a cluster left
    # up by an older cluster.sh would lack the GPUs).
    say "the configuration changed: restarting slurmctld and the slurmds"
    stop_pidfiles "${daemon_pidfiles[@]}"
  fi
  add_hosts_line
  start_munge
  start_slurmctld
  wait_for 15 scontrol ping >/dev/null 2>&1
  local node
  for node in "${nodes[@]}"; do start_slurmd "$node"; done
  if ! wait_for "$up_timeout" all_idle; then
    say "error: the nodes are not all idle after ${up_timeout} s:"
    node_states >&2
    show_logs
    exit 1
  fi
  say "4 nodes idle (${nodes[*]}); logs in $dir/log"
  printf 'export SLURM_CONF=%s\n' "$dir/slurm.conf"
}

daemon_pidfiles=("$dir/run/slurmctld.pid")
for node in "${nodes[@]}"; do daemon_pidfiles+=("$dir/run/slurmd-$node.pid"); done
any_alive() { local file; for file in "$@"; do alive_pidfile "$file" && return 0; done; return 1; }

# stop_pidfiles FILE...: SIGTERM the processes named in the FILEs, all at
# once; SIGKILL those still there after 10 s. The FILEs are removed.
stop_pidfiles() {
  local file pid pids=()
  for file in "$@"; do
    alive_pidfile "$file" && pid=$(cat "$file") && kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
  done
  all_gone() { local p; for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && return 1; done; return 0; }
  if ! wait_for 10 all_gone; then
    for pid in "${pids[@]}"; do
      kill -0 "$pid" 2>/dev/null || continue
      say "pid $pid ignored SIGTERM for 10 s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null
    done
  fi
  rm -f "$@"
}

no_jobs() { [ -z "$(squeue -h -o %i 2>/dev/null)" ]; }

cmd_down() {
  need_root
  if alive_pidfile "$dir/run/slurmctld.pid" && [ -f "$dir/slurm.conf" ]; then
    local jobs
    jobs=$(squeue -h -o %i 2>/dev/null)
    if [ -n "$jobs" ]; then
      # shellcheck disable=SC2086
      scancel $jobs 2>/dev/null
      wait_for 20 no_jobs || say "jobs still listed after scancel: $(squeue -h -o '%i %T' | tr '\n' ' ')"
    fi
  fi
  stop_pidfiles "${daemon_pidfiles[@]}"
  if [ -f "$dir/run/munged.pid" ]; then
    # Only the munged that `up` started; never the system's own.
    if [ "$(cat "$dir/run/munged.pid")" == "$(cat /run/munge/munged.pid 2>/dev/null)" ]; then
      stop_pidfiles "$dir/run/munged.pid"
    fi
    rm -f "$dir/run/munged.pid"
  fi
  remove_hosts_line
  rm -f "$dir/env"
  say "down"
}

cmd_status() {
  if [ ! -f "$dir/slurm.conf" ] || ! alive_pidfile "$dir/run/slurmctld.pid"; then
    say "not up: no slurmctld running from $dir (run: $0 up)"
    exit 1
  fi
  sinfo
}

case "${1-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  *) printf 'usage: %s up|down|status\n' "$0" >&2; exit 2 ;;
esac
