#!/usr/bin/env bash
# Containers: an image built here from nothing (FROM scratch: the three
# binaries and exactly the shared libraries they load) and a compose cluster
# with one network per rack.
#
#   scripts/docker.sh build [--debug] [--no-build]   image mr-runtime:latest (MR_IMAGE renames it);
#                                                --no-build packs the binaries already in target/
#   scripts/docker.sh up [--workers N] [--racks R] [--dir D] [--uplink-rate RATE]
#                        [--block-size SIZE] [--replication N] [--heartbeat DUR]
#                        [--cache SIZE] [--slots N] [--subnet A.B] [--project P] [--tls]
#   scripts/docker.sh down --dir D [--volumes]   (keeps the data volumes unless --volumes)
#   scripts/docker.sh status --dir D
#   scripts/docker.sh stop|start [NAME] --dir D  (the whole cluster, or one service; a
#                                                worker stopped alone drains its blocks first)
#   scripts/docker.sh kill NAME --dir D          (SIGKILL: a crash)
#   scripts/docker.sh rate RATE --dir D          (reshape the rack uplinks; 0 removes)
#
# `up` writes D/compose.yml and D/cluster.toml (the same file the containers
# read at /etc/mr/cluster.toml), starts master and workers w1..wN and
# returns when every worker is alive; then `mr --config D/cluster.toml ...`
# from this host talks to the containers. Networks: `core` (A.B.0.0/24,
# the master at A.B.0.10:7070) and `rackR` (A.B.R.0/24, worker i at
# A.B.R.(10+i):7100). Racks reach each other through this host, which
# routes between the bridges (an iptables rule in DOCKER-USER allows it)
# and, with --uplink-rate, shapes what enters each rack with tbf on the
# rack's bridge: traffic inside a rack is bridged and never shaped.
# Each process keeps its data on a named volume, so `stop` then `start`,
# or `down` then `up`, keeps every stored file. --tls: `mr config init
# --tls` makes a CA (key D/ca.key, never mounted) and certificates in D/tls;
# each container gets ca.pem and its own certificate at /etc/mr/tls, and
# every port speaks TLS only.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"

usage() { sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "docker.sh: $*" >&2; exit 1; }

cmd=${1:-}
[ -n "$cmd" ] || { usage; exit 2; }
shift
NAME="" RATE=""
case "$cmd" in
  kill) NAME=${1:-}; [ -n "$NAME" ] && [ "${NAME#-}" = "$NAME" ] || { echo "docker.sh: kill needs a service name" >&2; exit 2; }; shift ;;
  stop|start) if [ -n "${1:-}" ] && [ "${1#-}" = "$1" ]; then NAME=$1; shift; fi ;;
  rate) RATE=${1:-}; [ -n "$RATE" ] || { echo "docker.sh: rate needs a rate (e.g. 100mbit, 0 to remove)" >&2; exit 2; }; shift ;;
  build|up|down|status) ;;
  -h|--help|help) usage; exit 0 ;;
  *) echo "docker.sh: unknown command $cmd" >&2; usage >&2; exit 2 ;;
esac

WORKERS=6 RACKS=2 DIR="./mr-docker" UPLINK="" BLOCK="64MiB" REPL=3 HB="1s" CACHE="256MiB"
SLOTS=2 SUBNET="10.78" PROJECT="" DEBUG=0 VOLUMES=0 NO_BUILD=0 TLS=0
IMAGE=${MR_IMAGE:-mr-runtime:latest}
while [ $# -gt 0 ]; do
  case "$1" in
    --workers) WORKERS=$2; shift 2 ;;
    --racks) RACKS=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --uplink-rate) UPLINK=$2; shift 2 ;;
    --block-size) BLOCK=$2; shift 2 ;;
    --replication) REPL=$2; shift 2 ;;
    --heartbeat) HB=$2; shift 2 ;;
    --cache) CACHE=$2; shift 2 ;;
    --slots) SLOTS=$2; shift 2 ;;
    --subnet) SUBNET=$2; shift 2 ;;
    --project) PROJECT=$2; shift 2 ;;
    --debug) DEBUG=1; shift ;;
    --no-build) NO_BUILD=1; shift ;;
    --volumes) VOLUMES=1; shift ;;
    --tls) TLS=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "docker.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

need_docker() {
  command -v docker >/dev/null || die "docker is not installed"
  docker info >/dev/null 2>&1 || die "no Docker engine answers (is dockerd running, and may this user use it?)"
}

compose_cmd() {
  if docker compose version >/dev/null 2>&1; then echo "docker compose"
  elif command -v docker-compose >/dev/null; then echo "docker-compose"
  else die "neither 'docker compose' nor docker-compose is installed"; fi
}

# ---------------------------------------------------------------- build
build() {
  need_docker
  local profile=release flag=--release
  [ "$DEBUG" = 1 ] && profile=debug flag=""
  [ "$NO_BUILD" = 1 ] || (cd "$ROOT" && cargo build $flag -p master -p worker -p cli --bin mr-master --bin mr-worker --bin mr)
  for b in mr mr-master mr-worker; do
    [ -x "$ROOT/target/$profile/$b" ] || die "no $ROOT/target/$profile/$b (build it, or drop --no-build)"
  done
  local ctx="$ROOT/target/docker"
  rm -rf "$ctx"
  mkdir -p "$ctx/rootfs/bin" "$ctx/rootfs/etc/mr" "$ctx/rootfs/data" "$ctx/rootfs/tmp"
  local b lib
  for b in mr mr-master mr-worker; do
    # Debug info stays on the host: the image carries code only.
    objcopy --strip-debug "$ROOT/target/$profile/$b" "$ctx/rootfs/bin/$b"
  done
  # Exactly the libraries the binaries load, at the paths the loader looks.
  for lib in $(ldd "$ctx"/rootfs/bin/* | grep -oE '/[^ ]+\.so[^ ]*' | sort -u); do
    mkdir -p "$ctx/rootfs$(dirname "$lib")"
    cp -L "$lib" "$ctx/rootfs$lib"
  done
  chmod 1777 "$ctx/rootfs/tmp"
  cat > "$ctx/Dockerfile" <<'EOF'
FROM scratch
COPY rootfs/ /
ENV PATH=/bin
WORKDIR /data
CMD ["/bin/mr", "--help"]
EOF
  local log
  log=$(docker build -q -t "$IMAGE" "$ctx" 2>&1) || { echo "$log" >&2; die "docker build failed"; }
  local size
  size=$(docker image inspect -f '{{.Size}}' "$IMAGE")
  echo "built $IMAGE ($((size / 1048576)) MiB, $profile binaries, no base image)"
}

# ---------------------------------------------------------------- config
mkdir -p "$DIR" 2>/dev/null || true
[ "$cmd" = build ] || DIR="$(cd "$DIR" && pwd)"
CONF="$DIR/cluster.toml"
COMPOSE="$DIR/compose.yml"
STATE="$DIR/docker.env"
# The project (container, volume and bridge names) is fixed at `up` and
# remembered, so later commands find the same cluster.
if [ -f "$STATE" ] && [ "$cmd" != build ]; then
  # shellcheck disable=SC1090
  . "$STATE"
fi
PROJECT=${PROJECT:-${SAVED_PROJECT:-mrd}}
SUBNET=${SAVED_SUBNET:-$SUBNET}

validate() {
  [[ "$WORKERS" =~ ^[0-9]+$ ]] && [ "$WORKERS" -ge 1 ] && [ "$WORKERS" -le 200 ] || die "--workers must be 1..200"
  [[ "$RACKS" =~ ^[0-9]+$ ]] && [ "$RACKS" -ge 1 ] && [ "$RACKS" -le "$WORKERS" ] || die "--racks must be 1..workers"
  [ "$RACKS" -le 250 ] || die "--racks must be at most 250"
  [[ "$SLOTS" =~ ^[0-9]+$ ]] && [ "$SLOTS" -ge 1 ] || die "--slots must be a positive number"
  [[ "$SUBNET" =~ ^[0-9]+\.[0-9]+$ ]] || die "--subnet takes the first two octets of a /16, e.g. 10.78"
  [[ "$PROJECT" =~ ^[a-z][a-z0-9]{0,7}$ ]] || die "--project must be 1-8 lowercase letters or digits (it prefixes bridge names)"
  [ -z "$UPLINK" ] || [[ "$UPLINK" =~ ^[0-9.]+[kmg]?bit$ ]] || die "--uplink-rate takes a tc rate such as 100mbit"
}

rack_of() { echo $(( ($1 - 1) % RACKS + 1 )); }

# With TLS, the compose volumes of process NAME: the CA's certificate and
# its own certificate and key (the health check's `mr` shows the same one,
# MR_TLS_NAME), where the relative paths of [tls] find them.
tls_mounts() { # name
  [ "$TLS" = 1 ] || return 0
  local f
  for f in ca.pem "$1.pem" "$1.key"; do printf ', "./tls/%s:/etc/mr/tls/%s:ro"' "$f" "$f"; done
}

write_files() {
  local i r
  local args=(--out "$CONF" --force
    --master "$SUBNET.0.10:7070" --http "$SUBNET.0.10:7080" --master-dir /data/master
    --block-size "$BLOCK" --replication "$REPL" --heartbeat "$HB"
    --network docker ${UPLINK:+--uplink-rate "$UPLINK"}
    --slots "$SLOTS" --cache "$CACHE" --workers-dir /data)
  for i in $(seq 1 "$WORKERS"); do
    r=$(rack_of "$i")
    args+=(--worker "name=w$i,addr=$SUBNET.$r.$((10 + i)):7100,rack=r$r")
  done
  mr_host config init "${args[@]}" >/dev/null || die "mr config init failed"
  [ "$TLS" = 0 ] || mr_host config init --tls >/dev/null || die "mr config init --tls failed"
  {
    echo "# Written by scripts/docker.sh up; the cluster file is cluster.toml beside it."
    echo "version: \"2.4\""
    echo "networks:"
    echo "  core:"
    echo "    driver: bridge"
    echo "    driver_opts:"
    echo "      com.docker.network.bridge.name: $PROJECT-core"
    echo "      com.docker.network.bridge.enable_ip_masquerade: \"false\""
    echo "    ipam:"
    echo "      config:"
    echo "        - subnet: $SUBNET.0.0/24"
    echo "          gateway: $SUBNET.0.1"
    for r in $(seq 1 "$RACKS"); do
      echo "  rack$r:"
      echo "    driver: bridge"
      echo "    driver_opts:"
      echo "      com.docker.network.bridge.name: $PROJECT-r$r"
      echo "      com.docker.network.bridge.enable_ip_masquerade: \"false\""
      echo "    ipam:"
      echo "      config:"
      echo "        - subnet: $SUBNET.$r.0/24"
      echo "          gateway: $SUBNET.$r.1"
    done
    echo "volumes:"
    echo "  master-data: {}"
    for i in $(seq 1 "$WORKERS"); do echo "  w$i-data: {}"; done
    echo "services:"
    echo "  master:"
    echo "    image: $IMAGE"
    echo "    command: [\"/bin/mr-master\", \"--config\", \"/etc/mr/cluster.toml\"]"
    echo "    environment: [\"RUST_LOG=info\", \"MR_TLS_NAME=master\"]"
    echo "    volumes: [\"./cluster.toml:/etc/mr/cluster.toml:ro\", \"master-data:/data/master\"$(tls_mounts master)]"
    echo "    networks:"
    echo "      core: {ipv4_address: $SUBNET.0.10}"
    echo "    healthcheck:"
    echo "      test: [\"CMD\", \"/bin/mr\", \"--config\", \"/etc/mr/cluster.toml\", \"cluster\", \"health\"]"
    echo "      interval: 2s"
    echo "      timeout: 5s"
    echo "      retries: 30"
    echo "    stop_grace_period: 20s"
    for i in $(seq 1 "$WORKERS"); do
      r=$(rack_of "$i")
      echo "  w$i:"
      echo "    image: $IMAGE"
      echo "    command: [\"/bin/mr-worker\", \"--config\", \"/etc/mr/cluster.toml\", \"--name\", \"w$i\"]"
      echo "    environment: [\"RUST_LOG=info\", \"MR_DRAIN_TIMEOUT=30s\", \"MR_TLS_NAME=w$i\"]"
      echo "    volumes: [\"./cluster.toml:/etc/mr/cluster.toml:ro\", \"w$i-data:/data/w$i\"$(tls_mounts "w$i")]"
      echo "    networks:"
      echo "      rack$r: {ipv4_address: $SUBNET.$r.$((10 + i))}"
      echo "    depends_on:"
      echo "      master: {condition: service_healthy}"
      echo "    healthcheck:"
      echo "      test: [\"CMD\", \"/bin/mr\", \"--config\", \"/etc/mr/cluster.toml\", \"cluster\", \"health\", \"--worker\", \"w$i\"]"
      echo "      interval: 2s"
      echo "      timeout: 5s"
      echo "      retries: 30"
      echo "    stop_grace_period: 40s"
    done
  } > "$COMPOSE"
  {
    echo "SAVED_PROJECT=$PROJECT"
    echo "SAVED_SUBNET=$SUBNET"
    echo "SAVED_RACKS=$RACKS"
    echo "SAVED_UPLINK=$UPLINK"
  } > "$STATE"
}

dc() { (cd "$DIR" && $(compose_cmd) -p "$PROJECT" -f "$COMPOSE" "$@"); }

# Lets the racks reach each other through this host (Docker isolates
# bridges from one another by default); one rule, tagged, removed by down.
RULE_TAG="mr-docker-$PROJECT"
allow_routing() {
  iptables -C DOCKER-USER -s "$SUBNET.0.0/16" -d "$SUBNET.0.0/16" -m comment --comment "$RULE_TAG" -j ACCEPT 2>/dev/null \
    || iptables -I DOCKER-USER -s "$SUBNET.0.0/16" -d "$SUBNET.0.0/16" -m comment --comment "$RULE_TAG" -j ACCEPT
}
forbid_routing() {
  while iptables -D DOCKER-USER -s "$SUBNET.0.0/16" -d "$SUBNET.0.0/16" -m comment --comment "$RULE_TAG" -j ACCEPT 2>/dev/null; do :; done
}

shape() { # rate (empty or 0: none)
  local r dev racks=${SAVED_RACKS:-$RACKS}
  for r in $(seq 1 "$racks"); do
    dev="$PROJECT-r$r"
    ip link show "$dev" >/dev/null 2>&1 || continue
    if [ -z "$1" ] || [ "$1" = 0 ]; then
      tc qdisc del dev "$dev" root 2>/dev/null || true
    else
      tc qdisc replace dev "$dev" root tbf rate "$1" burst 256kb latency 100ms
    fi
  done
}

if [ -n "${MR_BIN_DIR:-}" ]; then BIN=$MR_BIN_DIR
elif [ "$DEBUG" = 0 ] && [ -x "$ROOT/target/release/mr" ]; then BIN="$ROOT/target/release"
else BIN="$ROOT/target/debug"; fi
mr_host() { "$BIN/mr" --config "$CONF" "$@"; }

wait_alive() {
  local want=$1 err
  err=$(mr_host cluster health --workers "$want" --wait 150s 2>&1 >/dev/null) && return 0
  echo "docker.sh: ${err#mr: error: }; recent logs:" >&2
  dc logs --tail 5 >&2 || true
  return 1
}

case "$cmd" in
  build) build ;;
  up)
    need_docker
    docker image inspect "$IMAGE" >/dev/null 2>&1 || die "no image $IMAGE: run scripts/docker.sh build first"
    validate
    if [ ! -f "$CONF" ] || [ ! -f "$COMPOSE" ]; then
      write_files
    else
      # Restart with the files (and the token and volumes) of the last up.
      . "$STATE"; RACKS=$SAVED_RACKS; UPLINK=${UPLINK:-$SAVED_UPLINK}
      WORKERS=$(grep -c '^\[\[workers\]\]' "$CONF")
    fi
    allow_routing
    dc up -d >/dev/null 2>&1 || { dc up -d; exit 1; }
    shape "$UPLINK"
    wait_alive "$WORKERS"
    echo "docker cluster up: $WORKERS workers in $RACKS racks${UPLINK:+, uplinks $UPLINK}; config $CONF"
    ;;
  down)
    [ -f "$COMPOSE" ] || { echo "docker.sh: nothing to take down in $DIR"; exit 0; }
    need_docker
    if [ "$VOLUMES" = 1 ]; then dc down -v --remove-orphans >/dev/null 2>&1 || dc down -v
    else dc down --remove-orphans >/dev/null 2>&1 || dc down; fi
    forbid_routing
    if [ "$VOLUMES" = 1 ]; then rm -f "$COMPOSE" "$CONF" "$STATE"; fi
    if [ "$VOLUMES" = 1 ]; then echo "docker cluster down, volumes removed"
    else echo "docker cluster down, volumes kept (down --volumes removes them)"; fi
    ;;
  status)
    [ -f "$COMPOSE" ] || die "no cluster in $DIR (run up first)"
    dc ps
    mr_host cluster status || true
    ;;
  stop)
    [ -f "$COMPOSE" ] || die "no cluster in $DIR"
    if [ -n "$NAME" ]; then dc stop "$NAME"; else dc stop; fi
    ;;
  start)
    [ -f "$COMPOSE" ] || die "no cluster in $DIR"
    allow_routing
    if [ -n "$NAME" ]; then dc start "$NAME"; else dc start; fi
    shape "${SAVED_UPLINK:-}"
    if [ -z "$NAME" ]; then
      wait_alive "$(grep -c '^\[\[workers\]\]' "$CONF")"
      echo "docker cluster started; config $CONF"
    fi
    ;;
  kill)
    [ -f "$COMPOSE" ] || die "no cluster in $DIR"
    dc kill "$NAME"
    ;;
  rate)
    [ -f "$COMPOSE" ] || die "no cluster in $DIR"
    shape "$RATE"
    sed -i "s/^SAVED_UPLINK=.*/SAVED_UPLINK=$( [ "$RATE" = 0 ] || echo "$RATE")/" "$STATE"
    echo "rack uplinks: $( [ "$RATE" = 0 ] && echo unshaped || echo "$RATE")"
    ;;
esac
