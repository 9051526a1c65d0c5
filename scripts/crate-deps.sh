#!/usr/bin/env bash
# Fails when a workspace crate depends on another workspace crate in a way
# docs/architecture.md ("Crates") does not allow: dependencies run downward
# only. Reads the manifests with `cargo metadata` (no build); dev- and
# build-dependencies count too (simtest, a test crate, may name the master;
# the master's tests may name the CLI, as a dev-dependency only). Then,
# with `cargo tree` (no build either), what the crate split is for: the
# plain crates link no network stack, the worker no policy, and no daemon
# the certificate issuance.
#   scripts/crate-deps.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo metadata --format-version 1 --no-deps | python3 -c '
import json, sys
# Each crate: the workspace crates it may depend on (docs/architecture.md).
allowed = {
    "common": set(),
    "mrjob": set(),
    "joblib": {"mrjob"},
    "proto": {"common"},
    "protocol": {"common", "proto"},
    "sched": {"common"},
    "rpc": {"common", "proto"},
    "sim": {"sched"},
    "master": {"common", "mrjob", "proto", "protocol", "rpc", "sched"},
    "worker": {"common", "joblib", "mrjob", "proto", "protocol", "rpc"},
    "bench": {"common", "joblib", "mrjob", "proto", "rpc", "sched", "sim"},
    "cli": {"bench", "common", "joblib", "mrjob", "proto", "rpc", "sched", "sim"},
    "simtest": {"common", "master", "proto", "protocol", "rpc"},
    "example-wordcount": {"mrjob"},
    "example-grep": {"mrjob"},
    "example-join": {"mrjob"},
    "example-pagerank": {"mrjob"},
}
# Allowed as dev-dependencies only (tests), on top of the above: the
# tests of the master issue certificates with the issuance of the CLI,
# which no daemon links; the tests of the bench floor check it against
# the one-process engine of the CLI (`mr local`).
allowed_dev = {
    "master": {"cli"},
    "bench": {"cli"},
}
meta = json.load(sys.stdin)
ours = {p["name"] for p in meta["packages"]}
bad = []
for p in meta["packages"]:
    name = p["name"]
    if name not in allowed:
        bad.append(f"{name}: a workspace crate docs/architecture.md does not list")
        continue
    for d in p["dependencies"]:
        kind = d.get("kind") or "normal"
        dep = d["name"]
        ok = allowed[name] | (allowed_dev.get(name, set()) if kind == "dev" else set())
        if dep in ours and dep not in ok:
            bad.append(f"{name} -> {dep} ({kind}): not allowed")
for b in bad:
    print("crate-deps:", b)
if bad:
    sys.exit(1)
print("crate-deps: %d crates, every workspace dependency allowed" % len(ours))
'
fail=0
# forbid CRATE NAME...: CRATE's normal dependency tree holds none of NAME.
forbid() {
  local c=$1 hit
  shift
  hit=$(cargo tree -q -p "$c" -e normal --prefix none --format '{p}' \
    | awk '{print $1}' | sort -u | grep -xE "$(IFS='|'; echo "$*")" || true)
  if [ -n "$hit" ]; then
    echo "crate-deps: $c links $(echo $hit)"
    fail=1
  fi
}
for c in common sched sim; do forbid "$c" tonic rustls prost proto rpc rcgen; done
forbid worker sched rcgen
# The master plans a job from its declared plan: no job's code in it.
forbid master rcgen joblib
[ "$fail" = 0 ] || exit 1
echo "crate-deps: common, sched and sim link no network stack; the worker no policy; no daemon rcgen; the master no job code"
