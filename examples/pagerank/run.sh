#!/usr/bin/env bash
# Runs PageRank to convergence: one example-pagerank job per iteration, each
# reading the previous one's output, until the ranks' L1 change (the jobs'
# counter delta_micro, in millionths) falls below the threshold.
#   examples/pagerank/run.sh --config CLUSTER_TOML --input DFS_PATH \
#       --output-prefix DFS_PREFIX --nodes N [--threshold T] \
#       [--max-iterations K] [--damping D] [--program PATH]
# `mr` is ${MR:-mr}.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: run.sh --config CLUSTER_TOML --input DFS_PATH --output-prefix DFS_PREFIX
              --nodes N [--threshold T] [--max-iterations K] [--damping D]
              [--program PATH]

Runs one example-pagerank job per iteration, iteration i writing
DFS_PREFIX/iter-i from the previous iteration's output (the first reads
DFS_PATH), until the ranks' L1 change is below T or after K iterations.
Progress goes to stderr, a line per iteration; the final output's path to
stdout.

  --config CLUSTER_TOML   the cluster (passed to mr -c)
  --input DFS_PATH        the graph: node<TAB>rank<TAB>n1,n2,... lines
  --output-prefix PREFIX  where the iterations go; PREFIX/iter-* must not exist
  --nodes N               the graph's node count (the jobs' --param nodes)
  --threshold T           stop when the L1 change is below T [default: 0.0001]
  --max-iterations K      stop after K iterations anyway [default: 20]
  --damping D             the damping factor [default: the job's, 0.85]
  --program PATH          the job program [default: target/release/example-pagerank]
The environment's MR names the mr binary [default: mr].
USAGE
}

die() {
  echo "run.sh: $*" >&2
  exit 2
}

root=$(cd "$(dirname "$0")/../.." && pwd)
mr=${MR:-mr}
config= input= prefix= nodes= damping=
threshold=0.0001
max_iterations=20
program=$root/target/release/example-pagerank
while [ $# -gt 0 ]; do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --config | --input | --output-prefix | --nodes | --threshold | --max-iterations | --damping | --program)
      [ $# -ge 2 ] || die "$1 needs a value"
      case $1 in
        --config) config=$2 ;;
        --input) input=$2 ;;
        --output-prefix) prefix=${2%/} ;;
        --nodes) nodes=$2 ;;
        --threshold) threshold=$2 ;;
        --max-iterations) max_iterations=$2 ;;
        --damping) damping=$2 ;;
        --program) program=$2 ;;
      esac
      shift 2 ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
done
[ -n "$config" ] || die "--config is required (see --help)"
[ -n "$input" ] || die "--input is required (see --help)"
[ -n "$prefix" ] || die "--output-prefix is required (see --help)"
[[ $nodes =~ ^[1-9][0-9]*$ ]] || die "--nodes must be a node count above 0 (see --help)"
[[ $max_iterations =~ ^[1-9][0-9]*$ ]] || die "--max-iterations must be at least 1"
python3 -c 'import sys; t = float(sys.argv[1]); sys.exit(not t > 0)' "$threshold" 2>/dev/null \
  || die "--threshold must be a number above 0"
[ -x "$program" ] || die "$program is not an executable: cargo build --release -p example-pagerank"

params=(--param "nodes=$nodes")
[ -z "$damping" ] || params+=(--param "damping=$damping")

prev=$input
for ((i = 1; i <= max_iterations; i++)); do
  out=$prefix/iter-$i
  if ! summary=$("$mr" -c "$config" job run program --program "$program" \
    --input "$prev" --output "$out" "${params[@]}" --json); then
    echo "run.sh: iteration $i ($prev -> $out) failed" >&2
    exit 1
  fi
  # The L1 change, and whether it is below the threshold.
  result=$(python3 -c '
import json, sys
d = json.load(sys.stdin)["counters"]["delta_micro"] / 1e6
print(repr(d), "yes" if d < float(sys.argv[1]) else "no")' "$threshold" <<<"$summary") \
    || die "iteration $i: no counter delta_micro in the job's summary: is $program example-pagerank?"
  read -r delta converged <<<"$result"
  echo "iteration $i: L1 change $delta -> $out" >&2
  prev=$out
  if [ "$converged" = yes ]; then
    echo "converged after $i iterations (below $threshold)" >&2
    echo "$out"
    exit 0
  fi
done
echo "not converged after $max_iterations iterations (last change $delta, threshold $threshold)" >&2
echo "$prev"
