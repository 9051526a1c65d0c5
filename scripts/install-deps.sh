#!/usr/bin/env bash
# Installs, as root on Debian, what the tests need beyond the Rust toolchain,
# so that a new user's `scripts/test.sh` runs every test instead of skipping:
#   iproute2 (ip, tc) and nftables  the emulated LAN (lan-test, deploy-test, faults, tls-test)
#   chromium                         the web UI's browser test
#   openssh-server, openssh-client   the SSH deployment test
#   tcpdump                          the TLS capture test
# Not root, or no apt-get: says what is missing and leaves it to the tests,
# which skip (and fail under CI=true).
set -uo pipefail
pkgs=""
{ command -v ip >/dev/null && command -v tc >/dev/null; } || pkgs="$pkgs iproute2"
command -v nft >/dev/null || pkgs="$pkgs nftables"
command -v chromium >/dev/null || pkgs="$pkgs chromium"
{ [ -x /usr/sbin/sshd ] && command -v ssh >/dev/null; } || pkgs="$pkgs openssh-server openssh-client"
command -v tcpdump >/dev/null || [ -x /usr/sbin/tcpdump ] || pkgs="$pkgs tcpdump"
[ -n "$pkgs" ] || exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "install-deps: missing$pkgs (install them as root; the tests that need them skip)"
  exit 0
fi
echo "== apt-get install$pkgs"
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive apt-get install -y $pkgs >/tmp/mr-apt.log 2>&1 \
  || { apt-get update >>/tmp/mr-apt.log 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y $pkgs >>/tmp/mr-apt.log 2>&1; } \
  || { tail -n 20 /tmp/mr-apt.log; echo "install-deps: could not install$pkgs (log above)"; }
exit 0
