#!/usr/bin/env bash
# Test of scripts/deploy.sh, the SSH path, on real sshd servers: each host
# of an emulated LAN (scripts/lan.sh up --no-daemons) runs its own sshd
# with a key generated for the test. Needs root, ip netns and sshd; skips
# otherwise. About 40 s:
#  1. deploy a master and 3 workers in 2 racks from a hosts file: binaries
#     and cluster.toml copied over SSH, daemons started there, each inside
#     its host's namespace; --status reports them running;
#  2. a WordCount through the deployed cluster equals `mr local wordcount`;
#  3. --stop: every daemon exits on SIGTERM (workers drain and say goodbye);
#  4. a second deploy over the stopped one (binaries replaced, not written
#     over) brings the cluster back with every stored file; --stop again;
#  5. lan.sh down leaves nothing.
#   scripts/deploy-test.sh [--keep]

# shellcheck disable=SC2015
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
# shellcheck source=scripts/skip.sh
. "$ROOT/scripts/skip.sh"
KEEP=0
[ "${1:-}" = --keep ] && KEEP=1

SSHD=$(command -v sshd || echo /usr/sbin/sshd)
if [ "$(id -u)" != 0 ] || ! ip netns list >/dev/null 2>&1 || ! unshare --net true 2>/dev/null \
   || ! command -v tc >/dev/null || ! command -v nft >/dev/null; then
  skip deploy-test "needs root and ip netns (and tc, nft)"
fi
if [ ! -x "$SSHD" ] || ! command -v ssh >/dev/null || ! command -v ssh-keygen >/dev/null; then
  skip deploy-test "needs sshd, ssh and ssh-keygen (Debian: openssh-server, openssh-client)"
fi
# shellcheck source=scripts/lan-free.sh
. "$ROOT/scripts/lan-free.sh"
lan_free deploy-test

BIN=${MR_BIN_DIR:-$ROOT/target/debug}
MR="$BIN/mr"
if [ ! -x "$BIN/mr" ] || [ ! -x "$BIN/mr-master" ] || [ ! -x "$BIN/mr-worker" ]; then
  cargo build --workspace --bins
fi
TMP=$(mktemp -d /tmp/mr-deploy-test.XXXXXX)
t0=$(date +%s)
cleanup() {
  local rc=$?
  MR_BIN_DIR=$BIN "$ROOT/scripts/lan.sh" down --dir "$TMP/lan" >/dev/null 2>&1 || true
  if [ $rc -ne 0 ] || [ "$KEEP" = 1 ]; then echo "deploy-test: files kept in $TMP"; else rm -rf "$TMP"; fi
  exit $rc
}
trap cleanup EXIT
fail() {
  echo "deploy-test: FAIL: $*" >&2
  for f in "$TMP"/hosts/*/logs/*.log; do [ -f "$f" ] && { echo "--- $f" >&2; tail -n 5 "$f" >&2; }; done
  exit 1
}
ok() { echo "   ok: $*"; }
step() { echo "-- $*"; }
quiet() { "$@" >"$TMP/last.log" 2>&1 || { tail -n 8 "$TMP/last.log" >&2; return 1; }; }

step "an emulated LAN of 4 hosts in 2 racks, each running its own sshd"
quiet env MR_BIN_DIR="$BIN" scripts/lan.sh up --dir "$TMP/lan" --workers 3 --racks 2 --no-daemons \
  --host-rate 1gbit --uplink-rate 300mbit || fail "lan.sh up --no-daemons failed"
ssh-keygen -q -t ed25519 -N "" -f "$TMP/key" -C mr-deploy-test
ssh-keygen -q -t ed25519 -N "" -f "$TMP/hostkey" -C mr-deploy-test-host
cp "$TMP/key.pub" "$TMP/authorized_keys"
mkdir -p /run/sshd
chmod 700 "$TMP"
addr_of() { # host name -> its LAN address, from the cluster.toml lan.sh wrote
  if [ "$1" = master ]; then sed -nE 's/^addr = "([0-9.]+):7070"/\1/p' "$TMP/lan/cluster.toml"
  else awk -v n="$1" '$0=="name = \""n"\"" {getline; print}' "$TMP/lan/cluster.toml" | sed -E 's/addr = "([0-9.]+):.*/\1/'; fi
}
rack_of() { awk -v n="$1" '$0=="name = \""n"\"" {getline; getline; print}' "$TMP/lan/cluster.toml" | sed -E 's/rack = "(.*)"/\1/'; }
HOSTS=(master w1 w2 w3)
for h in "${HOSTS[@]}"; do
  a=$(addr_of "$h")
  [ -n "$a" ] || fail "no address for $h"
  ip netns exec "mrlan-$h" "$SSHD" -f /dev/null -h "$TMP/hostkey" \
    -o ListenAddress="$a:22" -o PidFile="$TMP/sshd-$h.pid" -o AuthorizedKeysFile="$TMP/authorized_keys" \
    -o StrictModes=no -o UsePAM=no -o PermitRootLogin=prohibit-password -o PasswordAuthentication=no \
    -o KbdInteractiveAuthentication=no -o "Subsystem=sftp internal-sftp" -o LogLevel=ERROR \
    || fail "sshd did not start in mrlan-$h"
done
export MR_SSH_OPTS="-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"
for h in "${HOSTS[@]}"; do
  a=$(addr_of "$h")
  for _ in $(seq 1 50); do
    # shellcheck disable=SC2086
    got=$(ssh -i "$TMP/key" $MR_SSH_OPTS -o BatchMode=yes "root@$a" 'ip -o -4 addr show eth0' 2>/dev/null || true)
    [ -n "$got" ] && break
    sleep 0.1
  done
  echo "$got" | grep -q "$a/" || fail "ssh to $h ($a) does not land in its namespace: $got"
done
ok "key-based ssh into each of ${HOSTS[*]} lands in that host's namespace"

{
  echo "# address rack role slots"
  echo "$(addr_of master) r0 master 0"
  for w in w1 w2 w3; do echo "$(addr_of $w) $(rack_of $w) worker 2"; done
} > "$TMP/hosts.txt"
DEPLOY=(scripts/deploy.sh --hosts "$TMP/hosts.txt" --dir "$TMP/deploy" --remote-dir "$TMP/hosts/%h"
  --user root --identity "$TMP/key" --bin-dir "$BIN" --no-systemd
  --block-size 2MiB --replication 2 --heartbeat 500ms)
mr() { timeout 120 "$MR" --config "$TMP/deploy/cluster.toml" "$@"; }

step "deploy.sh: copy, configure and start over SSH"
quiet "${DEPLOY[@]}" || fail "deploy failed"
grep -q "workers alive" "$TMP/last.log" || fail "deploy did not report the workers alive"
quiet "${DEPLOY[@]}" --status || fail "--status failed"
[ "$(grep -c ': running, pid' "$TMP/last.log")" = 4 ] || fail "--status does not show 4 running daemons: $(cat "$TMP/last.log")"
for h in "${HOSTS[@]}"; do
  # The hosts file lists w1..w3 in order, so deploy.sh names them as lan.sh did.
  a=$(addr_of "$h")
  pid=$(cat "$TMP/hosts/$a/run/$h.pid" 2>/dev/null) || fail "no pid file for $h on $a"
  [ "$(ip netns identify "$pid")" = "mrlan-$h" ] || fail "$h (pid $pid) does not run in mrlan-$h"
done
ok "4 daemons started through ssh, each inside its host's namespace; --status sees them"

step "WordCount on the deployed cluster equals mr local wordcount"
quiet mr gen randomtextwriter --size 8MiB --output /in || fail "randomtextwriter failed"
for p in $(mr fs ls /in | awk '$NF ~ /\/part-/ {print $NF}'); do mr fs cat "$p"; done > "$TMP/in.txt"
"$MR" local wordcount "$TMP/in.txt" --reducers 2 --output "$TMP/oracle" >/dev/null
sort "$TMP"/oracle/part-* > "$TMP/oracle.txt"
quiet mr job run wordcount --input /in --output /out --reducers 2 || fail "WordCount failed"
for p in $(mr fs ls /out | awk '$NF ~ /\/part-/ {print $NF}'); do mr fs cat "$p"; done | sort > "$TMP/out.txt"
cmp -s "$TMP/out.txt" "$TMP/oracle.txt" || fail "output differs from mr local wordcount"
ok "output ($(wc -l < "$TMP/out.txt") words) equals mr local wordcount"

step "--stop: SIGTERM, workers drain and say goodbye"
quiet "${DEPLOY[@]}" --stop || fail "--stop failed"
for h in "${HOSTS[@]}"; do
  [ -z "$(ip netns pids "mrlan-$h" | grep -vxF "$(cat "$TMP/sshd-$h.pid")" || true)" ] || fail "processes left in mrlan-$h after --stop"
done
for f in "$TMP"/hosts/*/logs/w*.log; do grep -q "last heartbeat sent" "$f" || fail "$(basename "$f" .log) did not say goodbye"; done
grep -q "edit log flushed" "$TMP"/hosts/*/logs/master.log || fail "the master did not flush its edit log"
ok "every daemon exited; workers drained; the master flushed its edit log"

step "deploy again over the stopped cluster: every file is still there"
quiet "${DEPLOY[@]}" || fail "second deploy failed"
for p in $(mr fs ls /in | awk '$NF ~ /\/part-/ {print $NF}'); do mr fs cat "$p"; done > "$TMP/in-after.txt"
cmp -s "$TMP/in.txt" "$TMP/in-after.txt" || fail "the input changed across a redeploy"
quiet "${DEPLOY[@]}" --stop || fail "second --stop failed"
ok "redeployed with the data kept; stopped again"

step "lan.sh down leaves nothing"
quiet env MR_BIN_DIR="$BIN" scripts/lan.sh down --dir "$TMP/lan" || fail "lan.sh down failed"
[ -z "$(ip netns list | grep '^mrlan-' || true)" ] || fail "namespaces left"
ok "no namespace left"
echo "deploy-test: all passed in $(( $(date +%s) - t0 ))s"
