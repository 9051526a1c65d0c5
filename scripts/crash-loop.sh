# shellcheck shell=bash
# Sourced by scripts/faults.sh: the scenario `crash-loop` (issue 28): N
# iterations of puts, WordCount jobs and deletes while the master and a
# random worker are killed with SIGKILL at seeded random moments, each
# followed by a restart and a check of everything acknowledged (the loop
# itself is scripts/crash-loop.py; its docstring says what is checked).
#
#   scripts/faults.sh crash-loop [--iterations N] [--seed S]
#
# N: --iterations, else $CRASH_LOOP_ITERATIONS, else 8 (the acceptance run
# uses 50). S: --seed, else $CRASH_LOOP_SEED, else a random one; it is
# printed, and the same seed gives the same schedule of kills.
# CRASH_LOOP_SNAPSHOT_EVERY: the master's snapshot_every (default 4).

# The watchdog of this scenario: iterations take about 10 s each on release
# binaries (ops, kills, restarts, a check that reads everything back);
# three times that, so that debug binaries fit too.
crash_loop_limit() { echo $(( 120 + 30 * CRASH_LOOP_ITERATIONS )); }

sc_crash-loop() {
  lan_up --block-size 1MiB
  # A checkpoint every $CRASH_LOOP_SNAPSHOT_EVERY edits (default 4, not
  # 10 000): the kills then land between checkpoints, and between batches of
  # reserved block ids, as they do in a master that has run for a while.
  kill -TERM "$(pid_of master)"
  wait_until 15 "the master stopped" bash -c "! kill -0 $(pid_of master) 2>/dev/null"
  sed -i "/^\[master\]/a snapshot_every = ${CRASH_LOOP_SNAPSHOT_EVERY:-4}" "$CONF"
  start_daemon master
  disown   # the loop kills this master: no "Killed" job notice from this shell
  wait_until 30 "every worker back with the restarted master" all_alive
  local seed=${CRASH_LOOP_SEED:-$(( $(od -An -N4 -tu4 /dev/urandom) % 1000000 ))}
  say "seed $seed, $CRASH_LOOP_ITERATIONS iterations (scripts/faults.sh crash-loop --seed $seed --iterations $CRASH_LOOP_ITERATIONS)"
  mkdir -p "$TMP/$SC.work"
  # its own deadline ends it, reporting, before the watchdog would
  python3 "$ROOT/scripts/crash-loop.py" --conf "$CONF" --bin "$BIN" --dir "$D" --work "$TMP/$SC.work" \
    --workers w1,w2,w3,w4 --iterations "$CRASH_LOOP_ITERATIONS" --seed "$seed" \
    --deadline $(( $(crash_loop_limit) - 20 )) 2>&1 | sed -u 's/^/   /'
  local rc=${PIPESTATUS[0]}
  [ "$rc" = 0 ] || fail "crash-loop (seed $seed): $([ "$rc" = 1 ] && echo "invariants broken" || echo "the loop failed (rc $rc)"); details in $TMP/$SC.work/crash-loop.json (--keep keeps it)"
}
