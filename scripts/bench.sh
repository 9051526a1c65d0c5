#!/usr/bin/env bash
# The engine benchmark: for each of WordCount, Sort and TeraSort, generate
# SIZE of input on a 6-worker loopback cluster, run the job (output
# replication 1), run the same map and reduce code in one process on the
# same input (`mr local`), and print job time, throughput, the ratio to the
# single-process baseline measured in this run, where each job's time went
# (the summary's phases_s) and each worker's peak memory.
#   scripts/bench.sh [--size 1GiB] [--dir DIR] [--block-size 64MiB] [--reducers 6]
#                    [--jobs wordcount,sort,terasort]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
SIZE=1GiB BLOCK=64MiB REDUCERS=6 JOBS=wordcount,sort,terasort
DIR=$(mktemp -d /tmp/mr-bench.XXXXXX)
while [ $# -gt 0 ]; do
  case "$1" in
    --size) SIZE=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --block-size) BLOCK=$2; shift 2 ;;
    --reducers) REDUCERS=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "bench: unknown option $1" >&2; exit 2 ;;
  esac
done
cargo build --release --bins --workspace
MR="$ROOT/target/release/mr"
trap 'scripts/cluster.sh down --dir "$DIR" >/dev/null 2>&1 || true; rm -rf "$DIR"' EXIT
scripts/cluster.sh up --workers 6 --racks 2 --dir "$DIR" --release --heartbeat 250ms --block-size "$BLOCK" --replication 2
export MR_CONFIG="$DIR/cluster.toml"
OUT="$DIR/bench.jsonl"; : > "$OUT"

bench() { # label generator job extra-job-args...
  local label=$1 gen=$2 job=$3; shift 3
  echo "== $label: generating $SIZE with $gen" >&2
  "$MR" gen "$gen" --size "$SIZE" --output "/in-$label" >/dev/null
  echo "== $label: cluster run" >&2
  "$MR" job run "$job" --input "/in-$label" --output "/out-$label" --reducers "$REDUCERS" \
    --output-replication 1 "$@" --json > "$DIR/job.json"
  echo "== $label: single-process baseline" >&2
  : > "$DIR/local.in"
  for p in $("$MR" fs ls "/in-$label" --json | python3 -c 'import json,sys; [print(e["path"]) for e in json.load(sys.stdin) if "/part-" in e["path"]]'); do
    "$MR" fs cat "$p" >> "$DIR/local.in"
  done
  local fmt=kv
  "$MR" local "$job" "$DIR/local.in" --reducers "$REDUCERS" --format "$fmt" --json > "$DIR/local.json"
  rm -f "$DIR/local.in"
  python3 - "$label" "$DIR/job.json" "$DIR/local.json" >> "$OUT" <<'PY'
import json, sys
j = json.load(open(sys.argv[2])); l = json.load(open(sys.argv[3]))
print(json.dumps({"label": sys.argv[1], "job": j, "local": l}))
PY
}
case ",$JOBS," in *,wordcount,*) bench wordcount randomtextwriter wordcount ;; esac
case ",$JOBS," in *,sort,*) bench sort randomwriter sort --total-order ;; esac
case ",$JOBS," in *,terasort,*) bench terasort teragen terasort ;; esac

peaks=$(for p in "$DIR"/pids/w*.pid; do n=$(basename "$p" .pid); echo "$n $(awk '/VmHWM/{print $2}' /proc/"$(cat "$p")"/status 2>/dev/null || echo 0)"; done)
python3 - "$OUT" "$peaks" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print(f"{'benchmark':<11}{'input MiB':>10}{'cluster s':>11}{'MiB/s':>8}{'local s':>9}{'cluster/local':>15}{'local %':>9}{'state':>11}")
for r in rows:
    j, l = r["job"], r["local"]
    mib = l["input_bytes"] / (1 << 20)
    t, lt = j["exec_time_s"], l["exec_time_s"]
    loc = j["locality"]; maps = max(j["maps"], 1)
    print(f"{r['label']:<11}{mib:>10.0f}{t:>11.2f}{mib/t:>8.1f}{lt:>9.2f}{t/lt:>15.2f}{100*(loc['cache_local']+loc['node_local'])/maps:>9.0f}{j['state']:>11}")
print()
print("where the time went, s (map: the map phase's span; shuffle to commit: the reduce that")
print("finished last; other: the rest of the job's time, waits for heartbeats and the job's commit)")
print(f"{'benchmark':<11}{'job':>8}{'map':>8}{'shuffle':>9}{'merge':>8}{'reduce':>8}{'commit':>8}{'other':>8}")
for r in rows:
    j = r["job"]; ph = j.get("phases_s", {})
    parts = [ph.get(k, 0.0) for k in ("map", "shuffle", "merge", "reduce", "commit")]
    other = max(j["exec_time_s"] - sum(parts), 0.0)
    print(f"{r['label']:<11}{j['exec_time_s']:>8.2f}" + "".join(f"{x:>{w}.2f}" for x, w in zip(parts + [other], [8, 9, 8, 8, 8, 8])))
print("peak worker memory (VmHWM): " + ", ".join(f"{n} {int(kb)//1024} MiB" for n, kb in (l.split() for l in sys.argv[2].splitlines() if l.strip())))
PY
