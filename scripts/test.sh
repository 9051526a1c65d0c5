#!/usr/bin/env bash
# The test command: builds the daemons the integration tests start as real
# processes, runs every test of the workspace, then the emulated-LAN test
# (scripts/lan-test.sh: about 30 s; it skips itself without root and ip netns).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --workspace --bins
if command -v cargo-nextest >/dev/null 2>&1 || cargo nextest --version >/dev/null 2>&1; then
  # nextest runs each test in its own process: a crashed cluster test
  # cannot take the others down.
  cargo nextest run --workspace --no-fail-fast "$@"
else
  cargo test --workspace "$@"
fi
scripts/lan-test.sh
