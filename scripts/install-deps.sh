#!/usr/bin/env bash
# Installs, as root on Debian, what the tests need beyond the Rust toolchain,
# so that a new user's `scripts/test.sh` runs every test instead of skipping:
#   iproute2 (ip, tc) and nftables  the emulated LAN (lan-test, deploy-test, faults, tls-test)
#   chromium                         the web UI's browser test
#   openssh-server, openssh-client   the SSH deployment test
#   tcpdump                          the TLS capture test
#   kubernetes-client (kubectl)      the Kubernetes manifests' rendering (kustomize; the test
#                                    needs kubectl 1.21+, which this machine kind ships)
#   kubernetes-validate (PyPI)       their validation against the Kubernetes schemas
#                                    (into /opt/mr-venv when pip may not install)
# Not root, or no apt-get: says what is missing and leaves it to the tests,
# which skip (and fail under CI=true).
set -uo pipefail
pkgs=""
{ command -v ip >/dev/null && command -v tc >/dev/null; } || pkgs="$pkgs iproute2"
command -v nft >/dev/null || pkgs="$pkgs nftables"
command -v chromium >/dev/null || pkgs="$pkgs chromium"
{ [ -x /usr/sbin/sshd ] && command -v ssh >/dev/null; } || pkgs="$pkgs openssh-server openssh-client"
command -v tcpdump >/dev/null || [ -x /usr/sbin/tcpdump ] || pkgs="$pkgs tcpdump"
command -v kubectl >/dev/null || pkgs="$pkgs kubernetes-client"
# kubernetes-validate comes from PyPI: into this Python when its pip may
# install there, else into a venv of its own (a Debian Python refuses
# system-wide pip installs).
if ! command -v kubernetes-validate >/dev/null && [ ! -x /opt/mr-venv/bin/kubernetes-validate ]; then
  if ! python3 -m pip install -q kubernetes-validate >/tmp/mr-pip.log 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && ! python3 -m venv --help >/dev/null 2>&1; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y python3-venv >>/tmp/mr-pip.log 2>&1 || true
    fi
    { python3 -m venv /opt/mr-venv && /opt/mr-venv/bin/pip install -q kubernetes-validate; } >>/tmp/mr-pip.log 2>&1 \
      || { tail -n 5 /tmp/mr-pip.log; echo "install-deps: could not install kubernetes-validate (log above)"; }
  fi
fi
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
