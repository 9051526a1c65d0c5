#!/usr/bin/env bash
# The demo: build, start a 6-worker 2-rack loopback cluster, generate input
# for each benchmark, run WordCount (also as the examples/ job program and
# as Python Streaming), Sort and TeraSort, validate them, print
# a table, and stop the cluster. It prints the web UI's address first, so
# the jobs can be watched running, task by task, with their locality.
#   scripts/demo.sh [--size 256MiB] [--dir DIR] [--keep]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
SIZE=256MiB
DIR=$(mktemp -d /tmp/mr-demo.XXXXXX)
KEEP=0
while [ $# -gt 0 ]; do
  case "$1" in
    --size) SIZE=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "demo: unknown option $1" >&2; exit 2 ;;
  esac
done

echo "== building (release)"
cargo build --release --bins --workspace
# The binaries where cargo put them ($CARGO_TARGET_DIR when set); the
# cluster's daemons come from there too.
TARGET=${CARGO_TARGET_DIR:-target}
case "$TARGET" in /*) ;; *) TARGET="$ROOT/$TARGET" ;; esac
export MR_BIN_DIR="${MR_BIN_DIR:-$TARGET/release}"
MR="$MR_BIN_DIR/mr"

cleanup() {
  scripts/cluster.sh down --dir "$DIR" >/dev/null 2>&1 || true
  [ "$KEEP" = 1 ] || rm -rf "$DIR"
}
trap cleanup EXIT

echo "== starting a 6-worker, 2-rack cluster in $DIR"
scripts/cluster.sh up --workers 6 --racks 2 --dir "$DIR" --release --heartbeat 250ms --block-size 32MiB --replication 2
export MR_CONFIG="$DIR/cluster.toml"
"$MR" cluster status
# The master's web UI: open it to watch the jobs run task by task. The
# token rides in the URL's fragment, which the browser never sends; the page
# moves it to the tab's sessionStorage.
UI=$("$MR" cluster status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["ui"] or "")')
if [ -n "$UI" ]; then
  TOKEN=$(sed -nE 's/^token = "([^"]*)"/\1/p' "$MR_CONFIG")
  echo
  echo "== web UI: ${UI}#/?token=$TOKEN"
  echo "   (REST API under ${UI}api/, Prometheus metrics at ${UI}metrics; both need Authorization: Bearer $TOKEN)"
  echo
fi

RESULTS="$DIR/results.jsonl"
: > "$RESULTS"
run() { # label input-bytes mr-args...
  local label=$1 bytes=$2; shift 2
  echo "== $label"
  "$MR" "$@" --json > "$DIR/last.json"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["label"]=sys.argv[2]; d["input_bytes"]=int(sys.argv[3]); print(json.dumps(d))' \
    "$DIR/last.json" "$label" "$bytes" >> "$RESULTS"
}
bytes=$(python3 -c 'import sys; u={"k":1<<10,"m":1<<20,"g":1<<30}; s=sys.argv[1].lower().rstrip("ib"); print(int(float(s[:-1])*u[s[-1]]) if s[-1] in u else int(s))' "$SIZE")

run "randomtextwriter" "$bytes" gen randomtextwriter --size "$SIZE" --output /bench/text
run "wordcount" "$bytes" job run wordcount --input /bench/text --output /bench/wc --reducers 6 --output-replication 1
# Your own jobs (docs/your-own-jobs.md): the same WordCount as a job
# program (examples/wordcount) and as Python Streaming (examples/streaming),
# each checked to give the built-in's counts.
run "wordcount program" "$bytes" job run program --program "$MR_BIN_DIR/example-wordcount" \
  --input /bench/text --output /bench/wc-program --reducers 6 --output-replication 1
run "wordcount python" "$bytes" job run streaming --input /bench/text --output /bench/wc-python \
  --mapper 'python3 mapper.py' --reducer 'python3 reducer.py' \
  --file "$ROOT/examples/streaming/mapper.py" --file "$ROOT/examples/streaming/reducer.py" \
  --reducers 6 --output-replication 1
counts() { "$MR" fs ls "$1" --json | python3 -c 'import json,sys; [print(e["path"]) for e in json.load(sys.stdin) if "/part-" in e["path"]]' \
  | while read -r p; do "$MR" fs cat "$p"; done | sort; }
counts /bench/wc > "$DIR/wc.builtin"
for v in program python; do
  counts "/bench/wc-$v" | cmp -s - "$DIR/wc.builtin" \
    || { echo "demo: the $v WordCount's counts differ from the built-in's" >&2; exit 1; }
done
echo "== the program's and Python Streaming's counts are the built-in's"
run "teragen" "$bytes" gen teragen --size "$SIZE" --output /bench/tera
run "terasort" "$bytes" job run terasort --input /bench/tera --output /bench/tera-sorted --reducers 6 --output-replication 1
run "teravalidate" "$bytes" job run teravalidate --input /bench/tera-sorted --output /bench/tera-report
run "randomwriter" "$bytes" gen randomwriter --size "$SIZE" --output /bench/kv
run "sort" "$bytes" job run sort --input /bench/kv --output /bench/kv-sorted --reducers 6 --total-order --output-replication 1
run "sortvalidate" "$bytes" job run sortvalidate --input /bench/kv-sorted --output /bench/kv-report --total-order

echo
python3 - "$RESULTS" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print(f"{'job':<18}{'input':>10}{'time s':>9}{'MiB/s':>9}{'maps':>6}{'local %':>9}{'state':>11}")
for r in rows:
    mib = r["input_bytes"] / (1 << 20)
    t = r["exec_time_s"]
    loc = r["locality"]
    maps = max(r["maps"], 1)
    local = 100.0 * (loc["cache_local"] + loc["node_local"]) / maps
    print(f"{r['label']:<18}{mib:>8.0f}Mi{t:>9.2f}{mib / max(t, 1e-9):>9.1f}{r['maps']:>6}{local:>9.0f}{r['state']:>11}")
PY
echo
echo "demo finished: every job succeeded, both validators passed, and your own jobs counted as the built-in"
