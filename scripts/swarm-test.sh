#!/usr/bin/env bash
# Test of scripts/swarm.sh, the Docker Swarm path, run for real on a
# one-node swarm made on this machine (needs a Docker engine that is in no
# swarm yet; skips otherwise, and fails instead under CI=true). About 70 s
# here:
#  1. builds the scratch image from the debug binaries (MR_BIN_DIR:
#     others); `swarm.sh up` makes the swarm and deploys master + 3
#     workers in 2 racks: every worker alive in its rack, every service's
#     placement constraint and rack label in place, the web UI's /healthz
#     published on the host; the admin's cluster file holds no
#     worker_token, the services' file one of its own, and each service
#     mounts exactly its secrets (with --tls: the CA's certificate and its
#     own certificate and key, nothing of another process's; the client's
#     key and the CA's key in no secret; the web UI speaks HTTPS only);
#  2. `swarm.sh scale 4`: a fourth worker joins in rack r2 (with --tls,
#     with a certificate of its own);
#  3. writes a text input and runs WordCount; while w2's maps run (held
#     until a file appears, worker/src/task/hold.rs, so the kill lands mid-map
#     whatever the build's speed) w2's container is SIGKILLed: the swarm
#     starts a new container for w2, which rejoins, and the job succeeds
#     with the same output as `mr local wordcount` on the same bytes;
#  4. `swarm.sh down --volumes` removes the stack, its volumes and secret,
#     and leaves the swarm: no service, container, network, volume,
#     secret or swarm is left, and the test's image is removed. The same
#     cleanup runs on any failure.
# It takes /tmp/mr-docker.lock (Docker is shared with the other tests).
#   scripts/swarm-test.sh [--tls] [--keep]   (--tls: the cluster with TLS;
#                                             --keep: keep the temp dir)

set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
# shellcheck source=scripts/skip.sh
. "$ROOT/scripts/skip.sh"
if [ -z "${MR_DOCKER_LOCKED:-}" ] && command -v flock >/dev/null; then
  export MR_DOCKER_LOCKED=1
  exec flock /tmp/mr-docker.lock "$0" "$@"
fi
KEEP=0 TLS=0
for a in "$@"; do
  case "$a" in
    --keep) KEEP=1 ;;
    --tls) TLS=1 ;;
    *) echo "usage: scripts/swarm-test.sh [--tls] [--keep]" >&2; exit 2 ;;
  esac
done
NAME=swarm-test
[ "$TLS" = 0 ] || NAME="swarm-test --tls"

if ! command -v docker >/dev/null || ! docker info >/dev/null 2>&1; then
  skip "$NAME" "no Docker engine answers"
fi
state=$(docker info -f '{{.Swarm.LocalNodeState}}')
[ "$state" = inactive ] || skip "$NAME" "this engine is already in a swarm ($state): the test makes its own and leaves it"

export MR_BIN_DIR=${MR_BIN_DIR:-$ROOT/target/debug}
export MR_IMAGE=mr-runtime:swarm-test
MR="$MR_BIN_DIR/mr"
if [ ! -x "$MR" ] || [ ! -x "$MR_BIN_DIR/mr-master" ] || [ ! -x "$MR_BIN_DIR/mr-worker" ]; then
  cargo build --workspace --bins
fi
# The image carries the binaries of MR_BIN_DIR: target/debug or target/release.
BUILD=(--no-build --debug)
[ "$(cd "$MR_BIN_DIR" && pwd)" = "$ROOT/target/release" ] && BUILD=(--no-build)
TLS_ARGS=()
[ "$TLS" = 1 ] && TLS_ARGS=(--tls)
TMP=$(mktemp -d /tmp/mr-swarm-test.XXXXXX)
C="$TMP/cluster"
STACK=mrst
SW=("$ROOT/scripts/swarm.sh")
gw_before=0
docker network inspect docker_gwbridge >/dev/null 2>&1 && gw_before=1
t0=$(date +%s)

cleanup() {
  local rc=$?
  "${SW[@]}" down --dir "$C" --volumes >/dev/null 2>&1 || true
  # Whatever down could not undo (it failed before writing its state).
  if [ "$(docker info -f '{{.Swarm.LocalNodeState}}' 2>/dev/null)" != inactive ]; then
    docker swarm leave --force >/dev/null 2>&1 || true
  fi
  [ "$gw_before" = 1 ] || docker network rm docker_gwbridge >/dev/null 2>&1 || true
  docker volume ls -q --filter "label=com.docker.stack.namespace=$STACK" | xargs -r docker volume rm >/dev/null 2>&1 || true
  docker image rm "$MR_IMAGE" >/dev/null 2>&1 || true
  if [ $rc -ne 0 ] || [ "$KEEP" = 1 ]; then echo "swarm-test: files kept in $TMP"; else rm -rf "$TMP"; fi
  exit $rc
}
trap cleanup EXIT
fail() {
  echo "$NAME: FAIL: $*" >&2
  docker stack ps --no-trunc "$STACK" 2>/dev/null | head -n 20 >&2 || true
  for s in master w1 w2; do docker service logs --tail 5 "${STACK}_$s" >&2 2>/dev/null || true; done
  exit 1
}
ok() { echo "   ok: $*"; }
step() { echo "-- $*"; }
mr() { timeout 120 "${SW[@]}" mr "$@" --dir "$C"; }
quiet() { "$@" >"$TMP/last.log" 2>&1 || { tail -n 5 "$TMP/last.log" >&2; return 1; }; }
state_of() { mr job status "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])'; }
w2_container() { docker ps -q --filter "label=com.docker.swarm.service.name=${STACK}_w2"; }
UI_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

step "build the image; a one-node swarm with master + 3 workers in 2 racks$([ "$TLS" = 1 ] && echo ", TLS")"
"$ROOT/scripts/docker.sh" build "${BUILD[@]}" >/dev/null || fail "image build failed"
"${SW[@]}" up --workers 3 --racks 2 --dir "$C" --stack $STACK --ui-port "$UI_PORT" \
  --block-size 2MiB --replication 2 --heartbeat 500ms "${TLS_ARGS[@]}" >"$TMP/up.log" 2>&1 || { cat "$TMP/up.log" >&2; fail "up failed"; }
[ "$(docker info -f '{{.Swarm.LocalNodeState}}')" = active ] || fail "no swarm after up"
mr cluster status --json > "$TMP/status.json" || fail "cluster status"
python3 - "$TMP/status.json" <<'PY' || fail "cluster status is not 3 alive workers in racks r1, r2"
import json, sys
w = json.load(open(sys.argv[1]))["workers"]
assert len(w) == 3 and all(x["state"] == "alive" for x in w), w
assert {x["name"]: x["rack"] for x in w} == {"w1": "r1", "w2": "r2", "w3": "r1"}, w
PY
for i in 1 2 3; do
  r=$(( (i - 1) % 2 + 1 ))
  c=$(docker service inspect -f '{{join .Spec.TaskTemplate.Placement.Constraints ","}}' "${STACK}_w$i")
  [ "$c" = "node.labels.mr.rack.r$r == true" ] || fail "w$i's placement is '$c'"
  l=$(docker service inspect -f '{{index .Spec.Labels "mr.rack"}}' "${STACK}_w$i")
  [ "$l" = "r$r" ] || fail "w$i's rack label is '$l'"
done
python3 - "$UI_PORT" "$TLS" "$C/tls/ca.pem" <<'PY' || fail "the master's /healthz is not published on localhost:$UI_PORT"
import http.client, ssl, sys, time, urllib.request
port, tls, ca = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
# With TLS: HTTPS verified against the cluster CA (the master's
# certificate names localhost), and clear HTTP gets no HTTP answer.
url = f"{'https' if tls else 'http'}://localhost:{port}/healthz"
ctx = ssl.create_default_context(cafile=ca) if tls else None
for _ in range(50):
    try:
        body = urllib.request.urlopen(url, timeout=5, context=ctx).read()
        assert body == b"ok\n", body
        break
    except OSError:
        time.sleep(0.2)
else:
    raise SystemExit("no answer")
if tls:
    try:
        urllib.request.urlopen(f"http://localhost:{port}/healthz", timeout=5).read()
    except (OSError, http.client.HTTPException):
        pass  # refused, or a TLS alert that is no HTTP response
    else:
        raise SystemExit("clear HTTP was answered")
PY
ok "3 workers alive in racks r1, r2 (services constrained to node.labels.mr.rack.rN); /healthz answers on the host$([ "$TLS" = 1 ] && echo " over HTTPS only")"

# What each service mounts: the services' file (both tokens), and with
# TLS the CA's certificate and its own pair; nothing else.
check_secrets() { # workers
  local tok wtok svc got want f
  tok=$(sed -nE 's/^token = "(.*)"/\1/p' "$C/cluster.toml")
  wtok=$(sed -nE 's/^worker_token = "(.*)"/\1/p' "$C/services.toml")
  ! grep -q '^worker_token' "$C/cluster.toml" || fail "the admin's cluster file holds the worker_token"
  [ -n "$wtok" ] && [ "$wtok" != "$tok" ] || fail "the services' file has no worker_token of its own"
  [ "$(grep -v '^worker_token = ' "$C/services.toml")" = "$(cat "$C/cluster.toml")" ] \
    || fail "services.toml is not cluster.toml plus worker_token"
  [ "$(stat -c %a "$C/cluster.toml") $(stat -c %a "$C/services.toml")" = "600 600" ] || fail "a file holding tokens is not mode 0600"
  for svc in master $(seq -f 'w%g' 1 "$1"); do
    got=$(docker service inspect -f '{{range .Spec.TaskTemplate.ContainerSpec.Secrets}}{{.File.Name}}:{{printf "%o" .File.Mode}}={{.SecretName}} {{end}}' "${STACK}_$svc")
    want="cluster.toml:400=$STACK-cluster-$(sha256sum "$C/services.toml" | cut -c1-12) "
    if [ "$TLS" = 1 ]; then
      want+="tls/ca.pem:400=$STACK-ca-$(sha256sum "$C/tls/ca.pem" | cut -c1-12) "
      for f in pem key; do
        want+="tls/$svc.$f:400=$STACK-$svc-$f-$(sha256sum "$C/tls/$svc.$f" | cut -c1-12) "
      done
    fi
    [ "$(tr ' ' '\n' <<<"$got" | sort)" = "$(tr ' ' '\n' <<<"$want" | sort)" ] \
      || fail "$svc mounts '$got', not '$want'"
  done
  if [ "$TLS" = 1 ]; then
    # The client's pair and the CA's key stay on the host: in no secret.
    [ -f "$C/tls/client.key" ] && [ -f "$C/ca.key" ] || fail "no client.key or ca.key on the host"
    ! docker secret ls --format '{{.Name}}' | grep -qE -- "-(client|ca-key)" || fail "a secret holds the client's or the CA's key"
  fi
}
check_secrets 3
ok "each service mounts $([ "$TLS" = 1 ] && echo "the services' file, ca.pem and its own pair only" || echo "the services' file only") (0400); the admin's file has no worker_token, the services' one of its own"

step "scale to 4 workers"
quiet "${SW[@]}" scale 4 --dir "$C" || fail "scale 4 failed"
mr cluster status --json > "$TMP/status.json" || fail "cluster status"
python3 - "$TMP/status.json" <<'PY' || fail "after scale 4: not 4 alive workers, w4 in r2"
import json, sys
w = {x["name"]: x for x in json.load(open(sys.argv[1]))["workers"]}
assert len(w) == 4 and all(x["state"] == "alive" for x in w.values()), w
assert w["w4"]["rack"] == "r2", w["w4"]
PY
[ "$(docker service ls -q --filter "label=com.docker.stack.namespace=$STACK" | wc -l)" = 5 ] || fail "not 5 services"
check_secrets 4
ok "4 workers alive, w4 in rack r2, each service with its own secrets"

step "input; the oracle from mr local wordcount"
quiet mr gen randomtextwriter --size 16MiB --output /in || fail "randomtextwriter failed"
for p in $(mr fs ls /in | awk '$NF ~ /\/part-/ {print $NF}'); do mr fs cat "$p"; done > "$TMP/in.txt"
[ "$(stat -c %s "$TMP/in.txt")" -gt $((12 << 20)) ] || fail "fetched input is only $(stat -c %s "$TMP/in.txt") bytes"
"$MR" local wordcount "$TMP/in.txt" --reducers 2 --output "$TMP/oracle" >/dev/null
sort "$TMP"/oracle/part-* > "$TMP/oracle.txt"
ok "$(stat -c %s "$TMP/in.txt") bytes, $(wc -l < "$TMP/oracle.txt") words"

step "WordCount; SIGKILL w2's container while its maps run; the swarm restarts it"
W2_VOL=$(docker volume inspect -f '{{.Mountpoint}}' "${STACK}_w2-data") || fail "no volume ${STACK}_w2-data"
rm -f "$W2_VOL/release"
id=$(mr job submit wordcount --input /in --output /out --reducers 2 \
  --param hold_maps=/data/w2/release --param hold_workers=w2) || fail "submit failed"
busy=0
for _ in $(seq 1 300); do
  busy=$(mr cluster status --json | python3 -c '
import json,sys
print(sum(1 for w in json.load(sys.stdin)["workers"]
          if w["name"] == "w2" and w["free_map_slots"] < w["map_slots"]))' 2>/dev/null || echo 0)
  [ "$busy" = 1 ] && break
  sleep 0.1
done
[ "$busy" = 1 ] || fail "w2 never ran a map of job $id"
[ "$(state_of "$id")" = running ] || fail "job $id was no longer running before the kill: the test proves nothing"
old=$(w2_container)
[ -n "$old" ] || fail "no container of w2"
quiet "${SW[@]}" kill w2 --dir "$C" || fail "kill w2 failed"
touch "$W2_VOL/release"
[ "$(state_of "$id")" = running ] || fail "job $id was no longer running when w2 was killed"
new=""
for _ in $(seq 1 240); do
  new=$(w2_container)
  [ -n "$new" ] && [ "$new" != "$old" ] && break
  sleep 0.5
done
[ -n "$new" ] && [ "$new" != "$old" ] || fail "the swarm did not start a new container for w2"
final=$(timeout 300 "${SW[@]}" mr job wait "$id" --json --dir "$C" 2>/dev/null || true)
python3 -c 'import json,sys; j=json.loads(sys.argv[1]); assert j["state"]=="succeeded", j["state"]' "$final" \
  || fail "job $id did not succeed through w2's crash: $(echo "$final" | head -c 400)"
for p in $(mr fs ls /out | awk '$NF ~ /\/part-/ {print $NF}'); do mr fs cat "$p"; done | sort > "$TMP/out.txt"
cmp -s "$TMP/out.txt" "$TMP/oracle.txt" || fail "WordCount output differs from mr local wordcount"
for _ in $(seq 1 120); do mr cluster health --worker w2 >/dev/null 2>&1 && break; sleep 0.5; done
mr cluster health --worker w2 >/dev/null || fail "w2 did not rejoin in its new container"
tasks=$(docker service ps -q "${STACK}_w2" | wc -l)
[ "$tasks" -ge 2 ] || fail "w2's service shows $tasks task(s): no restart by the swarm"
ok "job $id succeeded with the oracle's output; container $old killed, $new started by the swarm, w2 rejoined"

step "down --volumes: no stack, volume, secret, network or swarm left"
"${SW[@]}" down --dir "$C" --volumes >/dev/null || fail "down failed"
[ "$(docker info -f '{{.Swarm.LocalNodeState}}')" = inactive ] || fail "the swarm is still active"
[ -z "$(docker ps -aq --filter "label=com.docker.stack.namespace=$STACK")" ] || fail "containers left"
[ -z "$(docker volume ls -q --filter "label=com.docker.stack.namespace=$STACK")" ] || fail "volumes left"
[ ! -d "$C/tls" ] && [ ! -f "$C/services.toml" ] && [ ! -f "$C/ca.key" ] || fail "files holding secrets left in $C"
! docker network ls --format '{{.Name}}' | grep -qE "^(${STACK}_mr|ingress)$" || fail "networks left"
[ "$gw_before" = 1 ] || ! docker network inspect docker_gwbridge >/dev/null 2>&1 || fail "docker_gwbridge left"
ok "nothing left behind"
echo "$NAME: all passed in $(( $(date +%s) - t0 ))s"
