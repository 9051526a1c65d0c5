#!/usr/bin/env bash
# Test of scripts/lan.sh, the emulated LAN (needs root and ip netns; skips
# otherwise). About 30 s:
#  1. up a 4-worker 2-rack LAN; 4 workers alive in 2 racks seen from this
#     shell; shaping is real (rack-local vs off-rack transfer, an mr fs put,
#     rate); cut-rack/loss work; down leaves nothing behind (namespaces,
#     links, qdiscs, nft tables, processes), twice, and after a refused and
#     a killed up.
#  2. a WordCount whose worker w2 is cut off while its maps run still
#     succeeds with the output of `mr local wordcount` on the same input;
#     the master sees w2 dead, and alive again after restore.
#  3. a small `mr bench` matrix (every workload, fifo and lsap) on that LAN
#     validates every run and writes a results.csv with every column, the
#     LAN's rates recorded in each row's config.
#   scripts/lan-test.sh [--keep]     (--keep: leave the temp dir)

# shellcheck disable=SC2015 # `test && test || fail` is meant
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
LAN="$ROOT/scripts/lan.sh"
# shellcheck source=scripts/skip.sh
. "$ROOT/scripts/skip.sh"
KEEP=0
[ "${1:-}" = --keep ] && KEEP=1

if [ "$(id -u)" != 0 ] || ! ip netns list >/dev/null 2>&1 || ! unshare --net true 2>/dev/null \
   || ! command -v tc >/dev/null || ! command -v nft >/dev/null; then
  skip lan-test "needs root and ip netns (and tc, nft)"
fi
# shellcheck source=scripts/lan-free.sh
. "$ROOT/scripts/lan-free.sh"
lan_free lan-test

BIN=${MR_BIN_DIR:-$ROOT/target/debug}
MR="$BIN/mr"
if [ ! -x "$BIN/mr" ] || [ ! -x "$BIN/mr-master" ] || [ ! -x "$BIN/mr-worker" ]; then
  cargo build --workspace --bins
fi
TMP=$(mktemp -d /tmp/mr-lan-test.XXXXXX)
D="$TMP/lan"
START=$(date +%s)
WATCHDOG=""

cleanup() {
  local rc=$?
  if [ -n "$WATCHDOG" ]; then pkill -P "$WATCHDOG" 2>/dev/null || true; kill "$WATCHDOG" 2>/dev/null || true; fi
  "$LAN" down --dir "$D" >/dev/null 2>&1 || true
  if [ "$rc" != 0 ] && [ -d "$D/logs" ]; then
    for f in "$D"/logs/*.log; do echo "--- $f" >&2; tail -n 8 "$f" >&2; done
  fi
  [ "$KEEP" = 1 ] && echo "lan-test: kept $TMP" || rm -rf "$TMP"
  exit "$rc"
}
trap cleanup EXIT
trap 'echo "lan-test: FAIL: timed out" >&2; exit 1' TERM
# the whole test is bounded: the watchdog ends it (cleanly, through the trap)
( sleep 360; kill -TERM $$ 2>/dev/null ) >/dev/null 2>&1 &
WATCHDOG=$!

PASS=0
step() { echo "== $*"; }
ok() { PASS=$((PASS + 1)); echo "   ok: $*"; }
fail() { echo "lan-test: FAIL: $*" >&2; echo "lan-test: $PASS passed, 1 failed"; exit 1; }

snapshot() { # what the LAN may create outside its namespaces
  echo "# netns"; ip netns list
  echo "# links"; ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//'
  echo "# qdiscs"; tc qdisc show
  echo "# nft"; nft list tables
  echo "# processes"
  ps -eo stat=,comm=,args= | awk -v d="$TMP" '$1 !~ /^Z/ && ($2 == "mr-master" || $2 == "mr-worker") && index($0, d) {print $2}'
}
same_as_before() { # label
  for _ in $(seq 1 20); do # the kernel frees namespaces asynchronously
    snapshot > "$TMP/after"
    diff -q "$TMP/before" "$TMP/after" >/dev/null && { ok "$1: nothing left behind"; return 0; }
    sleep 0.25
  done
  diff "$TMP/before" "$TMP/after" >&2 || true
  fail "$1: left the objects above behind"
}

# seconds to move BYTES from namespace $1 to address $3 in namespace $2
xfer() { # from-ns to-ns to-addr bytes
  ip netns exec "$2" python3 - "$3" "$4" > "$TMP/xfer.srv" <<'PY' &
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 9999)); s.listen(1); s.settimeout(20)
print("ready", flush=True)
c, _ = s.accept(); c.settimeout(20)
n, got = int(sys.argv[2]), 0
while got < n:
    b = c.recv(1 << 20)
    if not b: break
    got += len(b)
c.sendall(b"k"); c.close()
PY
  local srv=$!
  # A loaded machine may take seconds to start the listener's python.
  for _ in $(seq 1 400); do grep -q ready "$TMP/xfer.srv" 2>/dev/null && break; sleep 0.05; done
  grep -q ready "$TMP/xfer.srv" || fail "the transfer listener in $2 did not start in 20 s"
  ip netns exec "$1" timeout 30 python3 - "$3" "$4" <<'PY'
import socket, sys, time
n, buf = int(sys.argv[2]), b"x" * (1 << 20)
t = time.time()
c = socket.create_connection((sys.argv[1], 9999), timeout=20)
while n > 0:
    c.sendall(buf[:n]); n -= len(buf)
c.recv(1)
print(f"{time.time() - t:.3f}")
PY
  wait "$srv"
}
reach() { # from-ns ("" = this shell) addr port -> exit 0 if a TCP connect works
  ${1:+ip netns exec "$1"} python3 -c "import socket,sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=1).close()" "$2" "$3" 2>/dev/null
}
reach_within() { # seconds from-ns addr port: ARP and TCP need a moment after a heal
  local end=$(( $(date +%s) + $1 ))
  until reach "$2" "$3" "$4"; do [ "$(date +%s)" -lt "$end" ] || return 1; sleep 0.2; done
}
ge() { python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= float(sys.argv[2]) else 1)" "$1" "$2"; }
jq_() { python3 -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))" "$1"; }
workers_in() { # state -> "name:rack ..." of the workers in that state
  timeout 10 "$MR" --config "$D/cluster.toml" cluster status --json 2>/dev/null \
    | python3 -c 'import json,sys; print(" ".join(w["name"]+":"+w["rack"] for w in json.load(sys.stdin)["workers"] if w["state"]==sys.argv[1]))' "$1" || true
}

# ---- 1. up, shaping, faults, down ---------------------------------------------
step "snapshot of namespaces, links, qdiscs, nft tables and processes"
snapshot > "$TMP/before"

step "lan.sh up --workers 4 --racks 2 --host-rate 500mbit --uplink-rate 100mbit"
"$LAN" up --dir "$D" --workers 4 --racks 2 --host-rate 500mbit --uplink-rate 100mbit \
  --heartbeat 250ms --dead-after 8 --block-size 4MiB
export MR_CONFIG="$D/cluster.toml"
alive=$(workers_in alive)
[ "$alive" = "w1:r1 w2:r2 w3:r1 w4:r2" ] || fail "want w1..w4 alive in racks r1,r2,r1,r2; mr cluster status says: $alive"
ok "mr cluster status from this shell: $alive"
grep -q '^addr = "10.77.0.1:7070"' "$D/cluster.toml" || fail "master not at 10.77.0.1:7070 in cluster.toml"
[ -z "$(ip netns exec mrlan-w1 ip route show default)" ] || fail "host namespace w1 has a default route"
ok "hosts have no default route"

if "$LAN" up --dir "$TMP/other" --workers 2 >/dev/null 2>&1; then fail "a second up did not refuse"; fi
ok "a second up refuses while a LAN is up"

step "shaping: 16 MiB rack-local (w1 -> w3) vs off-rack (w1 -> w2)"
MB16=$((16 << 20))
t_rack=$(xfer mrlan-w1 mrlan-w3 10.77.1.3 $MB16)
t_off=$(xfer mrlan-w1 mrlan-w2 10.77.2.2 $MB16)
echo "   rack-local ${t_rack}s (500mbit: 0.27s), off-rack ${t_off}s (100mbit: 1.34s)"
ge "$t_rack" 0.2 || fail "rack-local 16 MiB in ${t_rack}s: host ports are not shaped at 500mbit"
ge "$t_off" 1.05 || fail "off-rack 16 MiB in ${t_off}s: the uplinks are not shaped at 100mbit"
ge "$t_off" "$(python3 -c "print(2.5 * $t_rack)")" || fail "off-rack not much slower than rack-local"
ok "tbf shapes host ports and uplinks"

head -c $MB16 /dev/urandom > "$TMP/16m"
t0=$(date +%s.%N)
timeout 60 "$MR" fs put "$TMP/16m" /shaped --replication 1 >/dev/null
t_put=$(python3 -c "import sys; print(f'{$(date +%s.%N) - $t0:.2f}')")
echo "   mr fs put 16 MiB from this shell: ${t_put}s (each block through one of the two 100mbit uplinks: >= 0.67s)"
ge "$t_put" 0.55 || fail "mr fs put of 16 MiB in ${t_put}s: traffic from the client port is not shaped"
cmp <(timeout 60 "$MR" fs cat /shaped) "$TMP/16m" || fail "mr fs cat /shaped differs from what was put"
ok "mr fs put/cat through the client port, shaped"

"$LAN" rate uplink-r1 500mbit >/dev/null
"$LAN" rate uplink-r2 500mbit >/dev/null
t_off2=$(xfer mrlan-w1 mrlan-w2 10.77.2.2 $MB16)
echo "   off-rack with uplinks at 500mbit: ${t_off2}s"
ge 0.8 "$t_off2" || fail "lan.sh rate did not speed up the uplinks (${t_off2}s)"
"$LAN" rate uplink-r1 100mbit >/dev/null
ok "lan.sh rate uplink-rN changes an uplink"

step "cut-rack 2, restore-rack 2, loss"
"$LAN" cut-rack 2
reach "" 10.77.2.2 7100 && fail "w2 reachable from the client with rack 2 cut"
reach mrlan-w1 10.77.2.4 7100 && fail "w4 reachable from w1 with rack 2 cut"
reach mrlan-w2 10.77.2.4 7100 || fail "w2 cannot reach w4 inside the cut rack 2"
reach mrlan-w1 10.77.1.3 7100 || fail "w1 cannot reach w3 in rack 1 while rack 2 is cut"
"$LAN" restore-rack r2
reach_within 10 "" 10.77.2.2 7100 || fail "w2 unreachable 10s after restore-rack"
ok "cut-rack partitions a rack, restore-rack heals it"
"$LAN" loss w1 20 >/dev/null
"$LAN" loss uplink-r1 20 >/dev/null
ip netns exec mrlan-w1 nft list tables | grep -q mrlan_loss || fail "loss w1 made no nft table"
ip netns exec mrlan-sw nft list tables | grep -q mrlan_loss_r1 || fail "loss uplink-r1 made no nft table"
"$LAN" loss w1 0 >/dev/null
[ -z "$(ip netns exec mrlan-w1 nft list tables)" ] || fail "loss w1 0 left a table"
"$LAN" status --dir "$D" > "$TMP/status"
grep -q 'mrlan_loss_r1' "$TMP/status" && grep -q '100Mbit' "$TMP/status" && grep -q 'w4 pid' "$TMP/status" \
  || { cat "$TMP/status"; fail "lan.sh status lacks the loss table, the rates or the processes"; }
ok "loss tables come and go; status shows rates, faults and processes"

step "lan.sh down (twice)"
"$LAN" down --dir "$D"
same_as_before "down"
"$LAN" down --dir "$D" >/dev/null
same_as_before "a second down"
[ -f "$D/cluster.toml" ] && [ -d "$D/w1" ] || fail "down removed the data dirs without --purge"

step "down after a refused up (--workers 0) and after a killed up"
if "$LAN" up --dir "$TMP/bad" --workers 0 >/dev/null 2>&1; then fail "up --workers 0 did not fail"; fi
"$LAN" down --dir "$TMP/bad" >/dev/null
same_as_before "a refused up"
"$LAN" up --dir "$TMP/killed" --workers 4 --racks 2 >/dev/null 2>&1 &
up_pid=$!
for _ in $(seq 1 200); do ip netns list | grep -q '^mrlan-w2' && break; sleep 0.02; done
kill -KILL "$up_pid" 2>/dev/null || true
wait "$up_pid" 2>/dev/null || true
sleep 0.3 # let an ip command the killed up had started finish
echo "   killed up with namespaces: $(ip netns list | awk '{print $1}' | tr '\n' ' ')"
ip netns list | grep -q '^mrlan-' || fail "the killed up had made nothing yet"
"$LAN" down --dir "$TMP/killed" >/dev/null
same_as_before "a killed up"

# ---- 2. a worker cut off during a job -------------------------------------------
step "lan.sh up --workers 4 --racks 2 (1gbit hosts, 300mbit uplinks), heartbeat 250ms x 8"
rm -rf "$D"
"$LAN" up --dir "$D" --workers 4 --racks 2 --heartbeat 250ms --dead-after 8 --block-size 2MiB
timeout 60 "$MR" gen randomtextwriter --size 32MiB --output /in --block-size 2MiB >/dev/null 2>&1 \
  || fail "mr gen randomtextwriter failed"
step "oracle: mr local wordcount on the input fetched with mr fs cat"
for p in $(timeout 10 "$MR" fs ls /in | awk '$NF ~ /\/part-/ {print $NF}'); do timeout 30 "$MR" fs cat "$p"; done > "$TMP/in.txt"
[ "$(stat -c %s "$TMP/in.txt")" -gt $((30 << 20)) ] || fail "fetched input is only $(stat -c %s "$TMP/in.txt") bytes"
timeout 60 "$MR" local wordcount "$TMP/in.txt" --reducers 2 --output "$TMP/oracle" >/dev/null
cat "$TMP"/oracle/part-* | sort > "$TMP/oracle.txt"

step "WordCount; cut w2 while its maps run"
id=$("$MR" job submit wordcount --input /in --output /out --reducers 2)
echo "   job $id"
running=0
for _ in $(seq 1 300); do
  running=$(timeout 10 "$MR" job status "$id" --json 2>/dev/null | jq_ 'd["progress"]["maps_running"]' || echo 0)
  [ "$running" -gt 0 ] && break
  sleep 0.05
done
[ "$running" -gt 0 ] || fail "job $id never ran a map"
"$LAN" cut w2
t_cut=$(date +%s.%N)
timeout 120 "$MR" job wait "$id" --json > "$TMP/job.json" 2>/dev/null || true
state=$(jq_ 'd["state"]' < "$TMP/job.json" 2>/dev/null || echo "?")
echo "   job $id: $state in $(jq_ 'round(d["exec_time_s"], 2)' < "$TMP/job.json" 2>/dev/null)s, w2 cut $(python3 -c "print(round($(date +%s.%N) - $t_cut, 1))")s ago"
[ "$state" = succeeded ] || { cat "$TMP/job.json" >&2; fail "job $id with w2 cut: $state"; }
ok "the job succeeded with w2 cut"
for _ in $(seq 1 40); do [[ " $(workers_in dead) " == *" w2:r2 "* ]] && break; sleep 0.25; done
[[ " $(workers_in dead) " == *" w2:r2 "* ]] || fail "the master does not see the cut w2 as dead (dead: $(workers_in dead))"
ok "the master sees w2 dead"

step "restore w2; compare the output with the oracle"
"$LAN" restore w2
for _ in $(seq 1 80); do [[ " $(workers_in alive) " == *" w2:r2 "* ]] && break; sleep 0.25; done
[[ " $(workers_in alive) " == *" w2:r2 "* ]] || fail "w2 not alive again 20s after restore"
ok "w2 alive again after restore"
for p in $(timeout 10 "$MR" fs ls /out | awk '$NF ~ /\/part-/ {print $NF}'); do timeout 30 "$MR" fs cat "$p"; done | sort > "$TMP/out.txt"
[ -s "$TMP/out.txt" ] || fail "job output is empty"
cmp -s "$TMP/out.txt" "$TMP/oracle.txt" || { diff "$TMP/oracle.txt" "$TMP/out.txt" | head >&2; fail "job output differs from mr local wordcount"; }
ok "output ($(wc -l < "$TMP/out.txt") words) equals mr local wordcount"

step "mr bench: every workload under fifo and lsap; results.csv has every column"
timeout 150 "$MR" bench --workloads wordcount,sort,terasort,mixed --schedulers fifo,lsap --size 4MiB \
  --block-size 1MiB --reps 1 --reducers 2 --jobs 2 --mean-interarrival 300ms --out "$TMP/bench" --quiet \
  || fail "mr bench failed: $(tail -n 5 "$TMP/bench/summary.md" 2>/dev/null)"
python3 - "$TMP/bench/results.csv" <<'PY' || fail "results.csv is incomplete"
import csv, sys
want = """workload scheduler rep input_bytes maps reduces exec_time_s cache_local node_local
cache_rack_local rack_local off_rack bytes_cache bytes_local bytes_remote bytes_remote_rack
bytes_remote_off_rack bytes_shuffle map_response_mean_s map_response_p95_s workers config""".split()
rows = list(csv.DictReader(open(sys.argv[1])))
missing = [c for c in want if c not in rows[0]] if rows else want
assert not missing, f"missing columns {missing}"
assert len(rows) == 3 * 2 + 2 * 2, f"{len(rows)} rows"
for r in rows:
    assert all(r[c] != "" for c in want), r
    assert "network=emulated-lan" in r["config"] and "host_rate=1gbit" in r["config"], r["config"]
PY
ok "mr bench: $(( $(wc -l < "$TMP/bench/results.csv") - 1 )) validated rows with every column, plots $(cd "$TMP/bench" && ls ./*.png | wc -l)"

step "lan.sh down"
"$LAN" down --dir "$D" >/dev/null
same_as_before "down after the job"

echo "lan-test: took $(( $(date +%s) - START ))s"
echo "lan-test: $PASS passed, 0 failed"
