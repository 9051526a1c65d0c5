#!/usr/bin/env bash
# The documentation's shell steps, followed as a user would follow them.
# Every fenced block of two or more lines marked `sh` in README.md and
# docs/ must say what it is in its fence:
#   ```sh test      steps a user is told to run: this script runs them as
#                   written (one `bash -e` per block, from a scratch copy
#                   of the checkout, `mr` on the PATH);
#   ```sh example   a synopsis or an excerpt (placeholders, flags in
#                   brackets, a machine this test does not have): not run.
# A block with neither fails the test, naming it, so a new step cannot go
# untried by accident. The rewrites of a `test` block, each for what this
# machine lacks, are the table REWRITES below, and nothing else is changed:
#   /tmp/mr               -> the scratch directory's own (a user's cluster
#                           there is left alone)
#   kubectl apply -k DIR  -> kubectl kustomize DIR (no Kubernetes cluster:
#                           the overlay is rendered instead), and the block
#                           stops at the first step that needs the cluster
#   docker tag/push, scripts/docker.sh build -> skipped (no registry; the
#                           image is built and run by scripts/docker-test.sh)
# About a minute with debug binaries. Needs kubectl for the Kubernetes
# steps (skips them without it; fails under CI=true).
#   scripts/docs-test.sh [--list] [--keep] [FILE:LINE...]
# MR_BIN_DIR=DIR: the binaries (default target/debug, built if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
LIST=0 KEEP=0 ONLY=()
while [ $# -gt 0 ]; do
  case "$1" in
    --list) LIST=1; shift ;;
    --keep) KEEP=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    -*) echo "docs-test: unknown option $1" >&2; exit 2 ;;
    *) ONLY+=("$1"); shift ;;
  esac
done
BIN=${MR_BIN_DIR:-$ROOT/target/debug}
case "$BIN" in /*) ;; *) BIN="$ROOT/$BIN" ;; esac
if [ "$LIST" = 0 ] && [ ! -x "$BIN/mr" ]; then cargo build -p cli --bin mr -p master -p worker --bins; fi
SCRATCH=$(mktemp -d /tmp/mr-docs-test.XXXXXX)
cleanup() {
  for d in "$SCRATCH"/*/mr; do [ -e "$d/cluster.toml" ] && scripts/cluster.sh down --dir "$d" >/dev/null 2>&1; done
  [ "$KEEP" = 1 ] && echo "docs-test: kept $SCRATCH" || rm -rf "$SCRATCH"
}
trap cleanup EXIT
export ROOT BIN SCRATCH LIST
python3 - "${ONLY[@]}" <<'PY'
import glob, os, re, shutil, subprocess, sys, time

ROOT, BIN, SCRATCH = os.environ["ROOT"], os.environ["BIN"], os.environ["SCRATCH"]
only = set(sys.argv[1:])
has_kubectl = shutil.which("kubectl") is not None

# (pattern, what to do, replacement): the header's table, in order.
REWRITES = [
    (re.compile(r"/tmp/mr\b"), "sub", "{work}/mr"),
    (re.compile(r"^(\s*)kubectl apply -k (\S+)"), "sub", r"\1kubectl kustomize \2 >/dev/null"),
    (re.compile(r"^\s*kubectl (?!kustomize)"), "stop", None),
    (re.compile(r"^\s*(docker (tag|push)\b|scripts/docker\.sh build\b)"), "skip", None),
]

def blocks():
    files = ["README.md"] + sorted(glob.glob("docs/**/*.md", recursive=True))
    for f in files:
        lines = open(f, encoding="utf-8").read().split("\n")
        i = 0
        while i < len(lines):
            m = re.match(r"^(\s*)```(\S*)[ \t]*(.*)$", lines[i])
            if not m:
                i += 1
                continue
            j = i + 1
            while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
                j += 1
            body = lines[i + 1 : j]
            if m.group(2) in ("sh", "bash") and len(body) >= 2:
                yield f, i + 1, m.group(3).strip(), body
            i = j + 1

def rewrite(body, work):
    out = []
    for line in body:
        for pat, what, rep in REWRITES:
            if not pat.search(line):
                continue
            if what == "stop":
                return out, f"stopped before `{line.strip()[:50]}`: no Kubernetes cluster"
            if what == "skip":
                line = None
                break
            line = pat.sub(rep.replace("{work}", work), line)
        if line is not None:
            out.append(line)
    return out, "to its end"

failed, ran, unmarked = [], 0, []
for f, n, mark, body in blocks():
    where = f"{f}:{n}"
    if mark not in ("test", "example"):
        unmarked.append(where)
        continue
    if mark == "example" or (only and where not in only):
        continue
    if os.environ["LIST"] == "1":
        print(where)
        continue
    if any(l.lstrip().startswith("kubectl") for l in body) and not has_kubectl:
        if os.environ.get("CI") == "true":
            failed.append(f"{where}: needs kubectl (skipped under CI=true)")
        else:
            print(f"docs-test: {where}: skipped: no kubectl")
        continue
    # A scratch copy: what the steps write (big.txt, results/, an overlay
    # copied under deploy/) stays out of the checkout.
    work = os.path.join(SCRATCH, f"{os.path.basename(f)}-{n}")
    os.makedirs(work)
    for entry in ("scripts", "deploy", "examples", "traces"):
        src = os.path.join(ROOT, entry)
        if entry == "deploy":
            shutil.copytree(src, os.path.join(work, entry), symlinks=True)
        elif os.path.exists(src):
            os.symlink(src, os.path.join(work, entry))
    steps, how = rewrite(body, work)
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}", MR_BIN_DIR=BIN)
    t = time.monotonic()
    p = subprocess.run(["bash", "-e", "-c", "\n".join(steps)], cwd=work, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    ran += 1
    took = time.monotonic() - t
    if p.returncode != 0:
        tail = "\n".join("    " + l for l in p.stdout.splitlines()[-15:])
        failed.append(f"{where}: exit {p.returncode} after {took:.0f} s:\n{tail}")
    else:
        print(f"docs-test: {where}: ok ({len(steps)} steps, {how}, {took:.0f} s)")

for u in unmarked:
    failed.append(f"{u}: a shell block neither `sh test` nor `sh example` (see scripts/docs-test.sh)")
if failed:
    print("docs-test: FAIL\n" + "\n".join(failed), file=sys.stderr)
    sys.exit(1)
if os.environ["LIST"] != "1":
    print(f"docs-test: {ran} block(s) ran as written, every other shell block marked an example")
PY
