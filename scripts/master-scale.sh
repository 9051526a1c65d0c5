#!/usr/bin/env bash
# The master's cost curves (issue 42): `mr bench master` at 100, 1,000,
# 5,000 and 10,000 emulated workers (1 s heartbeats, WordCount jobs
# flowing), at 10,000 workers with no jobs, and at 10^4, 10^5 and 10^6
# blocks, each REPS times, the points taking turns (every size once, then
# again) so that a slow minute of the machine is spread over all of them.
# Writes each run's JSON to docs/bench/scale/master/, the tables (median
# [range] of the repetitions) to docs/bench/scale/master.md and a plot per
# figure (plotters, through `mr bench plot`) beside the JSON, stamped with
# the commit.
#
#   scripts/master-scale.sh            # about 20 minutes with the defaults
#   MR_BIN_DIR=target/release REPS=3 DURATION=60s scripts/master-scale.sh
#   WORKERS="100 1000" BLOCKS="10000" REPS=2 DURATION=5s scripts/master-scale.sh  # a quick look
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${MR_BIN_DIR:-target/release}
duration=${DURATION:-30s}
reps=${REPS:-3}
workers=${WORKERS:-100 1000 5000 10000}
blocks=${BLOCKS:-10000 100000 1000000}
out=${OUT:-docs/bench/scale/master}
page=${PAGE:-docs/bench/scale/master.md}
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || { echo "master-scale: REPS must be a whole number >= 1" >&2; exit 2; }
[ -x "$bin/mr" ] && [ -x "$bin/mr-master" ] || {
    echo "no $bin/mr or $bin/mr-master: cargo build --release first" >&2
    exit 1
}
mkdir -p "$out"
run() { # name, args...
    local name=$1
    shift
    echo "== $name ($(date -u +%T)): mr bench master $*" >&2
    MR_BIN_DIR=$bin "$bin/mr" bench master "$@" --json -q >"$out/$name.json"
}
rm -f "$out"/workers-*.json "$out"/blocks-*.json "$out"/*.csv "$out"/*.png
for r in $(seq 1 "$reps"); do
    for n in $workers; do
        run "workers-$n-r$r" --workers "$n" --heartbeat 1s --duration "$duration"
    done
    run "workers-10000-nojobs-r$r" --workers 10000 --heartbeat 1s --duration "$duration" --jobs 0
    for b in $blocks; do
        run "blocks-$b-r$r" --workers 100 --blocks "$b" --jobs 0 --duration 10s
    done
done
commit=$(git rev-parse --short HEAD)
[ -z "$(git status --porcelain -- master sched common rpc proto cli)" ] || commit="$commit (dirty)"
python3 - "$out" "$commit" "$reps" "$duration" "$workers" "$blocks" "$page" <<'PY'
import json, os, sys, datetime, statistics
out, commit, reps, duration, workers, blocks, page = sys.argv[1:]
reps, workers, blocks = int(reps), workers.split(), blocks.split()
rel = os.path.relpath(out, os.path.dirname(page))
def runs(name):
    return [json.load(open(os.path.join(out, f"{name}-r{r}.json"))) for r in range(1, reps + 1)]
def fig(rs, key, digits=1):
    v = [r[key] for r in rs]
    m = statistics.median(v)
    if reps == 1:
        return f"{m:,.{digits}f}"
    return f"{m:,.{digits}f} [{min(v):,.{digits}f}-{max(v):,.{digits}f}]"
def csv(name, header, rows):
    with open(os.path.join(out, name), "w") as f:
        f.write(header + "\n")
        for row in rows:
            f.write(",".join(str(x) for x in row) + "\n")
lines = []
p = lines.append
p("# The master at scale: cost curves\n")
p(f"Made by `scripts/master-scale.sh` on {datetime.date.today()}, commit {commit}, "
  f"{os.cpu_count()} cores; the load process (`mr bench master`) shares the machine "
  f"with the master. Each figure is the median [range] of {reps} runs of {duration} "
  "(the points taking turns); the JSON beside this file holds every field of every run.\n")
p("## Workers (1 s heartbeats, 4 WordCount jobs of 100 maps in flight, each resubmitted when it ends)\n")
rows = [(f"workers-{n}", f"{int(n):,}") for n in workers] + [("workers-10000-nojobs", "10,000, no jobs")]
p("| workers | heartbeats/s | failed | p50 ms | p99 ms | max ms | launches/s | lock held % | master CPU % | RSS MiB | bytes/worker |")
p("|---|---|---|---|---|---|---|---|---|---|---|")
for name, label in rows:
    rs = runs(name)
    failed = sum(r["heartbeats_failed"] for r in rs)
    p(f"| {label} | {fig(rs, 'heartbeats_per_s', 0)} | {failed} | {fig(rs, 'heartbeat_p50_ms')} | "
      f"{fig(rs, 'heartbeat_p99_ms')} | {fig(rs, 'heartbeat_max_ms', 0)} | {fig(rs, 'launches_per_s')} | "
      f"{fig(rs, 'lock_held_pct')} | {fig(rs, 'master_cpu_pct', 0)} | {fig(rs, 'master_rss_mib', 0)} | "
      f"{fig(rs, 'bytes_per_worker', 0)} |")
p("\nLongest lock holds by site, the longest of the runs (ms):\n")
for name, label in rows:
    worst = {}
    for r in runs(name):
        for k, v in r["lock_holds_max_ms"].items():
            worst[k] = max(worst.get(k, 0.0), v)
    holds = ", ".join(f"{k} {v:.1f}" for k, v in sorted(worst.items(), key=lambda kv: -kv[1]))
    p(f"- {label}: {holds}")
p("\n## Blocks (100 workers, no jobs)\n")
p("| blocks | created/s | bytes/block | RSS MiB | startup s | safe mode off after s | heartbeat p99 ms |")
p("|---|---|---|---|---|---|---|")
for b in blocks:
    rs = runs("blocks-" + b)
    p(f"| {int(b):,} | {fig(rs, 'blocks_per_s', 0)} | {fig(rs, 'bytes_per_block', 0)} | "
      f"{fig(rs, 'master_rss_mib', 0)} | {fig(rs, 'startup_s', 2)} | {fig(rs, 'safemode_exit_s', 2)} | "
      f"{fig(rs, 'heartbeat_p99_ms')} |")
# One CSV per plot: every run a point, so the spread shows.
med = lambda rs, k: statistics.median(r[k] for r in rs)
ws = [(int(n), runs(f"workers-{n}")) for n in workers]
csv("latency.csv", "series,workers,ms",
    [(s, n, med(rs, k)) for s, k in [("p50", "heartbeat_p50_ms"), ("p99", "heartbeat_p99_ms")] for n, rs in ws])
csv("throughput.csv", "series,workers,per_s",
    [(s, n, med(rs, k)) for s, k in [("heartbeats", "heartbeats_per_s"), ("launches", "launches_per_s")] for n, rs in ws])
csv("lock.csv", "series,workers,pct",
    [(s, n, med(rs, k)) for s, k in [("lock held", "lock_held_pct"), ("master CPU", "master_cpu_pct")] for n, rs in ws])
csv("memory-workers.csv", "series,workers,mib", [("master RSS", n, med(rs, "master_rss_mib")) for n, rs in ws])
bs = [(int(b), runs("blocks-" + b)) for b in blocks]
csv("blocks.csv", "series,blocks,bytes", [("bytes per block", b, med(rs, "bytes_per_block")) for b, rs in bs])
csv("startup.csv", "series,blocks,s", [("startup", b, med(rs, "startup_s")) for b, rs in bs])
p("\n## Plots (medians)\n")
for png, what in [("latency", "heartbeat latency"), ("throughput", "heartbeats and launches per second"),
                  ("lock", "lock held and master CPU"), ("memory-workers", "master RSS against workers"),
                  ("blocks", "master memory per block"), ("startup", "start-up time against blocks")]:
    p(f"![{what}]({rel}/{png}.png)")
open(page, "w").write("\n".join(lines) + "\n")
PY
plot() { # csv title x-label y-label
    "$bin/mr" bench plot "$out/$1.csv" --out "$out/$1.png" --title "$2" --x-label "$3" --y-label "$4" --x-log2
}
plot latency "Heartbeat latency (1 s heartbeats, jobs flowing)" workers ms
plot throughput "Heartbeats and task launches handled" workers "per second"
plot lock "The master's lock held, and its CPU" workers "% of the window"
plot memory-workers "The master's RSS" workers MiB
plot blocks "Master memory per block (100 workers)" blocks bytes
plot startup "Start-up: edit log replay and snapshot load" blocks s
echo "wrote $page and its plots in $out" >&2
