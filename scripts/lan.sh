#!/usr/bin/env bash
# Emulated LAN with racks: one network namespace per host, Linux bridges as
# switches, tbf-shaped ports; mr-master and mr-worker run inside their hosts.
#
#   scripts/lan.sh up --dir D [--workers 6] [--racks 2] [--host-rate 1gbit]
#                  [--uplink-rate 300mbit] [--client-rate RATE] [--subnet 10.77.0.0/16]
#                  [--block-size 64MiB] [--replication 3] [--heartbeat 1s] [--dead-after 5]
#                  [--cache 256MiB] [--burst 256kb] [--latency 50ms] [--release] [--tls]
#                  [--no-daemons]   (the network and cluster.toml only: hosts
#                                    without mr processes, as scripts/deploy-test.sh
#                                    wants them for sshd)
#   scripts/lan.sh down [--dir D] [--purge]    kill, remove every mrlan-* object (idempotent)
#   scripts/lan.sh status [--dir D]            namespaces, links, rates, nft tables, processes
#   scripts/lan.sh cut NAME | restore NAME     isolate host NAME (master, w3) / undo
#   scripts/lan.sh cut-rack R | restore-rack R partition rack R (2 or r2) from the rest / undo
#   scripts/lan.sh rate NAME RATE              both directions of NAME's port: master, wN, client
#                                              or uplink-rN; RATE like 200mbit, or off (unshaped)
#   scripts/lan.sh loss NAME PCT               drop PCT% of NAME's packets both ways (0 removes)
#
# Layout (subnet A.B.0.0/16, always a /16). Namespace mrlan-sw holds the
# switches: bridge core and one bridge rackN per rack. Rack N's uplink is the
# veth pair up-rN (on rackN) <-> dn-rN (on core). Each host has a namespace
# (mrlan-master, mrlan-w1..) whose eth0 is the peer of port p-NAME on its
# switch: the master (A.B.0.1:7070) on core, worker i on rack ((i-1) % R) + 1
# as in cluster.sh, at A.B.<rack>.<i>:7100. This shell reaches the LAN through
# one client port on core: mrlan-cli = A.B.0.254, so `mr --config
# D/cluster.toml ...` works here without `ip netns exec`. Hosts have no
# default route: no test traffic leaves the namespaces.
# Shaping: tbf on the egress of both ends of every veth (eth0 = the host's
# upload, p-NAME = its download; up-rN = rack to core, dn-rN = core to rack).
# Offloads stay on, so veth carries 64 KiB GSO packets: burst >= 128 KiB.
# cut/loss of a host: nft table inet mrlan_cut / mrlan_loss inside its
# namespace (loopback untouched). cut-rack/loss of an uplink: nft table bridge
# mrlan_cut_rN / mrlan_loss_rN in mrlan-sw on port up-rN. Loss counts packets
# as netfilter sees them: one GSO packet may be many wire segments.
# D keeps cluster.toml, pids/NAME.pid, logs/NAME.log and the data dirs
# master, wN (kept by down unless --purge). --tls: `mr config init --tls`
# puts a CA and certificates (with each host's 10.x address) in D/tls and
# ca.key, and every port speaks TLS only. Needs root; one LAN per machine.
# Binaries: $MR_BIN_DIR, else target/release with --release, else target/debug.

# shellcheck disable=SC2015 # `test && test || die` is meant: die when any test fails
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"

usage() { awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "lan.sh: $*" >&2; exit 1; }

cmd=${1:-}
[ -n "$cmd" ] || { usage; exit 2; }
shift
case "$cmd" in
  up|down|status|cut|restore|cut-rack|restore-rack|rate|loss) ;;
  -h|--help|help) usage; exit 0 ;;
  *) echo "lan.sh: unknown command $cmd" >&2; usage >&2; exit 2 ;;
esac

DIR="./mr-lan" WORKERS=6 RACKS=2 HOST_RATE=1gbit UPLINK_RATE=300mbit CLIENT_RATE=""
SUBNET=10.77.0.0/16 BLOCK=64MiB REPL=3 HB=1s DEAD=5 CACHE=256MiB BURST=256kb LATENCY=50ms
RELEASE=0 PURGE=0 NO_DAEMONS=0 TLS=0
ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) DIR=$2; shift 2 ;;
    --workers) WORKERS=$2; shift 2 ;;
    --racks) RACKS=$2; shift 2 ;;
    --host-rate) HOST_RATE=$2; shift 2 ;;
    --uplink-rate) UPLINK_RATE=$2; shift 2 ;;
    --client-rate) CLIENT_RATE=$2; shift 2 ;;
    --subnet) SUBNET=$2; shift 2 ;;
    --block-size) BLOCK=$2; shift 2 ;;
    --replication) REPL=$2; shift 2 ;;
    --heartbeat) HB=$2; shift 2 ;;
    --dead-after) DEAD=$2; shift 2 ;;
    --cache) CACHE=$2; shift 2 ;;
    --burst) BURST=$2; shift 2 ;;
    --latency) LATENCY=$2; shift 2 ;;
    --release) RELEASE=1; shift ;;
    --purge) PURGE=1; shift ;;
    --no-daemons) NO_DAEMONS=1; shift ;;
    --tls) TLS=1; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "lan.sh: unknown option $1" >&2; exit 2 ;;
    *) ARGS+=("$1"); shift ;;
  esac
done
[ -n "$CLIENT_RATE" ] || CLIENT_RATE=$HOST_RATE

SW=mrlan-sw          # the switch namespace
CLI=mrlan-cli        # the client port in this shell's namespace
MASTER_PORT=7070 HTTP_PORT=7080 WORKER_PORT=7100

need_root() {
  [ "$(id -u)" = 0 ] || die "needs root (network namespaces, veth, tc, nft); run it as root"
  command -v ip >/dev/null || die "needs iproute2 (ip)"
  ip netns list >/dev/null 2>&1 || die "ip netns does not work here"
  if command -v unshare >/dev/null && ! unshare --net true 2>/dev/null; then
    die "cannot make network namespaces here (no CAP_SYS_ADMIN/CAP_NET_ADMIN?)"
  fi
  command -v tc >/dev/null || die "needs tc (iproute2)"
}
need_nft() {
  command -v nft >/dev/null || die "needs nftables (nft): apt-get install -y nftables"
}
need_args() { # count usage
  [ "${#ARGS[@]}" -eq "$1" ] || { echo "lan.sh: usage: lan.sh $2" >&2; exit 2; }
}
ns_of() { echo "mrlan-$1"; }
ns_exists() { ip netns list 2>/dev/null | awk '{print $1}' | grep -qx "$1"; }
our_namespaces() { ip netns list 2>/dev/null | awk '{print $1}' | grep '^mrlan-' | sort -V || true; }
host_namespaces() { # master first, then w1, w2, ... in order
  our_namespaces | grep -vx "$SW" | sort -V | awk '$0=="mrlan-master"{print; next} {rest=rest $0 "\n"} END{printf "%s", rest}' || true
}

dir_abs() { mkdir -p "$DIR"; DIR="$(cd "$DIR" && pwd)"; CONF="$DIR/cluster.toml"; }

if [ -n "${MR_BIN_DIR:-}" ]; then BIN="$MR_BIN_DIR"
elif [ "$RELEASE" = 1 ]; then BIN="$ROOT/target/release"
else BIN="$ROOT/target/debug"; fi

ensure_bins() {
  if [ ! -x "$BIN/mr-master" ] || [ ! -x "$BIN/mr-worker" ] || [ ! -x "$BIN/mr" ]; then
    local flag=""; [ "$RELEASE" = 1 ] && flag="--release"
    (cd "$ROOT" && cargo build $flag --bins --workspace)
  fi
}

# tbf on the egress of DEV in namespace NS ("" = this one); RATE off removes it.
shape() { # ns dev rate
  local ns=$1 dev=$2 rate=$3
  if [ "$rate" = off ] || [ "$rate" = none ]; then
    tc ${ns:+-n "$ns"} qdisc del dev "$dev" root 2>/dev/null || true
  else
    tc ${ns:+-n "$ns"} qdisc replace dev "$dev" root tbf rate "$rate" burst "$BURST" latency "$LATENCY"
  fi
}

# Where NAME's port is: "NS DEV SWDEV" (host end, switch end).
port_of() {
  case "$1" in
    client) echo "- $CLI p-cli" ;;
    uplink-r[0-9]*) echo "$SW up-${1#uplink-} dn-${1#uplink-}" ;;
    *) echo "$(ns_of "$1") eth0 p-$1" ;;
  esac
}

rack_arg() { # "2" or "r2" -> 2
  [ -n "$(our_namespaces)" ] || die "no LAN is up (no mrlan-* namespace)"
  local r=${1#r}
  [[ "$r" =~ ^[0-9]+$ ]] || die "bad rack $1 (want a number like 2 or r2)"
  ip -n "$SW" link show "up-r$r" >/dev/null 2>&1 || die "no rack r$r in the LAN (no uplink up-r$r)"
  echo "$r"
}
host_arg() {
  [ -n "$(our_namespaces)" ] || die "no LAN is up (no mrlan-* namespace)"
  [ "$1" != sw ] && ns_exists "$(ns_of "$1")" || die "no host $1 in the LAN (hosts: $(host_namespaces | sed 's/^mrlan-//' | tr '\n' ' '))"
}

# ---- down -------------------------------------------------------------------

kill_namespace_procs() { # ns
  local ns=$1 pids
  pids=$(ip netns pids "$ns" 2>/dev/null || true)
  [ -n "$pids" ] || return 0
  # shellcheck disable=SC2086
  kill -TERM $pids 2>/dev/null || true
  for _ in $(seq 1 50); do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -n "$pids" ] || return 0
    sleep 0.1
  done
  # shellcheck disable=SC2086
  kill -KILL $pids 2>/dev/null || true
  for _ in $(seq 1 50); do
    [ -n "$(ip netns pids "$ns" 2>/dev/null || true)" ] || return 0
    sleep 0.1
  done
}

lan_down() {
  local ns
  for ns in $(host_namespaces); do kill_namespace_procs "$ns"; done
  for ns in $(our_namespaces); do kill_namespace_procs "$ns"; ip netns del "$ns" 2>/dev/null || true; done
  # the client port dies with its peer in mrlan-sw; the kernel frees a
  # namespace asynchronously, so wait for it, and delete it if it lingers
  for _ in $(seq 1 50); do ip link show "$CLI" >/dev/null 2>&1 || break; sleep 0.1; done
  ip link del "$CLI" 2>/dev/null || true
}

# ---- up ---------------------------------------------------------------------

lan_up() {
  [[ "$WORKERS" =~ ^[0-9]+$ ]] && [ "$WORKERS" -ge 1 ] && [ "$WORKERS" -le 253 ] || die "--workers must be 1..253 (got $WORKERS)"
  [[ "$RACKS" =~ ^[0-9]+$ ]] && [ "$RACKS" -ge 1 ] && [ "$RACKS" -le 250 ] || die "--racks must be 1..250 (got $RACKS)"
  [[ "$SUBNET" =~ ^([0-9]+)\.([0-9]+)\.0\.0/16$ ]] || die "--subnet must be a /16 like 10.77.0.0/16 (got $SUBNET)"
  [ "${BASH_REMATCH[1]}" -le 255 ] && [ "${BASH_REMATCH[2]}" -le 255 ] || die "bad --subnet $SUBNET"
  local pre="${BASH_REMATCH[1]}.${BASH_REMATCH[2]}"
  if [ -n "$(our_namespaces)" ] || ip link show "$CLI" >/dev/null 2>&1; then
    die "a LAN is already up (namespaces: $(our_namespaces | tr '\n' ' ')); run: scripts/lan.sh down --dir D"
  fi
  if ip -o -4 addr show | awk '{print $4}' | grep -q "^${pre//./\\.}\."; then
    die "this machine already has an address in $SUBNET; choose another --subnet"
  fi
  ensure_bins
  dir_abs
  # shellcheck disable=SC2154 # rc is set inside the trap
  trap 'rc=$?; [ "$rc" = 0 ] || echo "lan.sh: up failed; remove what it made with: scripts/lan.sh down --dir $DIR" >&2' EXIT

  echo "lan: switches (namespace $SW): core + rack1..rack$RACKS, uplinks at $UPLINK_RATE"
  ip netns add "$SW"
  ip -n "$SW" link set lo up
  # bridged frames must not go through iptables (br_netfilter), and no IPv6 chatter
  # shellcheck disable=SC2016 # expanded by that sh
  ip netns exec "$SW" sh -c 'for f in /proc/sys/net/bridge/bridge-nf-call-*; do [ -e "$f" ] && echo 0 > "$f"; done; sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1' 2>/dev/null || true
  ip -n "$SW" link add core type bridge
  ip -n "$SW" link set core up
  local r i name ns rack addr
  for r in $(seq 1 "$RACKS"); do
    ip -n "$SW" link add "rack$r" type bridge
    ip -n "$SW" link set "rack$r" up
    ip -n "$SW" link add "up-r$r" type veth peer name "dn-r$r"
    ip -n "$SW" link set "up-r$r" master "rack$r" up
    ip -n "$SW" link set "dn-r$r" master core up
    shape "$SW" "up-r$r" "$UPLINK_RATE"
    shape "$SW" "dn-r$r" "$UPLINK_RATE"
  done

  add_host() { # name bridge addr
    local name=$1 br=$2 addr=$3 ns
    ns=$(ns_of "$name")
    ip netns add "$ns"
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 2>/dev/null || true
    ip -n "$ns" link set lo up
    ip -n "$SW" link add "p-$name" type veth peer name eth0 netns "$ns"
    ip -n "$SW" link set "p-$name" master "$br" up
    ip -n "$ns" addr add "$addr/16" dev eth0
    ip -n "$ns" link set eth0 up
    shape "$ns" eth0 "$HOST_RATE"
    shape "$SW" "p-$name" "$HOST_RATE"
  }
  echo "lan: hosts at $HOST_RATE: master $pre.0.1 on core, $WORKERS workers"
  add_host master core "$pre.0.1"
  for i in $(seq 1 "$WORKERS"); do
    rack=$(( (i - 1) % RACKS + 1 ))
    add_host "w$i" "rack$rack" "$pre.$rack.$i"
  done

  echo "lan: client port $CLI = $pre.0.254 on core at $CLIENT_RATE"
  ip link add "$CLI" type veth peer name p-cli netns "$SW"
  ip -n "$SW" link set p-cli master core up
  ip addr add "$pre.0.254/16" dev "$CLI"
  ip link set "$CLI" up
  shape "" "$CLI" "$CLIENT_RATE"
  shape "$SW" p-cli "$CLIENT_RATE"

  # the same format as cluster.sh, one address per host
  local args=(--out "$CONF" --force
    --master "$pre.0.1:$MASTER_PORT" --http "$pre.0.1:$HTTP_PORT" --master-dir "$DIR/master"
    --block-size "$BLOCK" --replication "$REPL" --heartbeat "$HB" --dead-after "$DEAD"
    --network emulated-lan --host-rate "$HOST_RATE" --uplink-rate "$UPLINK_RATE"
    --network-comment "what lan.sh built (as launched; \`lan.sh rate\` changes it later)"
    --slots 2 --cache "$CACHE" --workers-dir "$DIR")
  for i in $(seq 1 "$WORKERS"); do
    rack=$(( (i - 1) % RACKS + 1 ))
    args+=(--worker "name=w$i,addr=$pre.$rack.$i:$WORKER_PORT,rack=r$rack")
  done
  "$BIN/mr" config init "${args[@]}" >/dev/null
  [ "$TLS" = 0 ] || "$BIN/mr" --config "$CONF" config init --tls >/dev/null

  if [ "$NO_DAEMONS" = 1 ]; then
    trap - EXIT
    echo "lan up: $WORKERS worker hosts in $RACKS racks, no daemons started; config $CONF"
    return 0
  fi
  mkdir -p "$DIR/pids" "$DIR/logs"
  start_in() { # name cmd...
    local name=$1; shift
    ip netns exec "$(ns_of "$name")" setsid nohup "$@" >>"$DIR/logs/$name.log" 2>&1 < /dev/null &
    echo $! > "$DIR/pids/$name.pid"
  }
  start_in master "$BIN/mr-master" --config "$CONF"
  for i in $(seq 1 "$WORKERS"); do start_in "w$i" "$BIN/mr-worker" --config "$CONF" --name "w$i"; done

  local err="" dead
  for _ in $(seq 1 300); do
    # One check at a time (not --wait): a daemon that exits ends the wait.
    if err=$("$BIN/mr" --config "$CONF" cluster health --workers "$WORKERS" --timeout 5s 2>&1 >/dev/null); then
      trap - EXIT
      echo "lan up: $WORKERS workers alive in $RACKS racks; config $CONF"
      return 0
    fi
    dead=""
    for name in master $(seq -f 'w%g' 1 "$WORKERS"); do
      kill -0 "$(cat "$DIR/pids/$name.pid")" 2>/dev/null || dead="$dead $name"
    done
    [ -z "$dead" ] || { echo "lan.sh: exited:$dead" >&2; break; }
    sleep 0.2
  done
  echo "lan.sh: ${err#mr: error: }; recent logs:" >&2
  for f in "$DIR"/logs/*.log; do echo "--- $f" >&2; tail -n 5 "$f" >&2; done
  exit 1
}

# ---- status -----------------------------------------------------------------

lan_status() {
  if [ -z "$(our_namespaces)" ]; then echo "no LAN up (no mrlan-* namespace)"; return 1; fi
  local ns n p
  echo "== namespaces"
  our_namespaces
  echo
  echo "== switch $SW: bridges and ports"
  ip -n "$SW" -br link show type bridge
  ip -n "$SW" -o link show type veth | awk '{n=$2; sub(/@.*/, "", n); for (i=1;i<NF;i++) if ($i=="master") m=$(i+1); print "  " n " -> " m}'
  echo
  echo "== shaping (tbf, egress of each end)"
  printf '  %-14s %-10s %s\n' port upload download
  for ns in $(host_namespaces); do
    n=${ns#mrlan-}
    printf '  %-14s %-10s %s\n' "$n" "$(tbf_rate "$ns" eth0)" "$(tbf_rate "$SW" "p-$n")"
  done
  printf '  %-14s %-10s %s\n' client "$(tbf_rate "" "$CLI")" "$(tbf_rate "$SW" p-cli)"
  for p in $(ip -n "$SW" -o link show type veth | awk '{print $2}' | sed 's/@.*//' | grep '^up-r' || true); do
    printf '  %-14s %-10s %s\n' "uplink-${p#up-}" "$(tbf_rate "$SW" "$p")" "$(tbf_rate "$SW" "dn-${p#up-}")"
  done
  echo "  (upload: egress of the host's eth0, or rack to core; download: the other way)"
  echo
  echo "== addresses"
  for ns in $(host_namespaces); do
    printf '  %-8s %s\n' "${ns#mrlan-}" "$(ip -n "$ns" -o -4 addr show dev eth0 | awk '{print $4}')"
  done
  printf '  %-8s %s\n' client "$(ip -o -4 addr show dev "$CLI" 2>/dev/null | awk '{print $4}')"
  echo
  echo "== faults (nft tables)"
  local any=0 fam t pct
  for ns in $(our_namespaces); do
    while read -r _ fam t; do
      case "$t" in mrlan_*) ;; *) continue ;; esac
      any=1
      pct=$(ip netns exec "$ns" nft list table "$fam" "$t" < /dev/null | grep -o 'mod 100 < [0-9]*' | head -1 | awk '{print $NF}' || true)
      case "$t" in
        mrlan_cut) echo "  ${ns#mrlan-} cut off (nft table $fam $t in $ns)" ;;
        mrlan_loss) echo "  ${ns#mrlan-} loses $pct% each way (nft table $fam $t in $ns)" ;;
        mrlan_cut_r*) echo "  rack ${t#mrlan_cut_} partitioned: uplink-${t#mrlan_cut_} drops all (nft table $fam $t in $ns)" ;;
        mrlan_loss_r*) echo "  uplink-${t#mrlan_loss_} loses $pct% each way (nft table $fam $t in $ns)" ;;
        *) echo "  $ns: nft table $fam $t" ;;
      esac
    done < <(ip netns exec "$ns" nft list tables 2>/dev/null || true)
  done
  [ "$any" = 1 ] || echo "  none"
  echo
  echo "== processes"
  for ns in $(host_namespaces); do
    n=${ns#mrlan-}
    p=""; [ -f "$DIR/pids/$n.pid" ] && p=$(cat "$DIR/pids/$n.pid")
    if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then echo "  $n pid $p running"
    else echo "  $n stopped (namespace pids: $(ip netns pids "$ns" | tr '\n' ' '))"; fi
  done
  if [ -f "$CONF" ]; then
    echo
    timeout 10 "$BIN/mr" --config "$CONF" cluster status || echo "(mr cluster status failed)"
  fi
}

tbf_rate() { # ns dev -> rate or "-"
  local out
  out=$(tc ${1:+-n "$1"} qdisc show dev "$2" root 2>/dev/null | grep -o 'tbf .* rate [^ ]*' | awk '{print $NF}' || true)
  echo "${out:--}"
}

# ---- faults -----------------------------------------------------------------

nft_in() { # ns script (from stdin)
  ip netns exec "$1" nft -f -
}

host_cut() {
  local ns; ns=$(ns_of "$1")
  ip netns exec "$ns" nft delete table inet mrlan_cut 2>/dev/null || true
  nft_in "$ns" <<'EOF'
table inet mrlan_cut {
  chain in { type filter hook input priority -200; policy drop; iifname "lo" accept; }
  chain out { type filter hook output priority -200; policy drop; oifname "lo" accept; }
}
EOF
  echo "lan: $1 cut off (every packet but loopback dropped)"
}

host_loss() { # name pct
  local ns; ns=$(ns_of "$1")
  ip netns exec "$ns" nft delete table inet mrlan_loss 2>/dev/null || true
  [ "$2" = 0 ] && { echo "lan: $1 without loss"; return 0; }
  nft_in "$ns" <<EOF
table inet mrlan_loss {
  chain in { type filter hook input priority -190; iifname != "lo" numgen random mod 100 < $2 drop; }
  chain out { type filter hook output priority -190; oifname != "lo" numgen random mod 100 < $2 drop; }
}
EOF
  echo "lan: $1 drops $2% of its packets each way"
}

# A rack's uplink port up-rN on bridge rackN: frames out of it go to core,
# frames in from it come from core.
uplink_drop() { # rack table-name pct(100 = everything)
  local r=$1 t=$2 pct=$3 rule
  ip netns exec "$SW" nft delete table bridge "$t" 2>/dev/null || true
  [ "$pct" = 0 ] && return 0
  if [ "$pct" = 100 ]; then rule="drop"; else rule="numgen random mod 100 < $pct drop"; fi
  nft_in "$SW" <<EOF
table bridge $t {
  chain ports { type filter hook forward priority -200; iifname "up-r$r" $rule; oifname "up-r$r" $rule; }
}
EOF
}

case "$cmd" in
  up) need_root; lan_up ;;
  down)
    need_root
    had=$(our_namespaces | tr '\n' ' ')
    lan_down
    if [ -n "${DIR:-}" ] && [ -d "$DIR" ]; then
      rm -rf "$DIR/pids"
      if [ "$PURGE" = 1 ]; then
        rm -rf "$DIR/master" "$DIR/logs" "$DIR/cluster.toml" "$DIR/tls" "$DIR/ca.key"
        find "$DIR" -maxdepth 1 -type d -regex '.*/w[0-9]+' -exec rm -rf {} +
        rmdir "$DIR" 2>/dev/null || true
      fi
    fi
    if [ -n "$had" ]; then echo "lan down: removed $had"; else echo "lan down: nothing was up"; fi
    ;;
  status) need_root; DIR="$(cd "$DIR" 2>/dev/null && pwd || echo "$DIR")"; CONF="$DIR/cluster.toml"; lan_status ;;
  cut) need_root; need_nft; need_args 1 "cut NAME"; host_arg "${ARGS[0]}"; host_cut "${ARGS[0]}" ;;
  restore)
    need_root; need_nft; need_args 1 "restore NAME"; host_arg "${ARGS[0]}"
    ip netns exec "$(ns_of "${ARGS[0]}")" nft delete table inet mrlan_cut 2>/dev/null || true
    echo "lan: ${ARGS[0]} restored"
    ;;
  cut-rack)
    need_root; need_nft; need_args 1 "cut-rack R"; r=$(rack_arg "${ARGS[0]}")
    uplink_drop "$r" "mrlan_cut_r$r" 100
    echo "lan: rack r$r partitioned (uplink-r$r drops everything)"
    ;;
  restore-rack)
    need_root; need_nft; need_args 1 "restore-rack R"; r=$(rack_arg "${ARGS[0]}")
    uplink_drop "$r" "mrlan_cut_r$r" 0
    echo "lan: rack r$r restored"
    ;;
  rate)
    need_root; need_args 2 "rate NAME RATE"
    name=${ARGS[0]} rate=${ARGS[1]}
    case "$name" in
      uplink-r*) rack_arg "${name#uplink-}" >/dev/null ;;
      client) ip link show "$CLI" >/dev/null 2>&1 || die "no client port $CLI" ;;
      *) host_arg "$name" ;;
    esac
    read -r ns dev swdev <<<"$(port_of "$name")"
    [ "$ns" = - ] && ns=""
    shape "$ns" "$dev" "$rate"
    shape "$SW" "$swdev" "$rate"
    if [ "$rate" = off ] || [ "$rate" = none ]; then echo "lan: $name unshaped both ways"
    else echo "lan: $name at $rate both ways"; fi
    ;;
  loss)
    need_root; need_nft; need_args 2 "loss NAME PCT"
    name=${ARGS[0]} pct=${ARGS[1]}
    [[ "$pct" =~ ^[0-9]+$ ]] && [ "$pct" -le 100 ] || die "PCT must be an integer 0..100 (got $pct)"
    case "$name" in
      uplink-r*)
        r=$(rack_arg "${name#uplink-}")
        uplink_drop "$r" "mrlan_loss_r$r" "$pct"
        if [ "$pct" = 0 ]; then echo "lan: uplink-r$r without loss"
        else echo "lan: uplink-r$r drops $pct% of its packets each way"; fi
        ;;
      *) host_arg "$name"; host_loss "$name" "$pct" ;;
    esac
    ;;
esac
