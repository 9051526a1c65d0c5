#!/usr/bin/env bash
# The master's cost curves (issue 42): `mr bench master` at 100, 1,000,
# 5,000 and 10,000 emulated workers (1 s heartbeats, WordCount jobs
# flowing), at 10,000 workers with no jobs, and at 10^4, 10^5 and 10^6
# blocks. Writes each run's JSON to docs/bench/scale/master/ and the
# tables to docs/bench/scale/master.md, stamped with the commit.
#
#   scripts/master-scale.sh            # about 8 minutes
#   MR_BIN_DIR=target/release DURATION=60s scripts/master-scale.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${MR_BIN_DIR:-target/release}
duration=${DURATION:-30s}
out=docs/bench/scale/master
mkdir -p "$out"
[ -x "$bin/mr" ] && [ -x "$bin/mr-master" ] || {
    echo "no $bin/mr or $bin/mr-master: cargo build --release first" >&2
    exit 1
}
run() { # name, args...
    local name=$1
    shift
    echo "== $name: mr bench master $*" >&2
    MR_BIN_DIR=$bin "$bin/mr" bench master "$@" --json -q >"$out/$name.json"
}
for n in 100 1000 5000 10000; do
    run "workers-$n" --workers "$n" --heartbeat 1s --duration "$duration"
done
run "workers-10000-nojobs" --workers 10000 --heartbeat 1s --duration "$duration" --jobs 0
for b in 10000 100000 1000000; do
    run "blocks-$b" --workers 100 --blocks "$b" --jobs 0 --duration 10s
done
commit=$(git rev-parse --short HEAD)
[ -z "$(git status --porcelain -- master sched common rpc proto cli)" ] || commit="$commit (dirty)"
python3 - "$out" "$commit" <<'PY' >docs/bench/scale/master.md
import json, os, sys, datetime
out, commit = sys.argv[1], sys.argv[2]
def load(n):
    return json.load(open(os.path.join(out, n + ".json")))
print("# The master at scale: cost curves\n")
print(f"Made by `scripts/master-scale.sh` on {datetime.date.today()}, commit {commit}, "
      f"{os.cpu_count()} cores; the load process (`mr bench master`) shares the machine "
      "with the master. Each figure is one run; the JSON beside this file holds every field.\n")
print("## Workers (1 s heartbeats, 20 WordCount jobs of 100 maps flowing)\n")
rows = [("workers-100", "100"), ("workers-1000", "1,000"), ("workers-5000", "5,000"),
        ("workers-10000", "10,000"), ("workers-10000-nojobs", "10,000, no jobs")]
print("| workers | heartbeats/s | failed | p50 ms | p99 ms | max ms | launches/s | lock held % | master CPU % | load CPU % | RSS MiB | bytes/worker |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for name, label in rows:
    d = load(name)
    print(f"| {label} | {d['heartbeats_per_s']:.0f} | {d['heartbeats_failed']} | {d['heartbeat_p50_ms']:.1f} | "
          f"{d['heartbeat_p99_ms']:.1f} | {d['heartbeat_max_ms']:.1f} | {d['launches_per_s']:.1f} | "
          f"{d['lock_held_pct']:.1f} | {d['master_cpu_pct']:.0f} | {d['load_cpu_pct']:.0f} | "
          f"{d['master_rss_mib']:.0f} | {d['bytes_per_worker']:.0f} |")
print("\nLongest lock holds by site (ms):\n")
for name, label in rows:
    d = load(name)
    holds = ", ".join(f"{k} {v:.1f}" for k, v in sorted(d['lock_holds_max_ms'].items(), key=lambda kv: -kv[1]))
    print(f"- {label}: {holds}")
print("\n## Blocks (100 workers, no jobs)\n")
print("| blocks | created/s | bytes/block | RSS MiB | startup s | safe mode off after s | heartbeat p99 ms |")
print("|---|---|---|---|---|---|---|")
for b in ["10000", "100000", "1000000"]:
    d = load("blocks-" + b)
    print(f"| {int(b):,} | {d['blocks_per_s']:.0f} | {d['bytes_per_block']:.0f} | {d['master_rss_mib']:.0f} | "
          f"{d['startup_s']:.2f} | {d['safemode_exit_s']:.2f} | {d['heartbeat_p99_ms']:.1f} |")
PY
echo "wrote docs/bench/scale/master.md" >&2
