//! The papers' experiments rerun in the simulator, each giving our figures
//! beside the paper's (`mr sim scenario NAME`). Where a paper gives no
//! number for a point, its column is empty; the notes say what differs in
//! the setup and why our figure may differ.

use crate::config::SimConfig;
use crate::metrics::SimResult;
use sched::SchedulerSpec;
use std::fmt::Write as _;

/// One curve: our figure per x, and the paper's where it gives one.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub label: String,
    pub ours: Vec<f64>,
    pub paper: Vec<Option<f64>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub name: &'static str,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_log2: bool,
    pub xs: Vec<f64>,
    pub columns: Vec<Column>,
    pub notes: Vec<String>,
}

#[derive(Debug)]
pub struct Scenario {
    pub name: &'static str,
    pub about: &'static str,
    run: fn(u64) -> Result<Figure, String>,
}

impl Scenario {
    pub fn run(&self, seed: u64) -> Result<Figure, String> {
        (self.run)(seed)
    }
}

pub const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "lsap-fig3",
        about: "LSAP paper Fig. 3: data locality vs nodes (100-500), dl-sched vs lsap-sched",
        run: lsap_fig3,
    },
    Scenario {
        name: "lsap-fig4a",
        about: "LSAP paper Fig. 4a: data locality vs replication factor (1-19), 100 nodes",
        run: lsap_fig4a,
    },
    Scenario {
        name: "lsap-fig4b",
        about: "LSAP paper Fig. 4b: data locality vs tasks (5-100) on 100 idle slots",
        run: lsap_fig4b,
    },
    Scenario {
        name: "lsap-fig5",
        about: "LSAP paper Fig. 5: data locality cost vs nodes, equal bandwidth (DLC 1 per non-local task)",
        run: |s| lsap_dlc("lsap-fig5", s, 0.5, false),
    },
    Scenario {
        name: "lsap-fig6",
        about: "LSAP paper Fig. 6: data locality cost vs nodes, rack-aware costs, 50% idle slots",
        run: |s| lsap_dlc("lsap-fig6", s, 0.5, true),
    },
    Scenario {
        name: "lsap-fig7",
        about: "LSAP paper Fig. 7: data locality cost vs nodes, rack-aware costs, 20% idle slots",
        run: |s| lsap_dlc("lsap-fig7", s, 0.2, true),
    },
    Scenario {
        name: "lsap-fig9",
        about: "LSAP paper Fig. 9: fairness vs data locality for lsap-fair as the weight of locality grows",
        run: lsap_fig9,
    },
    Scenario {
        name: "matchmaking",
        about: "Matchmaking paper Figs. 2-7: Facebook-bin schedule, FIFO, FIFO+delay (D 0.3-30 s), FIFO+matchmaking, Fair+delay, Fair+matchmaking",
        run: matchmaking,
    },
    Scenario {
        name: "hybsmrp-table4",
        about: "HybSMRP paper Table 4: WordCount locality by number of tasks, FIFO vs Fair vs HybSMRP",
        run: |s| hybsmrp("hybsmrp-table4", s, &HYB_T4),
    },
    Scenario {
        name: "hybsmrp-table5",
        about: "HybSMRP paper Table 5: TeraSort locality by number of tasks, FIFO vs Fair vs HybSMRP",
        run: |s| hybsmrp("hybsmrp-table5", s, &HYB_T5),
    },
    Scenario {
        name: "clqlmrs-fig5",
        about: "CLQLMRS paper Fig. 5: cache locality vs cache size (2-8 GB), FIFO, ACL, CLQLMRS",
        run: clqlmrs_fig5,
    },
    Scenario {
        name: "clqlmrs-fig7",
        about: "CLQLMRS paper Fig. 7 and Table 4: local and cache-local rate vs map tasks (10-100), FIFO, Delay, ACL, CLQLMRS",
        run: clqlmrs_fig7,
    },
];

pub fn find(name: &str) -> Result<&'static Scenario, String> {
    SCENARIOS.iter().find(|s| s.name == name).ok_or_else(|| {
        let names: Vec<&str> = SCENARIOS.iter().map(|s| s.name).collect();
        format!("unknown scenario {name:?}; known: {}", names.join(", "))
    })
}

/// A policy name with optional `k=v` parameters after spaces.
fn run_one(cfg: &SimConfig, sched: &str) -> Result<SimResult, String> {
    let mut parts = sched.split_whitespace();
    let mut spec = SchedulerSpec::new(parts.next().unwrap_or("fifo"));
    for kv in parts {
        if let Some((k, v)) = kv.split_once('=') {
            spec.params.insert(k.into(), v.into());
        }
    }
    crate::run(cfg, &spec)
}

/// The LSAP paper's simulated cluster (section 4.2): 4 slots, replication
/// 3, half the slots idle, 20 nodes per rack, as many tasks as idle slots.
/// `offers: false` here and in every scenario: the papers assume Hadoop's
/// heartbeats, not the launch-on-submit of this project's master.
fn lsap_cluster(nodes: usize, seed: u64) -> SimConfig {
    SimConfig {
        nodes,
        racks: SimConfig::default_racks(nodes),
        slots: 4,
        replication: 3,
        idle_ratio: 0.5,
        seed,
        offers: false,
        ..SimConfig::default()
    }
}

/// "dl-sched" is Hadoop's default scheduler (FIFO with the locality
/// preference); our `fifo` is that rule.
const DL: &str = "fifo";

fn sweep(
    xs: &[f64],
    scheds: &[(&str, &str)],
    cfg_at: &dyn Fn(f64) -> SimConfig,
    metric: &dyn Fn(&SimResult) -> f64,
) -> Result<Vec<Vec<f64>>, String> {
    let mut out = vec![Vec::new(); scheds.len()];
    for &x in xs {
        let cfg = cfg_at(x);
        for (k, (s, _)) in scheds.iter().enumerate() {
            out[k].push(metric(&run_one(&cfg, s)?));
        }
    }
    Ok(out)
}

fn pct(r: &SimResult) -> f64 {
    100.0 * r.locality_rate()
}

fn lsap_fig3(seed: u64) -> Result<Figure, String> {
    let xs: Vec<f64> = (100..=500).step_by(50).map(|n| n as f64).collect();
    let scheds = [(DL, "dl-sched"), ("lsap", "lsap-sched")];
    let v = sweep(&xs, &scheds, &|x| lsap_cluster(x as usize, seed), &pct)?;
    let n = xs.len();
    Ok(Figure {
        name: "lsap-fig3",
        title: "Data locality vs number of nodes (LSAP paper Fig. 3)".into(),
        x_label: "nodes".into(),
        y_label: "data-local map tasks, %".into(),
        x_log2: false,
        columns: vec![
            Column {
                label: "dl-sched (fifo)".into(),
                ours: v[0].clone(),
                paper: vec![Some(83.0); n],
            },
            Column {
                label: "lsap-sched (lsap)".into(),
                ours: v[1].clone(),
                paper: vec![Some(97.0); n],
            },
        ],
        xs,
        notes: vec![
            "The paper reports flat curves, 83% and 97%, with a 12-14 point gap.".into(),
            "Our dl-sched is Hadoop's FIFO rule: local maps first and at most one non-local map per heartbeat; the paper's dl-sched takes the best task for each idle slot in turn, so ours leaves fewer slots to a non-local task in a round but assigns the remainder when busy slots free, where no local task is left.".into(),
        ],
    })
}

fn lsap_fig4a(seed: u64) -> Result<Figure, String> {
    let xs: Vec<f64> = (1..=19).step_by(2).map(|r| r as f64).collect();
    let scheds = [(DL, "dl-sched"), ("lsap", "lsap-sched")];
    let v = sweep(
        &xs,
        &scheds,
        &|x| SimConfig {
            replication: x as usize,
            ..lsap_cluster(100, seed)
        },
        &pct,
    )?;
    let paper_lsap = xs
        .iter()
        .map(|&x| match x as usize {
            3 => Some(72.0),
            5 => Some(88.0),
            _ => None,
        })
        .collect();
    Ok(Figure {
        name: "lsap-fig4a",
        title: "Data locality vs replication factor, 100 nodes (LSAP paper Fig. 4a)".into(),
        x_label: "replication factor".into(),
        y_label: "data-local map tasks, %".into(),
        x_log2: false,
        columns: vec![
            Column {
                label: "dl-sched (fifo)".into(),
                ours: v[0].clone(),
                paper: vec![None; xs.len()],
            },
            Column {
                label: "lsap-sched (lsap)".into(),
                ours: v[1].clone(),
                paper: paper_lsap,
            },
        ],
        xs,
        notes: vec![
            "The paper's text gives lsap-sched 72% at replication 3 and 88% at 5 for this test, below its own Fig. 3 (97% at replication 3 with the same cluster settings); the test's idle ratio is not stated, which may explain it. Our replication-3 point matches Fig. 3's setup.".into(),
        ],
    })
}

fn lsap_fig4b(seed: u64) -> Result<Figure, String> {
    let xs: Vec<f64> = (0..=10)
        .map(|k| if k == 0 { 5.0 } else { 10.0 * k as f64 })
        .collect();
    let scheds = [(DL, "dl-sched"), ("lsap", "lsap-sched")];
    // 50 nodes × 4 slots × 0.5 idle = 100 idle slots.
    let v = sweep(
        &xs,
        &scheds,
        &|x| SimConfig {
            tasks: Some(x as usize),
            ..lsap_cluster(50, seed)
        },
        &pct,
    )?;
    let n = xs.len();
    Ok(Figure {
        name: "lsap-fig4b",
        title: "Data locality vs number of tasks on 100 idle slots (LSAP paper Fig. 4b)".into(),
        x_label: "map tasks".into(),
        y_label: "data-local map tasks, %".into(),
        x_log2: false,
        columns: vec![
            Column {
                label: "dl-sched (fifo)".into(),
                ours: v[0].clone(),
                paper: vec![None; n],
            },
            Column {
                label: "lsap-sched (lsap)".into(),
                ours: v[1].clone(),
                paper: vec![None; n],
            },
        ],
        xs,
        notes: vec![
            "The paper gives the shape, not numbers: locality degrades slowly as tasks approach the idle slots, much less for lsap-sched.".into(),
        ],
    })
}

/// Fig. 5-7: data locality cost. Equal bandwidth: 1 per non-local task.
/// Rack-aware: rack-local tasks cost N(1, 0.5) and remote ones N(4, 2); we
/// use the means, which is what the expected DLC over many tasks is.
fn lsap_dlc(name: &'static str, seed: u64, idle: f64, rack_aware: bool) -> Result<Figure, String> {
    let xs: Vec<f64> = (100..=500).step_by(100).map(|n| n as f64).collect();
    let scheds = [(DL, "dl-sched"), ("lsap", "lsap-sched")];
    let dlc = move |r: &SimResult| {
        let [_, _, cr, rack, off] = r.locality;
        if rack_aware {
            (cr + rack) as f64 + 4.0 * off as f64
        } else {
            r.data_locality_cost
        }
    };
    let v = sweep(
        &xs,
        &scheds,
        &|x| SimConfig {
            idle_ratio: idle,
            ..lsap_cluster(x as usize, seed)
        },
        &dlc,
    )?;
    let reduction: Vec<f64> = v[0]
        .iter()
        .zip(&v[1])
        .map(|(d, l)| if *d > 0.0 { 100.0 * (d - l) / d } else { 0.0 })
        .collect();
    let (lo, hi) = match name {
        "lsap-fig5" => (70.0, 90.0),
        "lsap-fig6" => (95.0, 95.0),
        _ => (60.0, 70.0),
    };
    let n = xs.len();
    Ok(Figure {
        name,
        title: format!(
            "Data locality cost vs nodes, {} (LSAP paper {})",
            if rack_aware {
                format!("rack-aware costs, {:.0}% idle", idle * 100.0)
            } else {
                "equal bandwidth".into()
            },
            match name {
                "lsap-fig5" => "Fig. 5",
                "lsap-fig6" => "Fig. 6",
                _ => "Fig. 7",
            }
        ),
        x_label: "nodes".into(),
        y_label: "DLC".into(),
        x_log2: false,
        columns: vec![
            Column {
                label: "dl-sched (fifo)".into(),
                ours: v[0].clone(),
                paper: vec![None; n],
            },
            Column {
                label: "lsap-sched (lsap)".into(),
                ours: v[1].clone(),
                paper: vec![None; n],
            },
            Column {
                label: "reduction %".into(),
                ours: reduction,
                paper: vec![Some((lo + hi) / 2.0); n],
            },
        ],
        xs,
        notes: vec![format!(
            "The paper reports lsap-sched removing {lo:.0}-{hi:.0}% of dl-sched's DLC in this test (the paper column shows the middle of that range); rack-aware costs use the Gaussians' means (rack-local 1, remote 4)."
        )],
    })
}

/// LSAP paper section 4.4: 60 nodes with 1 slot, half idle, replication
/// 1, 90 tasks to place in 5 groups weighted 20..24; the weight of data
/// locality in the cost (our `alpha`, eq. 8) grows from 0, where fairness
/// rules, to where locality does.
fn lsap_fig9(seed: u64) -> Result<Figure, String> {
    let xs = vec![0.0, 1.0, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 1000.0];
    let cfg = SimConfig {
        nodes: 60,
        racks: 3,
        slots: 1,
        replication: 1,
        idle_ratio: 0.5,
        tasks: Some(90),
        jobs: 5,
        pools: 5,
        seed,
        offers: false,
        ..SimConfig::default()
    };
    let weights = "weights=pool1:20,pool2:21,pool3:22,pool4:23,pool5:24";
    let (mut fair, mut local) = (Vec::new(), Vec::new());
    for &a in &xs {
        let r = run_one(&cfg, &format!("lsap-fair {weights} alpha={a}"))?;
        fair.push(r.fairness_distance);
        local.push(pct(&r) / 100.0);
    }
    let n = xs.len();
    Ok(Figure {
        name: "lsap-fig9",
        title: "Fairness distance and data locality vs locality weight alpha (LSAP paper Fig. 9)".into(),
        x_label: "alpha".into(),
        y_label: "fairness distance / local fraction".into(),
        x_log2: false,
        xs,
        columns: vec![
            Column {
                label: "fairness distance".into(),
                ours: fair,
                paper: vec![None; n],
            },
            Column {
                label: "local fraction".into(),
                ours: local,
                paper: vec![None; n],
            },
        ],
        notes: vec![
            "The paper shows the trade-off as staircase curves without numbers: with a small DLC weight fairness improves most; as it grows, locality improves and fairness deteriorates.".into(),
            "Our busy slots run other users' work outside the five groups (the paper assigns its 30 running tasks to random groups), so the fairness distance counts only the groups' own tasks.".into(),
            "Where we differ: our local fraction rises with alpha as the paper's does (0.06 to 0.33, saturating by alpha 5, the most replication 1 allows on 30 idle slots), but our fairness distance hardly moves (0.051 to 0.041), because we average it over every decision of the run (later waves rebalance the groups) rather than report the one-step d(0) - d(t) the paper plots.".into(),
        ],
    })
}

/// Matchmaking paper IV.A: 30 slaves in one rack with 2 map slots, 100
/// blocks with 2 replicas, heartbeat 3 s, and 100 jobs with exponential
/// inter-arrival times of mean 14 s and sizes from the first six bins of
/// its Table 4; each map reads a block drawn uniformly. The x axis is the
/// delay D of the FIFO+delay and Fair+delay runs (0.1 to 10 heartbeats);
/// the others do not depend on it and are run once.
fn matchmaking(seed: u64) -> Result<Figure, String> {
    let workload = crate::config::facebook_mixed(100, 14.0, 1.0, seed);
    let cfg = SimConfig {
        nodes: 30,
        racks: 1,
        slots: 2,
        replication: 2,
        idle_ratio: 1.0,
        blocks: Some(100),
        heartbeat_s: 3.0,
        seed,
        workload,
        offers: false,
        ..SimConfig::default()
    };
    let ds = [0.3, 0.9, 1.5, 3.0, 4.5, 9.0, 15.0, 30.0];
    let fixed = ["fifo", "fifo+matchmaking", "fair+matchmaking"];
    let mut fixed_r = Vec::new();
    for s in fixed {
        fixed_r.push(run_one(&cfg, s)?);
    }
    let mut delay = [Vec::new(), Vec::new()];
    for d in ds {
        for (k, order) in ["fifo", "fair"].iter().enumerate() {
            delay[k].push(run_one(
                &cfg,
                &format!("{order}+delay node_wait={d} rack_wait={d}"),
            )?);
        }
    }
    let n = ds.len();
    let flat = |r: &SimResult, f: &dyn Fn(&SimResult) -> f64| vec![f(r); n];
    let resp = |r: &SimResult| r.map_response_s;
    let mut columns = Vec::new();
    for (label, rs) in [("FIFO+delay", &delay[0]), ("Fair+delay", &delay[1])] {
        columns.push(Column {
            label: format!("{label} local %"),
            ours: rs.iter().map(pct).collect(),
            paper: vec![None; n],
        });
    }
    for (label, r) in ["FIFO", "FIFO+matchmaking", "Fair+matchmaking"]
        .iter()
        .zip(&fixed_r)
    {
        columns.push(Column {
            label: format!("{label} local %"),
            ours: flat(r, &pct),
            paper: vec![None; n],
        });
    }
    for (label, rs) in [("FIFO+delay", &delay[0]), ("Fair+delay", &delay[1])] {
        columns.push(Column {
            label: format!("{label} map response s"),
            ours: rs.iter().map(resp).collect(),
            paper: vec![None; n],
        });
    }
    for (label, r) in ["FIFO", "FIFO+matchmaking", "Fair+matchmaking"]
        .iter()
        .zip(&fixed_r)
    {
        columns.push(Column {
            label: format!("{label} map response s"),
            ours: flat(r, &resp),
            paper: vec![None; n],
        });
    }
    Ok(Figure {
        name: "matchmaking",
        title: "Locality and map response time vs delay D (matchmaking paper Figs. 2-7)".into(),
        x_label: "D seconds".into(),
        y_label: "local % / seconds".into(),
        x_log2: false,
        xs: ds.to_vec(),
        columns,
        notes: vec![
            "The paper prints its results as plots only: FIFO has the lowest locality and the longest map response time; FIFO+delay's locality rises with D (about 0.8 to 0.95 in Fig. 2); FIFO+matchmaking has the highest locality, above every D, and cuts the response time well below FIFO's.".into(),
            "Our blocks are drawn with replacement from the 100-block pool, so a 200-map job reads some blocks twice, as the paper's uniform-popularity model implies.".into(),
            "Where we differ: our map response times barely move (about 2 s for every policy) because with 60 slots, 1-2 s maps and a job every 14 s the simulated cluster is rarely full, so a task waits for a heartbeat, not for a slot; the paper's Hadoop 0.21 maps (loadgen, wordcount on 30 two-core nodes) run far longer, so its FIFO queues. The locality ordering (FIFO < matchmaking < delay at large D) is the paper's, except that our delay passes matchmaking from D = 0.3 s, since its wait starts counting at the job's first skip, not per heartbeat.".into(),
        ],
    })
}

/// (tasks, FIFO %, Fair %, HybSMRP %) from the paper's table.
pub type HybRow = (u32, f64, f64, f64);

/// Table 4 (WordCount).
pub const HYB_T4: [HybRow; 10] = [
    (10, 18.0, 60.0, 24.0),
    (20, 19.0, 62.0, 35.0),
    (30, 22.0, 65.0, 49.0),
    (40, 36.0, 66.0, 57.0),
    (50, 39.0, 69.0, 68.0),
    (60, 49.0, 60.0, 75.0),
    (70, 56.0, 55.0, 83.0),
    (80, 60.0, 50.0, 72.0),
    (90, 46.0, 49.0, 63.0),
    (100, 39.0, 48.0, 61.0),
];

/// Table 5 (TeraSort).
pub const HYB_T5: [HybRow; 10] = [
    (10, 22.0, 32.0, 45.0),
    (20, 39.0, 33.0, 41.0),
    (30, 26.0, 39.0, 49.0),
    (40, 45.0, 34.0, 48.0),
    (50, 46.0, 32.0, 50.0),
    (60, 45.0, 30.0, 55.0),
    (70, 42.0, 32.0, 60.0),
    (80, 41.0, 35.0, 64.0),
    (90, 40.0, 39.0, 61.0),
    (100, 39.0, 38.0, 60.0),
];

/// HybSMRP section 5: 20 slaves in one rack, 2 map slots each, 64 MB
/// blocks, replication 3, jobs arriving with exponential-ish gaps (we use
/// the mean, 14 s), here 10 jobs sharing the table's number of tasks.
fn hybsmrp(name: &'static str, seed: u64, table: &[HybRow; 10]) -> Result<Figure, String> {
    let xs: Vec<f64> = table.iter().map(|r| r.0 as f64).collect();
    let scheds = [("fifo", "FIFO"), ("fair", "Fair"), ("hybsmrp", "HybSMRP")];
    let v = sweep(
        &xs,
        &scheds,
        &|x| SimConfig {
            nodes: 20,
            racks: 1,
            slots: 2,
            replication: 3,
            idle_ratio: 0.5,
            tasks: Some(x as usize),
            jobs: 10.min(x as usize),
            interarrival_s: 14.0,
            seed,
            offers: false,
            ..SimConfig::default()
        },
        &pct,
    )?;
    let cols = scheds
        .iter()
        .enumerate()
        .map(|(k, (_, label))| Column {
            label: label.to_string(),
            ours: v[k].clone(),
            paper: table.iter().map(|r| Some([r.1, r.2, r.3][k])).collect(),
        })
        .collect();
    Ok(Figure {
        name,
        title: format!(
            "Data locality vs number of tasks, {} (HybSMRP paper Table {})",
            if name.ends_with('4') { "WordCount" } else { "TeraSort" },
            if name.ends_with('4') { 4 } else { 5 }
        ),
        x_label: "map tasks".into(),
        y_label: "data-local map tasks, %".into(),
        x_log2: false,
        xs,
        columns: cols,
        notes: vec![
            "The paper's cluster shares slots with its own reduces and other jobs, and its figures jump by 10-20 points between neighbouring rows; our one-rack simulation has no such noise, so compare the ordering of the policies rather than single rows.".into(),
        ],
    })
}

/// Repeated WordCount over one data set, so that caches matter: 10 nodes,
/// 2 racks, 64 MiB blocks, 5 jobs each reading the whole data set of
/// `tasks / 5` blocks in turn.
fn cache_workload(seed: u64, cache: u64, tasks: usize) -> SimConfig {
    SimConfig {
        nodes: 10,
        racks: 2,
        slots: 2,
        replication: 3,
        idle_ratio: 0.5,
        tasks: Some(tasks),
        jobs: 5,
        interarrival_s: 20.0,
        cache_size: cache,
        blocks: Some(tasks / 5),
        seed,
        offers: false,
        ..SimConfig::default()
    }
}

fn clqlmrs_fig5(seed: u64) -> Result<Figure, String> {
    let xs: Vec<f64> = [2u64, 4, 6, 8].iter().map(|g| (g << 30) as f64).collect();
    let scheds = [
        ("fifo", "Hadoop (fifo)"),
        ("acl", "ACL (C=3)"),
        ("clqlmrs", "CLQLMRS"),
        ("clqlmrs reward=running", "CLQLMRS (running N_level)"),
        ("clqlmrs-wait", "clqlmrs-wait (variant)"),
    ];
    let v = sweep(
        &xs,
        &scheds,
        // 300 blocks of 256 MiB (75 GiB) on 10 nodes: 2 GiB per node
        // caches a quarter of the data set, 8 GiB all of it.
        &|x| SimConfig {
            block_size: 256 << 20,
            ..cache_workload(seed, x as u64, 1500)
        },
        &|r| 100.0 * r.locality[0] as f64 / r.maps().max(1) as f64,
    )?;
    let n = xs.len();
    Ok(Figure {
        name: "clqlmrs-fig5",
        title: "Cache locality vs cache size per node (CLQLMRS paper Fig. 5)".into(),
        x_label: "cache per node".into(),
        y_label: "cache-local map tasks, %".into(),
        x_log2: true,
        columns: scheds
            .iter()
            .enumerate()
            .map(|(k, (_, l))| Column {
                label: l.to_string(),
                ours: v[k].clone(),
                paper: vec![None; n],
            })
            .collect(),
        xs,
        notes: vec![
            "The paper plots curves without printing their points; its text gives the rise from 4 to 8 GB: +3 (Hadoop), +17 (ACL C=2), +25 (ACL C=5) and +24 points (CLQLMRS). Compare our 4 GB to 8 GB rise per policy.".into(),
            "Where we differ: our FIFO is cache-blind, as Hadoop's (it places by replicas, see the fifo module doc), and takes 0% at 2-6 GiB: each job reads the data set in block order, so every node reads its blocks in the same order job after job, and an LRU cache smaller than a node's share (about 30 blocks of 256 MiB) has always evicted a block before it is read again; at 8 GiB most of a node's share survives and 40.5% hit, more than the paper's +3 points, whose Hadoop had other data in its caches. Our CLQLMRS reaches 75-79% at every size, above FIFO everywhere and above ACL at 2-6 GiB, because it takes a cache-local map of any job (the paper's agent picks from the whole task pool) while ACL serves the first job; its curve rises from 75.5% to 78.5% at 4 GiB and is flat after, near the workload's ceiling of 80% (each block's first read, 20% of the maps, is a miss), so the paper's +24 points from 4 to 8 GB have no room here, and ACL's 79.8% passes it at 8 GiB, where every job's blocks fit. Our CLQLMRS reads N_level as the step's one task and trains on a random environment with every slot free (see the clqlmrs module doc); the running-count reading (second CLQLMRS column) is shown for comparison. The first version (running count, training on the live maps with only the free slots, online updates) took 0% here.".into(),
            "clqlmrs-wait (not the paper's: the same agent with delay scheduling's 1.5-heartbeat wait for a local map, see the clqlmrs module doc) follows CLQLMRS within a point: where every job's maps are spread over ten nodes, the asking node nearly always holds one, so waiting is rarely called for.".into(),
        ],
    })
}

fn clqlmrs_fig7(seed: u64) -> Result<Figure, String> {
    let xs: Vec<f64> = (1..=10).map(|k| 10.0 * k as f64).collect();
    let scheds = [
        ("fifo", "FIFO"),
        ("delay", "Delay"),
        ("acl", "ACL"),
        ("clqlmrs", "CLQLMRS"),
        ("clqlmrs reward=running", "CLQLMRS (running N_level)"),
        ("clqlmrs-wait", "clqlmrs-wait (variant)"),
    ];
    let mut columns = Vec::new();
    let mut local = vec![Vec::new(); scheds.len()];
    let mut cache = vec![Vec::new(); scheds.len()];
    for &x in &xs {
        let cfg = cache_workload(seed, 4 << 30, (x as usize).max(5) * 5);
        for (k, (s, _)) in scheds.iter().enumerate() {
            let r = run_one(&cfg, s)?;
            local[k].push(pct(&r));
            cache[k].push(100.0 * r.locality[0] as f64 / r.maps().max(1) as f64);
        }
    }
    let n = xs.len();
    for (k, (_, l)) in scheds.iter().enumerate() {
        columns.push(Column {
            label: format!("{l} local"),
            ours: local[k].clone(),
            paper: vec![None; n],
        });
    }
    let max_cache = [25.0, 35.0, 46.0, 55.0];
    for (k, (_, l)) in scheds.iter().enumerate() {
        columns.push(Column {
            label: format!("{l} cache"),
            ours: cache[k].clone(),
            paper: xs
                .iter()
                .map(|&x| max_cache.get(k).copied().filter(|_| x == 100.0))
                .collect(),
        });
    }
    Ok(Figure {
        name: "clqlmrs-fig7",
        title: "Local and cache-local rate vs map tasks per job (CLQLMRS paper Fig. 7, Table 4)".into(),
        x_label: "map tasks per job".into(),
        y_label: "map tasks, %".into(),
        x_log2: false,
        xs,
        columns,
        notes: vec![
            "Table 4's text: at 100 map tasks cache locality reaches 25% (FIFO), 35% (Delay), 46% (ACL) and 55% (CLQLMRS); Delay and ACL reach 99% data locality at 10 tasks.".into(),
            "Each point is 5 jobs of that many maps over a data set of as many blocks, so the later jobs can hit what the earlier ones cached.".into(),
            "Where we differ: the order of the paper's Table 4 holds from 20 maps per job (CLQLMRS's cache-local rate above Delay's and FIFO's, both cache-blind as Hadoop's), but ACL, which waits up to C skips for a cached copy, is above CLQLMRS at every size, where the paper puts CLQLMRS 9 points above ACL; and every rate is higher than the paper's, since each later job here reads blocks the earlier ones cached (FIFO 54% against the paper's 25% at 100 maps). At 10 maps per job Delay (54%) is above CLQLMRS (44%), and so is clqlmrs-wait (56%), the same agent with Delay's wait: with ten maps and about ten free slots, a policy that never waits gives most of a job's maps to the first nodes that ask, holders or not. The running-count reading of N_level, shown for comparison, is within two points of the step reading: on these small jobs episodes are short and the counts stay small.".into(),
            "clqlmrs-wait (not the paper's: the same agent with delay scheduling's 1.5-heartbeat wait for a local map) is 100% local at every size, as Delay is; its cache-local rate is above CLQLMRS's at 10 and 20 maps and within 4 points of it from 30, below ACL's: waiting for any holder buys node locality; ACL's C skips, which wait for a cached copy, buy the cache.".into(),
        ],
    })
}

/// One decimal for percentages and seconds, three for fractions.
fn num(x: f64) -> String {
    if x.abs() < 2.0 && x != 0.0 {
        format!("{x:.3}")
    } else {
        format!("{x:.1}")
    }
}

impl Figure {
    /// The figure as a markdown table, ours beside the paper's.
    pub fn markdown(&self) -> String {
        let mut s = format!("## {}\n\n| {} |", self.title, self.x_label);
        for c in &self.columns {
            let _ = write!(s, " {} (ours) | (paper) |", c.label);
        }
        s.push_str("\n|---:|");
        for _ in &self.columns {
            s.push_str("---:|---:|");
        }
        s.push('\n');
        for (i, x) in self.xs.iter().enumerate() {
            let xl = if self.x_log2 {
                format!("{:.0} GiB", x / (1u64 << 30) as f64)
            } else {
                format!("{x}")
            };
            let _ = write!(s, "| {xl} |");
            for c in &self.columns {
                let p = c.paper[i].map(num).unwrap_or_else(|| "—".into());
                let _ = write!(s, " {} | {p} |", num(c.ours[i]));
            }
            s.push('\n');
        }
        s.push('\n');
        for n in &self.notes {
            let _ = writeln!(s, "- {n}");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found() {
        let mut names: Vec<&str> = SCENARIOS.iter().map(|s| s.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), SCENARIOS.len());
        assert!(find("lsap-fig3").is_ok());
        assert!(find("nope").unwrap_err().contains("lsap-fig3"));
    }

    #[test]
    fn a_small_scenario_sets_ours_beside_the_papers() {
        let f = find("lsap-fig4b").unwrap().run(1).unwrap();
        assert_eq!(f.columns.len(), 2);
        assert!(f.columns.iter().all(|c| c.ours.len() == f.xs.len()));
        // lsap is never worse than dl-sched on the same cluster.
        for i in 0..f.xs.len() {
            assert!(f.columns[1].ours[i] + 1e-9 >= f.columns[0].ours[i], "{f:?}");
        }
        let md = f.markdown();
        assert!(
            md.contains("| map tasks | dl-sched (fifo) (ours) | (paper) |"),
            "{md}"
        );
    }
}
