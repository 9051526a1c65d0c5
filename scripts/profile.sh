#!/usr/bin/env bash
# Where a job's CPU goes: a 6-worker 2-rack loopback cluster of release
# binaries, the job's input generated, one warm run, then a second run under
# `perf record -a -g` (every process on the machine, so the master, the
# workers, the client and the kernel's share are all in it). Prints the top
# of `perf report` by process, object and symbol; the data stays in DIR.
#   scripts/profile.sh [--job terasort] [--size 1GiB] [--freq 499] [--dir DIR]
#                      [--scheduler atlas] [--hold-page-reporting]   (scripts/quiet-memory.sh)
# --job: terasort (input from teragen), sort (total order, from
# randomwriter) or wordcount (from randomtextwriter), as scripts/bench.sh
# runs them, under the same policy (--scheduler; '' for the cluster's
# default, fifo). Needs perf (Debian's linux-perf). Binaries: target/release
# (built first), or MR_BIN_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
JOB=terasort SIZE=1GiB FREQ=499 SCHED=atlas
DIR=$(mktemp -d /tmp/mr-profile.XXXXXX)
while [ $# -gt 0 ]; do
  case "$1" in
    --job) JOB=$2; shift 2 ;;
    --size) SIZE=$2; shift 2 ;;
    --freq) FREQ=$2; shift 2 ;;
    --scheduler) SCHED=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --hold-page-reporting) export MR_BENCH_HOLD_PAGE_REPORTING=1; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "profile: unknown option $1" >&2; exit 2 ;;
  esac
done
EXTRA=()
case "$JOB" in
  terasort) GEN=teragen ;;
  sort) GEN=randomwriter EXTRA=(--total-order) ;;
  wordcount) GEN=randomtextwriter ;;
  *) echo "profile: --job must be terasort, sort or wordcount" >&2; exit 2 ;;
esac
command -v perf >/dev/null || { echo "profile: perf is missing (apt-get install linux-perf)" >&2; exit 1; }
if [ -z "${MR_BIN_DIR:-}" ]; then
  cargo build --release --bins --workspace
  export MR_BIN_DIR="$PWD/target/release"
fi
MR="$MR_BIN_DIR/mr"
mkdir -p "$DIR"
# Free memory at the speed of memory (scripts/quiet-memory.sh).
. scripts/quiet-memory.sh
trap 'scripts/cluster.sh down --dir "$DIR/c" >/dev/null 2>&1 || true; quiet_memory_restore' EXIT
quiet_memory_on
scripts/cluster.sh up --workers 6 --racks 2 --dir "$DIR/c" --release --heartbeat 250ms \
  --block-size 64MiB --replication 2 >/dev/null
export MR_CONFIG="$DIR/c/cluster.toml"
# shellcheck disable=SC2086
[ -n "$SCHED" ] && "$MR" admin scheduler set $SCHED >/dev/null
echo "== generating $SIZE with $GEN" >&2
"$MR" gen "$GEN" --size "$SIZE" --output /in >/dev/null
echo "== warm run" >&2
"$MR" job run "$JOB" --input /in --output /warm --reducers 6 --output-replication 1 "${EXTRA[@]}" \
  --json > "$DIR/warm.json"
echo "== profiled run (perf record -F $FREQ -a -g)" >&2
perf record -F "$FREQ" -a -g -o "$DIR/perf.data" -- \
  "$MR" job run "$JOB" --input /in --output /out --reducers 6 --output-replication 1 "${EXTRA[@]}" --json \
  > "$DIR/job.json" 2>/dev/null
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print("job", j["job"], j["state"], "exec_time_s", round(j["exec_time_s"], 2))' "$DIR/job.json"
perf report -i "$DIR/perf.data" --no-children --sort comm,dso,symbol --stdio 2>/dev/null \
  | grep -E '^ +[0-9.]+%' | head -30 || true
echo "perf data: $DIR/perf.data (perf report -i $DIR/perf.data)"
