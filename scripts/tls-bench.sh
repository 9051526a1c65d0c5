#!/usr/bin/env bash
# What TLS costs: TeraGen then TeraSort on a loopback cluster
# (scripts/cluster.sh, release binaries), in clear text and with --tls,
# alternating so that both see the same machine. Prints each run's job
# times (exec_time_s) and the medians with the TLS / clear-text ratio.
#
#   scripts/tls-bench.sh [--size 256MiB] [--workers 4] [--racks 2]
#                        [--block-size 32MiB] [--reducers 4] [--reps 1] [--dir D]
#
# Builds target/release (cargo build --release --bins) when it is missing.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SIZE=256MiB WORKERS=4 RACKS=2 BLOCK=32MiB REDUCERS=4 REPS=1 DIR=/tmp/mr-tls-bench
while [ $# -gt 0 ]; do
  case "$1" in
    --size) SIZE=$2; shift 2 ;;
    --workers) WORKERS=$2; shift 2 ;;
    --racks) RACKS=$2; shift 2 ;;
    --block-size) BLOCK=$2; shift 2 ;;
    --reducers) REDUCERS=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "tls-bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
BIN=${MR_BIN_DIR:-$ROOT/target/release}
if [ ! -x "$BIN/mr" ] || [ ! -x "$BIN/mr-master" ] || [ ! -x "$BIN/mr-worker" ]; then
  (cd "$ROOT" && cargo build --release --bins -p master -p worker -p cli)
fi
export MR_BIN_DIR=$BIN

down_all() {
  local m
  for m in clear tls; do
    [ -f "$DIR/$m/cluster.toml" ] && "$ROOT/scripts/cluster.sh" down --dir "$DIR/$m" >/dev/null 2>&1
  done
  rm -rf "$DIR"
}
trap down_all EXIT
trap 'exit 1' INT TERM

time_of() { python3 -c 'import json,sys; v=json.load(sys.stdin); assert v["state"]=="succeeded", v; print("%.2f" % v["exec_time_s"])'; }

RG="" RS=""
run() { # mode -> RG, RS (teragen and terasort seconds)
  local mode=$1 d="$DIR/$1" flag=()
  [ "$mode" = tls ] && flag=(--tls)
  rm -rf "$d"
  "$ROOT/scripts/cluster.sh" up --workers "$WORKERS" --racks "$RACKS" --block-size "$BLOCK" \
    --dir "$d" "${flag[@]}" >/dev/null
  # Progress goes to $DIR/mr.log, shown only when a job fails.
  RG=$("$BIN/mr" --config "$d/cluster.toml" gen teragen --size "$SIZE" --output /tera --json \
    2>"$DIR/mr.log" | time_of) || { cat "$DIR/mr.log" >&2; exit 1; }
  RS=$("$BIN/mr" --config "$d/cluster.toml" job run terasort --input /tera --output /sorted \
    --reducers "$REDUCERS" --json 2>"$DIR/mr.log" | time_of) || { cat "$DIR/mr.log" >&2; exit 1; }
  "$ROOT/scripts/cluster.sh" down --dir "$d" >/dev/null
  rm -rf "$d"
}

echo "tls-bench: teragen + terasort of $SIZE, $WORKERS workers in $RACKS racks on 127.0.0.1, blocks $BLOCK, $REDUCERS reducers, release binaries"
printf '%-4s %-6s %10s %12s\n' rep mode "teragen s" "terasort s"
CG=() CS=() TG=() TS=()
for r in $(seq 1 "$REPS"); do
  run clear; CG+=("$RG"); CS+=("$RS")
  printf '%-4s %-6s %10s %12s\n' "$r" clear "$RG" "$RS"
  run tls; TG+=("$RG"); TS+=("$RS")
  printf '%-4s %-6s %10s %12s\n' "$r" tls "$RG" "$RS"
done
python3 - "${CG[*]}" "${CS[*]}" "${TG[*]}" "${TS[*]}" <<'PY'
import statistics, sys
cg, cs, tg, ts = ([float(x) for x in a.split()] for a in sys.argv[1:5])
m = statistics.median
print(f"median teragen:  clear {m(cg):.2f}s  tls {m(tg):.2f}s  ratio {m(tg) / m(cg):.2f}")
print(f"median terasort: clear {m(cs):.2f}s  tls {m(ts):.2f}s  ratio {m(ts) / m(cs):.2f}")
PY
