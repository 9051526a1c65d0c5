#!/usr/bin/env bash
# Rooms of a sane size: no Rust file of the workspace over 800 lines and
# no function over 120, so that a newcomer reads one concept at a time.
# Exempt from the file limit: the scheduling policies and their solver
# under sched/src (each is one paper's algorithm, kept whole beside its
# citations), and generated code (none is checked in: prost writes into
# target/). Tests count like any code. Fails naming each file and function
# over its limit.
#   scripts/rooms.sh [--list N]   (--list: the N longest functions, no check)
set -euo pipefail
cd "$(dirname "$0")/.."
python3 - "$@" <<'PY'
import os, re, sys

FILE_MAX, FN_MAX = 800, 120
FILE_EXEMPT = re.compile(r"^sched/src/[a-z_]+\.rs$")
SKIP_DIRS = {"target", ".git", "node_modules"}
FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(async\s+)?(const\s+)?(unsafe\s+)?fn\s+(\w+)")

def code_of(line):
    """The line without string and char literals and `//` comments, so
    that braces inside them are not counted."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    return line.split("//")[0]

def functions(lines):
    """(name, first line, length) of every fn with a body."""
    for i, l in enumerate(lines):
        m = FN.match(l)
        if not m:
            continue
        depth, opened = 0, False
        for j in range(i, len(lines)):
            c = code_of(lines[j])
            for ch in c:
                if ch == "{":
                    depth, opened = depth + 1, True
                elif ch == "}":
                    depth -= 1
            if opened and depth <= 0:
                yield m.group(6), i + 1, j - i + 1
                break
            if not opened and c.rstrip().endswith(";"):
                break

files = []
for root, dirs, names in os.walk("."):
    dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not (root == "./fuzz" and d == "target"))
    files += [os.path.join(root, n)[2:] for n in sorted(names) if n.endswith(".rs")]

over, fns = [], []
for f in files:
    lines = open(f, encoding="utf-8", errors="replace").read().split("\n")
    n = len(lines) - (lines[-1] == "")
    if n > FILE_MAX and not FILE_EXEMPT.match(f):
        over.append(f"{f}: {n} lines (at most {FILE_MAX})")
    fns += [(length, f, line, name) for name, line, length in functions(lines)]

if len(sys.argv) > 2 and sys.argv[1] == "--list":
    for length, f, line, name in sorted(fns, reverse=True)[: int(sys.argv[2])]:
        print(f"{length:5} {f}:{line} {name}")
    sys.exit(0)
over += [f"{f}:{line}: fn {name} is {length} lines (at most {FN_MAX})"
         for length, f, line, name in sorted(fns, reverse=True) if length > FN_MAX]
if over:
    print("rooms: FAIL\n  " + "\n  ".join(over), file=sys.stderr)
    sys.exit(1)
print(f"rooms: {len(files)} Rust files, none over {FILE_MAX} lines (sched/src's policies aside), "
      f"{len(fns)} functions, none over {FN_MAX} lines")
PY
