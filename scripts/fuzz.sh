#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ for a bounded time each, starting
# from the seed corpus kept in the repo (fuzz/corpus/TARGET/).
#
#   scripts/fuzz.sh [--time SECONDS] [--grow] [TARGET ...]
#
#   --time SECONDS  per target (default 15)
#   --grow          add what the run found to fuzz/corpus/TARGET, minimised
#                   (cargo fuzz cmin); without it new inputs go to a temporary
#                   directory and the repo's corpus stays as it is
#   TARGET ...      some targets only (default: all of `cargo fuzz list`)
#
# The toolchain here is stable; cargo-fuzz needs nightly flags, which
# RUSTC_BOOTSTRAP=1 allows, and `--sanitizer none` (AddressSanitizer needs
# a nightly std): panics, overflow checks (-a: debug assertions on),
# timeouts and libFuzzer's RSS limit are what finds bugs. cargo-fuzz is
# installed from crates.io when missing; where it or the targets cannot be
# built the script says "skipped: REASON" and exits 0 (under CI=true a skip
# fails); the targets are then still type-checked with plain `cargo check`
# (they sit outside the workspace, so neither clippy nor the tests build
# them), so a target that no longer compiles fails the run either way. A
# crash fails the run and names the input that reproduces it.
#
# The instrumented build is kept in $MR_FUZZ_TARGET_DIR (default
# ~/.cache/mr-fuzz-target), outside the clone, so later runs on the same
# machine only rebuild what changed (a cold build is about 5 minutes on 2
# cores). It ends with the line `N passed, M failed`.
set -uo pipefail
cd "$(dirname "$0")/.."
secs=15
grow=0
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --time) secs="$2"; shift 2 ;;
    --time=*) secs="${1#--time=}"; shift ;;
    --grow) grow=1; shift ;;
    -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
export RUSTC_BOOTSTRAP=1
export CARGO_TERM_COLOR=never
target_dir=${MR_FUZZ_TARGET_DIR:-$HOME/.cache/mr-fuzz-target}
# shellcheck source=scripts/skip.sh
. scripts/skip.sh

# Where cargo-fuzz cannot build them, the targets are still type-checked:
# code that no longer compiles fails the run, whatever the toolchain.
check_targets() {
  echo "== cargo check (fuzz targets, without the fuzzing instrumentation)"
  if ! cargo check --manifest-path fuzz/Cargo.toml --bins --target-dir target >/tmp/mr-fuzz-check.log 2>&1; then
    tail -n 30 /tmp/mr-fuzz-check.log
    echo "fuzz: FAILED: the fuzz targets do not compile (log above)"
    exit 1
  fi
}

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "== cargo install cargo-fuzz"
  if ! cargo install cargo-fuzz --locked >/tmp/mr-cargo-fuzz-install.log 2>&1; then
    check_targets
    skip fuzz "cargo-fuzz could not be installed (see /tmp/mr-cargo-fuzz-install.log)"
  fi
fi
if ! command -v c++ >/dev/null 2>&1 && ! command -v clang++ >/dev/null 2>&1; then
  check_targets
  skip fuzz "no C++ compiler to build libFuzzer (install g++ or clang)"
fi
flags=(--sanitizer none --debug-assertions --target-dir "$target_dir")
echo "== cargo fuzz build (instrumented, release with debug assertions; $target_dir)"
t0=$(date +%s)
if ! cargo fuzz build "${flags[@]}" >/tmp/mr-fuzz-build.log 2>&1; then
  tail -n 30 /tmp/mr-fuzz-build.log
  check_targets
  skip fuzz "the fuzz targets could not be built with this toolchain (log above)"
fi
echo "built in $(( $(date +%s) - t0 )) s"
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(cargo fuzz list)

passed=0
failed=0
for t in "${targets[@]}"; do
  corpus="fuzz/corpus/$t"
  mkdir -p "$corpus" "fuzz/artifacts/$t"
  found=$(mktemp -d)
  log=$(mktemp)
  # New inputs land in the first directory: the temporary one.
  cargo fuzz run "${flags[@]}" "$t" "$found" "$corpus" -- \
      -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 >"$log" 2>&1
  rc=$?
  runs=$(grep -oE 'Done [0-9]+ runs' "$log" | tail -n1 | grep -oE '[0-9]+')
  [ -n "$runs" ] || runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' | tail -n1)
  new=$(find "$found" -type f | wc -l)
  if [ $rc -eq 0 ]; then
    passed=$((passed + 1))
    echo "fuzz $t: ok, ${runs:-?} inputs in ${secs} s, $new new corpus entries"
  else
    failed=$((failed + 1))
    echo "fuzz $t: FAILED (exit $rc) after ${runs:-?} inputs"
    grep -E 'panicked|ERROR|SUMMARY|Test unit written|Running:|artifact_prefix' "$log" | head -n 20
    art=$(grep -oE 'Test unit written to [^ ]+' "$log" | tail -n1 | sed 's/Test unit written to //')
    [ -n "$art" ] && echo "reproduce: RUSTC_BOOTSTRAP=1 cargo fuzz run --sanitizer none -a $t $art"
  fi
  if [ $grow = 1 ] && [ "$new" -gt 0 ]; then
    cp "$found"/* "$corpus"/ 2>/dev/null
    cargo fuzz cmin "${flags[@]}" "$t" "$corpus" >/dev/null 2>&1 \
      && echo "  corpus $corpus: $(find "$corpus" -type f | wc -l) entries after cmin"
  fi
  rm -rf "$found" "$log"
done
# The master and worker targets keep a scratch directory per fuzzing
# process (/dev/shm or the temp dir): drop those whose process is gone.
for d in /dev/shm/mr-fuzz-* "${TMPDIR:-/tmp}"/mr-fuzz-*; do
  [ -d "$d" ] || continue
  pid=${d##*-}
  kill -0 "$pid" 2>/dev/null || rm -rf "$d"
done
echo "fuzz: $passed passed, $failed failed"
[ $failed -eq 0 ]
