#!/usr/bin/env bash
# Fails when a workspace crate depends on another workspace crate in a way
# docs/architecture.md ("Crates") does not allow: dependencies run downward
# only. Reads the manifests with `cargo metadata` (no build); dev- and
# build-dependencies count too (simtest, a test crate, may name the master).
#   scripts/crate-deps.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo metadata --format-version 1 --no-deps | python3 -c '
import json, sys
# Each crate: the workspace crates it may depend on (docs/architecture.md).
allowed = {
    "proto": set(),
    "joblib": set(),
    "common": {"proto"},
    "sched": {"common"},
    "sim": {"sched"},
    "master": {"common", "joblib", "proto", "sched"},
    "worker": {"common", "joblib", "proto"},
    "cli": {"common", "joblib", "proto", "sched", "sim"},
    "simtest": {"common", "master", "proto"},
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
        if d["name"] in ours and d["name"] not in allowed[name]:
            kind = d.get("kind") or "normal"
            dep = d["name"]
            bad.append(f"{name} -> {dep} ({kind}): not allowed")
for b in bad:
    print("crate-deps:", b)
if bad:
    sys.exit(1)
print("crate-deps: %d crates, every workspace dependency allowed" % len(ours))
'
