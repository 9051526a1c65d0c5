#!/usr/bin/env bash
# The scheduler shoot-out: every policy on the emulated LAN (6 workers in 2
# racks, 16 MiB blocks, replication 2, 250 ms heartbeats, release binaries)
# under three settings, each the mixed workload of `mr bench` (15 jobs
# sized by the Facebook bins, exponential arrivals of mean 2 s, 256 MiB
# block pool, every output validated):
#   cold   host ports 200 Mbit/s, rack uplinks 50 Mbit/s, block caches
#          emptied before each run;
#   warm   the same network, the pool's blocks in the caches before each
#          run (the CLQLMRS paper's setting: caches filled by earlier jobs);
#   tight  host ports 100 Mbit/s, uplinks 20 Mbit/s, caches emptied, and
#          worker w3 held to a fifth of a core by a CPU quota (cgroup).
# Then the simulator on the same policies: 1000 nodes with the mixed
# workload (`mr sim --workload mixed`) and 5000 nodes x 100 000 maps.
#
#   scripts/sched-shootout.sh --out DIR [--schedulers a,b,...] [--reps 3]
#                             [--jobs 15] [--settings cold,warm,tight] [--no-sim]
#
# Writes DIR/SETTING/ (mr bench's summary.md, results.csv, plots), DIR/sim-*.txt
# and DIR/README.md, one table per setting (mean, median, p90 and slowest
# job, local %, MiB moved per run) with its plot. Needs root and ip netns
# (as scripts/lan.sh); about 20 minutes per setting with the default
# policies and 3 repetitions.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT="" REPS=3 JOBS=15 SETTINGS=cold,warm,tight SIM=1
SCHEDS=fifo,fair,capacity,delay,matchmaking,hybsmrp,lsap,lsap-fair,clqlmrs,acl,compat-nb,atlas
SLOW_WORKER=w3 SLOW_QUOTA_PCT=20
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT=$2; shift 2 ;;
    --schedulers) SCHEDS=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --settings) SETTINGS=$2; shift 2 ;;
    --no-sim) SIM=0; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "sched-shootout: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$OUT" ] || { echo "sched-shootout: --out DIR is required" >&2; exit 2; }
IFS=, read -r -a WANT <<<"$SETTINGS"
for s in "${WANT[@]}"; do
  case "$s" in cold|warm|tight) ;; *) echo "sched-shootout: unknown setting $s (cold, warm, tight)" >&2; exit 2 ;; esac
done
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || { echo "sched-shootout: --reps must be a whole number >= 1" >&2; exit 2; }
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || { echo "sched-shootout: --jobs must be a whole number >= 1" >&2; exit 2; }
if [ "$(id -u)" != 0 ] || ! ip netns list >/dev/null 2>&1; then
  echo "sched-shootout: needs root and ip netns (the emulated LAN)" >&2; exit 1
fi
# shellcheck source=scripts/lan-free.sh
. "$ROOT/scripts/lan-free.sh"
lan_free sched-shootout

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cargo build --release --workspace --bins
MR="$ROOT/target/release/mr"
D=$(mktemp -d /tmp/mr-shootout.XXXXXX)
CG=""
cleanup() {
  "$ROOT/scripts/lan.sh" down --dir "$D/lan" >/dev/null 2>&1 || true
  if [ -n "$CG" ] && [ -d "$CG" ]; then
    # A cgroup is removed once empty: its process died with the LAN.
    for _ in $(seq 1 20); do rmdir "$CG" 2>/dev/null && break; sleep 0.25; done
  fi
  rm -rf "$D"
}
trap cleanup EXIT

lan_up() { # host-rate uplink-rate
  "$ROOT/scripts/lan.sh" down --dir "$D/lan" >/dev/null 2>&1 || true
  "$ROOT/scripts/lan.sh" up --dir "$D/lan" --workers 6 --racks 2 --host-rate "$1" \
    --uplink-rate "$2" --block-size 16MiB --replication 2 --heartbeat 250ms --release
}

# Holds worker NAME to PCT % of one core (cgroup v1 cpu, else v2 cpu.max).
slow_down() { # name pct
  local pid
  pid=$(ip netns pids "mrlan-$1" | while read -r p; do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = mr-worker ] && echo "$p"; done | head -1)
  [ -n "$pid" ] || { echo "sched-shootout: no mr-worker runs in mrlan-$1" >&2; exit 1; }
  local quota=$((1000 * $2))
  if [ -d /sys/fs/cgroup/cpu ] && mkdir -p "/sys/fs/cgroup/cpu/mrlan-slow-$$" 2>/dev/null; then
    CG="/sys/fs/cgroup/cpu/mrlan-slow-$$"
    echo 100000 > "$CG/cpu.cfs_period_us"
    echo "$quota" > "$CG/cpu.cfs_quota_us"
  elif [ -f /sys/fs/cgroup/cgroup.controllers ] && mkdir -p "/sys/fs/cgroup/mrlan-slow-$$" 2>/dev/null; then
    CG="/sys/fs/cgroup/mrlan-slow-$$"
    echo "$quota 100000" > "$CG/cpu.max"
  else
    echo "sched-shootout: no writable cpu cgroup to slow $1 down" >&2; exit 1
  fi
  # cgroup.procs moves the whole process, every thread.
  echo "$pid" > "$CG/cgroup.procs"
  echo "sched-shootout: $1 (pid $pid) held to $2 % of a core ($CG)"
}

bench() { # setting cache
  "$MR" --config "$D/lan/cluster.toml" bench --workloads mixed --schedulers "$SCHEDS" \
    --size 256MiB --block-size 16MiB --reps "$REPS" --jobs "$JOBS" --mean-interarrival 2s \
    --cache "$2" --out "$OUT/$1" -q
}

declare -A DESC=(
  [cold]="host ports 200 Mbit/s, rack uplinks 50 Mbit/s; block caches emptied before each run"
  [warm]="host ports 200 Mbit/s, rack uplinks 50 Mbit/s; the pool's blocks in the block caches before each run"
  [tight]="host ports 100 Mbit/s, rack uplinks 20 Mbit/s; block caches emptied; $SLOW_WORKER held to $SLOW_QUOTA_PCT % of a core (CPU quota)"
)
t0=$(date +%s)
for s in "${WANT[@]}"; do
  echo "== $s: ${DESC[$s]}"
  ts=$(date +%s)
  case "$s" in
    cold) lan_up 200mbit 50mbit; bench cold cold ;;
    warm) lan_up 200mbit 50mbit; bench warm warm ;;
    tight) lan_up 100mbit 20mbit; slow_down "$SLOW_WORKER" "$SLOW_QUOTA_PCT"; bench tight cold ;;
  esac
  "$ROOT/scripts/lan.sh" down --dir "$D/lan" >/dev/null 2>&1 || true
  echo "$(( $(date +%s) - ts ))" > "$OUT/$s/seconds"
done

if [ "$SIM" = 1 ]; then
  echo "== simulator"
  "$MR" sim --nodes 1000 --workload mixed --jobs 50 --interarrival 2 --map-scale 10 \
    --cache-size 4GiB --blocks 5000 --scheduler "$SCHEDS" > "$OUT/sim-1000-mixed.txt"
  "$MR" sim --nodes 5000 --tasks 100000 --scheduler "$SCHEDS" > "$OUT/sim-5000.txt"
fi

# The report: each setting's table from its summary.md, its plot, the
# simulator's tables.
{
  echo "# Scheduler shoot-out"
  echo
  echo "Written by \`scripts/sched-shootout.sh --out $(basename "$OUT") --reps $REPS --jobs $JOBS\` on $(date -u +%Y-%m-%d) ($(nproc) cores; $(( $(date +%s) - t0 )) s in all)."
  echo "Emulated LAN: 6 workers in 2 racks, 2 map and 2 reduce slots each, 16 MiB blocks, replication 2,"
  echo "250 ms heartbeats, release binaries. Workload: \`mr bench --workloads mixed --jobs $JOBS"
  echo "--mean-interarrival 2s --size 256MiB\` (Facebook-bin job sizes, every output validated);"
  echo "$REPS repetitions per policy, policies in turn within each repetition."
  echo "Columns: job execution time over every job of every run (mean, median, 90th percentile,"
  echo "min–max: the max is the slowest job), \`vs fifo\` the ratio of means, \`local %\` node-"
  echo "plus cache-local maps, \`remote MiB\` input bytes read from another worker per run."
  for s in "${WANT[@]}"; do
    echo
    echo "## $s: ${DESC[$s]}"
    echo
    echo "$(cat "$OUT/$s/seconds") s."
    echo
    awk '/^\| scheduler/{on=1} on && /^\|/{print} on && !/^\|/{exit}' "$OUT/$s/summary.md"
    echo
    echo "![$s]($s/job-time.png)"
  done
  if [ "$SIM" = 1 ]; then
    echo
    echo "## Simulator: 1000 nodes, the mixed workload"
    echo
    echo "\`mr sim --nodes 1000 --workload mixed --jobs 50 --interarrival 2 --map-scale 10 --cache-size 4GiB --blocks 5000\`"
    echo '```'
    grep -A100 '^SCHEDULER' "$OUT/sim-1000-mixed.txt"
    echo '```'
    echo
    echo "## Simulator: 5000 nodes, 100 000 maps"
    echo
    echo "\`mr sim --nodes 5000 --tasks 100000\`"
    echo '```'
    grep -A100 '^SCHEDULER' "$OUT/sim-5000.txt"
    echo '```'
  fi
} > "$OUT/README.md"
echo "sched-shootout: report in $OUT/README.md"
