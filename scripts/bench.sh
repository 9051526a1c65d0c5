#!/usr/bin/env bash
# The engine benchmark: for each of WordCount, Sort (total order) and
# TeraSort, generate SIZE of input on a 6-worker loopback cluster, run the
# job (output replication 1) and, in the same run on the same input, its
# floor: `mr bench floor`, a tight program doing the job's work in one
# process with two threads (map the input from the page cache, count or
# sort in memory, write the output's parts, one a thread, each fsynced).
# The table gives job time, throughput, the floor's time and the job's
# ratio to it (the figure that
# counts: the machine's speed moves between runs, the ratio much less),
# where each job's time went (the summary's phases_s) and each worker's peak
# memory. Every run's output is validated (see validate_run) before the
# table is printed. The machine is measured as it is, no kernel setting
# changed: each floor run and each cluster run starts after a `sync` (with
# nothing dirty in the page cache) and once the machine has settled (see
# settle: free memory and the CPUs quiet), so that the memory one program
# freed, which a VM's host takes back (free page reporting) a few seconds
# later, is not handed back while the next one runs. --hold-page-reporting
# holds reporting off instead (a sysfs change, undone at exit:
# scripts/quiet-memory.sh); the table says which.
#   scripts/bench.sh [--size 1GiB] [--dir DIR] [--block-size 64MiB] [--reducers 6]
#                    [--jobs wordcount,sort,terasort,userjobs] [--cold] [--reps 1] [--no-floor]
#                    [--rows FILE] [--hold-page-reporting] [--scheduler 'delay node_wait=2']
# MR_BIN_DIR=DIR: the binaries (mr, mr-master, mr-worker, example-wordcount)
# from DIR, built beforehand; otherwise `cargo build --release` builds them
# (into $CARGO_TARGET_DIR if set).
# --reps N: each job runs N times on the same input, each run paired with a
# floor run, the floor first in odd repetitions and the job first in even
# ones; the table shows every run and the median of the N (job time,
# phases; floor time and ratio with their range; memory: the highest).
# The floor's input: the job's input parts copied once with `mr fs get`
# into DIR/floor-in (the same bytes the workers' blocks hold), read once
# more before each floor run so that every run reads them from the page
# cache. It replaces `mr local` (the job's own map and reduce code in one
# process), which this script ran before.
# --no-floor (or --no-local): skip the floor, which holds the whole input
# in one process's memory (skipped anyway above 2 GiB); the output is then
# checked by the validators only.
# --rows FILE: also write one JSON row per run there (scripts/scaling.sh).
# --scheduler SPEC: the policy the jobs run under (`mr admin scheduler set
# SPEC`); atlas by default, '' for the cluster's default (fifo). The floor
# reads all of its input locally; a job's maps read remotely where the
# policy places them so (the table's "local %"), which fifo does in a
# second wave of maps when the nodes with free slots hold none of the
# blocks left (WordCount 1 GiB: 1 to 4 of 17 maps remote, 1.14-1.51 s
# against atlas's 1.06-1.16 s with every map local, 2026-11-30). atlas
# waits for a slot where the block is, so what the table measures is the
# engine, not a placement the floor never makes.
# userjobs: WordCount three ways on the same input, taking turns in each
# repetition: the built-in job, the same job as a program built against the
# mrjob crate (examples/wordcount) and Hadoop Streaming in Python
# (examples/streaming); each output checked to hold the built-in's counts;
# the table gives each one's time and its ratio to the built-in run of the
# same repetition (median and range).
# --cold: each job runs twice, first with the input dropped from the block
# caches and from the OS page cache (root: sync, then 3 into
# /proc/sys/vm/drop_caches), then again at once (warm); the table shows both.
# The floor always reads from the page cache.
# Each worker's peak anonymous memory (RssAnon, sampled every 100 ms: heap
# and buffers, not the file pages of memory-mapped blocks) is printed per run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
SIZE=1GiB BLOCK=64MiB REDUCERS=6 JOBS=wordcount,sort,terasort,userjobs COLD=0 REPS=1 FLOOR=1 ROWS= SCHED=atlas
DIR=$(mktemp -d /tmp/mr-bench.XXXXXX)
while [ $# -gt 0 ]; do
  case "$1" in
    --size) SIZE=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --block-size) BLOCK=$2; shift 2 ;;
    --reducers) REDUCERS=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --cold) COLD=1; shift ;;
    --reps) REPS=$2; shift 2 ;;
    --no-floor|--no-local) FLOOR=0; shift ;;
    --rows) ROWS=$2; shift 2 ;;
    --scheduler) SCHED=$2; shift 2 ;;
    --hold-page-reporting) export MR_BENCH_HOLD_PAGE_REPORTING=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "bench: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || { echo "bench: --reps must be a whole number >= 1" >&2; exit 2; }
BYTES=$(python3 -c '
import re,sys
m = re.fullmatch(r"(\d+)\s*([KMGT]i?B|B)?", sys.argv[1].strip(), re.I)
if not m: sys.exit(1)
u = (m.group(2) or "B").upper().replace("I", "")
print(int(m.group(1)) * 1024 ** "BKMGT".index(u[0]) if u != "B" else int(m.group(1)))' "$SIZE") \
  || { echo "bench: --size must be a size such as 1GiB or 512MiB, got $SIZE" >&2; exit 2; }
if [ "$FLOOR" = 1 ] && [ "$BYTES" -gt $((2 << 30)) ]; then
  echo "bench: $SIZE does not fit the floor's memory (it holds the whole input): running without it (validators only)" >&2
  FLOOR=0
fi
if [ -n "${MR_BIN_DIR:-}" ]; then
  BIN=$(cd "$MR_BIN_DIR" && pwd)
else
  cargo build --release --bins --workspace
  BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release"
fi
# scripts/cluster.sh starts the daemons from the same binaries.
export MR_BIN_DIR="$BIN"
# Free memory at the speed of memory: see scripts/quiet-memory.sh (a VM's
# host takes freed memory back, and faulting it in again cost the jobs'
# page-cache writes 1.6-2.6 s per GiB at random).
. scripts/quiet-memory.sh
MR="$BIN/mr"
trap 'touch "$DIR/anon.stop" 2>/dev/null; scripts/cluster.sh down --dir "$DIR" >/dev/null 2>&1 || true; rm -rf "$DIR"; quiet_memory_restore' EXIT
quiet_memory_on
# A worker is dead after 20 missed heartbeats (5 s, the default cluster
# file's expiry): with 5 (1.25 s), twelve Python Streaming mappers starting
# at once on this 2-core VM had workers declared dead and their blocks
# re-replicated mid-job.
scripts/cluster.sh up --workers 6 --racks 2 --dir "$DIR" --release --heartbeat 250ms --dead-after 20 --block-size "$BLOCK" --replication 2
export MR_CONFIG="$DIR/cluster.toml"
# SPEC is a name and its key=value settings, as `mr admin scheduler set` takes them.
# shellcheck disable=SC2086
[ -n "$SCHED" ] && "$MR" admin scheduler set $SCHED >/dev/null
OUT="$DIR/bench.jsonl"; : > "$OUT"

# Samples each worker's RssAnon every 100 ms into $DIR/anon.peak (name kB)
# until the file $DIR/anon.stop appears (or the directory goes: an
# interrupted run removes it). One process reading /proc: an awk forked per
# worker per sample was 60 processes started a second beside the job timed.
sample_anon() {
  python3 - "$DIR" <<'PY'
import glob, os, sys, time
d = sys.argv[1]
pids = {os.path.basename(p)[:-4]: open(p).read().strip() for p in glob.glob(f"{d}/pids/w*.pid")}
peak = {n: 0 for n in pids}
while os.path.isdir(d) and not os.path.exists(f"{d}/anon.stop"):
    for n, pid in pids.items():
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("RssAnon:"):
                        peak[n] = max(peak[n], int(line.split()[1]))
                        break
        except OSError:
            pass
    time.sleep(0.1)
if os.path.isdir(d):
    with open(f"{d}/anon.peak", "w") as f:
        for n in sorted(peak):
            f.write(f"{n} {peak[n]}\n")
PY
}

# Waits until the machine has settled before a timed run: after a `sync`,
# until, over each half second for 3 s in a row, free memory has moved by
# less than 8 MiB and the CPUs have been at least 90 % idle (at most 90 s).
# The memory a program freed goes back to a VM's host (free page
# reporting) 2 s after it is freed, by a kernel worker: without the wait,
# the run after a 2 GiB floor or after a job's deleted outputs shared the
# CPUs with that work; and a build or a simulation running meanwhile takes
# a core from the two-thread floor more than from the job's many threads.
# No setting is changed; each wait is printed and kept in DIR/settle.log,
# and the runs that started with the machine busy are listed with the table.
settle() { # what-comes-next
  sync
  python3 - "$1" >> "$DIR/settle.log" <<'PY'
import sys, time
def sample():
    free = next(int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("MemFree:"))
    cpu = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return free, cpu[3] + cpu[4], sum(cpu)
t0 = time.monotonic()
quiet, (f0, i0, a0) = 0.0, sample()
while quiet < 3.0 and time.monotonic() - t0 < 90:
    time.sleep(0.5)
    f1, i1, a1 = sample()
    idle = (i1 - i0) / max(a1 - a0, 1)
    quiet = quiet + 0.5 if abs(f1 - f0) < 8 << 10 and idle >= 0.9 else 0.0
    f0, i0, a0 = f1, i1, a1
print(f"{sys.argv[1]}: settled after {time.monotonic() - t0:.1f} s"
      + ("" if quiet >= 3.0 else " BUSY: free memory or the CPUs still busy, gave up"), flush=True)
PY
  tail -n 1 "$DIR/settle.log" | sed 's/^/== settle: /' >&2
}

# The output of a run checked twice: by the job's validator (TeraValidate,
# SortValidate with the sort's own record count and checksum), and, when
# the floor ran, against the floor's output of the same run: the same bytes
# in the same order for the sorts (whatever the parts' boundaries), the same
# word counts for WordCount (whose parts are hash-partitioned). A failed
# check stops the bench.
parts_of() { "$MR" fs ls "$1" --json | python3 -c 'import json,sys; [print(e["path"]) for e in sorted(json.load(sys.stdin), key=lambda e: e["path"]) if "/part-" in e["path"]]'; }
validate_run() { # label run job
  local label=$1 run=$2 job=$3 v
  case $job in
    terasort) v=(teravalidate) ;;
    sort) v=(sortvalidate --param total_order=true $(python3 -c '
import json,sys; c=json.load(open(sys.argv[1]))["counters"]
print("--param expect_records=%d" % c["input_records"])
if "input_checksum" in c: print("--param expect_checksum=%d" % c["input_checksum"])' "$DIR/job-$run.json")) ;;
    *) v=() ;;
  esac
  if [ ${#v[@]} -gt 0 ]; then
    "$MR" fs rm "/check-$label" >/dev/null 2>&1 || true
    "$MR" job run "${v[@]}" --input "/out-$label" --output "/check-$label" --json > "$DIR/check.json" || true
    python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j["state"]=="succeeded" else 1)' "$DIR/check.json" \
      || { echo "bench: $label ($run): ${v[0]} failed: $(cat "$DIR/check.json")" >&2; exit 1; }
  fi
  if [ "$FLOOR" = 1 ]; then
    if [ "$job" = wordcount ]; then
      parts_of "/out-$label" | while read -r p; do "$MR" fs cat "$p"; done > "$DIR/cluster.out"
      cat "$DIR/floor.out"/part-* > "$DIR/floor.txt"
      python3 - "$DIR/cluster.out" "$DIR/floor.txt" <<'PY' \
        || { echo "bench: $label ($run): the job's word counts differ from the floor's" >&2; exit 1; }
import sys
def counts(path):
    m = {}
    for line in open(path, "rb"):
        w, n = line.rstrip(b"\n").rsplit(b"\t", 1)
        if w in m:
            sys.exit(f"{path}: {w!r} counted twice")
        m[w] = int(n)
    return m
sys.exit(0 if counts(sys.argv[1]) == counts(sys.argv[2]) else 1)
PY
      rm -f "$DIR/cluster.out" "$DIR/floor.txt"
    else
      local got want
      got=$(parts_of "/out-$label" | while read -r p; do "$MR" fs cat "$p"; done | sha256sum | cut -d' ' -f1)
      want=$(cat "$DIR/floor.out"/part-* | sha256sum | cut -d' ' -f1)
      [ "$got" = "$want" ] \
        || { echo "bench: $label ($run): the output differs from the floor's" >&2; exit 1; }
    fi
    rm -rf "$DIR/floor.out"
  fi
  local how=()
  [ ${#v[@]} -gt 0 ] && how+=("${v[0]}")
  if [ "$FLOOR" = 1 ]; then
    if [ "$job" = wordcount ]; then how+=("the same word counts as the floor"); else how+=("the same bytes as the floor's output"); fi
  fi
  echo "== $label: $run output validated: ${how[*]:-nothing to check it against}" >&2
}

# One timed floor run on DIR/floor-in, read once first so that it comes
# from the page cache; its JSON report goes to DIR/floor-RUN.json.
floor_run() { # label run job
  local label=$1 run=$2 job=$3
  echo "== $label: floor run ($run)" >&2
  cat "$DIR"/floor-in/part-* > /dev/null
  # Each run starts with nothing dirty in the page cache, the machine quiet.
  settle "$label floor ($run)"
  "$MR" bench floor --job "$job" --input "$DIR"/floor-in/part-* --out "$DIR/floor.out" --json > "$DIR/floor-$run.json"
}

cluster_run() { # label run-label job extra-job-args...
  local label=$1 run=$2 job=$3; shift 3
  echo "== $label: cluster run ($run)" >&2
  "$MR" fs rm "/out-$label" >/dev/null 2>&1 || true
  if [[ "$run" == cold || "$run" == cold-* ]]; then
    "$MR" cache rm "/in-$label" >/dev/null
    sync; echo 3 > /proc/sys/vm/drop_caches || { echo "bench: --cold needs root to drop the page cache" >&2; exit 1; }
  fi
  # The sampler starts before the wait: a Python started with the job took
  # its CPU at the job's start (WordCount 1 GiB: 0.07 s of 1.08, 2026-11-30).
  rm -f "$DIR/anon.stop"; sample_anon & local sampler=$!
  settle "$label cluster ($run)"
  "$MR" job run "$job" --input "/in-$label" --output "/out-$label" --reducers "$REDUCERS" \
    --output-replication 1 "$@" --json > "$DIR/job-$run.json"
  touch "$DIR/anon.stop"; wait "$sampler"
  mv "$DIR/anon.peak" "$DIR/anon-$run.peak"
}

bench() { # label generator job extra-job-args...
  local label=$1 gen=$2 job=$3; shift 3
  echo "== $label: generating $SIZE with $gen" >&2
  "$MR" gen "$gen" --size "$SIZE" --output "/in-$label" >/dev/null
  rm -rf "$DIR/floor-in"
  if [ "$FLOOR" = 1 ]; then
    echo "== $label: copying the input for the floor" >&2
    mkdir -p "$DIR/floor-in"
    "$MR" fs get "/in-$label/part-*" "$DIR/floor-in" --json > /dev/null
    # One floor run, untimed, first: the first write of a job's output size
    # to this VM's disk took 2.8-3.9 s to fsync where the runs after it,
    # writing over the extents it freed, took 0.5-1.4 s; every timed floor
    # then writes as the later ones do.
    echo "== $label: floor warm-up (untimed)" >&2
    sync
    "$MR" bench floor --job "$job" --input "$DIR"/floor-in/part-* --out "$DIR/floor.out" --json > /dev/null
    rm -rf "$DIR/floor.out"
  fi
  # One job run, untimed, first, as the floor's: a worker's first job
  # writes its map outputs into new files, the jobs after it over the files
  # the ones before kept (worker/src/task/mapout/recycle.rs); every timed
  # run then writes as the later ones do.
  echo "== $label: job warm-up (untimed)" >&2
  "$MR" fs rm "/out-$label" >/dev/null 2>&1 || true
  "$MR" job run "$job" --input "/in-$label" --output "/out-$label" --reducers "$REDUCERS" \
    --output-replication 1 "$@" --json > /dev/null
  local kinds=(as-left)
  [ "$COLD" = 1 ] && kinds=(cold warm)
  local runs=()
  for rep in $(seq 1 "$REPS"); do
    for kind in "${kinds[@]}"; do
      local run=$kind
      [ "$REPS" -gt 1 ] && run="$kind-$rep"
      # The pair's order alternates (floor first in odd repetitions, the
      # job first in even ones), so that what one program leaves behind
      # weighs on both sides alike.
      if [ "$FLOOR" = 1 ] && [ $((rep % 2)) = 1 ]; then floor_run "$label" "$run" "$job"; fi
      cluster_run "$label" "$run" "$job" "$@"
      if [ "$FLOOR" = 1 ] && [ $((rep % 2)) = 0 ]; then floor_run "$label" "$run" "$job"; fi
      [ "$FLOOR" = 1 ] || echo '{}' > "$DIR/floor-$run.json"
      validate_run "$label" "$run" "$job"
      runs+=("$run")
    done
  done
  rm -rf "$DIR/floor-in"
  for run in "${runs[@]}"; do
    python3 - "$label" "$run" "$DIR/job-$run.json" "$DIR/floor-$run.json" "$DIR/anon-$run.peak" >> "$OUT" <<'PY'
import json, sys
j = json.load(open(sys.argv[3])); f = json.load(open(sys.argv[4]))
anon = dict((n, int(kb)) for n, kb in (x.split() for x in open(sys.argv[5]) if x.strip()))
print(json.dumps({"label": sys.argv[1], "run": sys.argv[2], "job": j, "floor": f, "anon_kb": anon}))
PY
  done
}
# WordCount's counts of output DIR, one "word<TAB>count" a line, sorted.
counts_of() { parts_of "$1" | while read -r p; do "$MR" fs cat "$p"; done | sort; }

# The built-in WordCount, a job program and Python Streaming on one input
# (see the header); rows go to DIR/userjobs.jsonl.
userjobs() {
  local label=userjobs prog="$BIN/example-wordcount" ex="$ROOT/examples/streaming"
  [ -x "$prog" ] || { echo "bench: $prog is missing (cargo build --release --workspace builds it)" >&2; exit 1; }
  echo "== $label: generating $SIZE with randomtextwriter" >&2
  "$MR" gen randomtextwriter --size "$SIZE" --output "/in-$label" >/dev/null
  : > "$DIR/userjobs.jsonl"
  for rep in $(seq 1 "$REPS"); do
    for kind in builtin program streaming; do
      local args=(wordcount)
      case $kind in
        program) args=(program --program "$prog") ;;
        streaming) args=(streaming --mapper 'python3 mapper.py' --reducer 'python3 reducer.py'
                         --file "$ex/mapper.py" --file "$ex/reducer.py") ;;
      esac
      echo "== $label: $kind run ($rep)" >&2
      "$MR" fs rm "/out-$label-$kind" >/dev/null 2>&1 || true
      sync
      "$MR" job run "${args[@]}" --input "/in-$label" --output "/out-$label-$kind" \
        --reducers "$REDUCERS" --output-replication 1 --json > "$DIR/user-$kind.json"
      counts_of "/out-$label-$kind" > "$DIR/user-$kind.counts"
      python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j["state"]=="succeeded" else 1)' "$DIR/user-$kind.json" \
        || { echo "bench: $label: $kind failed: $(cat "$DIR/user-$kind.json")" >&2; exit 1; }
      python3 -c 'import json,sys; print(json.dumps({"rep": int(sys.argv[1]), "kind": sys.argv[2], "job": json.load(open(sys.argv[3]))}))' \
        "$rep" "$kind" "$DIR/user-$kind.json" >> "$DIR/userjobs.jsonl"
    done
    for kind in program streaming; do
      cmp -s "$DIR/user-builtin.counts" "$DIR/user-$kind.counts" \
        || { echo "bench: $label ($rep): the $kind WordCount's counts differ from the built-in's" >&2; exit 1; }
    done
    echo "== $label: run $rep validated: the program's and Streaming's counts are the built-in's" >&2
  done
  python3 - "$DIR/userjobs.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
t = {(r["rep"], r["kind"]): r["job"]["exec_time_s"] for r in rows}
reps = sorted({r["rep"] for r in rows})
print()
print("your own jobs: WordCount as the built-in, as a job program (examples/wordcount) and as")
print(f"Python Streaming (examples/streaming), the same input, {len(reps)} repetition(s) taking turns;")
print("ratio: each run over the built-in run of its repetition; median (range)")
print(f"{'job':<12}{'time s':>24}{'ratio to built-in':>26}")
for kind in ("builtin", "program", "streaming"):
    ts = [t[(r, kind)] for r in reps]
    rs = [t[(r, kind)] / t[(r, "builtin")] for r in reps]
    tcol = f"{statistics.median(ts):.2f} ({min(ts):.2f}-{max(ts):.2f})"
    rcol = f"{statistics.median(rs):.2f} ({min(rs):.2f}-{max(rs):.2f})"
    print(f"{kind:<12}{tcol:>24}{rcol:>26}")
PY
}

case ",$JOBS," in *,wordcount,*) bench wordcount randomtextwriter wordcount ;; esac
case ",$JOBS," in *,sort,*) bench sort randomwriter sort --total-order ;; esac
case ",$JOBS," in *,terasort,*) bench terasort teragen terasort ;; esac
case ",$JOBS," in *,userjobs,*) userjobs > "$DIR/userjobs.txt" ;; esac

[ -n "$ROWS" ] && cp "$OUT" "$ROWS"
busy=$(grep -c BUSY "$DIR/settle.log" 2>/dev/null || true)
echo "timed runs started on a settled machine: $(( $(grep -c . "$DIR/settle.log" 2>/dev/null || echo 0) - ${busy:-0} )) of $(grep -c . "$DIR/settle.log" 2>/dev/null || echo 0) (see settle in this script)"
grep BUSY "$DIR/settle.log" 2>/dev/null | sed 's/^/  /' || true
echo "scheduler: ${SCHED:-the cluster default}"
case "$QM_STATE" in
  held) echo "free page reporting: held off on request (--hold-page-reporting)" ;;
  *) echo "free page reporting: as the machine has it (no kernel setting changed)" ;;
esac
[ -e "$DIR/userjobs.txt" ] && cat "$DIR/userjobs.txt"
peaks=$(for p in "$DIR"/pids/w*.pid; do n=$(basename "$p" .pid); echo "$n $(awk '/VmHWM/{print $2}' /proc/"$(cat "$p")"/status 2>/dev/null || echo 0)"; done)
python3 - "$OUT" "$peaks" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
PH = ("map", "shuffle", "merge", "reduce", "commit")
def kind(r):
    return r["run"].rsplit("-", 1)[0] if r["run"].rsplit("-", 1)[-1].isdigit() else r["run"]
# With --reps, a median row follows each job's runs of one kind.
groups = {}
for r in rows:
    groups.setdefault((r["label"], kind(r)), []).append(r)
table = []
for (label, k), rs in groups.items():
    table += rs
    if len(rs) > 1:
        med = lambda f: statistics.median(f(r) for r in rs)
        j = dict(rs[0]["job"])
        j["exec_time_s"] = med(lambda r: r["job"]["exec_time_s"])
        j["phases_s"] = {p: med(lambda r: r["job"].get("phases_s", {}).get(p, 0.0)) for p in PH}
        anon = {}
        for r in rs:
            for n, kb in r["anon_kb"].items():
                anon[n] = max(anon.get(n, 0), kb)
        # The floor and the ratio: medians with their range over the runs,
        # each ratio a job run over the floor run just before it.
        fl = [r["floor"]["exec_time_s"] for r in rs if "exec_time_s" in r["floor"]]
        ratios = [r["job"]["exec_time_s"] / r["floor"]["exec_time_s"] for r in rs if "exec_time_s" in r["floor"]]
        f = dict(rs[0]["floor"])
        if fl:
            f["exec_time_s"] = statistics.median(fl)
            f["range_s"] = (min(fl), max(fl))
            f["ratio"] = (statistics.median(ratios), min(ratios), max(ratios))
        table.append({"label": label, "run": f"{k}:median", "job": j, "floor": f, "anon_kb": anon})
print(f"{'benchmark':<11}{'run':>14}{'input MiB':>10}{'cluster s':>11}{'MiB/s':>8}{'floor s':>20}{'cluster/floor':>20}{'local %':>9}{'state':>11}")
for r in table:
    j, f = r["job"], r["floor"]
    mib = j["bytes"]["local"] + j["bytes"]["cache"] + j["bytes"]["remote_rack"] + j["bytes"]["remote_off_rack"]
    mib = f.get("input_bytes", mib) / (1 << 20)
    t, ft = j["exec_time_s"], f.get("exec_time_s")
    loc = j["locality"]; maps = max(j["maps"], 1)
    if not ft:
        fcol = f"{'-':>20}{'-':>20}"
    elif "ratio" in f:
        (lo, hi), (rm, rlo, rhi) = f["range_s"], f["ratio"]
        fcol = f"{f'{ft:.2f} ({lo:.2f}-{hi:.2f})':>20}{f'{rm:.2f} ({rlo:.2f}-{rhi:.2f})':>20}"
    else:
        fcol = f"{ft:>20.2f}{t/ft:>20.2f}"
    print(f"{r['label']:<11}{r['run']:>14}{mib:>10.0f}{t:>11.2f}{mib/t:>8.1f}{fcol}{100*(loc['cache_local']+loc['node_local'])/maps:>9.0f}{j['state']:>11}")
print("(floor: `mr bench floor`, the job's work in one process with two threads on the same")
print("input from the page cache, output fsynced; median rows: median (range) over the runs,")
print("each ratio a job run over the floor run just before it)")
print()
print("where the time went, s (map: the map phase's span; shuffle to commit: the reduce that")
print("finished last; other: the rest of the job's time, waits for heartbeats and the job's commit)")
print(f"{'benchmark':<11}{'run':>14}{'job':>8}{'map':>8}{'shuffle':>9}{'merge':>8}{'reduce':>8}{'commit':>8}{'other':>8}")
for r in table:
    j = r["job"]; ph = j.get("phases_s", {})
    parts = [ph.get(k, 0.0) for k in PH]
    other = max(j["exec_time_s"] - sum(parts), 0.0)
    print(f"{r['label']:<11}{r['run']:>14}{j['exec_time_s']:>8.2f}" + "".join(f"{x:>{w}.2f}" for x, w in zip(parts + [other], [8, 9, 8, 8, 8, 8])))
if any("write_s" in r["floor"] for r in table):
    print()
    print("the floor's own time, s (map the input from the page cache, count or sort in")
    print("memory, write the output's parts and fsync them)")
    print(f"{'benchmark':<11}{'run':>14}{'floor':>8}{'map':>8}{'work':>8}{'write+fsync':>13}")
    for r in table:
        f = r["floor"]
        if "write_s" in f and not r["run"].endswith(":median"):
            print(f"{r['label']:<11}{r['run']:>14}{f['exec_time_s']:>8.2f}{f['read_s']:>8.2f}{f['work_s']:>8.2f}{f['write_s']:>13.2f}")
print()
print("peak anonymous memory per worker during the run (RssAnon, MiB)")
for r in table:
    print(f"{r['label']:<11}{r['run']:>14}  " + ", ".join(f"{n} {kb // 1024}" for n, kb in sorted(r["anon_kb"].items())))
print("peak resident memory since start (VmHWM, with the file pages of mapped blocks): " + ", ".join(f"{n} {int(kb)//1024} MiB" for n, kb in (l.split() for l in sys.argv[2].splitlines() if l.strip())))
PY

# The master's lock over the whole run (generation, the jobs, validation):
# the longest hold by site, from /metrics (see master/src/core/lock.rs).
UI=$("$MR" cluster status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["ui"] or "")')
if [ -n "$UI" ]; then
  TOKEN=$(sed -nE 's/^token = "([^"]*)"/\1/p' "$MR_CONFIG")
  python3 - "${UI}metrics" "$TOKEN" <<'PY'
import re, sys, urllib.request
req = urllib.request.Request(sys.argv[1], headers={"Authorization": "Bearer " + sys.argv[2]})
sites = {}
for line in urllib.request.urlopen(req, timeout=10).read().decode().splitlines():
    m = re.match(r'(mr_master_lock_\w+)\{site="([^"]*)"\} (\S+)$', line)
    if m:
        sites.setdefault(m.group(2), {})[m.group(1)] = float(m.group(3))
print()
print("the master's lock over the whole run, by site (from /metrics; the 8 longest holds)")
print(f"{'site':<18}{'longest ms':>12}{'holds':>10}{'mean us':>10}{'total s':>10}")
top = sorted(sites.items(), key=lambda kv: -kv[1].get("mr_master_lock_hold_max_seconds", 0))
for site, v in top[:8]:
    n, tot = v.get("mr_master_lock_holds_total", 0), v.get("mr_master_lock_hold_seconds_total", 0)
    print(f"{site:<18}{1e3 * v.get('mr_master_lock_hold_max_seconds', 0):>12.2f}{n:>10.0f}{1e6 * tot / max(n, 1):>10.1f}{tot:>10.3f}")
PY
fi
