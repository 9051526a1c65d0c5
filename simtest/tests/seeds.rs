//! The simulation under many seeds. `MR_SIM_SEEDS` (default 200) seeds,
//! starting at `MR_SIM_SEED_BASE` (default 0), split over four shards that
//! nextest runs in parallel; `MR_SIM_SEED=N` runs one seed (`one_seed`),
//! and a failing seed prints the command that replays it.

use std::time::Instant;

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

const SHARDS: u64 = 4;

/// Runs this shard's seeds; panics listing every failing seed.
fn shard(k: u64) {
    simtest::init_logging();
    let n = env_u64("MR_SIM_SEEDS").unwrap_or(200);
    let base = env_u64("MR_SIM_SEED_BASE").unwrap_or(0);
    let seeds: Vec<u64> = (base..base + n).filter(|s| s % SHARDS == k).collect();
    let t0 = Instant::now();
    let mut failures = Vec::new();
    let (mut succeeded, mut failed_cleanly, mut sim_secs) = (0, 0, 0.0);
    let (mut faults, mut stale, mut restarts) = (0, 0, 0);
    for &seed in &seeds {
        match simtest::run(seed) {
            Ok(o) => {
                sim_secs += o.sim_time.as_secs_f64();
                faults += o.faults;
                stale += o.stale_reports;
                restarts += o.master_starts.saturating_sub(1);
                match o.job_end {
                    Some(simtest::history::JobEnd::Succeeded { .. }) => succeeded += 1,
                    _ => failed_cleanly += 1,
                }
            }
            Err(f) => {
                eprintln!("{f}\n");
                failures.push(f.seed);
            }
        }
    }
    // Printed with --nocapture (or --no-capture under nextest).
    println!(
        "shard {k}: {} seeds in {:.1} s ({sim_secs:.0} s simulated, {faults} fault events, \
         {restarts} master restarts, {stale} stale reports fenced): {succeeded} jobs succeeded, \
         {failed_cleanly} failed cleanly, {} seeds broke an invariant",
        seeds.len(),
        t0.elapsed().as_secs_f64(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "failing seeds {failures:?}: rerun one with MR_SIM_SEED=<seed> cargo test -p simtest --test seeds -- --nocapture one_seed"
    );
}

#[test]
fn seeds_shard_0() {
    shard(0)
}

#[test]
fn seeds_shard_1() {
    shard(1)
}

#[test]
fn seeds_shard_2() {
    shard(2)
}

#[test]
fn seeds_shard_3() {
    shard(3)
}

/// `MR_SIM_SEED=N`: that one seed, with its whole verdict; without it, a
/// fixed seed. Either way run twice: the two histories must be identical,
/// or the simulation is not deterministic and seeds would not replay.
#[test]
fn one_seed() {
    simtest::init_logging();
    let seed = env_u64("MR_SIM_SEED").unwrap_or(7);
    let a = simtest::run(seed).unwrap_or_else(|f| panic!("{f}"));
    eprintln!("{a:?}");
    let b = simtest::run(seed).unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(
        a.digest, b.digest,
        "seed {seed} ran twice with different histories: the simulation is not deterministic"
    );
}

/// Twenty seeds (with crashes, partitions, holds and master restarts
/// among them) run in order, then again in reverse order: each must have
/// the same history both times, whatever ran before it in the process, or
/// a failing seed would not replay on its own.
///
/// One dependency on real time is left, in h2: a stream reset locally (a
/// call given up at its deadline) is forgotten after one second of *real*
/// time (`Instant::now()` in h2's `clear_expired_reset_streams`). The digest
/// stops at the heal for that reason (see `History::digest`), and a pair
/// where either run took 0.8 s or more is not compared (and said so).
#[test]
fn deterministic() {
    let seeds: Vec<u64> = (1000..1020).collect();
    let timed = |s: u64| {
        let o = simtest::run(s).unwrap_or_else(|f| panic!("{f}"));
        let secs = o.real_time.as_secs_f64();
        (o, secs)
    };
    let first: Vec<_> = seeds.iter().map(|&s| timed(s)).collect();
    let mut compared = 0;
    for (i, &seed) in seeds.iter().enumerate().rev() {
        let (b, secs) = timed(seed);
        let (a, a_secs) = &first[i];
        if secs >= 0.8 || *a_secs >= 0.8 {
            eprintln!(
                "seed {seed}: not compared, a run took {a_secs:.2} s / {secs:.2} s of real time"
            );
            continue;
        }
        compared += 1;
        assert_eq!(
            a.digest, b.digest,
            "seed {seed} ran twice with different histories ({} faults)",
            a.faults
        );
    }
    eprintln!("{compared} of {} seeds compared", seeds.len());
}
