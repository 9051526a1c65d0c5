#!/usr/bin/env bash
# Test of scripts/docker.sh, the container path (needs a Docker engine and
# root for the host-side routing rule; skips otherwise). About 2 minutes:
#  1. builds the scratch image from the debug binaries and starts a master
#     and 3 workers in 2 rack networks (rack uplinks shaped), all healthy;
#  2. writes a text input (replicas across racks, so racks reach each
#     other) and runs WordCount: output equal to `mr local wordcount`;
#  3. runs WordCount again, SIGKILLs worker w2's container while its maps
#     run and starts it again: the job still succeeds with the same output,
#     and w2 rejoins;
#  4. runs WordCount again and stops w1 gracefully (SIGTERM) while its
#     maps run: it drains, no attempt fails, the master lets it go at its
#     last heartbeat, and the job succeeds with the same output;
#     then TeraSort and TeraValidate on a small teragen input;
#  5. stops the whole compose cluster (SIGTERM: workers drain and say
#     goodbye) and starts it again: every stored file reads back the same;
#  6. down --volumes leaves no container, network, volume or routing rule.
#   scripts/docker-test.sh [--keep]     (--keep: leave the temp dir)

# shellcheck disable=SC2015 # `test && test || fail` is meant
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
# shellcheck source=scripts/skip.sh
. "$ROOT/scripts/skip.sh"
KEEP=0
[ "${1:-}" = --keep ] && KEEP=1

if ! command -v docker >/dev/null || ! docker info >/dev/null 2>&1; then
  skip docker-test "no Docker engine answers"
fi
if ! docker compose version >/dev/null 2>&1 && ! command -v docker-compose >/dev/null; then
  skip docker-test "no compose tool (docker compose or docker-compose)"
fi
if [ "$(id -u)" != 0 ] || ! command -v iptables >/dev/null || ! command -v tc >/dev/null; then
  skip docker-test "needs root, iptables and tc for the routing between rack networks"
fi

export MR_BIN_DIR=${MR_BIN_DIR:-$ROOT/target/debug}
export MR_IMAGE=mr-runtime:test
MR="$MR_BIN_DIR/mr"
if [ ! -x "$MR" ] || [ ! -x "$MR_BIN_DIR/mr-master" ] || [ ! -x "$MR_BIN_DIR/mr-worker" ]; then
  cargo build --workspace --bins
fi
TMP=$(mktemp -d /tmp/mr-docker-test.XXXXXX)
C="$TMP/cluster"
PROJECT=mrdt
DK=("$ROOT/scripts/docker.sh")
t0=$(date +%s)

cleanup() {
  local rc=$?
  "${DK[@]}" down --dir "$C" --volumes >/dev/null 2>&1 || true
  if [ $rc -ne 0 ] || [ "$KEEP" = 1 ]; then echo "docker-test: files kept in $TMP"; else rm -rf "$TMP"; fi
  exit $rc
}
trap cleanup EXIT
fail() { echo "docker-test: FAIL: $*" >&2; (cd "$C" 2>/dev/null && docker-compose -p $PROJECT -f compose.yml logs --no-color --tail 8 >&2 2>/dev/null) || true; exit 1; }
ok() { echo "   ok: $*"; }
step() { echo "-- $*"; }
mr() { timeout 120 "$MR" --config "$C/cluster.toml" "$@"; }
# Runs quietly; on failure shows the end of what it said.
quiet() { "$@" >"$TMP/last.log" 2>&1 || { tail -n 5 "$TMP/last.log" >&2; return 1; }; }

# A leftover of an earlier run of this test would make `up` reuse it.
docker ps -aq --filter "label=com.docker.compose.project=$PROJECT" | xargs -r docker rm -f >/dev/null

step "build the image (no base image) and start master + 3 workers in 2 rack networks"
"${DK[@]}" build --debug --no-build || fail "image build failed"
docker image inspect "$MR_IMAGE" -f '{{.RootFS.Layers}}' | grep -q sha256 || fail "no image"
[ "$(docker history -q "$MR_IMAGE" | wc -l)" -le 4 ] || fail "the image has more layers than FROM scratch + one COPY"
ok "image $MR_IMAGE from scratch"
"${DK[@]}" up --workers 3 --racks 2 --dir "$C" --project $PROJECT --subnet 10.79 \
  --block-size 2MiB --replication 2 --heartbeat 500ms --uplink-rate 200mbit >/dev/null || fail "up failed"
status=$(mr cluster status --json)
python3 - "$status" <<'PY' || fail "cluster status is not 3 alive workers in 2 racks"
import json, sys
s = json.loads(sys.argv[1])
w = s["workers"]
assert len(w) == 3 and all(x["state"] == "alive" for x in w), w
assert {x["rack"] for x in w} == {"r1", "r2"}, w
PY
for s in master w1 w2 w3; do
  for _ in $(seq 1 60); do
    h=$(docker inspect -f '{{.State.Health.Status}}' "${PROJECT}_${s}_1" 2>/dev/null || echo none)
    [ "$h" = healthy ] && break
    sleep 0.5
  done
  [ "$h" = healthy ] || fail "container $s is $h, not healthy"
done
tc qdisc show dev $PROJECT-r1 | grep -q tbf || fail "rack r1's uplink is not shaped"
python3 - "$C/cluster.toml" <<'PY' || fail "the master's REST API in its container does not list the 3 workers"
import json, re, sys, urllib.request
conf = open(sys.argv[1]).read()
token = re.search(r'^token = "(.*)"', conf, re.M).group(1)
http = re.search(r'^http_addr = "(.*?)"', conf, re.M).group(1)
req = urllib.request.Request(f"http://{http}/api/workers", headers={"Authorization": f"Bearer {token}"})
workers = json.load(urllib.request.urlopen(req, timeout=10))
workers = workers.get("workers", workers) if isinstance(workers, dict) else workers
assert len(workers) == 3, workers
PY
ok "3 workers alive in racks r1, r2; every container healthy; uplinks shaped; web API answers from the host"

step "input across racks; WordCount equals mr local wordcount"
quiet mr gen randomtextwriter --size 24MiB --output /in || fail "randomtextwriter failed"
for p in $(mr fs ls /in | awk '$NF ~ /\/part-/ {print $NF}'); do mr fs cat "$p"; done > "$TMP/in.txt"
[ "$(stat -c %s "$TMP/in.txt")" -gt $((20 << 20)) ] || fail "fetched input is only $(stat -c %s "$TMP/in.txt") bytes"
"$MR" local wordcount "$TMP/in.txt" --reducers 2 --output "$TMP/oracle" >/dev/null
cat "$TMP"/oracle/part-* | sort > "$TMP/oracle.txt"
output_of() { for p in $(mr fs ls "$1" | awk '$NF ~ /\/part-/ {print $NF}'); do mr fs cat "$p"; done | sort; }
quiet mr job run wordcount --input /in --output /out1 --reducers 2 || fail "WordCount failed"
output_of /out1 > "$TMP/out1.txt"
cmp -s "$TMP/out1.txt" "$TMP/oracle.txt" || fail "WordCount output differs from mr local wordcount"
ok "output ($(wc -l < "$TMP/out1.txt") words) equals mr local wordcount"

step "WordCount; kill w2's container while maps run, then start it again"
# w2's maps are held in their slots (worker/src/task/hold.rs) until a release
# file appears in w2's data volume, so the kill lands while they run
# whatever the build's speed; the file is created before w2 starts again.
W2_VOL=$(docker volume inspect -f '{{.Mountpoint}}' "${PROJECT}_w2-data" 2>/dev/null) \
  || fail "no volume ${PROJECT}_w2-data"
rm -f "$W2_VOL/release-out2"
id=$(mr job submit wordcount --input /in --output /out2 --reducers 2 \
  --param hold_maps=/data/w2/release-out2 --param hold_workers=w2) || fail "submit failed"
w2_busy=0
for _ in $(seq 1 600); do
  w2_busy=$(mr cluster status --json | python3 -c '
import json,sys
print(sum(1 for w in json.load(sys.stdin)["workers"]
          if w["name"] == "w2" and w["free_map_slots"] < w["map_slots"]))' 2>/dev/null || echo 0)
  [ "$w2_busy" = 1 ] && break
  sleep 0.05
done
[ "$w2_busy" = 1 ] || fail "w2 never ran a map of job $id"
"${DK[@]}" kill w2 --dir "$C" >/dev/null 2>&1 || fail "docker kill w2 failed"
[ "$(docker inspect -f '{{.State.Running}}' ${PROJECT}_w2_1)" = false ] || fail "w2 still runs after kill"
[ "$(mr job status "$id" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')" = running ] \
  || fail "job $id was no longer running when w2 was killed: the test proves nothing"
touch "$W2_VOL/release-out2"
"${DK[@]}" start w2 --dir "$C" >/dev/null 2>&1 || fail "docker start w2 failed"
final=$(timeout 300 "$MR" --config "$C/cluster.toml" job wait "$id" --json 2>/dev/null || true)
python3 -c 'import json,sys; j=json.loads(sys.argv[1]); assert j["state"]=="succeeded", j["state"]' "$final" \
  || fail "job $id did not succeed after w2's crash: $(echo "$final" | head -c 400)"
output_of /out2 > "$TMP/out2.txt"
cmp -s "$TMP/out2.txt" "$TMP/oracle.txt" || fail "output after the crash differs from mr local wordcount"
for _ in $(seq 1 120); do mr cluster health --worker w2 >/dev/null 2>&1 && break; sleep 0.5; done
mr cluster health --worker w2 >/dev/null || fail "w2 did not rejoin after its container started again"
ok "job $id succeeded with the oracle's output; w2 rejoined"

step "WordCount; SIGTERM w1 while its maps run (graceful: drain, no failed attempt)"
id=$(mr job submit wordcount --input /in --output /out3 --reducers 2)
for _ in $(seq 1 400); do
  n=$(mr job status "$id" --json | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["progress"]["maps_done"] if j["state"]=="running" else -1)')
  [ "$n" -ge 1 ] 2>/dev/null && break
  sleep 0.05
done
quiet "${DK[@]}" stop w1 --dir "$C" || fail "docker stop w1 failed"
final=$(timeout 300 "$MR" --config "$C/cluster.toml" job wait "$id" --json 2>/dev/null || true)
python3 -c 'import json,sys; j=json.loads(sys.argv[1]); assert j["state"]=="succeeded", j["state"]' "$final" \
  || fail "job $id did not succeed after w1's graceful stop"
output_of /out3 > "$TMP/out3.txt"
cmp -s "$TMP/out3.txt" "$TMP/oracle.txt" || fail "output after w1's stop differs from mr local wordcount"
docker logs ${PROJECT}_w1_1 > "$TMP/w1.log" 2>&1; grep -q "draining: no new tasks" "$TMP/w1.log" || fail "w1 did not drain on SIGTERM"
grep -q "last heartbeat sent" "$TMP/w1.log" || fail "w1 did not send its last heartbeat"
mr job history "$id" > "$TMP/hist3.jsonl" || fail "job history"
! grep -q '"state":"failed"' "$TMP/hist3.jsonl" || fail "a failed attempt in job $id: a graceful stop must not fail tasks"
mr cluster status --json | python3 -c 'import json,sys; w={x["name"]:x["state"] for x in json.load(sys.stdin)["workers"]}; assert w["w1"]=="dead", w' \
  || fail "the master did not mark w1 gone at its last heartbeat"
quiet "${DK[@]}" start w1 --dir "$C" || fail "docker start w1 failed"
for _ in $(seq 1 120); do mr cluster health --worker w1 >/dev/null 2>&1 && break; sleep 0.5; done
mr cluster health --worker w1 >/dev/null || fail "w1 did not rejoin"
ok "job $id succeeded, no failed attempt; w1 drained, left and rejoined"

step "TeraSort and TeraValidate"
quiet mr gen teragen --size 4MiB --output /tera || fail "teragen failed"
quiet mr job run terasort --input /tera --output /tera-sorted --reducers 2 || fail "TeraSort failed"
quiet mr job run teravalidate --input /tera-sorted --output /tera-report || fail "TeraValidate failed"
ok "TeraSort output validated"

step "stop the whole cluster (SIGTERM) and start it again: every file kept"

quiet "${DK[@]}" stop --dir "$C" || fail "stop failed"
[ -z "$(docker ps -q --filter "label=com.docker.compose.project=$PROJECT")" ] || fail "containers still run after stop"
for w in w1 w2 w3; do
  docker logs ${PROJECT}_${w}_1 > "$TMP/$w.log" 2>&1
  grep -q "last heartbeat sent" "$TMP/$w.log" || fail "$w did not say goodbye on SIGTERM"
done
docker logs ${PROJECT}_master_1 > "$TMP/master.log" 2>&1
grep -q "edit log flushed" "$TMP/master.log" || fail "the master did not flush its edit log on SIGTERM"
ok "workers drained and said goodbye; the master flushed its edit log"
quiet "${DK[@]}" start --dir "$C" || fail "start failed"
for p in $(mr fs ls /in | awk '$NF ~ /\/part-/ {print $NF}'); do mr fs cat "$p"; done > "$TMP/in-after.txt"
cmp -s "$TMP/in.txt" "$TMP/in-after.txt" || fail "the input changed across stop/start"
output_of /out2 > "$TMP/out2-after.txt"
cmp -s "$TMP/out2-after.txt" "$TMP/oracle.txt" || fail "the job output changed across stop/start"
[ "$(mr fs ls /tera-sorted | grep -c '/part-')" = 2 ] || fail "/tera-sorted lost parts across stop/start"
ok "input, outputs and TeraSort files read back the same after a restart"

step "down --volumes leaves nothing behind"
"${DK[@]}" down --dir "$C" --volumes >/dev/null || fail "down failed"
[ -z "$(docker ps -aq --filter "label=com.docker.compose.project=$PROJECT")" ] || fail "containers left"
[ -z "$(docker network ls -q --filter "label=com.docker.compose.project=$PROJECT")" ] || fail "networks left"
[ -z "$(docker volume ls -q --filter "label=com.docker.compose.project=$PROJECT")" ] || fail "volumes left"
! iptables -S DOCKER-USER 2>/dev/null | grep -q "mr-docker-$PROJECT" || fail "routing rule left in DOCKER-USER"
ok "no container, network, volume or rule left"
echo "docker-test: all passed in $(( $(date +%s) - t0 ))s"
