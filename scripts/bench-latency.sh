#!/usr/bin/env bash
# Small-job latency as the client sees it: for each heartbeat interval, a
# 6-worker 2-rack loopback cluster of release binaries is started, and
# `mr bench latency` runs RUNS one-block WordCount jobs (1.3 MB) REPS times
# on it, each job the real `mr job run` timed from spawn to exit. Prints,
# per interval, the median and the range over the repetitions of the
# client's p50 and p99 and of the master's exec_time_s p50.
#   scripts/bench-latency.sh [--heartbeats 1s,250ms] [--runs 40] [--reps 3] [--dir DIR]
# Binaries: target/release (built first), or MR_BIN_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
HEARTBEATS=1s,250ms RUNS=40 REPS=3
DIR=$(mktemp -d /tmp/mr-latency.XXXXXX)
while [ $# -gt 0 ]; do
  case "$1" in
    --heartbeats) HEARTBEATS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "bench-latency: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || { echo "bench-latency: --reps must be a whole number >= 1" >&2; exit 2; }
if [ -z "${MR_BIN_DIR:-}" ]; then
  cargo build --release --bins --workspace
  export MR_BIN_DIR="$PWD/target/release"
fi
MR="$MR_BIN_DIR/mr"
trap 'scripts/cluster.sh down --dir "$DIR/c" >/dev/null 2>&1 || true; rm -rf "$DIR"' EXIT
: > "$DIR/rows.jsonl"
IFS=, read -ra HBS <<< "$HEARTBEATS"
for hb in "${HBS[@]}"; do
  rm -rf "$DIR/c"
  scripts/cluster.sh up --workers 6 --racks 2 --dir "$DIR/c" --release --heartbeat "$hb" >/dev/null
  for rep in $(seq 1 "$REPS"); do
    echo "== heartbeat $hb: repetition $rep of $REPS ($RUNS jobs)" >&2
    "$MR" --config "$DIR/c/cluster.toml" -q bench latency --runs "$RUNS" --json \
      | python3 -c 'import json,sys; r=json.load(sys.stdin); r["heartbeat"]=sys.argv[1]; print(json.dumps(r))' "$hb" \
      >> "$DIR/rows.jsonl"
  done
  scripts/cluster.sh down --dir "$DIR/c" >/dev/null
done
python3 - "$DIR/rows.jsonl" "$RUNS" "$REPS" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print(f"one-block WordCount, {sys.argv[2]} jobs per repetition, {sys.argv[3]} repetitions; "
      "median over repetitions [range]")
print(f"{'heartbeat':>9}  {'client p50 s':>22}  {'client p99 s':>22}  {'exec_time_s p50':>22}")
def cell(xs):
    return f"{statistics.median(xs):.3f} [{min(xs):.3f}-{max(xs):.3f}]"
for hb in dict.fromkeys(r["heartbeat"] for r in rows):
    rs = [r for r in rows if r["heartbeat"] == hb]
    print(f"{hb:>9}  {cell([r['client_s']['p50'] for r in rs]):>22}  "
          f"{cell([r['client_s']['p99'] for r in rs]):>22}  "
          f"{cell([r['exec_time_s']['p50'] for r in rs]):>22}")
EOF
