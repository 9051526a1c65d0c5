#!/usr/bin/env bash
# Docker Swarm: the cluster as a stack of services, on a one-node swarm this
# script makes on this machine, or on a swarm of several hosts you made.
#
#   scripts/swarm.sh up [--workers N] [--racks R] [--dir D] [--stack S]
#                       [--block-size SIZE] [--replication N] [--heartbeat DUR]
#                       [--cache SIZE] [--slots N] [--ui-port P] [--tls]
#   scripts/swarm.sh files [up's options]  only writes D's files and D/stack.yml (to deploy by hand)
#   scripts/swarm.sh scale N --dir D     workers w1..wN (more: added; fewer: wN+1.. decommissioned, then removed)
#   scripts/swarm.sh status --dir D      services, tasks, cluster status
#   scripts/swarm.sh mr ARGS... --dir D  runs `mr ARGS` in a container on the stack's network
#   scripts/swarm.sh kill NAME --dir D   SIGKILLs the container of service NAME (the swarm restarts it)
#   scripts/swarm.sh label NODE RACK     lets node NODE (of a multi-host swarm) run rack RACK's workers
#   scripts/swarm.sh down --dir D [--volumes]
#
# `up` initialises a one-node swarm when this engine is in none (listening
# on 127.0.0.1 only), labels this node for the master and every rack,
# writes D/cluster.toml and D/stack.yml (deploy/swarm/stack.yml is one for
# 4 workers), deploys the image (MR_IMAGE, default mr-runtime:latest, made
# by scripts/docker.sh build: nothing is pulled) as the stack S (default
# mr): service `master`, one service per worker `w1..wN`, all on one
# overlay network S_mr, each with its data on a volume of the node it runs
# on, and returns when every worker is alive. A worker of rack rK runs only
# on a node labelled mr.rack.rK=true, the master on one labelled
# mr.master=true. `down` removes the stack (and its volumes with
# --volumes) and leaves the swarm when `up` made it, so that nothing is
# left behind.
#
# Names, not IPs: Swarm gives a restarted task a new address, so the
# cluster file names services (master:7070, w3:7100; DNS round robin, no
# virtual IP) and each process binds 0.0.0.0 (MR_LISTEN, MR_HTTP_LISTEN:
# a task's own name resolves only once it runs).
#
# Secrets: D/cluster.toml is the admin's file (its token; what `swarm.sh
# mr` and a user's `mr` read). The services read D/services.toml, the same
# plus a `worker_token` (the workers' identity, which the admin's token
# cannot take), which never leaves the host otherwise. With --tls, `mr
# config init --tls` makes a CA (key D/ca.key) and a certificate per
# process in D/tls, and each service gets only its own: the master
# master.pem/.key, worker wK wK.pem/.key, every one ca.pem; client.pem,
# client.key and ca.key stay on the host. Each file travels as a Swarm
# secret (mode 0400, in memory on the nodes, under /run/secrets), named
# after its content, so a changed file rolls the services that mount it.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"

usage() { sed -n '2,43p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "swarm.sh: $*" >&2; exit 1; }

cmd=${1:-}
[ -n "$cmd" ] || { usage; exit 2; }
shift
ARG1="" ARG2=""
MR_ARGS=()
case "$cmd" in
  scale|kill) ARG1=${1:-}; [ -n "$ARG1" ] && [ "${ARG1#-}" = "$ARG1" ] || die "$cmd needs an argument"; shift ;;
  label) ARG1=${1:-}; ARG2=${2:-}; [ -n "$ARG1" ] && [ -n "$ARG2" ] || die "label needs NODE RACK"; shift 2 ;;
  mr)
    # Everything up to --dir goes to mr.
    while [ $# -gt 0 ] && [ "$1" != --dir ]; do MR_ARGS+=("$1"); shift; done ;;
  up|down|status|files) ;;
  -h|--help|help) usage; exit 0 ;;
  *) echo "swarm.sh: unknown command $cmd" >&2; usage >&2; exit 2 ;;
esac

WORKERS=4 RACKS=2 DIR="./mr-swarm" STACK="" BLOCK="64MiB" REPL=3 HB="1s" CACHE="256MiB"
SLOTS=2 UI_PORT=7080 VOLUMES=0 TLS=0
IMAGE=${MR_IMAGE:-mr-runtime:latest}
while [ $# -gt 0 ]; do
  case "$1" in
    --workers) WORKERS=$2; shift 2 ;;
    --racks) RACKS=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --stack) STACK=$2; shift 2 ;;
    --block-size) BLOCK=$2; shift 2 ;;
    --replication) REPL=$2; shift 2 ;;
    --heartbeat) HB=$2; shift 2 ;;
    --cache) CACHE=$2; shift 2 ;;
    --slots) SLOTS=$2; shift 2 ;;
    --ui-port) UI_PORT=$2; shift 2 ;;
    --volumes) VOLUMES=1; shift ;;
    --tls) TLS=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option $1" ;;
  esac
done

[ "$cmd" = files ] || command -v docker >/dev/null || die "docker is not installed"
[ "$cmd" = files ] || docker info >/dev/null 2>&1 || die "no Docker engine answers (is dockerd running, and may this user use it?)"

swarm_state() { docker info -f '{{.Swarm.LocalNodeState}}' 2>/dev/null; }

if [ "$cmd" = label ]; then
  [[ "$ARG2" =~ ^r[0-9]+$ ]] || die "a rack is rN (r1, r2, ...)"
  docker node update --label-add "mr.rack.$ARG2=true" "$ARG1" >/dev/null
  echo "node $ARG1 may run the workers of rack $ARG2"
  exit 0
fi

mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
CONF="$DIR/cluster.toml"
SERVICES="$DIR/services.toml"
STACKFILE="$DIR/stack.yml"
STATE="$DIR/swarm.env"
# What `up` decided (the stack's name, whether it made the swarm) is kept
# so that later commands find the same stack and `down` undoes only that.
SAVED_STACK="" SAVED_RACKS="" SAVED_INITED=0 SAVED_GWBRIDGE=1 SAVED_IMAGE="" SAVED_UI_PORT=""
SAVED_SLOTS="" SAVED_CACHE="" SAVED_BLOCK="" SAVED_REPL="" SAVED_HB=""
if [ -f "$STATE" ]; then
  # shellcheck disable=SC1090
  . "$STATE"
fi
STACK=${STACK:-${SAVED_STACK:-mr}}
RACKS=${SAVED_RACKS:-$RACKS}
IMAGE=${SAVED_IMAGE:-$IMAGE}
UI_PORT=${SAVED_UI_PORT:-$UI_PORT}
SLOTS=${SAVED_SLOTS:-$SLOTS}
CACHE=${SAVED_CACHE:-$CACHE}
BLOCK=${SAVED_BLOCK:-$BLOCK}
REPL=${SAVED_REPL:-$REPL}
HB=${SAVED_HB:-$HB}
NET="${STACK}_mr"
# TLS is what the cluster file says, once written: later commands keep it.
[ -f "$CONF" ] && grep -q '^\[tls\]' "$CONF" && TLS=1

save_state() {
  cat > "$STATE" <<EOF
SAVED_STACK=$STACK
SAVED_RACKS=$RACKS
SAVED_INITED=$SAVED_INITED
SAVED_GWBRIDGE=$SAVED_GWBRIDGE
SAVED_IMAGE=$IMAGE
SAVED_UI_PORT=$UI_PORT
SAVED_SLOTS=$SLOTS
SAVED_CACHE=$CACHE
SAVED_BLOCK=$BLOCK
SAVED_REPL=$REPL
SAVED_HB=$HB
EOF
}

validate() {
  [[ "$WORKERS" =~ ^[0-9]+$ ]] && [ "$WORKERS" -ge 1 ] && [ "$WORKERS" -le 100 ] || die "--workers must be 1..100"
  [[ "$RACKS" =~ ^[0-9]+$ ]] && [ "$RACKS" -ge 1 ] && [ "$RACKS" -le "$WORKERS" ] || die "--racks must be 1..workers"
  [[ "$SLOTS" =~ ^[0-9]+$ ]] && [ "$SLOTS" -ge 1 ] || die "--slots must be a positive number"
  [[ "$STACK" =~ ^[a-z][a-z0-9]{0,15}$ ]] || die "--stack must be 1-16 lowercase letters or digits"
  [[ "$UI_PORT" =~ ^[0-9]+$ ]] && [ "$UI_PORT" -le 65535 ] || die "--ui-port must be a port (0: not published)"
}

rack_of() { echo $(( ($1 - 1) % RACKS + 1 )); }

rand_token() { od -An -N16 -tx1 /dev/urandom | tr -d ' \n'; }

# `mr` on this host's files (D at /swarm): the image's, so that nothing
# else need be installed; else one on PATH.
mr_tool() {
  if command -v docker >/dev/null && docker image inspect "$IMAGE" >/dev/null 2>&1; then
    docker run --rm --network none --user "$(id -u):$(id -g)" \
      --mount "type=bind,src=$DIR,dst=/swarm" -e RUST_LOG=warn \
      "$IMAGE" /bin/mr --config /swarm/cluster.toml "$@"
  elif command -v mr >/dev/null; then
    mr --config "$CONF" "$@"
  else
    die "--tls needs mr to make the certificates: the image $IMAGE (scripts/docker.sh build) or mr on PATH"
  fi
}

# The cluster file, by hand: `mr config init` takes IP addresses only,
# and here every address is a service's name. Both tokens are kept when
# the file is rewritten (scale), so clients and workers stay valid.
write_conf() { # workers
  local token="" wtoken="" i
  [ -f "$CONF" ] && token=$(sed -nE 's/^token = "(.*)"/\1/p' "$CONF")
  [ -f "$SERVICES" ] && wtoken=$(sed -nE 's/^worker_token = "(.*)"/\1/p' "$SERVICES")
  token=${token:-$(rand_token)}
  wtoken=${wtoken:-$(rand_token)}
  (
    umask 077
    {
      echo "# Written by scripts/swarm.sh: the admin's cluster file (mr, swarm.sh mr)."
      echo "# The services read services.toml: this and the workers' worker_token."
      echo "token = \"$token\""
      echo
      echo "[master]"
      echo "addr = \"master:7070\""
      echo "http_addr = \"master:7080\""
      echo "data_dir = \"/data/master\""
      echo
      echo "[dfs]"
      echo "block_size = \"$BLOCK\""
      echo "replication = $REPL"
      echo
      echo "[heartbeat]"
      echo "interval = \"$HB\""
      echo
      echo "[network]"
      echo "kind = \"swarm\""
      for i in $(seq 1 "$1"); do
        echo
        echo "[[workers]]"
        echo "name = \"w$i\""
        echo "addr = \"w$i:7100\""
        echo "rack = \"r$(rack_of "$i")\""
        echo "map_slots = $SLOTS"
        echo "reduce_slots = $SLOTS"
        echo "cache = \"$CACHE\""
        echo "data_dir = \"/data/w$i\""
      done
    } > "$CONF.new"
  )
  mv "$CONF.new" "$CONF"
  if [ "$TLS" = 1 ]; then
    # The CA (D/ca.key) is made once and kept; every certificate is
    # (re)issued, a new worker's too. `localhost`: the web UI published
    # on the host.
    mr_tool config init --tls --san localhost > "$DIR/tls.log" 2>&1 \
      || { cat "$DIR/tls.log" >&2; die "mr config init --tls failed"; }
  fi
  (
    umask 077
    sed "/^token = /a worker_token = \"$wtoken\"" "$CONF" > "$SERVICES.new"
  )
  mv "$SERVICES.new" "$SERVICES"
}

# A secret cannot change: a new file is a new secret (named after its
# content), which rolls the services that mount it.
secret_name() { # key file
  echo "$STACK-$1-$(sha256sum "$2" | cut -c1-12)"
}

# What service NAME mounts: the services' cluster file; with TLS the CA's
# certificate and NAME's own pair, where [tls] (relative to the file)
# finds them.
service_secrets() { # name
  echo "    secrets:"
  echo "      - {source: cluster, target: cluster.toml, mode: 0400}"
  if [ "$TLS" = 1 ]; then
    echo "      - {source: ca, target: tls/ca.pem, mode: 0400}"
    echo "      - {source: $1-pem, target: tls/$1.pem, mode: 0400}"
    echo "      - {source: $1-key, target: tls/$1.key, mode: 0400}"
  fi
}

# Every listed worker of the cluster file gets a service.
write_stack() {
  local n i r p
  n=$(grep -c '^\[\[workers\]\]' "$CONF")
  {
    echo "# Written by scripts/swarm.sh for $n workers$([ "$TLS" = 1 ] && echo ", TLS"); deploy with"
    echo "#   docker stack deploy --resolve-image never -c stack.yml $STACK"
    echo "version: \"3.8\""
    echo "networks:"
    echo "  mr:"
    echo "    driver: overlay"
    echo "    attachable: true        # scripts/swarm.sh mr runs the CLI on it"
    echo "secrets:"
    echo "  cluster:                  # cluster.toml and worker_token: the master and the workers only"
    echo "    file: ./services.toml"
    echo "    name: $(secret_name cluster "$SERVICES")"
    if [ "$TLS" = 1 ]; then
      echo "  ca:"
      echo "    file: ./tls/ca.pem"
      echo "    name: $(secret_name ca "$DIR/tls/ca.pem")"
      for p in master $(seq -f 'w%g' 1 "$n"); do
        echo "  $p-pem:"
        echo "    file: ./tls/$p.pem"
        echo "    name: $(secret_name "$p-pem" "$DIR/tls/$p.pem")"
        echo "  $p-key:"
        echo "    file: ./tls/$p.key"
        echo "    name: $(secret_name "$p-key" "$DIR/tls/$p.key")"
      done
    fi
    echo "volumes:"
    echo "  master-data: {}"
    for i in $(seq 1 "$n"); do echo "  w$i-data: {}"; done
    echo "x-common: &common"
    echo "  image: $IMAGE"
    echo "  networks: [mr]"
    echo "services:"
    echo "  master:"
    echo "    <<: *common"
    echo "    command: [\"/bin/mr-master\", \"--config\", \"/run/secrets/cluster.toml\"]"
    echo "    environment: [\"RUST_LOG=info\", \"MR_LISTEN=0.0.0.0:7070\", \"MR_HTTP_LISTEN=0.0.0.0:7080\"]"
    service_secrets master
    echo "    volumes: [\"master-data:/data/master\"]"
    if [ "$UI_PORT" != 0 ]; then
      echo "    ports: [{target: 7080, published: $UI_PORT, protocol: tcp, mode: host}]"
    fi
    # No health check: Swarm puts a task with one into its service's DNS
    # only once healthy, and the image's one check (mr cluster health)
    # dials the master by that name: it could never pass.
    echo "    stop_grace_period: 20s"
    echo "    deploy:"
    echo "      endpoint_mode: dnsrr"
    echo "      labels: {mr.role: master}"
    echo "      placement: {constraints: [\"node.labels.mr.master == true\"]}"
    echo "      restart_policy: {condition: any, delay: 1s}"
    for i in $(seq 1 "$n"); do
      r=$(rack_of "$i")
      echo "  w$i:"
      echo "    <<: *common"
      echo "    command: [\"/bin/mr-worker\", \"--config\", \"/run/secrets/cluster.toml\", \"--name\", \"w$i\"]"
      echo "    environment: [\"RUST_LOG=info\", \"MR_DRAIN_TIMEOUT=30s\", \"MR_LISTEN=0.0.0.0:7100\"]"
      service_secrets "w$i"
      echo "    volumes: [\"w$i-data:/data/w$i\"]"
      # No health check: the only one the image can run asks the master,
      # so the swarm would replace every worker whenever the master is
      # away. A worker that dies exits, and the swarm restarts it.
      echo "    stop_grace_period: 40s"
      echo "    deploy:"
      echo "      endpoint_mode: dnsrr"
      echo "      labels: {mr.role: worker, mr.rack: r$r}"
      echo "      placement: {constraints: [\"node.labels.mr.rack.r$r == true\"]}"
      echo "      restart_policy: {condition: any, delay: 1s}"
    done
  } > "$STACKFILE"
}

# One-off `mr` in a container on the stack's network: the workers'
# addresses are names on the overlay, which this host cannot reach. It
# reads the admin's file (no worker_token) and, with TLS, the client's
# certificate.
in_net() { # docker-run-options... -- mr-args...
  local opts=() f
  while [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  if [ "$TLS" = 1 ]; then
    for f in ca.pem client.pem client.key; do
      opts+=(--mount "type=bind,src=$DIR/tls/$f,dst=/etc/mr/tls/$f,readonly")
    done
  fi
  docker run --rm "${opts[@]}" --network "$NET" \
    --mount "type=bind,src=$CONF,dst=/etc/mr/cluster.toml,readonly" \
    -e RUST_LOG=warn "$IMAGE" /bin/mr --config /etc/mr/cluster.toml "$@"
}

deploy() {
  write_stack
  local log
  # --detach=false: back only once every service converged. Detached, a
  # scale's roll-over went on after the workers were counted alive (the
  # old tasks were), and a worker restarted after `scale` had returned.
  log=$(cd "$DIR" && timeout 600 docker stack deploy --detach=false --prune --resolve-image never -c stack.yml "$STACK" 2>&1) \
    || { echo "$log" >&2; die "docker stack deploy failed or its services did not converge in 600 s"; }
  # Secrets of earlier versions of the files, no longer mounted (one a
  # task that is still stopping holds goes with `down`).
  local s cur
  cur=$(sed -nE 's/^    name: (.*)/\1/p' "$STACKFILE")
  for s in $(docker secret ls --filter "label=com.docker.stack.namespace=$STACK" --format '{{.Name}}'); do
    grep -qxF "$s" <<<"$cur" || docker secret rm "$s" >/dev/null 2>&1 || true
  done
}

# The files, written once: a later up (or files) keeps them, tokens and
# certificates included; --tls on a cluster without TLS adds it.
need_conf() {
  if [ ! -f "$CONF" ] || [ ! -f "$SERVICES" ]; then
    write_conf "$WORKERS"
  elif [ "$TLS" = 1 ] && { ! grep -q '^\[tls\]' "$CONF" || [ ! -f "$DIR/tls/client.pem" ]; }; then
    write_conf "$(grep -c '^\[\[workers\]\]' "$CONF")"
  fi
}

wait_alive() { # workers
  local err
  err=$(in_net -- cluster health --workers "$1" --wait 180s 2>&1 >/dev/null) && return 0
  echo "swarm.sh: ${err#mr: error: }; tasks:" >&2
  docker stack ps --no-trunc "$STACK" >&2 || true
  return 1
}

case "$cmd" in
  files)
    validate
    need_conf
    write_stack
    echo "wrote $CONF, $SERVICES$([ "$TLS" = 1 ] && echo ", $DIR/tls") and $STACKFILE (docker stack deploy --resolve-image never -c $STACKFILE $STACK, from $DIR)"
    ;;
  up)
    validate
    docker image inspect "$IMAGE" >/dev/null 2>&1 || die "no image $IMAGE: run scripts/docker.sh build first"
    case "$(swarm_state)" in
      active) ;;
      inactive)
        # Remember what the engine had, so that down removes only ours.
        docker network inspect docker_gwbridge >/dev/null 2>&1 && SAVED_GWBRIDGE=1 || SAVED_GWBRIDGE=0
        # 127.0.0.1: a one-node swarm that nothing outside this machine can
        # join; the address pool is apart from the LAN and compose subnets.
        docker swarm init --advertise-addr 127.0.0.1 --listen-addr 127.0.0.1:2377 \
          --default-addr-pool 10.91.0.0/16 >/dev/null || die "docker swarm init failed"
        SAVED_INITED=1
        ;;
      *) die "this engine's swarm state is $(swarm_state): fix it first" ;;
    esac
    save_state
    self=$(docker info -f '{{.Swarm.NodeID}}')
    labels=(--label-add mr.master=true)
    for r in $(seq 1 "$RACKS"); do labels+=(--label-add "mr.rack.r$r=true"); done
    # On a one-node swarm this node hosts every rack; on more nodes, label
    # each one with `swarm.sh label NODE RACK` and take the racks off this one.
    [ "$(docker node ls -q | wc -l)" -gt 1 ] || docker node update "${labels[@]}" "$self" >/dev/null
    need_conf
    deploy
    n=$(grep -c '^\[\[workers\]\]' "$CONF")
    wait_alive "$n"
    echo "swarm cluster up: stack $STACK, $n workers in $RACKS racks; config $CONF (mr runs on the stack's network: scripts/swarm.sh mr ... --dir $DIR)"
    ;;
  scale)
    [ -f "$CONF" ] && [ -f "$SERVICES" ] || die "no cluster in $DIR (run up first)"
    [[ "$ARG1" =~ ^[0-9]+$ ]] && [ "$ARG1" -ge 1 ] && [ "$ARG1" -le 100 ] || die "scale takes 1..100 workers"
    cur=$(grep -c '^\[\[workers\]\]' "$CONF")
    # Fewer workers: those going are decommissioned first, all at once,
    # and removed only once the master has copied their blocks to those
    # staying (a removal alone drains only as far as their 30 s allow,
    # and the master restarts meanwhile). Then they leave the set.
    if [ "$ARG1" -lt "$cur" ]; then
      for i in $(seq $((ARG1 + 1)) "$cur"); do in_net -- admin decommission "w$i" >/dev/null; done
      for i in $(seq $((ARG1 + 1)) "$cur"); do in_net -- admin decommission "w$i" --wait; done
    fi
    # A longer or shorter worker list is a new cluster file: the master
    # restarts with it (running jobs fail), the kept workers roll over.
    write_conf "$ARG1"
    deploy
    wait_alive "$ARG1"
    for i in $(seq $((ARG1 + 1)) "$cur"); do in_net -- admin recommission "w$i" >/dev/null; done
    echo "swarm cluster scaled to $ARG1 workers"
    ;;
  status)
    [ -f "$STACKFILE" ] || die "no cluster in $DIR (run up first)"
    docker stack services "$STACK"
    in_net -- cluster status || true
    ;;
  mr)
    [ -f "$CONF" ] || die "no cluster in $DIR (run up first)"
    if [ -t 0 ]; then in_net -- "${MR_ARGS[@]}"; else in_net -i -- "${MR_ARGS[@]}"; fi
    ;;
  kill)
    c=$(docker ps -q --filter "label=com.docker.swarm.service.name=${STACK}_$ARG1" | head -n1)
    [ -n "$c" ] || die "no running container of service ${STACK}_$ARG1"
    docker kill "$c" >/dev/null
    echo "killed $c (service ${STACK}_$ARG1); the swarm starts a new one"
    ;;
  down)
    if docker stack ls --format '{{.Name}}' 2>/dev/null | grep -qx "$STACK"; then
      docker stack rm "$STACK" >/dev/null
    fi
    # stack rm returns before the containers and the network are gone.
    for _ in $(seq 1 120); do
      [ -z "$(docker ps -aq --filter "label=com.docker.stack.namespace=$STACK")" ] \
        && ! docker network inspect "$NET" >/dev/null 2>&1 && break
      sleep 0.5
    done
    if [ "$VOLUMES" = 1 ]; then
      docker volume ls -q --filter "label=com.docker.stack.namespace=$STACK" | xargs -r docker volume rm >/dev/null
    fi
    if [ "$SAVED_INITED" = 1 ] && [ "$(swarm_state)" = active ]; then
      docker swarm leave --force >/dev/null
      # Leaving keeps the bridge the swarm made; it was not there before.
      [ "$SAVED_GWBRIDGE" = 1 ] || docker network rm docker_gwbridge >/dev/null 2>&1 || true
    fi
    if [ "$VOLUMES" = 1 ]; then
      rm -f "$CONF" "$SERVICES" "$STACKFILE" "$STATE" "$DIR/ca.key" "$DIR/tls.log"
      rm -rf "$DIR/tls"
    fi
    echo "swarm cluster down$([ "$SAVED_INITED" = 1 ] && echo ", swarm left")$([ "$VOLUMES" = 1 ] && echo ", volumes removed")"
    ;;
esac
