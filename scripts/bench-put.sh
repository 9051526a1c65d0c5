#!/usr/bin/env bash
# Put throughput as a user sees it: a 6-worker 2-rack loopback cluster of
# release binaries (64 MiB blocks), and `mr fs put` of a SIZE file of random
# bytes at replication REPL, REPS times, each timed by the client itself
# (`--json` secs). Prints the median and range in MiB/s.
# --against OLD_BIN_DIR: a second cluster runs OLD's binaries (client and
# daemons) and the puts alternate between the two in the same run, so that
# the ratio is measured under the same load: this machine's speed moves
# between runs, a ratio within one run does not.
# Before each repetition the floor runs: dd writes the file REPL times at
# once, each copy fsynced (the disk work the replicas need, and nothing
# else); each put's time is also given over the floor's of its repetition.
#   scripts/bench-put.sh [--size 1GiB] [--reps 3] [--replication 2]
#                        [--block-size 64MiB] [--against OLD_BIN_DIR] [--dir DIR]
#                        [--hold-page-reporting]
# --hold-page-reporting: hold a VM's free page reporting off while it runs
# (scripts/quiet-memory.sh); by default the machine is measured as it is.
# Binaries: target/release (built first), or MR_BIN_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=1GiB REPS=3 REPL=2 BLOCK=64MiB OLD=""
DIR=$(mktemp -d /tmp/mr-bench-put.XXXXXX)
while [ $# -gt 0 ]; do
  case "$1" in
    --size) SIZE=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --replication) REPL=$2; shift 2 ;;
    --block-size) BLOCK=$2; shift 2 ;;
    --against) OLD=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --hold-page-reporting) export MR_BENCH_HOLD_PAGE_REPORTING=1; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "bench-put: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$DIR"
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || { echo "bench-put: --reps must be a whole number >= 1" >&2; exit 2; }
BYTES=$(python3 - "$SIZE" <<'EOF'
import re, sys
m = re.fullmatch(r"(\d+)\s*(B|KiB|MiB|GiB)?", sys.argv[1])
if not m or int(m[1]) == 0:
    sys.exit(f"bench-put: --size {sys.argv[1]!r} is not a size such as 512MiB or 1GiB")
print(int(m[1]) << {None: 0, "B": 0, "KiB": 10, "MiB": 20, "GiB": 30}[m[2]])
EOF
)
if [ -n "$OLD" ] && [ ! -x "$OLD/mr" ]; then
  echo "bench-put: --against $OLD has no mr binary" >&2; exit 2
fi
if [ -z "${MR_BIN_DIR:-}" ]; then
  cargo build --release --bins --workspace
  export MR_BIN_DIR="$PWD/target/release"
fi
NEW="$MR_BIN_DIR"
# Free memory at the speed of memory (scripts/quiet-memory.sh).
. scripts/quiet-memory.sh
trap 'for c in new old; do MR_BIN_DIR=$NEW scripts/cluster.sh down --dir "$DIR/$c" >/dev/null 2>&1 || true; done; rm -rf "$DIR/new" "$DIR/old" "$DIR/in.bin" "$DIR/rows.txt" "$DIR"/floor-*; quiet_memory_restore' EXIT
quiet_memory_on

head -c "$BYTES" /dev/urandom > "$DIR/in.bin"
up() { # name bindir
  MR_BIN_DIR=$2 scripts/cluster.sh up --workers 6 --racks 2 --dir "$DIR/$1" --release \
    --block-size "$BLOCK" --replication "$REPL" >/dev/null
}
up new "$NEW"
SIDES=(new)
if [ -n "$OLD" ]; then up old "$OLD"; SIDES=(old new); fi
declare -A BIN=([new]="$NEW" [old]="$OLD")
: > "$DIR/rows.txt"
# The floor of a put on this machine: the file's bytes written REPL times
# at once (what the replicas' disks must take), each copy fsynced, by dd
# from the page cache: no network, no checksums, no second process.
floor() {
  python3 - "$DIR" "$REPL" <<'PY'
import os, subprocess, sys, time
d, n = sys.argv[1], int(sys.argv[2])
t = time.monotonic()
ps = [subprocess.Popen(["dd", f"if={d}/in.bin", f"of={d}/floor-{i}", "bs=4M", "conv=fsync"],
                       stderr=subprocess.DEVNULL) for i in range(n)]
if any(p.wait() for p in ps):
    sys.exit("bench-put: the floor's dd failed")
print(time.monotonic() - t)
for i in range(n):
    os.remove(f"{d}/floor-{i}")
PY
}
for rep in $(seq 1 "$REPS"); do
  fsecs=$(floor)
  echo "floor $fsecs" >> "$DIR/rows.txt"
  echo "== floor repetition $rep of $REPS: $fsecs s" >&2
  for side in "${SIDES[@]}"; do
    mr=("${BIN[$side]}/mr" --config "$DIR/$side/cluster.toml" -q)
    secs=$("${mr[@]}" fs put --json -f -r "$REPL" "$DIR/in.bin" /bench-put/in.bin \
      | python3 -c 'import json,sys; print(json.load(sys.stdin)["secs"])')
    "${mr[@]}" fs rm /bench-put >/dev/null 2>&1
    echo "$side $secs" >> "$DIR/rows.txt"
    echo "== $side repetition $rep of $REPS: $secs s" >&2
  done
done
python3 - "$DIR/rows.txt" "$BYTES" "$REPL" "$BLOCK" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
mib = int(sys.argv[2]) / (1 << 20)
print(f"mr fs put of {mib:.0f} MiB, replication {sys.argv[3]}, {sys.argv[4]} blocks, "
      "6 workers in 2 racks on loopback; median [range]")
med = {}
for side in dict.fromkeys(r[0] for r in rows):
    if side == "floor":
        continue
    secs = [float(r[1]) for r in rows if r[0] == side]
    rates = [mib / s for s in secs]
    med[side] = statistics.median(rates)
    print(f"{side:>4}: {med[side]:6.0f} MiB/s [{min(rates):.0f}-{max(rates):.0f}], "
          f"{statistics.median(secs):.2f} s [{min(secs):.2f}-{max(secs):.2f}]")
floor = [float(r[1]) for r in rows if r[0] == "floor"]
print(f"floor: {statistics.median([mib / s for s in floor]):6.0f} MiB/s "
      f"[{min(mib / s for s in floor):.0f}-{max(mib / s for s in floor):.0f}] "
      f"(the bytes written {sys.argv[3]} times at once with fsync, by dd)")
for side in med:
    # Each put over the floor run just before it.
    secs = [float(r[1]) for r in rows if r[0] == side]
    ratios = [s / f for s, f in zip(secs, floor)]
    print(f"{side:>4} / floor: {statistics.median(ratios):.2f}x "
          f"[{min(ratios):.2f}-{max(ratios):.2f}] (time over the floor's)")
if "old" in med:
    print(f"new / old: {med['new'] / med['old']:.2f}x")
EOF
