# shellcheck shell=bash
# Sourced by the test scripts: `skip NAME REASON` ends a test that cannot
# run here. It exits 0 (a user's machine may lack Docker or root), but under
# CI=true a skipped test is a failed test: CI must not turn green because
# its strongest tests did not run.
skip() {
  if [ "${CI:-}" = true ]; then
    echo "$1: FAIL: skipped under CI=true: $2" >&2
    exit 1
  fi
  echo "$1: skipped: $2"
  exit 0
}
