#!/usr/bin/env bash
# The same multi-job workload under each scheduler on a loopback cluster:
# several WordCount jobs on different inputs submitted together, then each
# job's locality mix and time, and the local-task rate per policy.
#   scripts/sched-bench.sh [--schedulers fifo,delay,...|all] [--jobs 4]
#                          [--size 64MiB[,256MiB,...]] [--cache warm|cold]
#                          [--reps 1] [--workers 6] [--dir DIR]
# --size sizes are cycled over the jobs (a mix of small and large jobs);
# each policy runs the workload --reps times; every job's summary is kept in
# $RESULTS (default /tmp/sched-bench-results.jsonl);
# --cache warm (the default) pins every input in one worker's cache before
# each scheduler's run, cold drops them, so every policy starts alike.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
SCHEDS=fifo JOBS=4 SIZE=64MiB WORKERS=6 CACHE=warm REPS=1
DIR=""
while [ $# -gt 0 ]; do
  case "$1" in
    --schedulers) SCHEDS=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --size) SIZE=$2; shift 2 ;;
    --cache) CACHE=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --workers) WORKERS=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "sched-bench: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -n "$DIR" ] || DIR=$(mktemp -d /tmp/mr-sched.XXXXXX)
case "$CACHE" in warm|cold) ;; *) echo "sched-bench: --cache is warm or cold" >&2; exit 2 ;; esac
cargo build --release --bins --workspace
MR="$ROOT/target/release/mr"
if [ "$SCHEDS" = all ]; then
  SCHEDS=$("$MR" admin scheduler list 2>/dev/null | paste -sd, - || true)
  [ -n "$SCHEDS" ] || { echo "sched-bench: could not list the schedulers" >&2; exit 1; }
fi
IFS=, read -r -a SIZES <<<"$SIZE"
trap 'scripts/cluster.sh down --dir "$DIR" >/dev/null 2>&1 || true; rm -rf "$DIR"' EXIT
scripts/cluster.sh up --workers "$WORKERS" --racks 2 --dir "$DIR" --release --heartbeat 250ms \
  --block-size 8MiB --replication 2 --cache 256MiB
export MR_CONFIG="$DIR/cluster.toml"
for j in $(seq 1 "$JOBS"); do
  "$MR" gen randomtextwriter --size "${SIZES[$(( (j - 1) % ${#SIZES[@]} ))]}" --output "/in$j" --seed "$j" >/dev/null
done
# wait_cached none|all: polls (at most 20 s) until no block, or every block,
# of the inputs is in some worker's cache.
wait_cached() {
  python3 - "$MR" "$1" "$JOBS" <<'PY' || echo "sched-bench: caches did not reach '$1' in 20 s; going on" >&2
import json, subprocess, sys, time
mr, want, jobs = sys.argv[1], sys.argv[2], int(sys.argv[3])
def run(*a):
    return json.loads(subprocess.run([mr, *a], check=True, capture_output=True).stdout)
files = [e["path"] for j in range(1, jobs + 1) for e in run("fs", "ls", f"/in{j}", "--json") if not e["dir"]]
deadline = time.time() + 20
last, same = -1, 0
while time.time() < deadline:
    cached = [bool(b["cached_on"]) for f in files for b in run("fs", "stat", f, "--json")["blocks"]]
    if (all(cached) if want == "all" else not any(cached)):
        sys.exit(0)
    # A worker's cache may be too small for all it was asked to hold: done
    # when the count stops moving for a second.
    same = same + 1 if sum(cached) == last else 0
    last = sum(cached)
    if want == "all" and same >= 4:
        print(f"sched-bench: {last} of {len(cached)} blocks cached", file=sys.stderr)
        sys.exit(0)
    time.sleep(0.25)
sys.exit(1)
PY
}
OUT="$DIR/results.jsonl"; : > "$OUT"
for s in ${SCHEDS//,/ }; do
  "$MR" admin scheduler set "$s" >/dev/null
  for r in $(seq 1 "$REPS"); do
    # Cache commands travel with heartbeats and take effect with the next
    # cache report: wait for every input to be uncached, then (warm) cached.
    for j in $(seq 1 "$JOBS"); do "$MR" cache rm "/in$j" >/dev/null; done
    wait_cached none
    if [ "$CACHE" = warm ]; then
      for j in $(seq 1 "$JOBS"); do "$MR" cache add "/in$j" >/dev/null; done
      wait_cached all
    fi
    ids=()
    for j in $(seq 1 "$JOBS"); do
      ids+=("$("$MR" job submit wordcount --input "/in$j" --output "/out/$s/$r/$j" --reducers 2 --output-replication 1)")
    done
    for id in "${ids[@]}"; do
      "$MR" job wait "$id" --json 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); print(json.dumps(d))' >> "$OUT"
    done
    "$MR" fs rm /out >/dev/null 2>&1 || true
  done
done
cp "$OUT" "${RESULTS:-/tmp/sched-bench-results.jsonl}"
python3 - "$OUT" <<'PY'
import json, sys, collections, statistics
rows = [json.loads(l) for l in open(sys.argv[1])]
by = collections.OrderedDict()
for r in rows:
    by.setdefault(r["scheduler"], []).append(r)
fifo = statistics.mean(r["exec_time_s"] for r in by.get("fifo", rows))
print(f"{'scheduler':<22}{'jobs':>5}{'maps':>6}{'cache':>7}{'node':>6}{'c-rack':>8}{'rack':>6}{'off':>5}{'local %':>9}{'mean job s':>12}{'vs fifo':>9}")
for s, rs in by.items():
    loc = collections.Counter()
    for r in rs:
        loc.update(r["locality"])
    maps = sum(r["maps"] for r in rs)
    local = 100 * (loc["cache_local"] + loc["node_local"]) / max(maps, 1)
    mean = statistics.mean(r["exec_time_s"] for r in rs)
    print(f"{s:<22}{len(rs):>5}{maps:>6}{loc['cache_local']:>7}{loc['node_local']:>6}{loc['cache_rack_local']:>8}{loc['rack_local']:>6}{loc['off_rack']:>5}{local:>9.0f}{mean:>12.2f}{mean / fifo:>9.2f}")
PY
