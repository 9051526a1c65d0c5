#!/usr/bin/env bash
# Loopback launcher: a master and workers w1..wN on 127.0.0.1, each with its
# own port, data directory and log under DIR.
#
#   scripts/cluster.sh up [--workers N] [--racks R] [--dir D] [--block-size SIZE]
#                         [--replication N] [--heartbeat DUR] [--dead-after N]
#                         [--cache SIZE] [--release] [--tls]
#   scripts/cluster.sh stop|start|kill NAME --dir D    (NAME: master or a worker)
#   scripts/cluster.sh down --dir D                    (idempotent; keeps data)
#   scripts/cluster.sh status --dir D
#
# `up` writes D/cluster.toml with `mr config init` (reused when it exists and no --workers/--racks
# is given, so a stopped cluster restarts with its data) and returns when
# every worker is alive. Then: mr --config D/cluster.toml ...
# `stop wK` drains the worker first (SIGTERM: its tasks finish and the master
# copies its blocks elsewhere, within 30 s), so stopping workers one after
# another loses no block; for more data than that, run
# `mr admin decommission wK --wait` first. `down` stops every worker at once
# (nothing to copy to then), then the master.
# --tls: `mr config init --tls` makes a CA and certificates under D/tls and
# adds [tls] to the file: every port then speaks TLS only (docs/security.md, TLS).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"

usage() { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; }

cmd=${1:-}
[ -n "$cmd" ] || { usage; exit 2; }
shift
NAME=""
case "$cmd" in
  stop|start|kill) NAME=${1:-}; [ -n "$NAME" ] || { echo "cluster.sh: $cmd needs a process name" >&2; exit 2; }; shift ;;
  up|down|status) ;;
  -h|--help|help) usage; exit 0 ;;
  *) echo "cluster.sh: unknown command $cmd" >&2; usage >&2; exit 2 ;;
esac

WORKERS="" RACKS="" DIR="./mr-cluster" BLOCK="64MiB" REPL=3 HB="1s" DEAD=5 CACHE="256MiB" RELEASE=0 TLS=0
while [ $# -gt 0 ]; do
  case "$1" in
    --workers) WORKERS=$2; shift 2 ;;
    --racks) RACKS=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --block-size) BLOCK=$2; shift 2 ;;
    --replication) REPL=$2; shift 2 ;;
    --heartbeat) HB=$2; shift 2 ;;
    --dead-after) DEAD=$2; shift 2 ;;
    --cache) CACHE=$2; shift 2 ;;
    --release) RELEASE=1; shift ;;
    --tls) TLS=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "cluster.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
CONF="$DIR/cluster.toml"

if [ -n "${MR_BIN_DIR:-}" ]; then BIN="$MR_BIN_DIR"
elif [ "$RELEASE" = 1 ]; then BIN="$ROOT/target/release"
else BIN="$ROOT/target/debug"; fi

ensure_bins() {
  if [ ! -x "$BIN/mr-master" ] || [ ! -x "$BIN/mr-worker" ] || [ ! -x "$BIN/mr" ]; then
    local flag=""; [ "$RELEASE" = 1 ] && flag="--release"
    (cd "$ROOT" && cargo build $flag --bins --workspace)
  fi
}

names() { # every process name in the config: master, then workers
  echo master
  grep -E '^name = ' "$CONF" | sed -E 's/name = "(.*)"/\1/'
}

pid_of() { local f="$DIR/pids/$1.pid"; [ -f "$f" ] && cat "$f" || true; }
running() { local p; p=$(pid_of "$1"); [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }

# Starts a daemon (log file, command...) in the background holding no file
# descriptor of its starter's but its own stdin, stdout and stderr: a lock
# its caller holds through an inherited descriptor (flock(1) around
# scripts/bench.sh, quiet-memory.sh's fd 9) would otherwise stay held for
# as long as the cluster runs.
spawn() {
  local log=$1; shift
  (
    for fd in /proc/"$BASHPID"/fd/*; do
      fd=${fd##*/}
      if [ "$fd" -gt 2 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
    done
    exec setsid nohup "$@" >>"$log" 2>&1 < /dev/null
  ) &
}

start_one() {
  local n=$1
  running "$n" && return 0
  mkdir -p "$DIR/pids" "$DIR/logs"
  if [ "$n" = master ]; then
    spawn "$DIR/logs/$n.log" "$BIN/mr-master" --config "$CONF"
  else
    spawn "$DIR/logs/$n.log" "$BIN/mr-worker" --config "$CONF" --name "$n"
  fi
  echo $! > "$DIR/pids/$n.pid"
}

stop_one() { # name signal
  local n=$1 sig=${2:-TERM} p tenths=100
  # A worker's SIGTERM drains (worker/src/control/drain.rs): its --drain-timeout
  # (30 s) for its tasks and blocks, then a last heartbeat.
  [ "$n" != master ] && [ "$sig" = TERM ] && tenths=400
  p=$(pid_of "$n")
  [ -n "$p" ] || return 0
  if kill -0 "$p" 2>/dev/null; then
    kill -"$sig" "$p" 2>/dev/null || true
    for _ in $(seq 1 "$tenths"); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null || true
  fi
  rm -f "$DIR/pids/$n.pid"
}

write_config() {
  local n=${WORKERS:-6} r=${RACKS:-2}
  local ports
  ports=$(python3 - "$((n + 2))" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
)
  set -- $ports
  local args=(--out "$CONF" --force
    --master "127.0.0.1:$1" --http "127.0.0.1:$2" --master-dir "$DIR/master"
    --block-size "$BLOCK" --replication "$REPL" --heartbeat "$HB" --dead-after "$DEAD"
    --network loopback --slots 2 --cache "$CACHE" --workers-dir "$DIR")
  shift 2
  for i in $(seq 1 "$n"); do
    args+=(--worker "name=w$i,addr=127.0.0.1:$1,rack=r$(( (i - 1) % r + 1 ))")
    shift
  done
  "$BIN/mr" config init "${args[@]}" >/dev/null
}

case "$cmd" in
  up)
    ensure_bins
    if [ ! -f "$CONF" ] || [ -n "$WORKERS$RACKS" ]; then
      for n in $( [ -f "$CONF" ] && names ); do stop_one "$n"; done
      write_config
    fi
    if [ "$TLS" = 1 ] && ! grep -q '^\[tls\]' "$CONF"; then
      "$BIN/mr" --config "$CONF" config init --tls >/dev/null
    fi
    for n in $(names); do start_one "$n"; done
    want=$(names | tail -n +2 | wc -l)
    if err=$("$BIN/mr" --config "$CONF" cluster health --workers "$want" --wait 60s 2>&1 >/dev/null); then
      echo "cluster up: $want workers alive; config $CONF"
      ui=$(sed -nE 's/^http_addr = "([^"]*)".*/\1/p' "$CONF")
      scheme=http; grep -q '^\[tls\]' "$CONF" && scheme=https
      [ -z "$ui" ] || echo "web UI: $scheme://$ui/ (log in with the token in $CONF)"
      exit 0
    fi
    echo "cluster.sh: ${err#mr: error: }; recent logs:" >&2
    for f in "$DIR"/logs/*.log; do echo "--- $f" >&2; tail -n 5 "$f" >&2; done
    exit 1
    ;;
  down)
    [ -f "$CONF" ] || exit 0
    # Every worker at once: all draining, none has anywhere to copy its
    # blocks to, so none waits for copies (one by one, each would copy its
    # blocks to the rest). The master last.
    for n in $(names | tail -n +2); do stop_one "$n" & done
    wait
    stop_one master
    echo "cluster down ($DIR)"
    ;;
  stop) stop_one "$NAME" TERM ;;
  kill) stop_one "$NAME" KILL ;;
  start) ensure_bins; start_one "$NAME" ;;
  status)
    [ -f "$CONF" ] || { echo "no cluster in $DIR"; exit 1; }
    for n in $(names); do
      if running "$n"; then echo "$n pid $(pid_of "$n") running"; else echo "$n stopped"; fi
    done
    if running master; then echo; "$BIN/mr" --config "$CONF" cluster status; fi
    ;;
esac
