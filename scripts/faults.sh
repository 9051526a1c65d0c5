#!/usr/bin/env bash
# The fault harness: each scenario brings up its
# own emulated LAN (scripts/lan.sh, about 1 s), runs a real job on real
# processes, catches the phase it needs by an event (the job's attempts held
# in it with `--param hold_maps=F` / `hold_reduces=F` until the harness
# creates F, and the master polled until they are there: never by timing, so
# it passes on release and debug binaries alike), injects its fault (kill -9, SIGSTOP, lan.sh cut-rack, a flipped
# byte, a tmpfs, garbage frames, ...) and checks the job against an
# independent oracle (`mr local wordcount` on the input fetched back) plus
# the invariants of section 2: exactly-once commit of every part-NNNNN,
# stale attempts fenced, bounded time (every wait has a timeout, every
# scenario a watchdog), no leaked tasks, temp files or cache bytes.
#
#   scripts/faults.sh [--list] [--keep] [--iterations N] [--seed S] [SCENARIO ...]   (default: all)
#   scripts/faults.sh --self-test
#
# Ends with the line `N passed, M failed`; exits non-zero if any failed.
# --keep leaves the temp dir (logs of every scenario). Needs root and ip
# netns (lan.sh); skips otherwise (fails under CI=true). Binaries from
# MR_BIN_DIR (.ci/run: target/release), else a debug build. Not part of
# scripts/test.sh (minutes); .ci/run runs it on release binaries.
# --iterations N (or CRASH_LOOP_ITERATIONS; default 8) and --seed S (or
# CRASH_LOOP_SEED; default random, printed) are crash-loop's
# (scripts/crash-loop.sh). --self-test runs only the self-test of the
# checks (no root, a second): each strict check must fail on what it
# guards against; every run does it first.

# shellcheck disable=SC2015 # `test && test || fail` is meant
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
LAN="$ROOT/scripts/lan.sh"
# shellcheck source=scripts/skip.sh
. "$ROOT/scripts/skip.sh"

SCENARIOS=(worker-crash-map worker-crash-shuffle zombie-worker master-restart rack-partition
  corrupt-block disk-full straggler malformed oversized-record client-killed bad-token decommission
  crash-loop)

KEEP=0 LIST=0 SELF_TEST=0 WANT=()
CRASH_LOOP_ITERATIONS=${CRASH_LOOP_ITERATIONS:-8} CRASH_LOOP_SEED=${CRASH_LOOP_SEED:-}
while [ $# -gt 0 ]; do
  case "$1" in
    --list) LIST=1 ;;
    --keep) KEEP=1 ;;
    --self-test) SELF_TEST=1 ;;
    --iterations|--seed)
      [[ "${2:-}" =~ ^[0-9]+$ ]] || { echo "faults.sh: $1 needs a non-negative integer (got '${2:-}')" >&2; exit 2; }
      if [ "$1" = --seed ]; then CRASH_LOOP_SEED=$2; else CRASH_LOOP_ITERATIONS=$2; fi
      shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "faults.sh: unknown option $1" >&2; exit 2 ;;
    *) WANT+=("$1") ;;
  esac
  shift
done
[[ "$CRASH_LOOP_ITERATIONS" =~ ^[1-9][0-9]*$ ]] \
  || { echo "faults.sh: CRASH_LOOP_ITERATIONS must be a positive integer (got '$CRASH_LOOP_ITERATIONS')" >&2; exit 2; }
[ -z "$CRASH_LOOP_SEED" ] || [[ "$CRASH_LOOP_SEED" =~ ^[0-9]+$ ]] \
  || { echo "faults.sh: CRASH_LOOP_SEED must be a non-negative integer (got '$CRASH_LOOP_SEED')" >&2; exit 2; }
if [ "$LIST" = 1 ]; then printf '%s\n' "${SCENARIOS[@]}"; exit 0; fi
[ "${#WANT[@]}" -gt 0 ] || WANT=("${SCENARIOS[@]}")
for s in "${WANT[@]}"; do
  [[ " ${SCENARIOS[*]} " == *" $s "* ]] || { echo "faults.sh: unknown scenario $s (see --list)" >&2; exit 2; }
done

if [ "$SELF_TEST" = 0 ]; then
  if [ "$(id -u)" != 0 ] || ! ip netns list >/dev/null 2>&1 || ! unshare --net true 2>/dev/null \
     || ! command -v tc >/dev/null || ! command -v nft >/dev/null; then
    skip faults "needs root and ip netns (and tc, nft)"
  fi
  # shellcheck source=scripts/lan-free.sh
  . "$ROOT/scripts/lan-free.sh"
  lan_free faults
  BIN=${MR_BIN_DIR:-$ROOT/target/debug}
  if [ -z "${MR_BIN_DIR:-}" ]; then cargo build --workspace --bins -q || exit 1; fi
fi
BIN=${BIN:-}
MRBIN="$BIN/mr"
TMP=$(mktemp -d /tmp/mr-faults.XXXXXX)
mkdir -p "$TMP/oracles"
MOUNTS=()

cleanup() {
  [ "$SELF_TEST" = 1 ] || "$LAN" down >/dev/null 2>&1 || true
  for m in "${MOUNTS[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
  [ "$KEEP" = 1 ] && echo "faults: kept $TMP" || rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- helpers (used inside a scenario's subshell) -------------------------------

D="" CONF=""
say() { echo "   $*"; }
fail() { echo "   FAIL: $*" >&2; exit 1; }
mr() { timeout "${MR_TIMEOUT:-60}" "$MRBIN" --config "$CONF" "$@"; }
jq_() { python3 -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))" "$1"; }
mlog() { sed 's/\x1b\[[0-9;]*m//g' "$D/logs/master.log"; }
count_log() { mlog | grep -c -- "$1" || true; }
pid_of() { cat "$D/pids/$1.pid"; }

lan_up() { # [lan.sh up options]: 4 workers in 2 racks, replication 2, hb 250ms x 8 (2 s expiry)
  D="$TMP/$SC"
  "$LAN" up --dir "$D" --workers 4 --racks 2 --replication 2 --heartbeat 250ms --dead-after 8 \
    --block-size 2MiB "$@" > "$D.up.log" 2>&1 || { cat "$D.up.log" >&2; fail "lan.sh up failed"; }
  CONF="$D/cluster.toml"
}
start_daemon() { # name: start (again) the master or worker NAME in its host, as lan.sh does
  local name=$1 cmd
  if [ "$name" = master ]; then cmd=("$BIN/mr-master" --config "$CONF")
  else cmd=("$BIN/mr-worker" --config "$CONF" --name "$name"); fi
  ip netns exec "mrlan-$name" setsid nohup "${cmd[@]}" >>"$D/logs/$name.log" 2>&1 </dev/null &
  echo $! > "$D/pids/$name.pid"
}
workers_in() { # state -> names
  mr cluster status --json 2>/dev/null \
    | python3 -c 'import json,sys; print(" ".join(w["name"] for w in json.load(sys.stdin)["workers"] if w["state"]==sys.argv[1]))' "$1" 2>/dev/null || true
}
wait_until() { # secs what cmd...: poll cmd every 0.1 s
  local secs=$1 what=$2; shift 2
  local end=$(( $(date +%s) + secs ))
  until "$@"; do [ "$(date +%s)" -lt "$end" ] || fail "timed out after ${secs}s waiting for: $what"; sleep 0.1; done
}
all_alive() { [ "$(workers_in alive | wc -w)" = 4 ]; }
# A restarted master holds writes and job submissions in safe mode until its
# blocks are reported and one heartbeat expiry has passed (HDFS's
# `dfsadmin -safemode wait`).
out_of_safemode() { [ "$(mr admin safemode get --json 2>/dev/null | jq_ 'd["safe_mode"]')" = False ]; }
under_replicated() { mr cluster status --json | jq_ 'd["under_replicated_blocks"]'; }
no_under_replicated() { [ "$(under_replicated 2>/dev/null)" = 0 ]; }

gen_input() { # size path [block]: random text, and the oracle for it (cached by content)
  mr gen randomtextwriter --size "$1" --output "$2" --block-size "${3:-2MiB}" --seed 7 >/dev/null 2>&1 \
    || fail "mr gen randomtextwriter $1 $2 failed"
  oracle_for "$2"
}
cat_dir() { # dir -> every part, in order
  local p
  for p in $(mr fs ls "$1" | awk '$NF ~ /\/part-/ {print $NF}'); do mr fs cat "$p" || return 1; done
}
ORACLE=""
oracle_for() { # dir-or-file in the cluster -> ORACLE = sorted `mr local wordcount` of its bytes
  local f="$TMP/$SC.input" sum
  if mr fs ls "$1" | awk 'NR>1' | grep -q '/$\|/part-'; then cat_dir "$1" > "$f" || fail "cannot read $1 back"
  else mr fs cat "$1" > "$f" || fail "cannot read $1 back"; fi
  sum=$(md5sum < "$f" | cut -c1-32)
  ORACLE="$TMP/oracles/$sum.txt"
  if [ ! -f "$ORACLE" ]; then
    timeout 120 "$MRBIN" local wordcount "$f" --reducers 1 --output "$TMP/oracles/$sum.d" >/dev/null \
      || fail "mr local wordcount failed"
    cat "$TMP/oracles/$sum.d"/part-* | sort > "$ORACLE"
  fi
}
# job_state ID: the job's state; "?" only while polling (a failed call). A
# check that judges the state uses job_state_strict.
job_state() { mr job status "$1" --json 2>/dev/null | jq_ 'd["state"]' 2>/dev/null || echo "?"; }
# job_state_strict ID: the job's state, or "forgotten" when the master says
# it has no such job (and answers other calls); any other error returns 1
# with the error on stderr: a failing `mr` proves nothing about the job.
job_state_strict() {
  local out rc=0
  out=$(mr job status "$1" --json 2>&1) || rc=$?
  if [ "$rc" = 0 ]; then
    echo "$out" | jq_ 'd["state"]' 2>/dev/null && return 0
    echo "mr job status $1: not a job summary: ${out:0:200}" >&2; return 1
  fi
  if [ "$rc" = 1 ] && [[ "$out" == *"no history for job $1" ]] && mr job list >/dev/null 2>&1; then
    echo forgotten; return 0
  fi
  echo "mr job status $1: rc=$rc: ${out:0:200}" >&2; return 1
}
# listed DIR ERE: whether an entry of `mr fs ls DIR` (its paths) matches
# ERE. When `mr` itself fails the scenario fails: an error lists nothing,
# and "not listed" would pass for the wrong reason.
listed() {
  local out
  out=$(mr fs ls "$1" 2>&1) || fail "mr fs ls $1 failed, so nothing can be shown absent: ${out:0:200}"
  echo "$out" | awk 'NR>1 {print $NF}' | grep -qE -- "$2"
}
# refused_clearly WHAT ERE RC OUTPUT: an `mr` call that had to be refused
# was, with the error it should give: exit 1 (or 2, a usage error), no
# panic, and OUTPUT matching ERE. A panic, a timeout or some other error
# also exits non-zero with output: none of them is a refusal.
refused_clearly() {
  [ "$3" != 0 ] || fail "$1: accepted: ${4:0:200}"
  [ "$3" = 1 ] || [ "$3" = 2 ] || fail "$1: exit status $3, not a refusal (1, or 2 for usage): ${4:0:200}"
  ! grep -qE 'panicked|RUST_BACKTRACE' <<<"$4" || fail "$1: a panic, not a refusal: ${4:0:200}"
  grep -qE -- "$2" <<<"$4" || fail "$1: not the expected error /$2/: ${4:0:200}"
}
# probe_covers_proto OUTPUT NWORKERS: `mr admin auth-probe` OUTPUT shows
# every rpc of proto/mr.proto's services refused with no token and with a
# wrong one: the master's once each, the workers' on each of NWORKERS. A
# method the probe forgets would otherwise pass untested.
probe_covers_proto() {
  python3 - "$1" "$2" "$ROOT/proto/mr.proto" <<'PY'
import re, sys
out, n, proto = open(sys.argv[1]).read(), int(sys.argv[2]), open(sys.argv[3]).read()
snake = lambda s: re.sub(r"(?<!^)([A-Z])", r"_\1", s).lower()
missing, total = [], 0
for svc, body in re.findall(r"^service (\w+) \{(.*?)^\}", proto, re.S | re.M):
    for rpc in re.findall(r"^\s*rpc (\w+)\(", body, re.M):
        for tag in ("(no token)", "(wrong token)"):
            total += 1
            if svc == "Master":
                pat, want = rf"^refused  master {snake(rpc)} {re.escape(tag)}:", 1
            else:
                pat, want = rf"^refused  worker \S+ {snake(rpc)} {re.escape(tag)}:", n
            got = len(re.findall(pat, out, re.M))
            if got != want:
                missing.append(f"{svc}.{rpc} {tag}: refused {got} times, want {want}")
if missing or total == 0:
    print("   the probe misses:\n     " + "\n     ".join(missing or ["every rpc (none found in the proto)"]), file=sys.stderr)
    sys.exit(1)
print(f"   the probe covers all {total // 2} rpcs of proto/mr.proto, no token and a wrong one")
PY
}
# lan_do ARGS: a lan.sh fault command that must succeed (a cut that did not
# happen tests nothing).
lan_do() {
  local out
  out=$("$LAN" "$@" 2>&1) || fail "lan.sh $* failed (rc $?): ${out:0:300}"
}
wait_job() { # id [secs] -> prints the final state
  local end=$(( $(date +%s) + ${2:-90} )) s
  while :; do
    s=$(job_state "$1")
    case "$s" in succeeded|failed|killed) echo "$s"; return 0 ;; esac
    [ "$(date +%s)" -lt "$end" ] || { echo "timeout($s)"; return 0; }
    sleep 0.2
  done
}
progress() { # id key
  mr job status "$1" --json 2>/dev/null | jq_ "d['progress']['$2']" 2>/dev/null || echo 0
}
maps_running() { [ "$(progress "$1" maps_running)" -gt 0 ]; }
# The hold: a job submitted with $(hold maps) (or reduces) keeps those
# attempts in their slots until release() creates the scenario's file.
# hold KIND [TAG]: the job's KIND attempts wait for the release file TAG.
hold() { echo "--param hold_$1=$TMP/$SC.release${2:-}"; }
release() { touch "$TMP/$SC.release${1:-}"; }
busy_workers() { # every worker running a map now
  mr cluster status --json | python3 -c '
import json,sys
print(" ".join(w["name"] for w in json.load(sys.stdin)["workers"]
               if w["state"] == "alive" and w["free_map_slots"] < w["map_slots"]))'
}
reduces_running() { [ "$(progress "$1" reduces_running)" -gt 0 ]; }
is_dead() { [[ " $(workers_in dead) " == *" $1 "* ]]; }
maps_all_done() { [ "$(progress "$1" maps_done)" = "$2" ]; }
some_job() { [ -n "$(mr job list 2>/dev/null | awk 'NR>1')" ]; }
busy_worker() { # a worker running a map now (fewer free map slots than slots)
  mr cluster status --json | python3 -c '
import json,sys
for w in json.load(sys.stdin)["workers"]:
    if w["state"] == "alive" and w["free_map_slots"] < w["map_slots"]:
        print(w["name"]); break'
}

# check_job ID OUT REDUCERS [ORACLE]: the job succeeded with exactly one
# committed part per reducer, equal to the oracle, and left nothing behind.
check_job() {
  local id=$1 out=$2 r=$3 oracle=${4:-$ORACLE} st parts want w i
  st=$(wait_job "$id" 120)
  [ "$st" = succeeded ] || { mr job status "$id" >&2; fail "job $id: $st"; }
  parts=$(mr fs ls "$out" | awk 'NR>1 {print $NF}' | sed "s|^$out/||" | sort | tr '\n' ' ')
  want="_SUCCESS "; for ((i = 0; i < r; i++)); do want+="$(printf 'part-%05d ' "$i")"; done
  [ "$parts" = "$want" ] || fail "job $id output is [$parts], want [$want] (exactly-once commit)"
  cat_dir "$out" | sort > "$TMP/$SC.out.$id" || fail "cannot read $out"
  [ -s "$TMP/$SC.out.$id" ] || fail "job $id output is empty"
  cmp -s "$TMP/$SC.out.$id" "$oracle" \
    || { diff "$oracle" "$TMP/$SC.out.$id" | head -5 >&2; fail "job $id output differs from the oracle"; }
  listed / '^/_staging' && fail "/_staging left after job $id"
  # no leaked tasks or temp files on the live workers (cleanup comes with a heartbeat)
  local end=$(( $(date +%s) + 15 )) left
  while :; do
    left=""
    for w in $(workers_in alive); do
      [ -e "$D/$w/jobs/job-$id" ] && left+=" $w:jobs/job-$id"
      [ -n "$(ls -A "$D/$w/blocks/tmp" 2>/dev/null)" ] && left+=" $w:blocks/tmp"
    done
    [ -z "$left" ] && break
    [ "$(date +%s)" -lt "$end" ] || fail "job $id left files behind:$left"
    sleep 0.25
  done
  mr cluster status --json | python3 -c '
import json,sys
for w in json.load(sys.stdin)["workers"]:
    assert w["cache_used_bytes"] <= w["cache_capacity_bytes"], w' || fail "cache over capacity"
  say "job $id: succeeded, parts $(echo "$parts" | wc -w) exactly once, == oracle ($(wc -l < "$oracle") words), nothing left"
}
history_json() { mr job history "$1" 2>/dev/null; }
# rerun_check ID VICTIM: the maps re-run (attempt > 0) are exactly those the
# master re-queued because VICTIM was lost (running there, or their output
# lived only there): each has >= 2 attempts, no other map was re-run, and no
# attempt after the first ran on the dead worker.
rerun_check() {
  mlog | grep "re-queued: its worker was lost job=$1 kind=Map" | grep "worker=\"$2\"" \
    | sed -E 's/.* index=([0-9]+) .*/\1/' | sort -un > "$TMP/$SC.requeued"
  history_json "$1" | python3 -c '
import json,sys
v, requeued = sys.argv[1], {int(x) for x in open(sys.argv[2]).read().split()}
recs = [json.loads(l) for l in sys.stdin if l.strip()]
maps = [r for r in recs if r.get("kind") == "map"]
rerun = {r["index"] for r in maps if r["attempt"] > 0}
# maps whose output lived on v (a fetch failure of a reducer may re-queue them first)
on_v = {r["index"] for r in maps if r["attempt"] == 0 and r["node"] == v}
assert requeued, f"the master re-queued no map of {v}"
assert requeued <= rerun, f"maps re-queued for the loss of {v} {sorted(requeued)} not all re-run {sorted(rerun)}"
assert rerun <= requeued | on_v, f"maps re-run {sorted(rerun - requeued - on_v)} neither ran on nor were lost with {v}"
late = [(r["kind"], r["index"], r["attempt"]) for r in recs if r.get("node") == v and r["attempt"] > 0]
assert not late, f"retries ran on the dead worker: {late}"
print(f"   maps re-run: {sorted(rerun)}: re-queued for the loss of {v} {sorted(requeued)}, or their output was on it; none other")' "$2" "$TMP/$SC.requeued" \
    || fail "attempt history"
}

# ---- scenarios -------------------------------------------------------------------

sc_worker-crash-map() {
  lan_up
  gen_input 24MiB /in
  local id victim=""
  # the maps are held in their slots until the kill has landed
  id=$(mr job submit wordcount --input /in --output /out --reducers 4 $(hold maps)) || fail "submit failed"
  wait_until 30 "maps running" maps_running "$id"
  found_busy() { victim=$(busy_worker); [ -n "$victim" ]; }
  wait_until 10 "a worker running a map" found_busy
  kill -9 "$(pid_of "$victim")"
  say "killed $victim (kill -9) while it held $(progress "$id" maps_running) running maps of the job"
  wait_until 8 "$victim marked dead (expiry 2 s + a heartbeat)" is_dead "$victim"
  release
  check_job "$id" /out 4
  [[ " $(workers_in dead) " == *" $victim "* ]] || fail "$victim not marked dead"
  rerun_check "$id" "$victim"
  wait_until 30 "re-replication after the death" no_under_replicated
  say "blocks re-replicated: 0 under-replicated"
}

sc_worker-crash-shuffle() {
  # mostly unique words: the map outputs are as big as the input; the
  # reduces are held before they fetch until the kill has landed
  lan_up
  python3 - "$TMP/$SC.txt" <<'PY'
import random, sys
r = random.Random(3)
with open(sys.argv[1], "w") as f:
    for _ in range(120000):
        f.write(" ".join("%08x" % r.getrandbits(32) for _ in range(8)) + "\n")
PY
  mr fs put "$TMP/$SC.txt" /in.txt >/dev/null || fail "put failed"
  oracle_for /in.txt
  local id victim maps rdone
  id=$(mr job submit wordcount --input /in.txt --output /out --reducers 4 $(hold reduces)) || fail "submit failed"
  maps=$(mr job status "$id" --json | jq_ 'd["maps"]')
  wait_until 60 "every map done" maps_all_done "$id" "$maps"
  wait_until 30 "reduces running (held before their fetches)" reduces_running "$id"
  victim=""
  for w in w1 w2 w3 w4; do ls "$D/$w/jobs/job-$id"/map-*.out >/dev/null 2>&1 && { victim=$w; break; }; done
  [ -n "$victim" ] || fail "no worker holds map outputs"
  rdone=$(progress "$id" reduces_done)
  kill -9 "$(pid_of "$victim")"
  say "killed $victim (holding map outputs) after all $maps maps, $rdone/4 reduces done"
  [ "$rdone" -lt 4 ] || fail "the reduces were all done before the kill (the window was missed)"
  wait_until 8 "$victim marked dead (expiry 2 s + a heartbeat)" is_dead "$victim"
  release
  check_job "$id" /out 4
  rerun_check "$id" "$victim"
}

# stale_reports VICTIM: master log lines that fenced off a task report of
# VICTIM (its attempt reported after its death); stale heartbeats, which any
# paused worker sends, are not counted.
stale_reports() {
  mlog | grep -E 'stale task report fenced off|task report from a stale worker incarnation fenced off' \
    | grep -cE "worker=\"?$1\"?( |$)" || true
}
# finished_attempts LOG JOB: `index attempt` of every map attempt of JOB the
# worker log LOG says finished (succeeded or failed).
finished_attempts() {
  sed 's/\x1b\[[0-9;]*m//g' "$1" \
    | sed -nE "s/.*task\{job=$2 kind=\"map\" index=([0-9]+) attempt=([0-9]+)\}: task (succeeded|failed).*/\1 \2/p"
}

sc_zombie-worker() {
  # A zombie: a worker paused (SIGSTOP) past its expiry while it holds a
  # running map; woken, its attempt reports after its death, and that
  # report must be fenced. By events, not timing: the master is paused too
  # from the zombie's wake-up until the zombie's log shows its attempt
  # finished. The heartbeat that makes the zombie re-register (which aborts
  # its attempts) and the attempt's report then both wait in the master's
  # socket: the report reaches the master before any re-registration, on
  # fast and slow binaries alike. Expiry 3 s; the master's pause (one map of
  # a 1 MiB block) stays well below it.
  lan_up --block-size 1MiB --dead-after 12
  gen_input 12MiB /in 1MiB
  local id victim f0 f1 wlog
  id=$(mr job submit wordcount --input /in --output /out --reducers 4 $(hold maps)) || fail "submit failed"
  wait_until 30 "maps running" maps_running "$id"
  found_busy() { victim=$(busy_worker); [ -n "$victim" ]; }
  wait_until 10 "a worker running a map" found_busy
  wlog="$D/logs/$victim.log"
  [ -z "$(finished_attempts "$wlog" "$id")" ] || fail "$victim finished a held map before the release"
  f0=$(stale_reports "$victim")
  kill -STOP "$(pid_of "$victim")"
  say "SIGSTOP $victim (expiry 3 s) while it holds a running map"
  wait_until 10 "$victim marked dead while stopped" is_dead "$victim"
  kill -STOP "$(pid_of master)"
  release
  kill -CONT "$(pid_of "$victim")"
  zombie_done() { [ -n "$(finished_attempts "$wlog" "$id")" ]; }
  wait_until 30 "the zombie's attempt finished (its log), master paused" zombie_done
  kill -CONT "$(pid_of master)"
  finished_attempts "$wlog" "$id" > "$TMP/$SC.stale"
  say "zombie $victim finished map attempt(s) [$(tr '\n' ' ' < "$TMP/$SC.stale")] (index attempt) after its death; master resumed"
  stale_seen() { [ "$(stale_reports "$victim")" -gt "$f0" ]; }
  wait_until 15 "the zombie's task report fenced in the master log" stale_seen
  f1=$(stale_reports "$victim")
  mlog | grep -E 'task report fenced off|stale worker incarnation fenced off' | grep -E "worker=\"?$victim" \
    | tail -2 | cut -c1-220 | sed 's/^/     /'
  check_job "$id" /out 4
  local h; h=$(history_json "$id") || fail "mr job history $id failed"
  python3 -c '
import json,sys
v, stale = sys.argv[1], {tuple(map(int, l.split())) for l in open(sys.argv[2]) if l.strip()}
recs = [json.loads(l) for l in sys.stdin if l.strip()]
maps = [r for r in recs if r.get("type") == "task" and r["kind"] == "map"]
bad = [r for r in maps if r["node"] == v and (r["index"], r["attempt"]) in stale]
assert not bad, f"a fenced attempt of the zombie is in the history: {bad}"
for i, _ in stale:
    ok = [r for r in maps if r["index"] == i and r["state"] == "succeeded"]
    assert len(ok) == 1 and ok[0]["node"] != v, f"map {i}: committed by {ok}, want one attempt elsewhere"
print(f"   the zombie'"'"'s attempts {sorted(stale)}: not in the history; each map committed once elsewhere")' \
    "$victim" "$TMP/$SC.stale" <<<"$h" || fail "attempt history"
  wait_until 10 "$victim back (re-registered)" all_alive
  say "$victim re-registered; $((f1 - f0)) stale task reports of it fenced"
}

sc_master-restart() {
  lan_up
  gen_input 32MiB /in
  head -c $((3 << 20)) /dev/urandom > "$TMP/$SC.acked"
  mr fs put "$TMP/$SC.acked" /acked >/dev/null || fail "put /acked failed"
  local id waiter
  id=$(mr job submit wordcount --input /in --output /out --reducers 4 $(hold maps)) || fail "submit failed"
  MR_TIMEOUT=150 mr job wait "$id" > "$TMP/$SC.wait" 2>&1 &
  waiter=$!
  wait_until 30 "maps running" maps_running "$id"
  kill -9 "$(pid_of master)"
  release
  say "master killed (kill -9) mid-job; restarting it in 2 s"
  sleep 2
  start_daemon master
  wait_until 30 "workers re-registered without a restart" all_alive
  wait_until 30 "the restarted master out of safe mode" out_of_safemode
  local rc=0; wait "$waiter" || rc=$?
  say "mr job wait: rc=$rc: $(tail -n 1 "$TMP/$SC.wait")"
  [ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "mr job wait: rc=$rc (want a clean failure)"
  grep -qiE 'resubmit|submit it again' "$TMP/$SC.wait" || fail "mr job wait does not say to resubmit"
  local st; st=$(job_state_strict "$id") || fail "job $id after the restart: mr job status failed"
  [ "$st" = failed ] || [ "$st" = forgotten ] || fail "job $id after the restart: $st (want failed, or forgotten)"
  say "job $id after the restart: $st (never succeeded with partial output)"
  cmp -s <(mr fs cat /acked) "$TMP/$SC.acked" || fail "/acked differs after the restart"
  oracle_for /in
  say "acknowledged files byte-identical after the restart"
  listed / '^/out/?$' && fail "the forgotten job left /out"
  listed / '^/_staging' && fail "/_staging left after the restart"
  id=$(mr job submit wordcount --input /in --output /out --reducers 4) || fail "resubmit failed"
  check_job "$id" /out 4
}

# rack2_reachable SECS: a TCP connection from this shell (the client port,
# on the core switch) to w2 (rack 2) opens within SECS: the proof that a
# cut of rack 2 is in force, or is lifted.
rack2_reachable() { timeout "$1" bash -c 'exec 3<>/dev/tcp/10.77.2.2/7100' 2>/dev/null; }

sc_rack-partition() {
  lan_up --heartbeat 250ms --dead-after 16   # expiry 4 s
  gen_input 24MiB /in
  local id r0 d0 r1 x0
  r0=$(count_log re-replicating) d0=$(count_log 'marked dead')
  id=$(mr job submit wordcount --input /in --output /out1 --reducers 4 $(hold maps)) || fail "submit failed"
  wait_until 30 "maps running" maps_running "$id"
  lan_do cut-rack 2
  rack2_reachable 0.5 && fail "w2 (rack 2) still reachable after lan.sh cut-rack 2"
  sleep 1.5
  lan_do restore-rack 2
  wait_until 5 "w2 (rack 2) reachable again after restore-rack" rack2_reachable 0.5
  release
  say "short cut: rack 2 partitioned for 2 s (expiry 4 s, w2 seen unreachable) while maps ran"
  check_job "$id" /out1 4
  sleep 1
  [ "$(count_log 'marked dead')" = "$d0" ] || fail "a worker was declared dead by a 2 s flap"
  [ "$(count_log re-replicating)" = "$r0" ] || fail "re-replication issued for a 2 s flap (storm)"
  say "no worker declared dead, 0 re-replications for the short flap"
  lan_do cut-rack 2
  rack2_reachable 0.5 && fail "w2 (rack 2) still reachable after lan.sh cut-rack 2"
  say "long cut: rack 2 partitioned for 12 s (w2 seen unreachable)"
  local t0; t0=$(date +%s)
  id=$(mr job submit wordcount --input /in --output /out2 --reducers 4) || fail "submit failed"
  check_job "$id" /out2 4
  wait_until 30 "under-replicated blocks restored on rack 1" no_under_replicated
  r1=$(count_log re-replicating)
  [ "$r1" -gt "$r0" ] || fail "no re-replication after the long cut"
  say "$((r1 - r0)) re-replications; every block at its factor on rack 1"
  sleep $(( 12 - ($(date +%s) - t0) > 0 ? 12 - ($(date +%s) - t0) : 0 ))
  x0=$(count_log 'excess replica')
  lan_do restore-rack 2
  wait_until 20 "rack 2 back" all_alive
  over_ok() {
    [ "$(count_log 'excess replica')" -gt "$x0" ] || return 1
    mr fs stat /in/part-00000 --json >/dev/null || return 1
    local f
    for f in $(mr fs ls /in | awk '$NF ~ /\/part-/ {print $NF}'); do
      mr fs stat "$f" --json | python3 -c '
import json,sys; d=json.load(sys.stdin)
sys.exit(0 if all(len(b["replicas"]) == d["replication"] for b in d["blocks"]) else 1)' || return 1
    done
  }
  wait_until 30 "over-replicas trimmed after the heal" over_ok
  say "after the heal: $(( $(count_log 'excess replica') - x0 )) excess replicas removed, every input block at 2"
  cmp -s <(cat_dir /in) "$TMP/$SC.input" || fail "input changed"
}

sc_corrupt-block() {
  lan_up
  gen_input 16MiB /in
  local f blk victim c0 id i
  f=/in/part-00001
  mr fs cat "$f" > "$TMP/$SC.part" || fail "cannot read $f"
  read -r blk victim < <(mr fs stat "$f" --json | python3 -c '
import json,sys; b=json.load(sys.stdin)["blocks"][0]; print(b["id"], b["replicas"][0])')
  [ -f "$D/$victim/blocks/blk_$blk" ] || fail "no block file blk_$blk on $victim"
  mr cache rm / >/dev/null 2>&1 || fail "mr cache rm / failed"   # reads must come from disk
  uncached() { mr fs stat "$f" --json | python3 -c '
import json,sys; sys.exit(0 if not any(b["cached_on"] for b in json.load(sys.stdin)["blocks"]) else 1)'; }
  wait_until 10 "$f out of every cache" uncached
  python3 - "$D/$victim/blocks/blk_$blk" <<'PY'
import sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[len(b) // 2] ^= 0x01
open(p, "r+b").write(b)
PY
  say "flipped one byte of block $blk ($f) on $victim; caches dropped"
  c0=$(count_log 'corrupt replica')
  corrupt_seen() { [ "$(count_log 'corrupt replica')" -gt "$c0" ]; }
  # readers pick a random replica: every read must give the good bytes, and
  # one that hits the flipped replica must detect it (checksum) and report
  # it. A read caches the block where it was served, and readers prefer a
  # cached replica: the cache is dropped again after each read, so every
  # read picks afresh (a miss 20 times in a row: one in a million).
  for i in $(seq 1 20); do
    cmp -s <(mr fs cat "$f") "$TMP/$SC.part" || fail "read $i of $f returned wrong bytes"
    corrupt_seen && break
    # the read's cache fill may reach the master after the drop: drop again
    # until the master sees the block cached nowhere
    drop() { mr cache rm "$f" >/dev/null 2>&1 && uncached; }
    wait_until 10 "$f out of every cache" drop
  done
  wait_until 5 "the corrupt replica reported to the master" corrupt_seen
  say "read $i of $f hit the flipped replica: detected, good bytes served from the other one"
  mlog | grep 'corrupt replica' | tail -1 | cut -c1-200 | sed 's/^/     /'
  good() { # the block is back at 2 replicas and the bad file is gone or rewritten good
    no_under_replicated || return 1
    [ ! -f "$D/$victim/blocks/blk_$blk" ] || cmp -s "$TMP/$SC.part" "$D/$victim/blocks/blk_$blk"
  }
  wait_until 30 "re-replication from the good copy, corrupt file deleted" good
  say "block $blk re-replicated from the good replica; no corrupt copy left on $victim"
  id=$(mr job submit wordcount --input /in --output /out --reducers 4) || fail "submit failed"
  check_job "$id" /out 4
}

sc_disk-full() {
  lan_up
  # w4's data dir becomes a 6 MiB tmpfs: stop it, mount, start it again
  kill -9 "$(pid_of w4)"; sleep 0.3
  rm -rf "$D/w4"; mkdir -p "$D/w4"
  mount -t tmpfs -o size=6m tmpfs "$D/w4" || fail "cannot mount a tmpfs"
  MOUNTS+=("$D/w4")
  echo "$D/w4" >> "$TMP/mounts"
  start_daemon w4
  wait_until 20 "w4 alive on its tmpfs" all_alive
  gen_input 32MiB /in
  say "w4 on a 6 MiB tmpfs: $(df -h --output=used,size "$D/w4" | tail -1 | xargs) used"
  head -c $((8 << 20)) /dev/urandom > "$TMP/$SC.big"
  # The client's own log too: when w4 is a block's first target, its
  # ENOSPC comes back to the client, not through another worker's log.
  mr fs put "$TMP/$SC.big" /big --replication 2 >/dev/null 2> "$D/logs/put-client.log" \
    || { cat "$D/logs/put-client.log" >&2; fail "put with w4 full failed"; }
  cmp -s <(mr fs cat /big) "$TMP/$SC.big" || fail "/big differs"
  say "writes that landed on the full w4 failed over: /big intact"
  local id
  id=$(mr job submit wordcount --input /in --output /out --reducers 4) || fail "submit failed"
  check_job "$id" /out 4
  [ -z "$(ls "$D/w4/blocks/tmp" 2>/dev/null)" ] || fail "half-written blocks left in w4's tmp"
  local n; n=$(sed 's/\x1b\[[0-9;]*m//g' "$D"/logs/*.log | grep -c 'No space left on device' || true)
  [ "$n" -gt 0 ] || fail "no write hit the full w4 (the scenario tested nothing)"
  say "$n writes hit ENOSPC on w4 and went elsewhere; no half-written block left there"
}

sc_decommission() {
  # The two holders of a block of the input (replication 2) are
  # decommissioned one after the other (`mr admin decommission --wait`)
  # while a job's maps are held on the workers, then killed with -9 once
  # the job is done: no block is lost, the input and the output read back
  # whole, and nothing of the job was launched on them after their
  # decommission (a leaving worker gets no new task).
  lan_up
  gen_input 24MiB /in
  local first a b id t_release st
  first=$(mr fs ls /in | awk 'NR>1 && $NF ~ /\/part-/ {print $NF; exit}')
  read -r a b < <(mr fs stat "$first" --json | jq_ '" ".join(d["blocks"][0]["replicas"])') \
    || fail "no replicas for $first"
  [ -n "$a" ] && [ -n "$b" ] || fail "block 0 of $first is not on two workers"
  cat_dir /in | md5sum > "$TMP/$SC.in.md5" || fail "cannot read /in"
  id=$(mr job submit wordcount --input /in --output /out --reducers 4 $(hold maps)) || fail "submit failed"
  wait_until 30 "maps running" maps_running "$id"
  for w in "$a" "$b"; do
    MR_TIMEOUT=90 mr admin decommission "$w" --wait --timeout 60s >/dev/null 2>"$TMP/$SC.$w.err" \
      || { cat "$TMP/$SC.$w.err" >&2; fail "decommission $w did not finish"; }
    st=$(mr cluster status --json | jq_ "[w['admin_state'] for w in d['workers'] if w['name'] == '$w'][0]")
    [ "$st" = decommissioned ] || fail "$w is $st after decommission --wait"
  done
  say "$a and $b (the holders of $first's first block) decommissioned while the job's maps were held"
  t_release=$(date +%s%3N)
  release
  check_job "$id" /out 4
  history_json "$id" | python3 -c '
import json,sys
t, out = int(sys.argv[1]), set(sys.argv[2:])
late = [(r["kind"], r["index"], r["node"]) for r in map(json.loads, filter(str.strip, sys.stdin))
        if r.get("type") == "task" and r.get("node") in out and r.get("start_ms", 0) >= t]
assert not late, f"attempts launched on decommissioned workers: {late}"' "$t_release" "$a" "$b" \
    || fail "a decommissioned worker got new tasks"
  kill -9 "$(pid_of "$a")" "$(pid_of "$b")"
  both_dead() { is_dead "$a" && is_dead "$b"; }
  wait_until 10 "$a and $b marked dead" both_dead
  mr admin fsck >/dev/null || { mr admin fsck >&2; fail "blocks lost with $a and $b"; }
  cmp -s <(cat_dir /in | md5sum) "$TMP/$SC.in.md5" || fail "/in reads back other bytes"
  cat_dir /out | sort | cmp -s - "$ORACLE" || fail "/out reads back other words"
  wait_until 30 "every block at its replication factor" no_under_replicated
  say "killed both (kill -9): fsck healthy, /in and /out whole"
}

exec_time() { mr job status "$1" --json | jq_ 'd["exec_time_s"]'; }
sc_straggler() {
  # w2's maps make no progress: they are held in their slots (hold_workers=w2)
  # until released. The same job runs with [scheduler] speculative off, then,
  # after a master restart, with it on: off, the job cannot finish while w2
  # is held; on, backups elsewhere finish it while w2 is still held.
  lan_up
  gen_input 32MiB /in
  local id_off id_on t_off t_on maps
  id_off=$(mr job submit wordcount --input /in --output /out-off --reducers 4 $(hold maps .off) --param hold_workers=w2) \
    || fail "submit failed"
  maps=$(mr job status "$id_off" --json | jq_ 'd["maps"]')
  stuck_on_w2() { # every map done but those held on w2
    local done running
    done=$(progress "$id_off" maps_done) running=$(progress "$id_off" maps_running)
    [ "$running" -gt 0 ] && [ $((done + running)) = "$maps" ] && [ "$(busy_workers)" = w2 ]
  }
  wait_until 60 "every map done but those held on w2" stuck_on_w2
  # long past the speculation threshold (max(2 x median, median + 1 s)):
  # with speculation off nothing may move
  sleep 3
  [ "$(job_state "$id_off")" = running ] || fail "job $id_off: $(job_state "$id_off") with its maps held on w2"
  [ "$(mr job status "$id_off" --json | jq_ 'd["speculative_launched"]')" = 0 ] \
    || fail "a speculative attempt with speculation off"
  say "speculative = false: job $id_off waits for its $(progress "$id_off" maps_running) maps held on w2; released"
  release .off
  check_job "$id_off" /out-off 4
  t_off=$(exec_time "$id_off")
  local h_off; h_off=$(history_json "$id_off") || fail "mr job history $id_off failed"
  grep -q '"speculative":true' <<<"$h_off" && fail "a speculative attempt with speculation off"
  kill -TERM "$(pid_of master)"
  wait_until 15 "the master stopped" bash -c "! kill -0 $(pid_of master) 2>/dev/null"
  printf '\n[scheduler]\nspeculative = true\n' >> "$CONF"
  start_daemon master
  wait_until 30 "all workers back with the restarted master" all_alive
  wait_until 30 "the restarted master out of safe mode" out_of_safemode
  id_on=$(mr job submit wordcount --input /in --output /out-on --reducers 4 $(hold maps .on) --param hold_workers=w2) \
    || fail "submit failed"
  # never released: only backups can finish the maps held on w2
  check_job "$id_on" /out-on 4
  release .on
  t_on=$(exec_time "$id_on")
  history_json "$id_on" | python3 -c '
import json,sys
t_off, t_on = float(sys.argv[1]), float(sys.argv[2])
recs = [json.loads(l) for l in sys.stdin if l.strip()]
job = recs[-1]
spec = [r for r in recs if r.get("type") == "task" and r.get("speculative")]
won = [r for r in spec if r["state"] == "succeeded"]
assert job["speculative_launched"] >= 1 and spec, f"no speculative attempt: {job}"
assert won and job["speculative_won"] == len(won), f"no speculative attempt won: {spec} {job}"
assert all(r["node"] != "w2" for r in won), f"a backup won on the slow worker: {won}"
ok_maps = [r for r in recs if r.get("type") == "task" and r["kind"] == "map" and r["state"] == "succeeded"]
assert all(r["node"] != "w2" for r in ok_maps), "a map held on w2 finished: it was never released"
# each task committed exactly one successful attempt
ok = {}
for r in recs:
    if r.get("type") == "task" and r["state"] == "succeeded":
        k = (r["kind"], r["index"]); ok[k] = ok.get(k, 0) + 1
assert all(v == 1 for v in ok.values()), f"a task with two successful attempts: {ok}"
launched, nwon = job["speculative_launched"], job["speculative_won"]
which = ", ".join("%s %d attempt %d on %s" % (r["kind"], r["index"], r["attempt"], r["node"]) for r in won)
print(f"   speculative = true: succeeded in {t_on:.1f}s with w2 still held (off: {t_off:.1f}s, released by hand); backups launched {launched}, won {nwon}: {which}")' "$t_off" "$t_on" \
    || fail "speculation history"
  mlog | grep -c "speculative backup launched" | sed 's/^/   backup launches in the master log: /'
}

sc_malformed() {
  lan_up --block-size 1MiB
  gen_input 4MiB /in 1MiB
  local before jobs0 out
  ns_listing() { local a b; a=$(mr fs ls / 2>&1) && b=$(mr fs ls /in 2>&1) || fail "mr fs ls failed: $a $b"; echo "$a$b"; }
  before=$(ns_listing) || fail "cannot list the namespace"
  jobs0=$(mr job list --json | jq_ 'len(d) if isinstance(d, list) else len(d.get("jobs", []))')
  bad() { # description, the error it must give (ERE), then the mr arguments
    local what=$1 want=$2 rc=0; shift 2
    out=$(mr "$@" 2>&1) || rc=$?
    refused_clearly "$what" "$want" "$rc" "$out"
    say "refused: $what: $(echo "$out" | grep -m1 -i error | cut -c1-110)"
  }
  bad "unknown job type" 'unknown job "nosuchjob"' job submit nosuchjob --input /in --output /o1
  bad "reducers 0" 'reducers must be at least 1' job submit wordcount --input /in --output /o2 --reducers 0
  bad "reducers -1" "unexpected argument '-1'" job submit wordcount --input /in --output /o3 --reducers -1
  bad "missing input" 'input /nope does not exist' job submit wordcount --input /nope --output /o4
  bad "existing output" 'output /in already exists' job submit wordcount --input /in --output /in
  bad "relative output" 'path "o5" is not absolute' job submit wordcount --input /in --output o5
  bad "sort buffer 0" 'sort-buffer must be between 1MiB and 4GiB' job submit wordcount --input /in --output /o6 --sort-buffer 0
  bad "sort buffer 1 byte" 'sort buffer 1 bytes is out of range: it must be at least 1MiB' job submit wordcount --input /in --output /o6 --sort-buffer 1
  bad "bad parameter" 'param "novalue" is not key=value' job submit wordcount --input /in --output /o7 --param novalue
  bad "bad format" "invalid value 'nonsense' for '--format" job submit sort --input /in --output /o8 --format nonsense
  bad "non-UTF-8 path" 'invalid UTF-8' job submit wordcount --input "$(printf '/in\xff')" --output /o9
  bad "huge path (a 20000-byte component)" 'path is longer than 4096 bytes' job submit wordcount --input "/$(head -c 20000 /dev/zero | tr '\0' a)" --output /o10
  bad "block size 0" 'block size 0 is out of range' fs put "$TMP/$SC.input" /o11 --block-size 0
  bad "output replication 100" 'replication 100 is out of range' job submit wordcount --input /in --output /o12 --output-replication 100
  [ "$(ns_listing)" = "$before" ] || fail "a refused spec wrote something (or mr fs ls failed)"
  [ "$(mr job list --json | jq_ 'len(d) if isinstance(d, list) else len(d.get("jobs", []))')" = "$jobs0" ] \
    || fail "a refused spec created a job"
  say "no file and no job created by the refused specs"
  # garbage, truncated and oversized frames to the master's and a worker's gRPC ports
  python3 - 10.77.0.1 7070 10.77.1.1 7100 <<'PY' || fail "garbage sender failed"
import socket, sys, os, struct
targets = [(sys.argv[1], int(sys.argv[2])), (sys.argv[3], int(sys.argv[4]))]
pre = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
def frame(t, flags, sid, payload, length=None):
    n = len(payload) if length is None else length
    return struct.pack(">I", n)[1:] + bytes([t, flags]) + struct.pack(">I", sid) + payload
sends = [
    os.urandom(4096),                                        # garbage
    pre[:10],                                                # truncated preface
    pre + frame(4, 0, 0, b"") + frame(1, 4, 1, b"\x00" * 5), # bad HPACK headers
    pre + frame(4, 0, 0, b"") + frame(0, 0, 1, b"", length=16_000_000),  # oversized frame header
    pre + frame(4, 0, 0, b"") + os.urandom(100_000),         # garbage after the preface
    b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",                    # HTTP/1
    b"\x00\x00\x00\x00\x05" + os.urandom(5),                  # a bare gRPC message, no HTTP/2
]
for host, port in targets:
    for s in sends:
        for _ in range(3):
            try:
                c = socket.create_connection((host, port), timeout=3)
                c.sendall(s)
                c.settimeout(1)
                try: c.recv(65536)
                except Exception: pass
                c.close()
            except Exception as e:
                pass
print(f"   sent {len(sends) * 3} bad streams to each of {targets}")
PY
  kill -0 "$(pid_of master)" && kill -0 "$(pid_of w1)" || fail "a daemon died of the garbage"
  all_alive || fail "not every worker alive after the garbage"
  local id
  id=$(mr job submit wordcount --input /in --output /out --reducers 2) || fail "submit after garbage failed"
  check_job "$id" /out 2
  mr fs cat /in/part-00000 >/dev/null || fail "w1 or the master stopped serving reads"
  say "master and w1 alive and serving after the garbage"
}

sc_oversized-record() {
  lan_up --block-size 1MiB
  python3 - "$TMP/$SC.txt" "$TMP/$SC.word.txt" <<'PY'
import random, sys
r = random.Random(5)
words = ["w%d" % i for i in range(3000)]
def normal(f, n):
    for _ in range(n):
        f.write(" ".join(r.choice(words) for _ in range(8)) + "\n")
with open(sys.argv[1], "w") as f:
    normal(f, 40000)
    # one 3.4 MiB line: bigger than a block (1 MiB) and than the sort buffer (1 MiB)
    f.write(" ".join(r.choice(words) for _ in range(600000)) + "\n")
    normal(f, 40000)
with open(sys.argv[2], "w") as f:
    normal(f, 1000)
    f.write("x" * (2 << 20) + " tail\n")   # one 2 MiB word: an output record > a block
    normal(f, 1000)
PY
  mr fs put "$TMP/$SC.txt" /big.txt --block-size 1MiB >/dev/null || fail "put failed"
  oracle_for /big.txt
  say "input $(stat -c %s "$TMP/$SC.txt") bytes in 1 MiB blocks with a 3.4 MiB line; sort buffer 1 MiB"
  local id out
  id=$(mr job submit wordcount --input /big.txt --output /out --reducers 2 --sort-buffer 1MiB) || fail "submit failed"
  check_job "$id" /out 2
  # the design refuses an output record bigger than the output block (parts
  # are cut at record boundaries): a clear error, nothing committed
  mr fs put "$TMP/$SC.word.txt" /word.txt --block-size 1MiB >/dev/null || fail "put failed"
  id=$(mr job submit wordcount --input /word.txt --output /out-word --reducers 1 --sort-buffer 1MiB) || fail "submit failed"
  [ "$(wait_job "$id" 90)" = failed ] || fail "job $id with a 2 MiB key did not fail"
  out=$(mr job status "$id" --json | jq_ 'd["error"]')
  [[ "$out" == *"larger than the output block size"* ]] || fail "job $id failed without the clear error: $out"
  say "a 2 MiB key (> the 1 MiB output block) fails the job clearly: ${out:0:120}"
  listed / '^/(out-word|_staging)' && fail "the failed job left output or staging"
  mlog | grep -q OutOfRange && fail "OutOfRange (message too large) in the master log"
  ! grep -q OutOfRange "$D"/logs/w*.log || fail "OutOfRange (message too large) in a worker log"
  say "no OutOfRange anywhere; nothing of the failed job committed"
}

sc_client-killed() {
  lan_up
  gen_input 32MiB /in
  local cli id
  "$MRBIN" --config "$CONF" job run wordcount --input /in --output /out --reducers 4 $(hold maps) > "$TMP/$SC.run" 2>&1 &
  cli=$!
  wait_until 30 "the job submitted" some_job
  id=$(mr job list --json | jq_ 'max(j["job_id"] for j in (d if isinstance(d, list) else d["jobs"]))' | tail -1)
  wait_until 30 "maps running" maps_running "$id"
  kill -9 "$cli"
  wait "$cli" 2>/dev/null
  release
  say "mr job run (pid $cli) killed -9 with $(progress "$id" maps_done) maps done"
  check_job "$id" /out 4
  [ "$(job_state "$id")" = succeeded ] || fail "mr job status: not succeeded"
}

sc_bad-token() {
  lan_up
  gen_input 4MiB /in
  local ui token code j0
  j0=$(mr job list --json | md5sum)
  mr admin auth-probe > "$TMP/$SC.probe" 2>&1 || { cat "$TMP/$SC.probe" >&2; fail "auth-probe: a call was not refused"; }
  probe_covers_proto "$TMP/$SC.probe" 4 || fail "auth-probe does not call every rpc of proto/mr.proto"
  say "gRPC: $(grep -c '^refused' "$TMP/$SC.probe") calls (every master and worker method, no token and a wrong one) refused Unauthenticated"
  token=$(sed -nE 's/^token = "(.*)"/\1/p' "$CONF")
  ui=http://10.77.0.1:7080
  for p in /api/workers /api/jobs /api/jobs/1 /api/files /api/file?path=/in/part-00000 /api/cache /api/scheduler /metrics; do
    for h in "" "Authorization: Bearer wrong-$token" "Authorization: $token"; do
      code=$(curl -s -o /dev/null -w '%{http_code}' -m 5 ${h:+-H "$h"} "$ui$p")
      [ "$code" = 401 ] || fail "GET $p with [${h:-no header}] answered $code, want 401"
    done
    code=$(curl -s -o /dev/null -w '%{http_code}' -m 5 -H "Authorization: Bearer $token" "$ui$p")
    [[ "$code" == 2* || "$code" == 404 ]] || fail "GET $p with the token answered $code"
  done
  for req in "POST /api/jobs/1/kill" "PUT /api/scheduler" "POST /api/scheduler"; do
    code=$(curl -s -o /dev/null -w '%{http_code}' -m 5 -X "${req% *}" -d '{"name":"lsap"}' \
      -H "Authorization: Bearer nope" "$ui${req#* }")
    [ "$code" = 401 ] || fail "$req with a wrong token answered $code"
  done
  [ "$(mr admin scheduler show)" = "scheduler: fifo " ] || say "scheduler: $(mr admin scheduler show)"
  mr admin scheduler show | grep -q 'fifo' || fail "a refused request switched the scheduler"
  [ "$(mr job list --json | md5sum)" = "$j0" ] || fail "a refused call changed the job table"
  say "HTTP: every API route and /metrics refused (401) without or with a wrong token; no side effects"
}

# shellcheck source=scripts/crash-loop.sh
. "$ROOT/scripts/crash-loop.sh"

# ---- self-test: each strict check fails where it must ------------------------------

# Runs the checks above against a fake `mr` (and a fake lan.sh and master
# log): each must fail on what used to pass (an `mr` that fails, a panic, a
# stale heartbeat alone, a probe that skips a method, a cut that did not
# happen) and pass on the real thing. No root, no cluster, a second.
self_test() {
  local n=0 bad=0 fake="$TMP/fake-mr"
  SC=self-test D="$TMP/self-test" CONF="$TMP/self-test.toml" MRBIN=$fake
  mkdir -p "$D/logs"
  cat > "$fake" <<'SH'
#!/usr/bin/env bash
shift 2   # --config FILE
[ "$1 $2" = "job list" ] && exit "${FAKE_LIST_RC:-0}"
printf '%s\n' "$FAKE_OUT"
exit "${FAKE_RC:-0}"
SH
  chmod +x "$fake"
  # expect pass|fail|false DESC CMD...: pass = returns 0, no FAIL line;
  # false = returns non-zero, no FAIL line; fail = a FAIL line (the check fired).
  expect() {
    local want=$1 desc=$2 err rc=0 got; shift 2
    err=$( ( set +e; "$@" ) 2>&1 >/dev/null ) || rc=$?
    if [[ "$err" == *"FAIL:"* ]]; then got=fail; elif [ "$rc" = 0 ]; then got=pass; else got=false; fi
    n=$((n + 1))
    if [ "$got" = "$want" ]; then echo "   ok   $desc: $want${err:+ (${err//$'\n'/ })}" | cut -c1-200
    else bad=$((bad + 1)); echo "   BAD  $desc: want $want, got $got (rc $rc) ${err:0:200}"; fi
  }
  export FAKE_OUT FAKE_RC FAKE_LIST_RC
  # master-restart: the job's state
  FAKE_RC=1 FAKE_OUT="mr: error: cannot reach the master at 10.77.0.1:7070: connection refused"
  expect false "job_state_strict: mr cannot reach the master (was '?', accepted)" job_state_strict 5
  FAKE_RC=101 FAKE_OUT="thread 'main' panicked at cli/src/main.rs:1:1"
  expect false "job_state_strict: mr panics" job_state_strict 5
  FAKE_RC=1 FAKE_OUT="mr: error: no history for job 5" FAKE_LIST_RC=1
  expect false "job_state_strict: 'no history' but the master answers nothing else" job_state_strict 5
  FAKE_LIST_RC=0
  expect pass "job_state_strict: 'no history', the master up (forgotten)" job_state_strict 5
  FAKE_RC=0 FAKE_OUT='{"job_id": 5, "state": "failed"}'
  expect pass "job_state_strict: failed" job_state_strict 5
  # negative listings
  FAKE_RC=1 FAKE_OUT="mr: error: cannot reach the master"
  expect fail "listed: mr fs ls fails (was: absent)" listed / '^/out/?$'
  FAKE_RC=0 FAKE_OUT=$'T  REPL  BYTES  SIZE  BLOCKS  PATH\nd  -  10  10 B  1  /in/'
  expect false "listed: /out not in the listing" listed / '^/out/?$'
  FAKE_OUT=$'T  REPL  BYTES  SIZE  BLOCKS  PATH\nd  -  10  10 B  1  /out/'
  expect pass "listed: /out in the listing" listed / '^/out/?$'
  # malformed: a refusal is the expected error, exit 1 or 2, no panic
  expect fail "refused_clearly: a panic (exit 101)" refused_clearly x 'reducers must be' 101 \
    "thread 'main' panicked at cli/src/cmd/job.rs:10:5: reducers must be at least 1"
  expect fail "refused_clearly: exit 1 with a panic message" refused_clearly x 'reducers must be' 1 \
    "thread 'tokio-runtime-worker' panicked at master/src/x.rs: reducers must be; note: run with RUST_BACKTRACE=1"
  expect fail "refused_clearly: a timeout (exit 124)" refused_clearly x 'reducers must be' 124 ""
  expect fail "refused_clearly: another error" refused_clearly x 'reducers must be' 1 \
    "mr: error: cannot reach the master: connection refused"
  expect fail "refused_clearly: accepted" refused_clearly x 'reducers must be' 0 "submitted job 3"
  expect pass "refused_clearly: the expected error" refused_clearly x 'reducers must be' 1 \
    "mr: error: --reducers must be at least 1"
  # rack-partition: the cut's exit status
  expect fail "lan_do: lan.sh cut-rack fails" env LAN=false bash -c "$(declare -f lan_do fail); lan_do cut-rack 2"
  expect pass "lan_do: lan.sh works" env LAN=true bash -c "$(declare -f lan_do fail); lan_do cut-rack 2"
  # zombie-worker: stale reports, not stale heartbeats
  printf '%s\n' '2026-01-01T00:00:00Z  INFO stale heartbeat fenced; asking to re-register worker=w2 epoch=1' \
    > "$D/logs/master.log"
  count_is() { [ "$(stale_reports "$1")" = "$2" ]; }
  expect pass "stale_reports: a stale heartbeat alone counts 0 (was: 1 'fenced')" count_is w2 0
  printf '%s\n' '2026-01-01T00:00:01Z  INFO task report from a stale worker incarnation fenced off worker=w2 epoch=1' \
    '2026-01-01T00:00:01Z  INFO stale task report fenced off job=1 kind=Map index=3 attempt=0 worker=w22' \
    >> "$D/logs/master.log"
  expect pass "stale_reports: the stale attempt's report counts 1 (w22's not)" count_is w2 1
  # bad-token: every rpc of the proto in the probe
  python3 - "$ROOT/proto/mr.proto" > "$TMP/probe.all" <<'PY'
import re, sys
proto = open(sys.argv[1]).read()
snake = lambda s: re.sub(r"(?<!^)([A-Z])", r"_\1", s).lower()
for svc, body in re.findall(r"^service (\w+) \{(.*?)^\}", proto, re.S | re.M):
    for rpc in re.findall(r"^\s*rpc (\w+)\(", body, re.M):
        for tag in ("(no token)", "(wrong token)"):
            if svc == "Master": print(f"refused  master {snake(rpc)} {tag}: missing token")
            else:
                for w in range(1, 3): print(f"refused  worker 10.77.{w}.{w}:7100 {snake(rpc)} {tag}: missing token")
PY
  grep -v locate_partition "$TMP/probe.all" > "$TMP/probe.old"
  expect false "probe_covers_proto: the old probe (no LocatePartition)" probe_covers_proto "$TMP/probe.old" 2
  expect pass "probe_covers_proto: every rpc" probe_covers_proto "$TMP/probe.all" 2
  expect false "probe_covers_proto: one worker short" probe_covers_proto "$TMP/probe.all" 3
  echo "self-test: $((n - bad)) of $n checks behaved"
  [ "$bad" = 0 ]
}
if [ "$SELF_TEST" = 1 ]; then self_test; exit; fi

# ---- driver ------------------------------------------------------------------------

LIMIT=${FAULTS_SCENARIO_TIMEOUT:-150}
PASSED=0 FAILED=0 FAILS=()
T0=$(date +%s)
# the checks first: a check that cannot fail makes a pass worthless
( self_test ) > "$TMP/self-test.log" 2>&1 || { cat "$TMP/self-test.log" >&2; echo "faults: the self-test of the checks failed" >&2; exit 1; }
echo "faults: $(tail -1 "$TMP/self-test.log")"
for SC in "${WANT[@]}"; do
  echo "== $SC"
  t=$(date +%s)
  ( set +e; "sc_$SC" ) &
  pid=$!
  lim=$LIMIT; [ "$SC" != crash-loop ] || lim=$(crash_loop_limit)
  # the watchdog's sleep dies with it: an orphaned sleep would hold the
  # caller's flock on the LAN for the whole limit
  ( trap 'kill "$s" 2>/dev/null; exit 0' TERM; sleep "$lim" & s=$!; wait "$s"
    echo "   FAIL: $SC timed out after ${lim}s" >&2; kill -TERM "$pid" 2>/dev/null ) &
  wd=$!
  rc=0; wait "$pid" || rc=$?
  kill "$wd" 2>/dev/null; wait "$wd" 2>/dev/null
  if [ "$rc" = 0 ]; then
    PASSED=$((PASSED + 1)); echo "   PASS $SC ($(( $(date +%s) - t ))s)"
  else
    FAILED=$((FAILED + 1)); FAILS+=("$SC"); echo "   FAILED $SC ($(( $(date +%s) - t ))s)"
    if [ -d "$TMP/$SC/logs" ]; then
      for f in "$TMP/$SC"/logs/*.log; do echo "   --- $f" >&2; sed 's/\x1b\[[0-9;]*m//g' "$f" | tail -n 4 | cut -c1-240 >&2; done
    fi
  fi
  "$LAN" down >/dev/null 2>&1 || true
  if [ -f "$TMP/mounts" ]; then
    while read -r m; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done < "$TMP/mounts"
    rm -f "$TMP/mounts"
  fi
done
echo "faults: took $(( $(date +%s) - T0 ))s${FAILS[*]:+; failed: ${FAILS[*]}}"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
