//! What a simulation run is asked to model: the cluster's shape, the
//! workload and the task-duration model, all checked before anything runs.

use crate::model::TaskModel;

#[derive(Debug, thiserror::Error)]
#[error("invalid simulation: {0}")]
pub struct ConfigError(pub String);

/// One job of an explicit schedule.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobSpec {
    pub arrival_s: f64,
    pub maps: usize,
    /// Reduces that run once its maps are done (0: a map-only job, which
    /// ends with its last map). They need reduce slots.
    pub reduces: usize,
    /// Bytes its maps hand to its reduces: what the reduces fetch over the
    /// network; 0 where unknown.
    pub shuffle_bytes: u64,
    /// The blocks of the store its maps read, by map index (as the cluster
    /// ran it: `mr bench trace` draws them per row from its pool); empty:
    /// drawn uniformly from the `blocks` pool.
    pub blocks: Vec<u64>,
}

/// The Facebook bins of the matchmaking paper (IV.A, Table 4), Zaharia et
/// al.'s trace: (maps, jobs of 88 in that bin).
pub const FACEBOOK_BINS: [(usize, u32); 6] =
    [(1, 38), (2, 16), (10, 14), (50, 8), (100, 6), (200, 6)];

/// The mixed workload: `jobs` jobs with exponential inter-arrival times of
/// mean `mean_interarrival_s` and map counts drawn from
/// [`FACEBOOK_BINS`] times `scale` (at least one map), seeded. The same
/// shape as `mr bench --workloads mixed` on a real cluster.
pub fn facebook_mixed(
    jobs: usize,
    mean_interarrival_s: f64,
    scale: f64,
    seed: u64,
) -> Vec<JobSpec> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let weight: u32 = FACEBOOK_BINS.iter().map(|b| b.1).sum();
    let mut at = 0.0;
    (0..jobs)
        .map(|j| {
            if j > 0 {
                at += -mean_interarrival_s * (1.0 - rng.f64()).ln();
            }
            let mut pick = rng.u32(..weight);
            let maps = FACEBOOK_BINS
                .iter()
                .find(|b| {
                    let hit = pick < b.1;
                    pick = pick.saturating_sub(b.1);
                    hit
                })
                .map_or(1, |b| b.0);
            JobSpec {
                arrival_s: at,
                maps: ((maps as f64 * scale).round() as usize).max(1),
                ..Default::default()
            }
        })
        .collect()
}

#[derive(Debug, Clone)]
pub struct SimConfig {
    pub nodes: usize,
    pub racks: usize,
    /// Map slots per node.
    pub slots: u32,
    /// Reduce slots per node (jobs with reduces need some).
    pub reduce_slots: u32,
    pub replication: usize,
    /// Fraction of map slots free at time 0; the others run background
    /// tasks (other users' work, as the LSAP paper mimics multi-user load)
    /// that end at uniformly spread times within one mean task duration.
    pub idle_ratio: f64,
    /// Map tasks in all; default: as many as the idle slots at time 0 (the
    /// LSAP paper's "enough tasks to utilize all idle slots").
    pub tasks: Option<usize>,
    /// Jobs the tasks are split over (in equal shares, the first ones one
    /// more when it does not divide).
    pub jobs: usize,
    /// Seconds between two job arrivals (0: all at time 0).
    pub interarrival_s: f64,
    /// Block cache per node, bytes (0: no cache).
    pub cache_size: u64,
    pub block_size: u64,
    /// Distinct blocks in the store; tasks read them in turn (default: one
    /// per task, so no two tasks share a block).
    pub blocks: Option<usize>,
    pub heartbeat_s: f64,
    /// The master's launch timing today: launches reach any node at once
    /// and, when work appears, every node with a free slot is offered to
    /// the policy (`Trigger::Offer`). Off: Hadoop's, which the papers
    /// assume: a node gets work on its own heartbeat (see
    /// [`crate::engine`]).
    pub offers: bool,
    /// Jobs go to pools `pool1..poolN` in turn (fair, capacity and
    /// lsap-fair group by pool).
    pub pools: usize,
    pub seed: u64,
    pub model: TaskModel,
    /// An explicit schedule (the matchmaking paper's Facebook bins): when
    /// not empty it replaces `tasks`, `jobs` and `interarrival_s`, and each
    /// map reads a block drawn uniformly from the `blocks` pool (the
    /// paper's uniform block popularity).
    pub workload: Vec<JobSpec>,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            nodes: 100,
            racks: 5,
            slots: 4,
            reduce_slots: 0,
            replication: 3,
            idle_ratio: 0.5,
            tasks: None,
            jobs: 1,
            interarrival_s: 0.0,
            cache_size: 0,
            block_size: 64 << 20,
            blocks: None,
            heartbeat_s: 3.0,
            offers: true,
            pools: 3,
            seed: 1,
            model: TaskModel::default(),
            workload: vec![],
        }
    }
}

impl SimConfig {
    /// Racks as the LSAP paper lays them out: 20 nodes each.
    pub fn default_racks(nodes: usize) -> usize {
        nodes.div_ceil(20).max(1)
    }

    pub fn idle_slots(&self) -> usize {
        (self.nodes as f64 * self.slots as f64 * self.idle_ratio).round() as usize
    }

    pub fn task_count(&self) -> usize {
        if !self.workload.is_empty() {
            return self.workload.iter().map(|j| j.maps).sum();
        }
        self.tasks.unwrap_or_else(|| self.idle_slots().max(1))
    }

    pub fn job_count(&self) -> usize {
        if self.workload.is_empty() {
            self.jobs
        } else {
            self.workload.len()
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |m: String| Err(ConfigError(m));
        if self.nodes == 0 || self.nodes > 100_000 {
            return bad(format!("--nodes must be 1..=100000, not {}", self.nodes));
        }
        if self.racks == 0 || self.racks > self.nodes {
            return bad(format!(
                "--racks must be 1..=nodes ({}), not {}",
                self.nodes, self.racks
            ));
        }
        if self.slots == 0 || self.slots > 1024 {
            return bad(format!("--slots must be 1..=1024, not {}", self.slots));
        }
        if self.replication == 0 || self.replication > self.nodes {
            return bad(format!(
                "--replication must be 1..=nodes ({}), not {}",
                self.nodes, self.replication
            ));
        }
        if !(0.0..=1.0).contains(&self.idle_ratio) {
            return bad(format!(
                "--idle-ratio must be within 0..=1, not {}",
                self.idle_ratio
            ));
        }
        if self.task_count() == 0 || self.task_count() > 10_000_000 {
            return bad(format!(
                "--tasks must be 1..=10000000, not {}",
                self.task_count()
            ));
        }
        if self
            .workload
            .iter()
            .any(|j| j.maps == 0 || !(j.arrival_s >= 0.0 && j.arrival_s.is_finite()))
        {
            return bad(
                "every job of the schedule needs maps and an arrival time of 0 or more".into(),
            );
        }
        if self.workload.is_empty() && (self.jobs == 0 || self.jobs > self.task_count()) {
            return bad(format!(
                "--jobs must be 1..=tasks ({}), not {}",
                self.task_count(),
                self.jobs
            ));
        }
        if self.reduce_slots > 1024 {
            return bad(format!(
                "--reduce-slots must be 0..=1024, not {}",
                self.reduce_slots
            ));
        }
        if self.reduce_slots == 0 && self.workload.iter().any(|j| j.reduces > 0) {
            return bad("the schedule has jobs with reduces: give --reduce-slots".into());
        }
        if self
            .workload
            .iter()
            .any(|j| !j.blocks.is_empty() && j.blocks.len() != j.maps)
        {
            return bad("a job's explicit blocks must be one per map".into());
        }
        if self.blocks == Some(0) {
            return bad("--blocks must be at least 1".into());
        }
        if self.block_size == 0 {
            return bad("--block-size must be more than 0".into());
        }
        if !(self.heartbeat_s > 0.0 && self.heartbeat_s.is_finite()) {
            return bad(format!(
                "--heartbeat must be positive, not {}",
                self.heartbeat_s
            ));
        }
        if !(self.interarrival_s >= 0.0 && self.interarrival_s.is_finite()) {
            return bad(format!(
                "--interarrival must be 0 or more, not {}",
                self.interarrival_s
            ));
        }
        self.model.validate().map_err(ConfigError)
    }
}
