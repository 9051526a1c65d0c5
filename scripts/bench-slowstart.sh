#!/usr/bin/env bash
# Reduce slow-start where the shuffle costs: the emulated LAN (scripts/lan.sh:
# one network namespace per host, tbf-shaped ports and rack uplinks), a
# TeraSort of SIZE run REPS times with `--param slowstart=1` (reduces start
# after the last map) and REPS times with `slowstart=F` (Hadoop's default
# 0.05), alternating, so both see the same machine. Prints each run and the
# median [range] of the job time and of the last reduce's shuffle phase, and
# the ratio of the medians. Every output is checked by teravalidate.
#   scripts/bench-slowstart.sh [--size 512MiB] [--reps 3] [--slowstart 0.05]
#                              [--uplink-rate 300mbit] [--host-rate 1gbit] [--dir DIR]
# Needs root (network namespaces); release binaries (built first, or MR_BIN_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=512MiB REPS=3 F=0.05 UPLINK=300mbit HOST=1gbit
DIR=$(mktemp -d /tmp/mr-bench-slow.XXXXXX)
while [ $# -gt 0 ]; do
  case "$1" in
    --size) SIZE=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --slowstart) F=$2; shift 2 ;;
    --uplink-rate) UPLINK=$2; shift 2 ;;
    --host-rate) HOST=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "bench-slowstart: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || { echo "bench-slowstart: --reps must be a whole number >= 1" >&2; exit 2; }
python3 -c 'import sys; f=float(sys.argv[1]); sys.exit(0 if 0 <= f <= 1 else 1)' "$F" 2>/dev/null \
  || { echo "bench-slowstart: --slowstart must be a fraction from 0 to 1, got $F" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "bench-slowstart: needs root for the emulated LAN" >&2; exit 2; }
if [ -z "${MR_BIN_DIR:-}" ]; then
  cargo build --release --bins --workspace
  export MR_BIN_DIR="$PWD/target/release"
fi
MR="$MR_BIN_DIR/mr"
trap 'scripts/lan.sh down --dir "$DIR" --purge >/dev/null 2>&1 || true; rm -rf "$DIR"' EXIT
scripts/lan.sh up --dir "$DIR" --workers 6 --racks 2 --host-rate "$HOST" --uplink-rate "$UPLINK" \
  --block-size 32MiB --replication 2 --heartbeat 250ms --release
export MR_CONFIG="$DIR/cluster.toml"
"$MR" gen teragen --size "$SIZE" --output /tera >/dev/null
: > "$DIR/rows.jsonl"
for rep in $(seq 1 "$REPS"); do
  for f in 1 "$F"; do
    out="/sorted-$f-$rep"
    "$MR" job run terasort --input /tera --output "$out" --reducers 6 --output-replication 1 \
      --param "slowstart=$f" --json > "$DIR/job.json"
    "$MR" job run teravalidate --input "$out" --output "/check-$f-$rep" --json > "$DIR/check.json"
    python3 - "$DIR/job.json" "$DIR/check.json" "$f" "$rep" >> "$DIR/rows.jsonl" <<'PY'
import json, sys
j, c = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
if j["state"] != "succeeded" or c["state"] != "succeeded":
    sys.exit(f"bench-slowstart: slowstart={sys.argv[3]} run {sys.argv[4]}: job {j['state']}, teravalidate {c['state']}")
ph = j.get("phases_s", {})
print(json.dumps({"slowstart": sys.argv[3], "rep": int(sys.argv[4]), "job_s": j["exec_time_s"],
                  "map_s": ph.get("map", 0.0), "shuffle_s": ph.get("shuffle", 0.0)}))
PY
    tail -1 "$DIR/rows.jsonl" >&2
  done
  for p in "/sorted-1-$rep" "/sorted-$F-$rep" "/check-1-$rep" "/check-$F-$rep"; do
    "$MR" fs rm "$p" >/dev/null 2>&1 || true
  done
done
python3 - "$DIR/rows.jsonl" "$F" "$SIZE" "$UPLINK" "$HOST" <<'PY'
import json, statistics as st, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
f, size, uplink, host = sys.argv[2:6]
def col(s, k): return [r[k] for r in rows if r["slowstart"] == s]
def fmt(v): return f"{st.median(v):.2f} [{min(v):.2f}-{max(v):.2f}]"
print(f"TeraSort {size} on the emulated LAN (6 workers, 2 racks, hosts {host}, rack uplinks {uplink}), "
      f"{len(col('1', 'job_s'))} runs each, alternating; median [range] s")
print(f"{'slowstart':>10}{'job':>22}{'map':>22}{'last shuffle':>22}")
for s in ["1", f]:
    print(f"{s:>10}{fmt(col(s, 'job_s')):>22}{fmt(col(s, 'map_s')):>22}{fmt(col(s, 'shuffle_s')):>22}")
a, b = col("1", "job_s"), col(f, "job_s")
pairs = [y / x for x, y in zip(a, b)]
print(f"slowstart={f} / slowstart=1, job time: {st.median(pairs):.2f}x [{min(pairs):.2f}-{max(pairs):.2f}] (per alternating pair)")
PY
