#!/usr/bin/env bash
# Slurm smoke test: a real one-node Slurm cluster on loopback runs a small sweep as a job
# array of 4 shards plus the dependent merge job (both from `lamina sweep --emit-slurm`),
# and the merged tables must equal a local `lamina sweep` of the same spec byte for byte.
#
#   bash scripts/slurm-smoke.sh            (as root; CI runs it after the tests)
#
# Installs Slurm and MUNGE from Debian packages when missing. There is no systemd here, so
# the daemons are started by hand: munged as user munge (unless one already runs), then
# slurmctld and slurmd with a private slurm.conf ($SLURM_CONF, every address 127.0.0.1,
# no cgroup plugins, private ports and state directories); all of them are stopped on exit.
# Exit status: 0 on success, 0 with a "SKIP: reason" line when packages cannot be installed
# or the daemons cannot be started, nonzero when the cluster ran and the results differ or
# a job failed.
#
# Environment: LAMINA (binary; default: cargo build --release -p lamina-cli),
# SMOKE_SPEC (default experiments/ci/die-binding-tiny.toml), SMOKE_KEEP=1 keeps the work dir.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SPEC=${SMOKE_SPEC:-$ROOT/experiments/ci/die-binding-tiny.toml}
SHARDS=4
T0=$(date +%s)

WORK=""
STARTED_PIDS=()
cleanup() {
  local pid
  for pid in "${STARTED_PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${STARTED_PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [[ -n "$WORK" && "${SMOKE_KEEP:-0}" != 1 ]]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT
# A timeout or Ctrl-C still stops the daemons (the EXIT trap runs on `exit`).
trap 'echo "FAIL: slurm smoke: interrupted"; exit 143' TERM INT
skip() { echo "SKIP: slurm smoke: $*"; exit 0; }
fail() { echo "FAIL: slurm smoke: $*"; exit 1; }
elapsed() { echo "$(($(date +%s) - T0)) s"; }
show_logs() {
  local f
  for f in "$WORK"/*.log "$WORK"/cluster/logs/*.out; do
    [[ -f "$f" ]] || continue
    echo "--- $f (tail)"; tail -n 20 "$f"
  done
}

# --- packages -------------------------------------------------------------------------
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null \
  || ! command -v munged >/dev/null; then
  [[ $(id -u) == 0 ]] || skip "Slurm/MUNGE not installed and not root (cannot apt-get install)"
  command -v apt-get >/dev/null || skip "Slurm/MUNGE not installed and no apt-get"
  echo "== installing slurmctld slurmd slurm-client munge"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/tmp/slurm-smoke-apt.log 2>&1 || skip "apt-get update failed (see /tmp/slurm-smoke-apt.log)"
  # No init system: the packages' service starts fail harmlessly; a policy-rc.d would
  # silence them but is a system file this script does not own.
  apt-get install -y -qq slurmctld slurmd slurm-client munge >>/tmp/slurm-smoke-apt.log 2>&1 \
    || skip "apt-get install slurmctld slurmd slurm-client munge failed (see /tmp/slurm-smoke-apt.log)"
  echo "   installed in $(elapsed)"
fi
[[ $(id -u) == 0 ]] || skip "the daemons need root (slurmd runs jobs as their users)"

# --- lamina ---------------------------------------------------------------------------
if [[ -z "${LAMINA:-}" ]]; then
  echo "== cargo build --release -p lamina-cli"
  cargo build --release -q -p lamina-cli
  LAMINA=${CARGO_TARGET_DIR:-$ROOT/target}/release/lamina
fi
[[ -x "$LAMINA" ]] || fail "no lamina binary at $LAMINA"
LAMINA=$(realpath "$LAMINA")

# World-traversable work dir: munged and job steps may run as other users.
WORK=$(mktemp -d /tmp/lamina-slurm-smoke.XXXXXX)
chmod 755 "$WORK"

# --- MUNGE ----------------------------------------------------------------------------
MUNGE_SOCKET=/run/munge/munge.socket.2
if munge -n </dev/null >/dev/null 2>&1; then
  echo "== munged already running"
else
  mkdir -p /run/munge /var/log/munge /var/lib/munge /etc/munge
  if [[ ! -s /etc/munge/munge.key ]]; then
    if command -v mungekey >/dev/null; then
      mungekey --create --keyfile=/etc/munge/munge.key >/dev/null 2>&1 || true
    fi
    [[ -s /etc/munge/munge.key ]] || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
  fi
  chown -R munge:munge /run/munge /var/log/munge /var/lib/munge /etc/munge 2>/dev/null \
    || skip "no munge user (package install incomplete?)"
  chmod 0700 /etc/munge /var/log/munge /var/lib/munge
  chmod 0755 /run/munge
  chmod 0400 /etc/munge/munge.key
  # setpriv execs munged itself (no intermediate process), so it is our child to stop and reap.
  command -v setpriv >/dev/null || skip "setpriv missing (util-linux)"
  setpriv --reuid=munge --regid=munge --init-groups -- munged --foreground --socket="$MUNGE_SOCKET" \
    >"$WORK/munged.log" 2>&1 &
  STARTED_PIDS+=($!)
  for _ in $(seq 50); do
    munge -n -S "$MUNGE_SOCKET" </dev/null >/dev/null 2>&1 && break
    sleep 0.1
  done
  munge -n -S "$MUNGE_SOCKET" </dev/null >/dev/null 2>&1 \
    || { cat "$WORK/munged.log"; skip "munged did not start"; }
  echo "== munged started"
fi

# --- Slurm ----------------------------------------------------------------------------
HOST=$(hostname -s 2>/dev/null || cat /proc/sys/kernel/hostname)
NODE=lamina-smoke-node
CPUS=$(nproc)
mkdir -p "$WORK/ctld" "$WORK/slurmd"
export SLURM_CONF=$WORK/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=lamina-smoke
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCKET
StateSaveLocation=$WORK/ctld
SlurmdSpoolDir=$WORK/slurmd
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/slurmctld.log
SlurmdLogFile=$WORK/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmdTimeout=60
MinJobAge=600
NodeName=$NODE NodeAddr=127.0.0.1 NodeHostname=$HOST CPUs=$CPUS State=UNKNOWN
PartitionName=smoke Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -D -i -f "$SLURM_CONF" >"$WORK/slurmctld.out" 2>&1 &
STARTED_PIDS+=($!)
slurmd -D -N "$NODE" -f "$SLURM_CONF" >"$WORK/slurmd.out" 2>&1 &
STARTED_PIDS+=($!)
state=""
for _ in $(seq 60); do
  state=$(sinfo -h -n "$NODE" -o %T 2>/dev/null || true)
  [[ "$state" == idle* ]] && break
  sleep 1
done
if [[ "$state" != idle* ]]; then
  show_logs
  skip "Slurm node did not become idle within 60 s (state: '${state:-none}')"
fi
echo "== one-node cluster up ($NODE, $CPUS CPUs) after $(elapsed)"

# --- the sweep, on the cluster and locally ---------------------------------------------
OUT=$WORK/cluster
"$LAMINA" sweep "$SPEC" --out "$OUT" --emit-slurm --slurm-shards "$SHARDS" >"$WORK/submit.sh"
submitted=$(bash "$WORK/submit.sh") || { show_logs; fail "submitting the job array failed"; }
echo "== $submitted"
merge_job=$(sed -n 's/.*merge job \([0-9]*\).*/\1/p' <<<"$submitted")
array_job=$(sed -n 's/^array job \([0-9]*\).*/\1/p' <<<"$submitted")
[[ -n "$merge_job" && -n "$array_job" ]] || fail "could not read the job ids from: $submitted"

"$LAMINA" sweep "$SPEC" --out "$WORK/local" --threads "$CPUS" >"$WORK/local.out" 2>&1 \
  || { cat "$WORK/local.out"; fail "local sweep failed"; }

job_state() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -n 1; }
deadline=$(($(date +%s) + 300))
while :; do
  st=$(job_state "$merge_job")
  case "$st" in
    COMPLETED) break ;;
    FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE)
      show_logs; fail "merge job $merge_job ended $st" ;;
    PENDING)
      # afterok never fires if a shard failed: the merge job then stays pending forever.
      if scontrol show job "$merge_job" | grep -q 'Reason=DependencyNeverSatisfied'; then
        scontrol show job "$array_job" | grep -E 'JobId|JobState' || true
        show_logs; fail "a shard of array job $array_job failed"
      fi ;;
  esac
  if (($(date +%s) > deadline)); then
    squeue || true; show_logs; fail "jobs not done after 300 s (merge job state: ${st:-unknown})"
  fi
  sleep 1
done
echo "== array ($SHARDS shards) and merge finished after $(elapsed)"

shard_dirs=$(find "$OUT" -maxdepth 1 -name 'shard-*' -type d | wc -l)
[[ "$shard_dirs" -eq "$SHARDS" ]] || fail "expected $SHARDS shard directories, found $shard_dirs"
for f in results.csv results.compare.csv results.compare.md; do
  [[ -s "$WORK/local/$f" ]] || fail "local sweep wrote no $f"
  cmp "$WORK/local/$f" "$OUT/$f" || { show_logs; fail "$f from the cluster differs from the local sweep's"; }
done
runs=$(($(wc -l <"$OUT/results.csv") - 1))
echo "PASS: slurm smoke: $runs runs in $SHARDS array tasks + merge equal the local sweep byte for byte ($(elapsed))"
