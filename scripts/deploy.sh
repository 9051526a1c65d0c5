#!/usr/bin/env bash
# Real LAN over SSH: copies the binaries to every host of a hosts file,
# writes one cluster.toml for all of them, starts mr-master and mr-worker
# (a systemd unit where the host runs systemd, else setsid nohup with a pid
# file), and waits until every worker is alive.
#
#   scripts/deploy.sh --hosts hosts.txt [--dir D] [--remote-dir /opt/mr]
#                     [--user U] [--identity KEY] [--ssh-port 22] [--bin-dir DIR]
#                     [--block-size 64MiB] [--replication 3] [--heartbeat 1s]
#                     [--cache 256MiB] [--no-systemd] [--tls]
#   scripts/deploy.sh --hosts hosts.txt --status [--dir D] ...
#   scripts/deploy.sh --hosts hosts.txt --stop [--dir D] ...   (SIGTERM: workers drain)
#
# hosts.txt: one line per process, `address rack role slots`, `#` comments:
#     10.0.0.1   r0  master  0
#     10.0.0.11  r1  worker  4
#     10.0.0.12  r1  worker  4
#     10.0.0.21  r2  worker  4
# The address is an IP (it goes into cluster.toml as IP:port); a host may
# carry the master and workers. Ports: the master 7070 (gRPC) and 7080 (web
# UI, REST, /metrics); workers 7100, 7101, ... per host. Racks are yours to
# name: put hosts behind the same switch in the same rack. Workers are named
# w1, w2, ... in file order. The remote dir (`%h` in it becomes the host's
# address, for hosts that share a file system) holds bin/, cluster.toml,
# data/, logs/ and run/. D keeps the cluster.toml this machine's `mr
# --config D/cluster.toml` uses. SSH: key-based (BatchMode); MR_SSH_OPTS adds
# options. --tls: `mr config init --tls` makes a CA (key: D/ca.key, never
# copied) and certificates in D/tls; each host gets tls/ca.pem and the
# certificates of its own processes, and every port speaks TLS only.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"

usage() { awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "deploy.sh: $*" >&2; exit 1; }

HOSTS="" DIR="./mr-deploy" RDIR="/opt/mr" SSH_USER="" IDENTITY="" SSH_PORT=22 BIN=""
BLOCK=64MiB REPL=3 HB=1s CACHE=256MiB ACTION=deploy SYSTEMD=auto TLS=0
while [ $# -gt 0 ]; do
  case "$1" in
    --hosts) HOSTS=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --remote-dir) RDIR=$2; shift 2 ;;
    --user) SSH_USER=$2; shift 2 ;;
    --identity) IDENTITY=$2; shift 2 ;;
    --ssh-port) SSH_PORT=$2; shift 2 ;;
    --bin-dir) BIN=$2; shift 2 ;;
    --block-size) BLOCK=$2; shift 2 ;;
    --replication) REPL=$2; shift 2 ;;
    --heartbeat) HB=$2; shift 2 ;;
    --cache) CACHE=$2; shift 2 ;;
    --no-systemd) SYSTEMD=no; shift ;;
    --tls) TLS=1; shift ;;
    --stop) ACTION=stop; shift ;;
    --status) ACTION=status; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "deploy.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
[ -n "$HOSTS" ] || { usage >&2; die "--hosts FILE is required"; }
[ -f "$HOSTS" ] || die "no hosts file $HOSTS"
[[ "$SSH_PORT" =~ ^[0-9]+$ ]] || die "--ssh-port must be a number"
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
CONF="$DIR/cluster.toml"

# ------------------------------------------------------------ hosts file
# Parsed into parallel arrays: one entry per process.
ADDRS=() RACKS=() ROLES=() SLOTS=() NAMES=() PORTS=()
master_addr=""
n=0 lineno=0
declare -A next_port=()
while read -r line || [ -n "$line" ]; do
  lineno=$((lineno + 1))
  line=${line%%#*}
  # shellcheck disable=SC2086
  set -- $line
  [ $# -eq 0 ] && continue
  [ $# -eq 4 ] || die "$HOSTS:$lineno: want 'address rack role slots', got '$line'"
  addr=$1 rack=$2 role=$3 slots=$4
  [[ "$addr" =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "$HOSTS:$lineno: address '$addr' is not an IPv4 address"
  [[ "$rack" =~ ^[A-Za-z0-9_.-]+$ ]] || die "$HOSTS:$lineno: bad rack name '$rack'"
  [[ "$slots" =~ ^[0-9]+$ ]] || die "$HOSTS:$lineno: slots '$slots' is not a number"
  case "$role" in
    master)
      [ -z "$master_addr" ] || die "$HOSTS:$lineno: a second master (the first is $master_addr)"
      master_addr=$addr
      ADDRS+=("$addr") RACKS+=("$rack") ROLES+=(master) SLOTS+=(0) NAMES+=(master) PORTS+=(7070) ;;
    worker)
      [ "$slots" -ge 1 ] || die "$HOSTS:$lineno: a worker needs at least one slot"
      n=$((n + 1))
      p=${next_port[$addr]:-7100}
      next_port[$addr]=$((p + 1))
      ADDRS+=("$addr") RACKS+=("$rack") ROLES+=(worker) SLOTS+=("$slots") NAMES+=("w$n") PORTS+=("$p") ;;
    *) die "$HOSTS:$lineno: role '$role' is neither master nor worker" ;;
  esac
done < "$HOSTS"
[ -n "$master_addr" ] || die "$HOSTS: no master line"
[ "$n" -ge 1 ] || die "$HOSTS: no worker line"

# ------------------------------------------------------------ ssh
COMMON_OPTS=(-o BatchMode=yes -o ConnectTimeout=10)
[ -n "$IDENTITY" ] && COMMON_OPTS+=(-i "$IDENTITY")
# shellcheck disable=SC2206
[ -n "${MR_SSH_OPTS:-}" ] && COMMON_OPTS+=(${MR_SSH_OPTS})
SSH_OPTS=(-p "$SSH_PORT" "${COMMON_OPTS[@]}")
SCP_OPTS=(-P "$SSH_PORT" "${COMMON_OPTS[@]}")
target() { if [ -n "$SSH_USER" ]; then echo "$SSH_USER@$1"; else echo "$1"; fi; }
on() { # addr command (a shell line run on the host)
  local a=$1; shift
  ssh "${SSH_OPTS[@]}" "$(target "$a")" "$@"
}
rdir() { echo "${RDIR//%h/$1}"; }
unique_addrs() { printf '%s\n' "${ADDRS[@]}" | awk '!seen[$0]++'; }

# ------------------------------------------------------------ cluster.toml
write_config() { # data dirs are per host: the remote dir of each
  local i
  local args=(--out "$CONF" --force --comment "Written by scripts/deploy.sh from $HOSTS."
    --master "$master_addr:7070" --http "$master_addr:7080"
    --master-dir "$(rdir "$master_addr")/data/master"
    --block-size "$BLOCK" --replication "$REPL" --heartbeat "$HB"
    --network lan --cache "$CACHE")
  for i in "${!ADDRS[@]}"; do
    [ "${ROLES[$i]}" = worker ] || continue
    args+=(--worker "name=${NAMES[$i]},addr=${ADDRS[$i]}:${PORTS[$i]},rack=${RACKS[$i]},slots=${SLOTS[$i]},data_dir=$(rdir "${ADDRS[$i]}")/data/${NAMES[$i]}")
  done
  "$MR" config init "${args[@]}" >/dev/null || die "mr config init failed"
}

# ------------------------------------------------------------ per process
# Starts NAME on its host: systemd when the host runs it (and we may), else
# setsid nohup. The remote shell line is the same for both but the launcher.
start_remote() { # index
  local i=$1 a=${ADDRS[$1]} name=${NAMES[$1]} d cmd
  d=$(rdir "$a")
  if [ "${ROLES[$i]}" = master ]; then cmd="$d/bin/mr-master --config $d/cluster.toml"
  else cmd="$d/bin/mr-worker --config $d/cluster.toml --name $name"; fi
  on "$a" "set -e
    mkdir -p $d/logs $d/run
    if [ $SYSTEMD != no ] && [ -d /run/systemd/system ] && command -v systemctl >/dev/null && [ \$(id -u) = 0 ]; then
      cat > /etc/systemd/system/mr-$name.service <<UNIT
[Unit]
Description=mini-MapReduce $name
After=network-online.target
[Service]
ExecStart=$cmd
KillSignal=SIGTERM
TimeoutStopSec=60
Restart=on-failure
[Install]
WantedBy=multi-user.target
UNIT
      systemctl daemon-reload && systemctl enable --now mr-$name.service >/dev/null 2>&1
      echo systemd > $d/run/$name.via
    else
      if [ -f $d/run/$name.pid ] && kill -0 \$(cat $d/run/$name.pid) 2>/dev/null; then exit 0; fi
      setsid nohup $cmd >> $d/logs/$name.log 2>&1 < /dev/null &
      echo \$! > $d/run/$name.pid
      echo nohup > $d/run/$name.via
    fi"
}

stop_remote() { # index
  local a=${ADDRS[$1]} name=${NAMES[$1]} d
  d=$(rdir "$a")
  on "$a" "
    if [ \"\$(cat $d/run/$name.via 2>/dev/null)\" = systemd ]; then
      systemctl disable --now mr-$name.service >/dev/null 2>&1 || true
    elif [ -f $d/run/$name.pid ]; then
      p=\$(cat $d/run/$name.pid)
      kill -TERM \$p 2>/dev/null || true
      for _ in \$(seq 1 600); do kill -0 \$p 2>/dev/null || break; sleep 0.1; done
      kill -KILL \$p 2>/dev/null || true
      rm -f $d/run/$name.pid
    fi"
}

status_remote() { # index
  local a=${ADDRS[$1]} name=${NAMES[$1]} d
  d=$(rdir "$a")
  on "$a" "
    via=\$(cat $d/run/$name.via 2>/dev/null || echo none)
    if [ \"\$via\" = systemd ]; then
      echo \"$name on $a: systemd \$(systemctl is-active mr-$name.service)\"
    elif [ -f $d/run/$name.pid ] && kill -0 \$(cat $d/run/$name.pid) 2>/dev/null; then
      echo \"$name on $a: running, pid \$(cat $d/run/$name.pid)\"
    else
      echo \"$name on $a: stopped\"
    fi" || echo "$name on $a: unreachable over ssh"
}

if [ -z "$BIN" ]; then
  BIN="$ROOT/target/release"
  if [ "$ACTION" = deploy ] && { [ ! -x "$BIN/mr-master" ] || [ ! -x "$BIN/mr-worker" ] || [ ! -x "$BIN/mr" ]; }; then
    (cd "$ROOT" && cargo build --release --bins -p master -p worker -p cli)
  fi
fi
MR="$BIN/mr"

case "$ACTION" in
  deploy)
    for b in mr mr-master mr-worker; do [ -x "$BIN/$b" ] || die "no $BIN/$b"; done
    # What travels is the code: debug info stays here (a tenth of the bytes).
    mkdir -p "$DIR/bin"
    for b in mr mr-master mr-worker; do
      if [ ! -x "$DIR/bin/$b" ] || [ "$BIN/$b" -nt "$DIR/bin/$b" ]; then
        objcopy --strip-debug "$BIN/$b" "$DIR/bin/$b" 2>/dev/null || cp "$BIN/$b" "$DIR/bin/$b"
      fi
    done
    write_config
    [ "$TLS" = 0 ] || "$MR" --config "$CONF" config init --tls >/dev/null || die "mr config init --tls failed"
    for a in $(unique_addrs); do
      d=$(rdir "$a")
      on "$a" "mkdir -p $d/bin $d/data $d/logs $d/run" || die "cannot reach $a over ssh (key-based login as ${SSH_USER:-$USER})"
      # A new name, then a rename: a running binary is never written over.
      for b in mr mr-master mr-worker; do
        scp -q "${SCP_OPTS[@]}" "$DIR/bin/$b" "$(target "$a"):$d/bin/.$b.new" || die "copy of $b to $a failed"
        on "$a" "chmod 755 $d/bin/.$b.new && mv -f $d/bin/.$b.new $d/bin/$b"
      done
      scp -q "${SCP_OPTS[@]}" "$CONF" "$(target "$a"):$d/cluster.toml" || die "copy of cluster.toml to $a failed"
      if [ "$TLS" = 1 ]; then
        # The CA's certificate and this host's own certificates and keys only.
        certs=("$DIR/tls/ca.pem")
        for i in "${!ADDRS[@]}"; do
          [ "${ADDRS[$i]}" = "$a" ] && certs+=("$DIR/tls/${NAMES[$i]}.pem" "$DIR/tls/${NAMES[$i]}.key")
        done
        on "$a" "mkdir -p $d/tls && chmod 700 $d/tls"
        scp -q "${SCP_OPTS[@]}" "${certs[@]}" "$(target "$a"):$d/tls/" || die "copy of the certificates to $a failed"
      fi
      echo "copied binaries and cluster.toml to $a:$d"
    done
    for i in "${!ADDRS[@]}"; do [ "${ROLES[$i]}" = master ] && start_remote "$i"; done
    for i in "${!ADDRS[@]}"; do [ "${ROLES[$i]}" = worker ] && start_remote "$i"; done
    err=$("$MR" --config "$CONF" cluster health --workers "$n" --wait 60s 2>&1 >/dev/null) \
      || die "${err#mr: error: } (logs: <remote dir>/logs on each host)"
    scheme=http; [ "$TLS" = 0 ] || scheme=https
    echo "deployed: master $master_addr:7070 (web UI $scheme://$master_addr:7080/), $n workers alive; config $CONF"
    ;;
  stop)
    for i in "${!ADDRS[@]}"; do [ "${ROLES[$i]}" = worker ] && stop_remote "$i"; done
    for i in "${!ADDRS[@]}"; do [ "${ROLES[$i]}" = master ] && stop_remote "$i"; done
    echo "stopped ${#ADDRS[@]} processes"
    ;;
  status)
    for i in "${!ADDRS[@]}"; do status_remote "$i"; done
    [ -f "$CONF" ] && { timeout 10 "$MR" --config "$CONF" cluster status || true; }
    ;;
esac
