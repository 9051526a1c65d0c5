#!/usr/bin/env bash
# Cost as work grows: TeraSort at several input sizes on the 6-worker
# loopback cluster of scripts/bench.sh, each size run --reps times and
# validated by TeraValidate; prints the median job time and time per GiB
# per size, the 8 GiB figure's ratio to the 1 GiB one, and draws them.
#   scripts/scaling.sh [--sizes 1,2,4,8] [--reps 3] [--out DIR]
# Writes DIR/scaling.csv (size_gib, median job s, s per GiB, peak RssAnon
# MiB of any worker), DIR/scaling.png and DIR/bench-SIZE.txt (bench.sh's
# tables). Needs about 3x the largest size free on disk (input at
# replication 2, map outputs, output).
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=1,2,4,8 REPS=3 OUT=scaling
while [ $# -gt 0 ]; do
  case "$1" in
    --sizes) SIZES=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "scaling: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$SIZES" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || { echo "scaling: --sizes takes whole GiB, comma-separated" >&2; exit 2; }
mkdir -p "$OUT"
IFS=, read -r -a S <<<"$SIZES"
for s in "${S[@]}"; do
  echo "== scaling: terasort at ${s} GiB, $REPS run(s)" >&2
  scripts/bench.sh --size "${s}GiB" --jobs terasort --reps "$REPS" --no-floor \
    --rows "$OUT/rows-$s.jsonl" > "$OUT/bench-$s.txt"
done
python3 - "$OUT" "${S[@]}" <<'PY'
import json, statistics, sys
out, sizes = sys.argv[1], [int(s) for s in sys.argv[2:]]
rows = []
for s in sizes:
    runs = [json.loads(l) for l in open(f"{out}/rows-{s}.jsonl")]
    t = statistics.median(r["job"]["exec_time_s"] for r in runs)
    anon = max(max(r["anon_kb"].values(), default=0) for r in runs) // 1024
    rows.append((s, t, t / s, anon))
with open(f"{out}/scaling.csv", "w") as f:
    f.write("size_gib,median_job_s,s_per_gib,peak_anon_mib\n")
    for r in rows:
        f.write("%d,%.2f,%.3f,%d\n" % r)
with open(f"{out}/plot.csv", "w") as f:
    for s, t, per, _ in rows:
        f.write(f"terasort,{s},{per:.3f}\n")
print(f"{'GiB':>4}{'median s':>10}{'s/GiB':>8}{'peak RssAnon MiB':>18}")
for s, t, per, anon in rows:
    print(f"{s:>4}{t:>10.2f}{per:>8.2f}{anon:>18}")
base = {s: per for s, _, per, _ in rows}
if 1 in base and len(base) > 1:
    top = max(base)
    print(f"time per GiB at {top} GiB / at 1 GiB: {base[top] / base[1]:.2f}")
PY
target/release/mr bench plot "$OUT/plot.csv" --out "$OUT/scaling.png" --x-log2 \
  --title "TeraSort on 6 loopback workers: time per GiB (median of $REPS)" \
  --x-label "input, GiB" --y-label "job seconds per GiB"
rm -f "$OUT/plot.csv"
echo "scaling: $OUT/scaling.csv, $OUT/scaling.png" >&2
