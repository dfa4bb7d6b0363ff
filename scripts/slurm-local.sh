#!/usr/bin/env bash
# Proves examples/slurm/sweep.sbatch on a one-node Slurm on this machine, end to end:
#
#   scripts/slurm-local.sh          (as root: it installs packages and starts daemons)
#
# 1. installs Debian's slurmctld, slurmd, slurm-client and munge when missing (apt-get);
# 2. builds sim-host (cargo build --release -p sim-host);
# 3. in a fresh temporary directory (WORK, default mktemp; removed at the end unless KEEP=1):
#    a munge key and a munged on its own socket, and a slurm.conf for one node, this host at
#    127.0.0.1 with all its CPUs, no accounting, no cgroups; starts slurmctld and slurmd on it
#    (ports SLURMCTLD_PORT/SLURMD_PORT, default 16817/16818, so as not to meet a real Slurm)
#    and waits for the node to be idle. Nothing under /etc is written: the daemons and the
#    clients read that slurm.conf (-f, SLURM_CONF);
# 4. submits the sweep (SWEEP_SCENARIOS, default hpcc_incast_7to1 and hpcc_long_short; seeds
#    SWEEP_SEEDS, default 1..5, i.e. four; both controllers) as an array of SHARDS (default 4)
#    tasks of one CPU each with `sbatch --wait`, every task writing into WORK/sweep;
# 5. merges WORK/sweep with `sim-host merge`, runs the same sweep unsharded on this machine into
#    WORK/local, merges that, and compares the two tables byte for byte;
# 6. stops the three daemons it started (by their process ids) and removes WORK.
#
# Prints each step, the tasks' logs and the merged table. Exit 0 when every task ran and the
# sharded table is byte-identical to the unsharded one; 1 when a task failed, a shard left no
# result or the tables differ; 2 when the set-up fails (not root, packages, daemons, a bad
# variable).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

die() { echo "slurm-local: error: $1" >&2; exit "${2:-2}"; }
step() { echo "slurm-local: $*"; }

[[ $(id -u) == 0 ]] || die "run as root: it installs packages with apt-get and starts munged, slurmctld and slurmd"
SHARDS=${SHARDS:-4}
[[ "$SHARDS" =~ ^[1-9][0-9]*$ ]] || die "SHARDS=$SHARDS is not a positive integer"
SEEDS=${SWEEP_SEEDS:-1..5}
SCENARIOS=${SWEEP_SCENARIOS:-fixtures/scenarios/hpcc_incast_7to1.toml fixtures/scenarios/hpcc_long_short.toml}
CTLD_PORT=${SLURMCTLD_PORT:-16817}
SLURMD_PORT=${SLURMD_PORT:-16818}

# --- 1. packages ---------------------------------------------------------------------------------
missing=()
for p in slurmctld slurmd slurm-client munge; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [[ ${#missing[@]} -gt 0 ]]; then
    step "installing ${missing[*]} (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null \
        || { apt-get update >/dev/null && apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null; } \
        || die "apt-get could not install ${missing[*]}"
fi
for c in munged munge unmunge slurmctld slurmd sbatch sinfo scontrol; do
    command -v "$c" >/dev/null || die "$c is missing after the install"
done
step "$(slurmctld -V), $(munged -V 2>&1 | head -1)"

# --- 2. sim-host ---------------------------------------------------------------------------------
step "building sim-host (cargo build --release -p sim-host)"
nice -n 10 cargo build --release -q -p sim-host
SIM_HOST=$ROOT/${CARGO_TARGET_DIR:-target}/release/sim-host
[[ -x "$SIM_HOST" ]] || die "no $SIM_HOST after the build"

# --- 3. munge and Slurm in WORK ------------------------------------------------------------------
if [[ -n "${WORK:-}" ]]; then
    mkdir -p "$WORK"
    [[ -z $(ls -A "$WORK") ]] || die "WORK=$WORK is not empty"
    chmod 700 "$WORK"
else
    WORK=$(mktemp -d /tmp/slurm-local.XXXXXX)
fi
WORK=$(cd "$WORK" && pwd)
PIDS=()
teardown() {
    local rc=$?
    if [[ -n "${SLURM_CONF:-}" && -n "${JOB:-}" ]]; then scancel "$JOB" 2>/dev/null || true; fi
    local i
    for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
        kill "${PIDS[i]}" 2>/dev/null || true
        wait "${PIDS[i]}" 2>/dev/null || true
    done
    [[ ${#PIDS[@]} -gt 0 ]] && step "daemons stopped (pids ${PIDS[*]})"
    if [[ "${KEEP:-0}" == 1 ]]; then
        step "kept $WORK"
    else
        rm -rf "$WORK"
    fi
    exit "$rc"
}
trap teardown EXIT

mkdir -p "$WORK/munge" "$WORK/state" "$WORK/spool" "$WORK/log" "$WORK/sweep" "$WORK/local"
chmod 700 "$WORK/munge"
dd if=/dev/urandom of="$WORK/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$WORK/munge/munge.key"
SOCK=$WORK/munge/munge.socket
step "starting munged (key and socket in $WORK/munge)"
munged --foreground --force --key-file="$WORK/munge/munge.key" --socket="$SOCK" \
    --pid-file="$WORK/munge/munged.pid" --log-file="$WORK/log/munged.log" \
    --seed-file="$WORK/munge/munged.seed" >>"$WORK/log/munged.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do [[ -S "$SOCK" ]] && break; sleep 0.1; done
munge -n -S "$SOCK" | unmunge -S "$SOCK" >/dev/null || die "munge does not work on $SOCK (see $WORK/log/munged.log)"

HOST=$(hostname -s)
CPUS=$(nproc)
MEM_MB=$(awk '/MemTotal/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)
export SLURM_CONF=$WORK/slurm.conf
cat >"$SLURM_CONF" <<EOF
# One-node Slurm for scripts/slurm-local.sh (written by it; removed with $WORK).
ClusterName=dccc-local
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCK
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/log/slurmctld.log
SlurmdLogFile=$WORK/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
ReturnToService=2
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM_MB State=UNKNOWN
PartitionName=local Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
step "starting slurmctld and slurmd ($SLURM_CONF: node $HOST, $CPUS CPUs, ports $CTLD_PORT/$SLURMD_PORT)"
slurmctld -D -i -f "$SLURM_CONF" >"$WORK/log/slurmctld.out" 2>&1 &
PIDS+=($!)
slurmd -D -f "$SLURM_CONF" -N "$HOST" >"$WORK/log/slurmd.out" 2>&1 &
PIDS+=($!)
state=
for _ in $(seq 60); do
    state=$(sinfo -h -n "$HOST" -o %T 2>/dev/null || true)
    [[ "$state" == idle ]] && break
    sleep 1
done
if [[ "$state" != idle ]]; then
    tail -5 "$WORK/log/slurmctld.log" "$WORK/log/slurmd.log" "$WORK/log/slurmctld.out" "$WORK/log/slurmd.out" >&2 2>/dev/null || true
    die "the node is '${state:-not known}' after 60 s, not idle"
fi
step "node $HOST idle"

# --- 4. the job array ----------------------------------------------------------------------------
read -r -a scen <<<"$SCENARIOS"
for f in "${scen[@]}"; do [[ -f "$f" ]] || die "SWEEP_SCENARIOS: no file $f"; done
step "sbatch --wait --array=0-$((SHARDS - 1)): ${scen[*]}, seeds $SEEDS, $SHARDS shards"
set +e
JOB=$(SWEEP_DIR=$WORK/sweep SWEEP_SCENARIOS="$SCENARIOS" SWEEP_SEEDS="$SEEDS" SIM_HOST=$SIM_HOST \
    sbatch --parsable --wait --array=0-$((SHARDS - 1)) --cpus-per-task=1 --time=00:10:00 \
    --chdir="$ROOT" --output="$WORK/log/task-%A_%a.out" examples/slurm/sweep.sbatch)
sb=$?
set -e
JOB=${JOB%%;*}
for f in "$WORK"/log/task-*.out; do
    [[ -f "$f" ]] || continue
    echo "--- $(basename "$f")"
    cat "$f"
done
[[ $sb == 0 ]] || die "sbatch --wait exited $sb: a task of job ${JOB:-?} failed (logs above)" 1
n_logs=$(compgen -G "$WORK/log/task-*.out" | wc -l)
[[ $n_logs == "$SHARDS" ]] || die "$n_logs task logs for $SHARDS shards" 1
step "job $JOB: $SHARDS tasks ended, $(ls "$WORK/sweep" | wc -l) result files"

# --- 5. merge and compare with the unsharded sweep -----------------------------------------------
"$SIM_HOST" merge "$WORK/sweep" --out "$WORK/sharded.csv" 2>"$WORK/log/merge-sharded.err" \
    || { cat "$WORK/log/merge-sharded.err" >&2; die "merging the shards failed" 1; }
if [[ -s "$WORK/log/merge-sharded.err" ]]; then cat "$WORK/log/merge-sharded.err" >&2; die "merging the shards warned (a shard missing?)" 1; fi
step "the same sweep unsharded, on this machine"
"$SIM_HOST" sim "${scen[@]}" --seeds "$SEEDS" --results "$WORK/local" >/dev/null
"$SIM_HOST" merge "$WORK/local" --out "$WORK/unsharded.csv"
rows=$(($(wc -l <"$WORK/sharded.csv") - 1))
[[ $rows -gt 0 ]] || die "the merged table has no row" 1
if cmp -s "$WORK/sharded.csv" "$WORK/unsharded.csv"; then
    step "merged Slurm shards = unsharded sweep, byte for byte ($rows rows, sha256 $(sha256sum <"$WORK/sharded.csv" | cut -c1-16))"
    cut -d, -f1-6 "$WORK/sharded.csv" | head -20
else
    diff "$WORK/sharded.csv" "$WORK/unsharded.csv" | head -20 >&2
    die "the merged shards differ from the unsharded sweep" 1
fi
