#!/usr/bin/env bash
# The test command: builds the daemons the integration tests start as real
# processes, runs every test of the workspace (among them the web UI in
# headless Chromium, master/tests/browser.rs, which skips itself without a
# browser), then the emulated-LAN test (scripts/lan-test.sh: about 30 s; it
# skips itself without root and ip netns), the token-on-the-wire capture
# (scripts/tls-test.sh, about 10 s, the same), the container test
# (scripts/docker-test.sh, about 40 s), the SSH deployment test
# (scripts/deploy-test.sh, about 60 s), the Kubernetes manifests validated
# offline (scripts/k8s-validate.sh, under a minute), the Docker Swarm test
# (scripts/swarm-test.sh, about 70 s, then again with --tls) and the
# documentation's `sh test` steps run as written (scripts/docs-test.sh,
# about a minute).
#
# As root on Debian it first installs what these tests need
# (scripts/install-deps.sh). Under CI=true a test that cannot run fails
# instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cargo build --workspace --bins
UI_ARTIFACTS=target/ui-test
rm -rf "$UI_ARTIFACTS"
chromium=${MR_CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}
if [ -n "$chromium" ] && "$chromium" --version >/dev/null 2>&1; then
  echo "browser test: $("$chromium" --version 2>/dev/null); screenshots go to $UI_ARTIFACTS/"
else
  echo "browser test: SKIPPED (no runnable chromium; scripts/install-deps.sh installs Debian's chromium as root, or set MR_CHROMIUM)"
  [ "${CI:-}" != true ] || { echo "browser test: FAIL: skipped under CI=true" >&2; exit 1; }
fi
if command -v cargo-nextest >/dev/null 2>&1 || cargo nextest --version >/dev/null 2>&1; then
  # nextest runs each test in its own process: a crashed cluster test
  # cannot take the others down.
  cargo nextest run --workspace --no-fail-fast "$@"
else
  cargo test --workspace "$@"
fi
if ls "$UI_ARTIFACTS"/*.png >/dev/null 2>&1; then
  echo "browser test screenshots: $(ls "$UI_ARTIFACTS"/*.png | tr '\n' ' ')"
fi
scripts/lan-test.sh
scripts/tls-test.sh
# The launch paths (each skips itself, saying why, where it cannot run):
# containers (a Docker engine) and SSH deployment (root, ip netns, sshd).
scripts/docker-test.sh
scripts/deploy-test.sh
# The orchestrators: Kubernetes manifests checked offline (kubectl and
# kubernetes-validate), and a real one-node Docker Swarm (a Docker engine).
scripts/k8s-validate.sh
scripts/swarm-test.sh
scripts/swarm-test.sh --tls
scripts/docs-test.sh
