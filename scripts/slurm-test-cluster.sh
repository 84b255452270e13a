#!/usr/bin/env bash
# A one-node Slurm cluster on this machine for the docker suite (test/docker/slurm_test.cc):
# munged, slurmctld and slurmd with a private config, state and sockets under DIR, ports chosen
# free, scheduling tuned to start jobs within a second. Run as root (SlurmUser=root).
#   slurm-test-cluster.sh start DIR   writes DIR/slurm.conf, starts the daemons, waits for the node
#   slurm-test-cluster.sh stop DIR    stops the daemons started by `start DIR` (by their pid files)
# Clients then use SLURM_CONF=DIR/slurm.conf.
set -euo pipefail

usage() { echo "usage: $0 start|stop DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd=$1
dir=$(realpath -m "$2")

# A TCP port nobody listens on, from a range away from the usual ones.
free_port() {
  local p
  for _ in $(seq 50); do
    p=$((20000 + RANDOM % 20000))
    if ! ss -Htln "sport = :$p" | grep -q .; then echo "$p"; return; fi
  done
  echo "slurm-test-cluster: no free port found" >&2
  exit 1
}

stop_pid_file() {
  local f=$1 pid
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

stop() {
  # slurmd first: it may still be reporting jobs to slurmctld; munged last, both need it.
  stop_pid_file "$dir/slurmd.pid"
  stop_pid_file "$dir/slurmctld.pid"
  stop_pid_file "$dir/munged.pid"
}

start() {
  for b in munged slurmctld slurmd sbatch; do
    command -v "$b" >/dev/null || { echo "slurm-test-cluster: $b is missing: bash scripts/install-deps.sh" >&2; exit 1; }
  done
  mkdir -p "$dir"
  chmod 700 "$dir"
  mkdir -p "$dir/munge" "$dir/state" "$dir/spool"
  chmod 755 "$dir/munge"
  # munged refuses a key others can read.
  head -c 1024 /dev/urandom > "$dir/munge.key"
  chmod 400 "$dir/munge.key"
  munged --force --socket "$dir/munge/munge.socket" --key-file "$dir/munge.key" --pid-file "$dir/munged.pid" \
    --log-file "$dir/munged.log" --seed-file "$dir/munged.seed"

  local node ctld_port slurmd_port hw
  node=$(hostname -s)
  ctld_port=$(free_port)
  slurmd_port=$(free_port)
  while [ "$slurmd_port" = "$ctld_port" ]; do slurmd_port=$(free_port); done
  # The node as slurmd sees it (CPUs, sockets, cores, memory): a config that promises more drains it.
  hw=$(slurmd -C | head -1 | sed 's/^NodeName=[^ ]* //')
  cat > "$dir/slurm.conf" <<EOF
ClusterName=forgectl-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
# A requeued job waits cred_expire seconds (default 120) before it may start again.
AuthInfo=socket=$dir/munge/munge.socket,cred_expire=5
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
# Jobs start at once: the main scheduling loop every second, no batching of submits or ends.
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=1,sched_min_interval=0,batch_sched_delay=0
MessageTimeout=10
KillWait=5
MinJobAge=600
InactiveLimit=0
NodeName=$node NodeAddr=127.0.0.1 $hw State=UNKNOWN
PartitionName=forgectl Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF="$dir/slurm.conf"
  slurmctld -f "$dir/slurm.conf" -i
  slurmd -f "$dir/slurm.conf"
  # Ready when the node is idle (registered) and takes jobs.
  for _ in $(seq 150); do
    if sinfo -h -N -o '%t' 2>/dev/null | grep -qx 'idle'; then return 0; fi
    sleep 0.1
  done
  echo "slurm-test-cluster: the node did not become idle within 15 s" >&2
  sinfo -N 2>&1 >&2 || true
  tail -n 20 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
  exit 1
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  *) usage ;;
esac
