//! The seeds' multi-job workload: jobs arriving with exponential
//! inter-arrival times, sized by the Facebook-derived bins.
//!
//! Matchmaking paper (He, Lu, Swanson), section IV.A and Table 4: 100 jobs,
//! inter-arrival times exponential with a mean of 14 s, and job sizes (map
//! tasks) from the first six bins of Zaharia et al.'s Facebook trace, which
//! cover about 89% of that cluster's jobs: 1, 2, 10, 50, 100 and 200 maps
//! for 38, 16, 14, 8, 6 and 6 of the benchmark's jobs. Each job reads blocks
//! drawn uniformly from a pool stored in the DFS ("when a job requests a
//! block, it is evenly likely to be any one of the blocks").
//!
//! Scaled to this machine: the pool holds `--size` of input in blocks of
//! `--block-size`, and each bin's map count is multiplied by `scale`
//! (default: pool blocks / 200, so the largest bin reads the whole pool),
//! at least one map, at most the pool.

use std::time::Duration;

/// (maps in the paper's benchmark, jobs of 100 in that bin): Table 4.
pub const BINS: [(u32, u32); 6] = [(1, 38), (2, 16), (10, 14), (50, 8), (100, 6), (200, 6)];

/// One job of the schedule.
#[derive(Debug, Clone, PartialEq)]
pub struct Arrival {
    /// Since the first submission.
    pub at: Duration,
    /// Table 4's bin, 1-based.
    pub bin: usize,
    /// Indices into the pool's blocks (distinct, sorted).
    pub blocks: Vec<usize>,
}

/// The schedule of `jobs` jobs over a pool of `pool` blocks; deterministic
/// for a `seed`.
pub fn schedule(
    jobs: usize,
    mean_interarrival: Duration,
    pool: usize,
    scale: Option<f64>,
    seed: u64,
) -> Vec<Arrival> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let scale = scale.unwrap_or(pool as f64 / BINS[BINS.len() - 1].0 as f64);
    let weight: u32 = BINS.iter().map(|b| b.1).sum();
    let mut at = Duration::ZERO;
    let mut out = Vec::with_capacity(jobs);
    for j in 0..jobs {
        if j > 0 {
            // Inverse transform: -mean * ln(U), U in (0, 1].
            let u = 1.0 - rng.f64();
            at += mean_interarrival.mul_f64(-u.ln());
        }
        let mut pick = rng.u32(..weight);
        let bin = BINS
            .iter()
            .position(|&(_, w)| {
                let hit = pick < w;
                pick = pick.saturating_sub(w);
                hit
            })
            .unwrap_or(0);
        let maps = ((BINS[bin].0 as f64 * scale).round() as usize).clamp(1, pool.max(1));
        let mut all: Vec<usize> = (0..pool).collect();
        rng.shuffle(&mut all);
        let mut blocks = all[..maps.min(pool)].to_vec();
        blocks.sort_unstable();
        out.push(Arrival {
            at,
            bin: bin + 1,
            blocks,
        });
    }
    out
}

/// Gives every job of `sched` `maps` distinct blocks of the pool, drawn
/// anew (deterministic for a `seed`), keeping the arrival times: the
/// papers' experiments at a fixed number of tasks per job.
pub fn fix_maps(sched: &mut [Arrival], maps: usize, pool: usize, seed: u64) {
    let mut rng = fastrand::Rng::with_seed(seed ^ 0x6d61_7073);
    let maps = maps.clamp(1, pool.max(1));
    for a in sched {
        let mut all: Vec<usize> = (0..pool).collect();
        rng.shuffle(&mut all);
        a.blocks = all[..maps.min(pool)].to_vec();
        a.blocks.sort_unstable();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_schedule_and_bins_follow_table_4() {
        let a = schedule(2000, Duration::from_secs(14), 200, None, 7);
        assert_eq!(a, schedule(2000, Duration::from_secs(14), 200, None, 7));
        assert_ne!(a, schedule(2000, Duration::from_secs(14), 200, None, 8));
        // Bin shares within a few points of 38/16/14/8/6/6 per 88.
        for (i, &(maps, w)) in BINS.iter().enumerate() {
            let share = a.iter().filter(|x| x.bin == i + 1).count() as f64 / 2000.0;
            let want = w as f64 / 88.0;
            assert!((share - want).abs() < 0.03, "bin {} share {share}", i + 1);
            // Unscaled on a 200-block pool: the paper's map counts.
            assert!(a
                .iter()
                .filter(|x| x.bin == i + 1)
                .all(|x| x.blocks.len() == maps as usize));
        }
        // Mean inter-arrival near 14 s.
        let mean = a.last().unwrap().at.as_secs_f64() / 1999.0;
        assert!((mean - 14.0).abs() < 1.0, "mean {mean}");
    }

    #[test]
    fn scaled_to_a_small_pool_with_distinct_blocks() {
        let a = schedule(300, Duration::from_secs(2), 24, None, 1);
        assert!(a.windows(2).all(|w| w[0].at <= w[1].at));
        for x in &a {
            assert!(!x.blocks.is_empty() && x.blocks.len() <= 24);
            assert!(x.blocks.windows(2).all(|w| w[0] < w[1]));
            assert!(x.blocks.iter().all(|&b| b < 24));
        }
        // The largest bin reads the whole pool; the smallest one block.
        assert!(a
            .iter()
            .filter(|x| x.bin == 6)
            .all(|x| x.blocks.len() == 24));
        assert!(a.iter().filter(|x| x.bin == 1).all(|x| x.blocks.len() == 1));
        let mut b = a.clone();
        fix_maps(&mut b, 5, 24, 3);
        assert!(b
            .iter()
            .zip(&a)
            .all(|(x, y)| x.at == y.at && x.blocks.len() == 5));
        assert!(b.iter().all(|x| x.blocks.windows(2).all(|w| w[0] < w[1])));
    }
}
