//! Does the simulator predict the cluster? Every policy runs the mixed
//! workload on the cluster; the simulator is then calibrated on those very
//! jobs' history (`mr sim calibrate`: compute seconds per MiB and the read
//! bandwidth of each locality level) and runs the same schedules (arrival
//! times and map counts of each repetition) on a simulated copy of the
//! cluster (its workers, racks, map slots, replication, block and cache
//! sizes and heartbeat). The report ranks the policies by mean job time
//! both ways and gives Spearman's rank correlation; the target is 0.8 or
//! more.

use super::stats::{select, stats};
use super::{Ctx, Policy, Report};
use crate::mixed;
use crate::results::Row;
use sim::config::{JobSpec, SimConfig};
use sim::model::TaskModel;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// The shoot-out's twelve policies, every distinct one of the registry.
pub const POLICIES: [Policy; 12] = [
    Policy::plain("fifo"),
    Policy::plain("fair"),
    Policy::plain("capacity"),
    Policy::plain("delay"),
    Policy::plain("matchmaking"),
    Policy::plain("hybsmrp"),
    Policy::plain("lsap"),
    Policy::plain("lsap-fair"),
    Policy::plain("clqlmrs"),
    Policy::plain("acl"),
    Policy::plain("compat-nb"),
    Policy::plain("atlas"),
];

/// Ranks, 1 = smallest, ties sharing the mean of their places.
pub fn ranks(xs: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..xs.len()).collect();
    idx.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
    let mut r = vec![0.0; xs.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && xs[idx[j + 1]] == xs[idx[i]] {
            j += 1;
        }
        for &k in &idx[i..=j] {
            r[k] = (i + j) as f64 / 2.0 + 1.0;
        }
        i = j + 1;
    }
    r
}

/// Spearman's rank correlation: Pearson's over the ranks (exact with ties).
pub fn spearman(a: &[f64], b: &[f64]) -> f64 {
    let (ra, rb) = (ranks(a), ranks(b));
    let n = ra.len() as f64;
    let (ma, mb) = (ra.iter().sum::<f64>() / n, rb.iter().sum::<f64>() / n);
    let cov: f64 = ra.iter().zip(&rb).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = ra.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = rb.iter().map(|y| (y - mb).powi(2)).sum();
    if va == 0.0 || vb == 0.0 {
        return 0.0;
    }
    cov / (va * vb).sqrt()
}

/// The simulator's figures for `policy`, averaged over the repetitions'
/// schedules: (mean job time, local %).
fn simulate(
    base: &SimConfig,
    schedules: &[Vec<JobSpec>],
    policy: Policy,
) -> anyhow::Result<(f64, f64)> {
    let mut spec = sched::SchedulerSpec::new(policy.name);
    for (k, v) in policy.params {
        spec.params.insert(k.to_string(), v.to_string());
    }
    let (mut t, mut local) = (0.0, 0.0);
    for (i, w) in schedules.iter().enumerate() {
        let cfg = SimConfig {
            workload: w.clone(),
            seed: i as u64 + 1,
            ..base.clone()
        };
        let r = sim::run(&cfg, &spec)
            .map_err(|e| anyhow::anyhow!("simulating {}: {e}", policy.label))?;
        t += r.mean_job_time_s;
        local += 100.0 * r.locality_rate();
    }
    let n = schedules.len().max(1) as f64;
    Ok((t / n, local / n))
}

/// The model calibrated on the runs' history, with the calibration's
/// notes; the default model when calibration fails.
fn calibrated(history: &std::path::Path) -> (TaskModel, Vec<String>) {
    match sim::calibrate::load(history).and_then(|s| sim::calibrate::fit(&s)) {
        Ok(m) => m,
        Err(e) => (
            TaskModel::default(),
            vec![format!(
                "calibration failed ({e}); the default model was used"
            )],
        ),
    }
}

/// The cluster, as the simulator sees it, with `model`; and the blocks of
/// the pool.
fn sim_base(ctx: &Ctx<'_>, model: &TaskModel) -> anyhow::Result<(SimConfig, usize)> {
    let cfg = ctx.cfg;
    let racks: BTreeSet<&str> = cfg.workers.iter().map(|w| w.rack.as_str()).collect();
    let w0 = cfg
        .workers
        .first()
        .ok_or_else(|| anyhow::anyhow!("the config names no worker"))?;
    let blocks = ctx
        .scale
        .pool
        .div_ceil(ctx.scale.block - ctx.scale.block / 32) as usize;
    let base = SimConfig {
        nodes: ctx.workers(),
        racks: racks.len().max(1),
        slots: w0.map_slots,
        replication: cfg.dfs.replication as usize,
        idle_ratio: 1.0,
        blocks: Some(blocks),
        block_size: ctx.scale.block,
        cache_size: w0.cache,
        heartbeat_s: cfg.heartbeat.interval.as_secs_f64(),
        model: model.clone(),
        ..SimConfig::default()
    };
    Ok((base, blocks))
}

/// The repetitions' schedules, as `mr bench` drew them.
fn schedules(ctx: &Ctx<'_>, blocks: usize) -> Vec<Vec<JobSpec>> {
    (1..=ctx.reps())
        .map(|rep| {
            mixed::schedule(
                ctx.scale.jobs as usize,
                ctx.scale.interarrival,
                blocks,
                None,
                ctx.opts.seed.wrapping_add(rep as u64),
            )
            .into_iter()
            .map(|a| JobSpec {
                arrival_s: a.at.as_secs_f64(),
                maps: a.blocks.len(),
                ..Default::default()
            })
            .collect()
        })
        .collect()
}

/// Each policy with cluster runs: the cluster's figures beside the
/// simulator's, with the calibrated and with the default model.
#[derive(Default)]
struct Compared {
    kept: Vec<&'static str>,
    lan: Vec<f64>,
    lan_local: Vec<f64>,
    simt: Vec<f64>,
    sim_local: Vec<f64>,
    simd: Vec<f64>,
}

fn compare(
    rows: &[Row],
    x: &str,
    base: &SimConfig,
    schedules: &[Vec<JobSpec>],
) -> anyhow::Result<Compared> {
    let default_base = SimConfig {
        model: TaskModel::default(),
        ..base.clone()
    };
    let mut c = Compared::default();
    for p in POLICIES {
        let st = stats(&select(rows, p.label, x));
        if st.jobs == 0 {
            continue;
        }
        let (t, l) = simulate(base, schedules, p)?;
        let (td, _) = simulate(&default_base, schedules, p)?;
        c.kept.push(p.label);
        c.lan.push(st.mean_s);
        c.lan_local.push(st.local_pct);
        c.simt.push(t);
        c.sim_local.push(l);
        c.simd.push(td);
    }
    Ok(c)
}

pub async fn run(ctx: &mut Ctx<'_>) -> anyhow::Result<Report> {
    let cells = ctx.interleaved(&POLICIES, &|p, rep| ctx.mixed(p, rep));
    let x = "mixed";
    ctx.run(x, cells).await;
    let history = ctx.history_dir();
    let (model, calib_notes) = calibrated(&history);
    let (base, blocks) = sim_base(ctx, &model)?;
    let schedules = schedules(ctx, blocks);
    let c = compare(&ctx.rows, x, &base, &schedules)?;
    let mut body = String::new();
    let _ = write!(
        body,
        "## Setup\n\n- Cluster: `mr bench`'s mixed workload ({} WordCount jobs per run, mean inter-arrival {:.1} s, a pool of {} blocks of {}), block caches emptied before each run, {} run(s) per policy, policies in turn; every output validated.\n- Simulator: the same cluster shape ({} nodes in {} racks, {} map slots each, replication {}, {} of block cache per node, {:.3} s heartbeats, launches on a node other than the asking one at that node's next heartbeat), the same schedules (each repetition's arrival times and map counts), each map reading a block drawn from a pool of {blocks}, durations from the model calibrated on these runs' history:\n\n  a map's compute {:.4} s + {:.4} s/MiB in + {:.4} s/MiB out; read bandwidth MB/s: cache {:.0}, node {:.0}, cache-rack {:.1}, rack {:.1}, off-rack {:.1}.\n",
        ctx.scale.jobs,
        ctx.scale.interarrival.as_secs_f64(),
        blocks,
        common::units::format_size(ctx.scale.block),
        ctx.reps(),
        base.nodes,
        base.racks,
        base.slots,
        base.replication,
        common::units::format_size(base.cache_size),
        base.heartbeat_s,
        model.map_fixed_s,
        model.compute_s_per_mib,
        model.compute_s_per_out_mib,
        model.bandwidth[0] / 1e6,
        model.bandwidth[1] / 1e6,
        model.bandwidth[2] / 1e6,
        model.bandwidth[3] / 1e6,
        model.bandwidth[4] / 1e6,
    );
    for n in &calib_notes {
        let _ = writeln!(body, "  - {n}");
    }
    write_rankings(&mut body, &c);
    body += "\n## What the simulator leaves out\n\n- Reduce tasks, the shuffle and the output commit: a simulated job ends with its last map. The calibration fits a map's compute from the runtimes the workers report, which include the task's own start-up and output, so a simulated map is dearer than the map function alone; the two errors go opposite ways.\n- Sharing: each simulated read gets its level's calibrated bandwidth whatever else is reading; on the cluster concurrent remote reads share host ports and rack uplinks. The calibration, fitted on the same runs, folds the average sharing into the bandwidths.\n- The policies' own cost: a decision is instantaneous in the simulator, while the master spends its time between heartbeats (`mr bench sched` measures it).\n";
    Ok(Report {
        title: "The simulator against the cluster: every policy ranked by mean job time, both ways"
            .into(),
        body,
    })
}

/// The rankings both ways, and how far the absolute times are.
fn write_rankings(body: &mut String, c: &Compared) {
    let Compared {
        kept,
        lan,
        lan_local,
        simt,
        sim_local,
        simd,
    } = c;
    let rho = spearman(lan, simt);
    let rho_default = spearman(lan, simd);
    let (rl, rs, rd) = (ranks(lan), ranks(simt), ranks(simd));
    let _ = write!(
        body,
        "\n## Rankings\n\nSpearman's rank correlation of mean job time, cluster vs calibrated simulator: **{rho:.2}** over {} policies (target: at least 0.8); with the simulator's default model (1 Gbit/s LAN bandwidths) instead: {rho_default:.2}.\n\n| policy | cluster mean job s | cluster rank | simulator mean job s | simulator rank | default-model rank | cluster local % | simulator local % |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
        kept.len()
    );
    let mut order: Vec<usize> = (0..kept.len()).collect();
    order.sort_by(|&a, &b| lan[a].total_cmp(&lan[b]));
    for i in order {
        let _ = writeln!(
            body,
            "| {} | {:.3} | {} | {:.3} | {} | {} | {:.0} | {:.0} |",
            kept[i], lan[i], rl[i], simt[i], rs[i], rd[i], lan_local[i], sim_local[i]
        );
    }
    let ratio = simt.iter().sum::<f64>() / lan.iter().sum::<f64>().max(1e-9);
    let _ = write!(
        body,
        "\nAbsolute times differ: the simulator's mean job times are {ratio:.2}x the cluster's on average (sum over policies). The ranking is what it is asked to predict.\n"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_share_ties_and_spearman_is_one_for_the_same_order() {
        assert_eq!(ranks(&[0.3, 0.1, 0.3, 0.2]), vec![3.5, 1.0, 3.5, 2.0]);
        assert!((spearman(&[1.0, 2.0, 3.0], &[10.0, 20.0, 30.0]) - 1.0).abs() < 1e-12);
        assert!((spearman(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]) + 1.0).abs() < 1e-12);
        // One swap of neighbours among five: 1 - 6 * 2 / (5 * 24) = 0.9.
        let s = spearman(&[1.0, 2.0, 3.0, 4.0, 5.0], &[2.0, 1.0, 3.0, 4.0, 5.0]);
        assert!((s - 0.9).abs() < 1e-12, "{s}");
        assert_eq!(spearman(&[1.0, 1.0], &[1.0, 2.0]), 0.0);
    }
}
