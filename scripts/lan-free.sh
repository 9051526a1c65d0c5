# shellcheck shell=bash
# Sourced by the tests that bring up their own emulated LAN (lan-test,
# faults, deploy-test): `lan_free NAME` makes sure no other LAN is up.
# A LAN whose namespaces hold no process at all is what an interrupted run
# leaves behind (its daemons were killed, the namespaces stay): it is
# removed, saying so. A LAN with a live process in it belongs to someone
# else and is left alone: the test fails.
lan_free() {
  local name=$1 ns busy=""
  local stale
  stale=$(ip netns list 2>/dev/null | awk '{print $1}' | grep '^mrlan-' || true)
  [ -n "$stale" ] || return 0
  for ns in $stale; do
    [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] || busy="$busy $ns"
  done
  if [ -n "$busy" ]; then
    echo "$name: FAIL: a LAN is already up on this machine (processes run in:$busy); scripts/lan.sh down first" >&2
    exit 1
  fi
  echo "$name: removing a stale LAN with no process in it ($(echo "$stale" | tr '\n' ' ')), left by an interrupted run"
  "$(dirname "${BASH_SOURCE[0]}")/lan.sh" down >/dev/null 2>&1 || true
  local _
  for _ in $(seq 1 40); do
    [ -n "$(ip netns list 2>/dev/null | grep '^mrlan-' || true)" ] || return 0
    sleep 0.25
  done
  echo "$name: FAIL: the stale LAN could not be removed" >&2
  exit 1
}
