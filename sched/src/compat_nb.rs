//! `compat-nb`: the incremental Naive-Bayes compatibility scheduler of
//! Attri and Selva Kumar, "Learning Based Job Scheduling Algorithm Based On
//! Map Reduce Framework".
//!
//! What the paper fixes, and this file follows:
//!
//! - **Task vectors** (section III, eq. 1): a task is described by its cpu,
//!   memory, disk and network usage, one Map-TaskVector and one
//!   Reduce-TaskVector per job. The paper captures them with `atop` on the
//!   TaskTrackers; here they are learnt per job *type* (`wordcount`, `sort`,
//!   ...) and kind from the real tasks' [`TaskReport`]s: cpu = cpu seconds
//!   per second of runtime (cores), memory = peak bytes, disk = bytes read
//!   from the local disk plus bytes written, per second; network = bytes
//!   read from another node (a remote map input, a reduce's shuffle), per
//!   second.
//! - **T_compound** (section III.A, eq. 2): the sum of the vectors of the
//!   tasks running on the node ([`NodeView::running`]), each by its job's
//!   type; the tasks given to the node earlier in the same heartbeat are
//!   added as they are assigned, since they will run there too.
//! - **Features** (Fig. 2 lines 2-5, eq. 4-5): exactly four, `{Φ, Σ, T_v,
//!   T_compound}`: hardware specification, network distance, the incoming
//!   task's vector and the compound vector, conditionally independent given
//!   the class.
//! - **Classifier** (eq. 3, 5): an incremental Naive-Bayes classifier, two
//!   classes (compatible = good, incompatible = bad), trained automatically
//!   by overload rules on the nodes' own resource vectors (section III.A:
//!   "the overload rules are used to supervise the classifier"; section V:
//!   after a task is scheduled "we try to monitor that node for overload
//!   condition and re-train the classifier accordingly").
//! - **Acceptance** (Fig. 2 lines 6-10): a task is compatible when
//!   `P(good | F) >= C_ml`, the minimum acceptance probability, 0.5 in
//!   Table 1.
//! - **Order** (section III): tasks are taken "in FIFO manner" and each is
//!   tested for compatibility with the heartbeating TaskTracker (Fig. 3).
//!
//! Where the paper is loose, and what this file chose:
//!
//! - *Discretisation*: the paper names the features but not their values.
//!   Each vector feature is one categorical value, the tuple of its
//!   components' levels, so that eq. 5 keeps its four factors: `T_v` has 3
//!   levels per component (81 values), absolute, because it describes the
//!   job; `T_compound` has 4 levels per component (256 values) as a fraction
//!   of the node's capacity, because under the independence assumption the
//!   classifier could not otherwise learn that three busy cores fill a
//!   4-core node but not a 16-core one; `Φ` is cores (4 levels) by memory
//!   (4 levels); `Σ` is the five locality levels of [`Locality`]. The edges
//!   are the `*_EDGES` constants below, each with its reason.
//! - *Smoothing*: the paper gives none; Laplace (add-one) smoothing on the
//!   class prior and on every `P(f_j | c)`, so an untrained classifier says
//!   exactly 0.5 (and, with `C_ml` = 0.5, accepts: it starts as FIFO) and an
//!   unseen value never zeroes a product.
//! - *Labels*: every map this policy assigns is remembered with its four
//!   features; each heartbeat of that node while the task runs applies the
//!   overload rule to the node's resource vector; when the task finishes,
//!   the decision is labelled bad if the node was overloaded in at least
//!   half of those observations (Fig. 5 tolerates "surges": one busy sample
//!   does not condemn a long task, and a task's length does not bias its
//!   label), good otherwise. A task shorter than a heartbeat is judged on
//!   the node's vector when it finishes. Decisions whose attempt vanishes
//!   (re-queued, node lost) are dropped untrained.
//! - *Overload rule*: "can be configured based on the user requirements"
//!   with no values. Defaults: cpu above 90% or memory above 90%; a
//!   run-queue rule (load1 per core, the "cpu requirement" of Fig. 5) is
//!   available and off by default, since load1 is a one-minute average and
//!   lags tasks that last seconds.
//! - *Selection*: the abstract says the most compatible task is chosen,
//!   section III that tasks are taken FIFO and the first compatible one is
//!   assigned. Both, in that order: jobs in FIFO order, the first job whose
//!   most compatible map (highest posterior; the tasks of a job differ only
//!   in `Σ`, ties to the better locality, then the lower index) passes
//!   `C_ml` gets the slot, and the search restarts for the next free slot
//!   with T_compound grown by the task just given.
//! - *Fallback*: the paper has none, and a classifier that learnt "bad" for
//!   everything would leave the cluster idle for ever. A node that runs
//!   nothing and got nothing in this heartbeat receives the single most
//!   probable map anyway: an idle node cannot be overloaded by our tasks,
//!   and the decision is trained on like any other, so a pessimistic
//!   classifier corrects itself.
//! - *Priors*: before a job type's first record its vector is Hadoop's slot
//!   assumption ([`MAP_PRIOR`], [`REDUCE_PRIOR`]).
//! - *Reduces*: the paper gives them vectors but no rule of their own; they
//!   count in T_compound and are placed by the shared rule
//!   ([`assign_reduces`]).
//! - *Worked example*: the paper has none; the tests check a posterior
//!   computed by hand from eq. 3-5 with Laplace smoothing.
//!
//! Parameters: `min_accept` (C_ml, default 0.5), `cpu_max` (percent,
//! default 90), `mem_max` (percent, default 90), `load_max` (load1 per core,
//! default `off`); each overload threshold also takes `off`.

use super::error::SchedError;
use super::*;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};

const NAME: &str = "compat-nb";
const PARAMS: &str = "min_accept, cpu_max, mem_max, load_max";

/// Table 1 of the paper (there misnamed "Maximum Acceptance Probability";
/// section III.A calls it the minimum and compares with `>=`).
const DEFAULT_MIN_ACCEPT: f64 = 0.5;
/// Percent of cpu beyond which a node is overloaded: leaves a tenth for the
/// worker's own threads (heartbeat, shuffle server), so that a node the rule
/// calls fine still answers in time. The paper gives no value.
const DEFAULT_CPU_MAX: f64 = 90.0;
/// Percent of memory in use beyond which a node is overloaded: past it the
/// page cache that map inputs and spills rely on is gone and swapping is
/// near. The paper gives no value.
const DEFAULT_MEM_MAX: f64 = 90.0;

/// Version of the saved state. The level edges below are part of what the
/// counts mean: change any of them and bump this, so that old counts are
/// refused rather than misread.
const STATE_VERSION: u32 = 1;

/// Feature positions in eq. 5's product, in the paper's order.
const PHI: usize = 0;
const SIGMA: usize = 1;
const TV: usize = 2;
const COMPOUND: usize = 3;
/// Values each feature takes (Laplace smoothing divides by them).
const CARD: [usize; 4] = [16, 5, 81, 256];

/// Φ, cores: at most 2, 3-4 (the paper's quad cores), 5-8, more.
const PHI_CORES_EDGES: [f64; 3] = [3.0, 5.0, 9.0];
/// Φ, memory: below 4, 8 and 16 GiB (the paper's nodes had 4 to 8 GB).
const PHI_MEM_EDGES: [f64; 3] = [4.0 * GIB, 8.0 * GIB, 16.0 * GIB];
/// T_v, cpu in cores: mostly waiting on I/O, about one core (a
/// single-threaded task), more than one (multi-threaded).
const TV_CPU_EDGES: [f64; 2] = [0.5, 1.0];
/// T_v, memory: within a small buffer, up to a few 64 MiB blocks, beyond.
const TV_MEM_EDGES: [f64; 2] = [64.0 * MIB, 256.0 * MIB];
/// T_v, disk B/s: a tenth and two fifths of [`DISK_BPS`], so that two or
/// three "high" tasks fill a disk.
const TV_DISK_EDGES: [f64; 2] = [10e6, 40e6];
/// T_v, network B/s: a twenty-fifth and a fifth of a gigabit link.
const TV_NET_EDGES: [f64; 2] = [5e6, 25e6];
/// T_compound, fraction of capacity per component: under half, under three
/// quarters, under full, full or over. Finer near full, where one more task
/// decides between a busy node and an overloaded one.
const COMPOUND_EDGES: [f64; 3] = [0.5, 0.75, 1.0];
/// A node's disk bandwidth, B/s, which the view does not carry: a commodity
/// hard disk's sequential rate (the paper's nodes had 160 GB-1 TB disks).
const DISK_BPS: f64 = 100e6;
/// A node's network bandwidth when the view has no rack bandwidth: the
/// paper's gigabit switch.
const GIGABIT_BPS: f64 = 125e6;

const MIB: f64 = (1u64 << 20) as f64;
const GIB: f64 = (1u64 << 30) as f64;

/// A map's vector before any record of its type, Hadoop's slot assumption:
/// one core; a 64 MiB block held in memory with an output buffer of like
/// size; the block read from local disk and as much written in about ten
/// seconds; no network, since Hadoop places maps where their data is.
pub const MAP_PRIOR: TaskVector = TaskVector {
    cpu: 1.0,
    mem: 128.0 * MIB,
    disk: 12.8e6,
    net: 0.0,
};
/// A reduce's vector before any record of its type: as a map, but its input
/// arrives over the network (the shuffle) and its output goes to disk.
pub const REDUCE_PRIOR: TaskVector = TaskVector {
    cpu: 1.0,
    mem: 128.0 * MIB,
    disk: 6.4e6,
    net: 6.4e6,
};
/// Records after which a type's vector becomes a moving average: the last
/// ~20 tasks dominate, about one wave on a small cluster, so the vector
/// follows a job type whose behaviour shifts with its input.
const WINDOW: u64 = 20;
/// Job types remembered per kind: job types are few (the built-in jobs);
/// the bound keeps a stream of odd names from growing the state.
const MAX_TYPES: usize = 256;

/// Eq. 1's T_v: a task's demand on each resource.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskVector {
    /// Cores busy (cpu seconds per second).
    pub cpu: f64,
    /// Peak resident bytes.
    pub mem: f64,
    /// Local disk bytes per second, read and written.
    pub disk: f64,
    /// Bytes per second from other nodes.
    pub net: f64,
}

impl TaskVector {
    fn add(self, o: TaskVector) -> TaskVector {
        TaskVector {
            cpu: self.cpu + o.cpu,
            mem: self.mem + o.mem,
            disk: self.disk + o.disk,
            net: self.net + o.net,
        }
    }

    /// Moves `self` a fraction `w` of the way to `x`.
    fn toward(self, x: TaskVector, w: f64) -> TaskVector {
        let f = |a: f64, b: f64| a + (b - a) * w;
        TaskVector {
            cpu: f(self.cpu, x.cpu),
            mem: f(self.mem, x.mem),
            disk: f(self.disk, x.disk),
            net: f(self.net, x.net),
        }
    }

    fn is_valid(&self) -> bool {
        [self.cpu, self.mem, self.disk, self.net]
            .iter()
            .all(|x| x.is_finite() && *x >= 0.0)
    }

    /// What one finished task used. `None` when the report cannot give rates
    /// (no runtime) or is nonsense.
    pub fn from_report(r: &TaskReport) -> Option<TaskVector> {
        let rt = r.runtime_s;
        let usable = rt.is_finite() && rt > 0.0 && r.cpu_s.is_finite() && r.cpu_s >= 0.0;
        if !usable {
            return None;
        }
        let read = r.bytes_read as f64;
        // Where the input came from decides which resource it loaded: a
        // cached block costs neither disk nor network, a remote one the
        // network; a reduce's input is its shuffle.
        let (disk_read, net_read) = match r.task.kind {
            TaskKind::Reduce => (0.0, read),
            TaskKind::Map => match r.locality {
                Locality::CacheLocal => (0.0, 0.0),
                Locality::NodeLocal => (read, 0.0),
                _ => (0.0, read),
            },
        };
        Some(TaskVector {
            cpu: r.cpu_s / rt,
            mem: r.peak_mem_bytes as f64,
            disk: (disk_read + r.bytes_written as f64) / rt,
            net: net_read / rt,
        })
    }
}

/// A job type's learnt vector.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Learnt {
    /// Records folded in (saturating): sets the weight of the next one.
    records: u64,
    vector: TaskVector,
}

impl Learnt {
    fn update(&mut self, x: TaskVector) {
        self.records = self.records.saturating_add(1);
        let w = 1.0 / self.records.min(WINDOW) as f64;
        self.vector = self.vector.toward(x, w);
    }
}

/// The four features' values, indexed by [`PHI`], [`SIGMA`], [`TV`],
/// [`COMPOUND`].
type Features = [usize; 4];

/// Class indices.
const GOOD: usize = 0;
const BAD: usize = 1;

/// Eq. 3-5 with counts: the incremental Naive-Bayes classifier.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct NaiveBayes {
    /// Decisions labelled good and bad.
    classes: [u64; 2],
    /// `counts[j][v][c]`: decisions of class `c` whose feature `j` was `v`.
    counts: Vec<Vec<[u64; 2]>>,
}

impl Default for NaiveBayes {
    fn default() -> Self {
        NaiveBayes {
            classes: [0, 0],
            counts: CARD.iter().map(|&k| vec![[0, 0]; k]).collect(),
        }
    }
}

impl NaiveBayes {
    fn train(&mut self, f: &Features, good: bool) {
        let c = if good { GOOD } else { BAD };
        self.classes[c] = self.classes[c].saturating_add(1);
        for (j, &v) in f.iter().enumerate() {
            let cell = &mut self.counts[j][v][c];
            *cell = cell.saturating_add(1);
        }
    }

    /// `P(good | F)` by eq. 3 with eq. 5's product, Laplace-smoothed; the
    /// evidence `P(F)` is the sum over both classes. Logs, so that many
    /// small factors do not underflow.
    fn posterior_good(&self, f: &Features) -> f64 {
        let n = (self.classes[GOOD] + self.classes[BAD]) as f64;
        let mut log = [0.0f64; 2];
        for (c, l) in log.iter_mut().enumerate() {
            let nc = self.classes[c] as f64;
            *l = ((nc + 1.0) / (n + 2.0)).ln();
            for (j, &v) in f.iter().enumerate() {
                *l += ((self.counts[j][v][c] as f64 + 1.0) / (nc + CARD[j] as f64)).ln();
            }
        }
        1.0 / (1.0 + (log[BAD] - log[GOOD]).exp())
    }

    /// Refuses counts that could not have come from [`NaiveBayes::train`]:
    /// wrong shapes, or a feature whose counts do not add up to its class.
    fn validate(&self) -> Result<(), String> {
        if self.counts.len() != CARD.len() {
            return Err(format!(
                "{} features, expected {}",
                self.counts.len(),
                CARD.len()
            ));
        }
        for (j, values) in self.counts.iter().enumerate() {
            if values.len() != CARD[j] {
                return Err(format!(
                    "feature {j} has {} values, expected {}",
                    values.len(),
                    CARD[j]
                ));
            }
            for c in [GOOD, BAD] {
                let sum = values
                    .iter()
                    .try_fold(0u64, |s, v| s.checked_add(v[c]))
                    .ok_or_else(|| format!("feature {j}: counts overflow"))?;
                if sum != self.classes[c] {
                    return Err(format!(
                        "feature {j}: class {c} counts add up to {sum}, not {}",
                        self.classes[c]
                    ));
                }
            }
        }
        Ok(())
    }
}

/// One assignment awaiting its label.
#[derive(Debug, Clone, PartialEq)]
struct Decision {
    task: TaskId,
    features: Features,
    /// View time of the assignment: the heartbeat that carried it shows the
    /// node before the task started, so it is not an observation.
    assigned_at: f64,
    /// Heartbeats of the node seen while the task ran.
    observed: u32,
    /// Of those, how many the overload rule called overloaded.
    overloaded: u32,
}

/// The configured overload rule and acceptance threshold.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Params {
    /// C_ml.
    min_accept: f64,
    /// Cpu percent above which a node is overloaded; `None`: rule off.
    cpu_max: Option<f64>,
    /// Memory percent in use above which a node is overloaded.
    mem_max: Option<f64>,
    /// load1 per core above which a node is overloaded.
    load_max: Option<f64>,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            min_accept: DEFAULT_MIN_ACCEPT,
            cpu_max: Some(DEFAULT_CPU_MAX),
            mem_max: Some(DEFAULT_MEM_MAX),
            load_max: None,
        }
    }
}

impl Params {
    /// Section III.A's overload rule on a node's live resource vector. A
    /// figure the worker did not report (no cores, no memory total) cannot
    /// show overload.
    fn overloaded(&self, r: &Resources) -> bool {
        let cpu = self.cpu_max.is_some_and(|m| r.cpu_pct > m);
        let mem = self.mem_max.is_some_and(|m| {
            r.mem_total_bytes > 0 && r.mem_used_bytes as f64 * 100.0 > m * r.mem_total_bytes as f64
        });
        let load = self
            .load_max
            .is_some_and(|m| r.cores() > 0 && r.load1 / r.cores() as f64 > m);
        cpu || mem || load
    }
}

/// What is saved across master restarts.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Saved {
    version: u32,
    classifier: NaiveBayes,
    map_vectors: BTreeMap<String, Learnt>,
    reduce_vectors: BTreeMap<String, Learnt>,
}

/// The `compat-nb` policy.
#[derive(Debug, Clone, Default)]
pub struct CompatNb {
    params: Params,
    classifier: NaiveBayes,
    /// Learnt Map-TaskVectors by job type.
    map_vectors: BTreeMap<String, Learnt>,
    /// Learnt Reduce-TaskVectors by job type.
    reduce_vectors: BTreeMap<String, Learnt>,
    /// Decisions awaiting their label, by node: a heartbeat observes only
    /// its own node's, so the cost per heartbeat is that node's slots. Not
    /// saved: after a restart the attempts they describe are unknown.
    decisions: HashMap<String, Vec<Decision>>,
}

impl CompatNb {
    pub fn from_params(p: &BTreeMap<String, String>) -> Result<Self, SchedError> {
        let mut params = Params::default();
        for (k, v) in p {
            let bad = |why: &str| SchedError::BadValue {
                name: NAME.into(),
                param: k.clone(),
                value: v.clone(),
                why: why.into(),
            };
            let num = || v.trim().parse::<f64>().ok().filter(|x| x.is_finite());
            let off = v.trim().eq_ignore_ascii_case("off");
            match k.as_str() {
                "min_accept" => {
                    params.min_accept = num()
                        .filter(|x| (0.0..=1.0).contains(x))
                        .ok_or_else(|| bad("expected a probability in [0, 1]"))?
                }
                "cpu_max" | "mem_max" => {
                    let pct = if off {
                        None
                    } else {
                        Some(
                            num()
                                .filter(|x| *x > 0.0 && *x <= 100.0)
                                .ok_or_else(|| bad("expected a percent in (0, 100], or off"))?,
                        )
                    };
                    if k == "cpu_max" {
                        params.cpu_max = pct;
                    } else {
                        params.mem_max = pct;
                    }
                }
                "load_max" => {
                    params.load_max = if off {
                        None
                    } else {
                        Some(
                            num()
                                .filter(|x| *x > 0.0)
                                .ok_or_else(|| bad("expected load per core > 0, or off"))?,
                        )
                    }
                }
                _ => {
                    return Err(SchedError::UnknownParam {
                        name: NAME.into(),
                        param: k.clone(),
                        takes: PARAMS.into(),
                    })
                }
            }
        }
        Ok(CompatNb {
            params,
            ..Default::default()
        })
    }

    /// The vector of a task of job type `job_type` (learnt, or the prior).
    pub fn task_vector(&self, job_type: Option<&str>, kind: TaskKind) -> TaskVector {
        let (learnt, prior) = match kind {
            TaskKind::Map => (&self.map_vectors, MAP_PRIOR),
            TaskKind::Reduce => (&self.reduce_vectors, REDUCE_PRIOR),
        };
        job_type
            .and_then(|t| learnt.get(t))
            .map_or(prior, |l| l.vector)
    }

    /// Eq. 2 on `node`: its running tasks' vectors, summed.
    fn compound(&self, node: &NodeView, types: &HashMap<u64, &str>) -> TaskVector {
        node.running
            .iter()
            .map(|r| self.task_vector(types.get(&r.id.job).copied(), r.id.kind))
            .fold(TaskVector::default(), TaskVector::add)
    }

    /// Section V's monitoring: one more look at `node` for the decisions
    /// running there; attempts no longer running are forgotten.
    fn observe(&mut self, view: &ClusterView, node: &NodeView) {
        let over = self.params.overloaded(&node.resources);
        if let Some(ds) = self.decisions.get_mut(&node.name) {
            let running: HashSet<TaskId> = node.running.iter().map(|r| r.id).collect();
            ds.retain(|d| d.assigned_at >= view.now || running.contains(&d.task));
            for d in ds.iter_mut().filter(|d| view.now > d.assigned_at) {
                d.observed = d.observed.saturating_add(1);
                d.overloaded = d.overloaded.saturating_add(u32::from(over));
            }
        }
        self.decisions
            .retain(|n, ds| !ds.is_empty() && view.node(n).is_some());
    }

    /// Fig. 2 and 3 for every free map slot of `node`.
    fn assign_maps(
        &mut self,
        view: &ClusterView,
        node: &NodeView,
        order: &[u64],
        types: &HashMap<u64, &str>,
    ) -> Vec<Assignment> {
        let mut out = Vec::new();
        if node.free_map_slots == 0 {
            return out;
        }
        let indexed = view.locality_index().is_some();
        let mut by_job: HashMap<u64, Vec<&PendingTask>> = HashMap::new();
        if !indexed {
            for t in &view.pending {
                if t.kind == TaskKind::Map && !(t.avoids(&node.name, &view.nodes)) {
                    by_job.entry(t.job).or_default().push(t);
                }
            }
        }
        // Each job's maps by (locality on this node, index), computed when
        // the job is first looked at: the first passing job usually ends
        // the search.
        let mut sorted: HashMap<u64, Vec<(Locality, TaskId)>> = HashMap::new();
        let phi = phi_level(&node.resources);
        let mut compound = self.compound(node, types);
        let mut taken: HashSet<TaskId> = HashSet::new();
        let mut free = node.free_map_slots;
        while free > 0 {
            let comp = compound_level(compound, node, view);
            // (posterior, task, features, vector) of the chosen task, and of
            // the most probable one for the fallback.
            let mut chosen: Option<(f64, TaskId, Features, TaskVector)> = None;
            let mut most_probable: Option<(f64, TaskId, Features, TaskVector)> = None;
            for job in order {
                // The job's tasks differ only in Σ: the best of each level
                // is its first untaken task (by index).
                let firsts: Vec<(Locality, TaskId)> = if indexed {
                    Locality::ALL
                        .into_iter()
                        .filter_map(|l| {
                            view.first_map_at(*job, node, l, |t| {
                                !(taken.contains(&t.id) || t.avoids(&node.name, &view.nodes))
                            })
                            .map(|t| (l, t.id))
                        })
                        .collect()
                } else {
                    let Some(maps) = by_job.get(job) else {
                        continue;
                    };
                    let list = sorted.entry(*job).or_insert_with(|| {
                        let mut l: Vec<(Locality, TaskId)> = maps
                            .iter()
                            .map(|t| (view.locality(t, node), t.id))
                            .collect();
                        l.sort_by_key(|(loc, id)| (*loc, id.index));
                        l
                    });
                    let mut level_seen = [false; 5];
                    list.iter()
                        .filter(|(loc, id)| {
                            !taken.contains(id)
                                && !std::mem::replace(&mut level_seen[*loc as usize], true)
                        })
                        .copied()
                        .collect()
                };
                let tv_vec = self.task_vector(types.get(job).copied(), TaskKind::Map);
                let tv = tv_level(tv_vec);
                // Ties keep the better level.
                let mut best: Option<(f64, TaskId, Features)> = None;
                for (loc, id) in firsts.iter() {
                    let mut f: Features = [0; 4];
                    f[PHI] = phi;
                    f[SIGMA] = *loc as usize;
                    f[TV] = tv;
                    f[COMPOUND] = comp;
                    let p = self.classifier.posterior_good(&f);
                    if best.is_none_or(|b| p > b.0) {
                        best = Some((p, *id, f));
                    }
                }
                let Some((p, id, f)) = best else {
                    continue;
                };
                if p >= self.params.min_accept {
                    chosen = Some((p, id, f, tv_vec));
                    break;
                }
                if most_probable.is_none_or(|b| p > b.0) {
                    most_probable = Some((p, id, f, tv_vec));
                }
            }
            let idle = node.running.is_empty() && out.is_empty();
            let Some((_, id, f, tv_vec)) = chosen.or(if idle { most_probable } else { None })
            else {
                break;
            };
            taken.insert(id);
            free -= 1;
            compound = compound.add(tv_vec);
            out.push(Assignment {
                task: id,
                node: node.name.clone(),
            });
            let ds = self.decisions.entry(node.name.clone()).or_default();
            ds.retain(|d| d.task != id);
            ds.push(Decision {
                task: id,
                features: f,
                assigned_at: view.now,
                observed: 0,
                overloaded: 0,
            });
        }
        out
    }
}

/// Index of `x` among levels split at `edges` (ascending); NaN is lowest.
fn level(x: f64, edges: &[f64]) -> usize {
    edges.iter().filter(|e| x >= **e).count()
}

/// Φ: the node's hardware specification.
fn phi_level(r: &Resources) -> usize {
    level(r.cores() as f64, &PHI_CORES_EDGES) + 4 * level(r.mem_total_bytes as f64, &PHI_MEM_EDGES)
}

/// T_v's value: its four components' levels as one category.
fn tv_level(v: TaskVector) -> usize {
    level(v.cpu, &TV_CPU_EDGES)
        + 3 * level(v.mem, &TV_MEM_EDGES)
        + 9 * level(v.disk, &TV_DISK_EDGES)
        + 27 * level(v.net, &TV_NET_EDGES)
}

/// T_compound's value: each component as a fraction of what `node` has.
/// Cores the worker did not report are taken as its slots (Hadoop's one
/// slot per core); an unreported memory total reads as empty.
fn compound_level(v: TaskVector, node: &NodeView, view: &ClusterView) -> usize {
    let cores = if node.resources.cores() > 0 {
        node.resources.cores() as f64
    } else {
        (node.map_slots + node.reduce_slots).max(1) as f64
    };
    let mem = if node.resources.mem_total_bytes > 0 {
        v.mem / node.resources.mem_total_bytes as f64
    } else {
        0.0
    };
    let net_cap = if view.rack_bandwidth.is_finite() && view.rack_bandwidth > 0.0 {
        view.rack_bandwidth
    } else {
        GIGABIT_BPS
    };
    level(v.cpu / cores, &COMPOUND_EDGES)
        + 4 * level(mem, &COMPOUND_EDGES)
        + 16 * level(v.disk / DISK_BPS, &COMPOUND_EDGES)
        + 64 * level(v.net / net_cap, &COMPOUND_EDGES)
}

impl Scheduler for CompatNb {
    fn name(&self) -> &'static str {
        NAME
    }

    fn assign(&mut self, view: &ClusterView, trigger: Trigger) -> Vec<Assignment> {
        let Some(node) = trigger.node().and_then(|n| view.node(n)) else {
            return vec![];
        };
        // Only a heartbeat brings a new resource sample; a task-finished
        // trigger shows the same one again.
        if matches!(trigger, Trigger::Heartbeat(_)) {
            self.observe(view, node);
        }
        let types: HashMap<u64, &str> = view.jobs.iter().map(|j| (j.id, j.name.as_str())).collect();
        let order = view.jobs_fifo();
        let mut out = self.assign_maps(view, node, &order, &types);
        out.extend(assign_reduces(view, node, &order));
        out
    }

    fn on_task_finished(&mut self, view: &ClusterView, r: &TaskReport) {
        // A failed attempt's figures stop short: they would understate.
        if r.succeeded && !r.job_name.is_empty() {
            if let Some(x) = TaskVector::from_report(r) {
                let vectors = match r.task.kind {
                    TaskKind::Map => &mut self.map_vectors,
                    TaskKind::Reduce => &mut self.reduce_vectors,
                };
                if let Some(l) = vectors.get_mut(&r.job_name) {
                    l.update(x);
                } else if vectors.len() < MAX_TYPES {
                    vectors.insert(
                        r.job_name.clone(),
                        Learnt {
                            records: 1,
                            vector: x,
                        },
                    );
                }
            }
        }
        let Some(ds) = self.decisions.get_mut(&r.node) else {
            return;
        };
        let Some(pos) = ds.iter().position(|d| d.task == r.task) else {
            return;
        };
        let mut d = ds.swap_remove(pos);
        if ds.is_empty() {
            self.decisions.remove(&r.node);
        }
        if d.observed == 0 {
            // Shorter than a heartbeat: judged on the node as it is now.
            if let Some(n) = view.node(&r.node) {
                d.observed = 1;
                d.overloaded = u32::from(self.params.overloaded(&n.resources));
            }
        }
        if d.observed > 0 {
            let good = d.overloaded.saturating_mul(2) < d.observed;
            self.classifier.train(&d.features, good);
        }
    }

    fn save_state(&self) -> Option<String> {
        let nothing = self.classifier.classes == [0, 0]
            && self.map_vectors.is_empty()
            && self.reduce_vectors.is_empty();
        if nothing {
            return None;
        }
        let s = Saved {
            version: STATE_VERSION,
            classifier: self.classifier.clone(),
            map_vectors: self.map_vectors.clone(),
            reduce_vectors: self.reduce_vectors.clone(),
        };
        serde_json::to_string(&s).ok()
    }

    fn load_state(&mut self, state: &str) -> Result<(), String> {
        let s: Saved =
            serde_json::from_str(state).map_err(|e| format!("not a {NAME} state: {e}"))?;
        if s.version != STATE_VERSION {
            return Err(format!(
                "state version {} is not {STATE_VERSION}: its feature levels differ",
                s.version
            ));
        }
        s.classifier.validate()?;
        for (kind, vectors) in [("map", &s.map_vectors), ("reduce", &s.reduce_vectors)] {
            if vectors.len() > MAX_TYPES {
                return Err(format!(
                    "{} {kind} job types, at most {MAX_TYPES}",
                    vectors.len()
                ));
            }
            for (t, l) in vectors {
                if l.records == 0 || !l.vector.is_valid() {
                    return Err(format!("{kind} vector of {t:?} is invalid: {l:?}"));
                }
            }
        }
        self.classifier = s.classifier;
        self.map_vectors = s.map_vectors;
        self.reduce_vectors = s.reduce_vectors;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{self, view};

    const GB: u64 = 1 << 30;

    /// A lightly loaded four-core node with four map slots, in rack r1.
    fn node(name: &str, free: u32) -> NodeView {
        NodeView {
            map_slots: 4,
            resources: Resources {
                cpu_per_core_pct: vec![0.0; 4],
                cpu_pct: 10.0,
                mem_used_bytes: GB,
                mem_total_bytes: 8 * GB,
                ..Default::default()
            },
            ..testkit::node(name, "r1", free)
        }
    }

    fn tid(job: u64, kind: TaskKind, index: u32) -> TaskId {
        TaskId { job, kind, index }
    }

    /// Map `index` of `job`, reading block `job * 1000 + index`, uncached.
    fn map(job: u64, index: u32, replicas: &[&str]) -> PendingTask {
        testkit::map(job, index, job * 1000 + index as u64, replicas, &[])
    }

    /// A job of type `name`: eight maps and a reduce.
    fn job(id: u64, name: &str) -> JobView {
        JobView {
            name: name.into(),
            reduces_total: 1,
            ..testkit::job(id, 8)
        }
    }

    fn running(job: u64, index: u32) -> RunningTask {
        RunningTask {
            id: tid(job, TaskKind::Map, index),
            started: 0.0,
        }
    }

    fn report(task: TaskId, job_name: &str, node: &str) -> TaskReport {
        TaskReport {
            task,
            job_name: job_name.into(),
            node: node.into(),
            locality: Locality::NodeLocal,
            runtime_s: 10.0,
            succeeded: true,
            bytes_read: 100_000_000,
            read_s: 0.5,
            bytes_written: 50_000_000,
            cpu_s: 9.0,
            peak_mem_bytes: 200 << 20,
        }
    }

    fn params(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// The paper has no worked example: this one is computed by hand from
    /// eq. 3-5 with add-one smoothing. Two good decisions with features
    /// (φ=5, Σ=node-local, T_v=40, T_c=0), one bad with (φ=5, Σ=off-rack,
    /// T_v=40, T_c=3); asked about (5, node-local, 40, 0):
    ///
    /// P(good) = 3/5, P(bad) = 2/5;
    /// good: Φ 3/18, Σ 3/7, T_v 3/83, T_c 3/258;
    /// bad:  Φ 2/17, Σ 1/6, T_v 2/82, T_c 1/257.
    #[test]
    fn posterior_matches_a_hand_computed_example() {
        let mut nb = NaiveBayes::default();
        let nl = Locality::NodeLocal as usize;
        let off = Locality::OffRack as usize;
        nb.train(&[5, nl, 40, 0], true);
        nb.train(&[5, nl, 40, 0], true);
        nb.train(&[5, off, 40, 3], false);
        let g = 3.0 / 5.0 * (3.0 / 18.0) * (3.0 / 7.0) * (3.0 / 83.0) * (3.0 / 258.0);
        let b = 2.0 / 5.0 * (2.0 / 17.0) * (1.0 / 6.0) * (2.0 / 82.0) * (1.0 / 257.0);
        let want = g / (g + b);
        let got = nb.posterior_good(&[5, nl, 40, 0]);
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        // By hand: g = 1.8012e-5, b = 7.443e-7, g / (g + b) = 0.96032.
        assert!((got - 0.96032).abs() < 1e-5, "{got}");
        // The bad decision's features lean the other way.
        assert!(nb.posterior_good(&[5, off, 40, 3]) < 0.5);
        nb.validate().unwrap();
    }

    #[test]
    fn untrained_classifier_is_even_and_accepts_at_the_default() {
        let nb = NaiveBayes::default();
        assert_eq!(nb.posterior_good(&[0, 0, 0, 0]), 0.5);
        assert_eq!(nb.posterior_good(&[15, 4, 80, 255]), 0.5);
        assert!(nb.posterior_good(&[3, 1, 2, 0]) >= Params::default().min_accept);
    }

    #[test]
    fn incremental_training_moves_the_posterior() {
        let mut nb = NaiveBayes::default();
        let f = [1, 1, 13, 21];
        let g = [1, 1, 13, 63];
        let mut last = nb.posterior_good(&f);
        for _ in 0..5 {
            nb.train(&f, true);
            let p = nb.posterior_good(&f);
            assert!(p > last, "each good label raises it: {p} after {last}");
            last = p;
        }
        // Bad labels on another compound value pull that value down, and
        // (sharing the other features) pull `f` down a little too.
        let before_g = nb.posterior_good(&g);
        let mut last_g = before_g;
        for _ in 0..5 {
            nb.train(&g, false);
            let p = nb.posterior_good(&g);
            assert!(p < last_g);
            last_g = p;
        }
        assert!(last_g < 0.5);
        assert!(nb.posterior_good(&f) < last);
        assert!(nb.posterior_good(&f) > 0.5);
        assert_eq!(nb.classes, [5, 5]);
    }

    #[test]
    fn overload_rules_label() {
        let p = Params::default();
        let mut r = node("a", 1).resources;
        assert!(!p.overloaded(&r));
        r.cpu_pct = 90.0;
        assert!(!p.overloaded(&r), "at the threshold is not over it");
        r.cpu_pct = 95.0;
        assert!(p.overloaded(&r));
        r.cpu_pct = 10.0;
        r.mem_used_bytes = r.mem_total_bytes / 100 * 95;
        assert!(p.overloaded(&r));
        r.mem_total_bytes = 0;
        assert!(!p.overloaded(&r), "an unreported total shows nothing");
        // The run-queue rule, off by default.
        let mut r = node("a", 1).resources;
        r.load1 = 9.0;
        assert!(!p.overloaded(&r));
        let q = CompatNb::from_params(&params(&[("load_max", "2"), ("cpu_max", "off")]))
            .unwrap()
            .params;
        assert!(q.overloaded(&r), "9 on 4 cores is over 2 per core");
        r.load1 = 8.0;
        r.cpu_pct = 100.0;
        assert!(!q.overloaded(&r), "cpu rule off");
    }

    #[test]
    fn decisions_are_labelled_by_the_nodes_observed_load() {
        let mut s = CompatNb::default();
        let mut v = view(
            vec![node("a", 1)],
            vec![job(1, "wc")],
            vec![map(1, 0, &["a"])],
        );
        let a = s.assign(&v, Trigger::Heartbeat("a".into()));
        assert_eq!(a.len(), 1);
        // Three heartbeats while it runs: overloaded in two of them.
        v.pending.clear();
        v.nodes[0].running = vec![running(1, 0)];
        v.nodes[0].free_map_slots = 0;
        for (t, cpu) in [(1.0, 99.0), (2.0, 20.0), (3.0, 99.0)] {
            v.now = t;
            v.nodes[0].resources.cpu_pct = cpu;
            s.assign(&v, Trigger::Heartbeat("a".into()));
        }
        assert_eq!(s.decisions["a"][0].observed, 3);
        assert_eq!(s.decisions["a"][0].overloaded, 2);
        v.nodes[0].running.clear();
        s.on_task_finished(&v, &report(a[0].task, "wc", "a"));
        assert_eq!(s.classifier.classes, [0, 1]);
        assert!(s.decisions.is_empty());

        // A short task, finished before any heartbeat: the node as it is.
        let mut v = view(
            vec![node("a", 1)],
            vec![job(1, "wc")],
            vec![map(1, 1, &["a"])],
        );
        let a = s.assign(&v, Trigger::Heartbeat("a".into()));
        assert_eq!(a.len(), 1);
        v.nodes[0].resources.cpu_pct = 30.0;
        s.on_task_finished(&v, &report(a[0].task, "wc", "a"));
        assert_eq!(s.classifier.classes, [1, 1]);
    }

    #[test]
    fn vanished_attempts_are_forgotten_untrained() {
        let mut s = CompatNb::default();
        let mut v = view(
            vec![node("a", 1)],
            vec![job(1, "wc")],
            vec![map(1, 0, &["a"])],
        );
        assert_eq!(s.assign(&v, Trigger::Heartbeat("a".into())).len(), 1);
        v.now = 1.0;
        v.pending.clear();
        // Not running on the next heartbeat: killed or lost.
        s.assign(&v, Trigger::Heartbeat("a".into()));
        assert!(s.decisions.is_empty());
    }

    /// Trains the classifier the way the cluster would: node `a` kept 3-4
    /// cpu-heavy maps and was overloaded, `b` ran one and was fine. While
    /// training it accepts everything, so that both nodes keep producing
    /// labels; then it gets the default threshold back.
    fn trained() -> CompatNb {
        let mut s = CompatNb::default();
        s.params.min_accept = 0.0;
        for round in 0..10u32 {
            for (name, busy, cpu) in [("a", 3u32, 99.0), ("b", 0, 20.0)] {
                let mut n = node(name, 1);
                n.running = (0..busy).map(|i| running(9, 100 + i)).collect();
                let index = round * 2 + u32::from(name == "b");
                let mut v = view(
                    vec![n],
                    vec![job(1, "wc"), job(9, "wc")],
                    vec![map(1, index, &[name])],
                );
                v.now = round as f64 * 10.0;
                let a = s.assign(&v, Trigger::Heartbeat(name.into()));
                assert_eq!(a.len(), 1);
                v.now += 1.0;
                v.pending.clear();
                v.nodes[0].running.push(running(1, index));
                v.nodes[0].resources.cpu_pct = cpu;
                s.assign(&v, Trigger::Heartbeat(name.into()));
                s.on_task_finished(&v, &report(a[0].task, "wc", name));
            }
        }
        s.params = Params::default();
        s
    }

    #[test]
    fn an_overloaded_node_gets_nothing_while_a_light_one_does() {
        let mut s = trained();
        assert_eq!(s.classifier.classes, [10, 10]);
        let mut heavy = node("a", 1);
        heavy.running = (0..3).map(|i| running(9, 100 + i)).collect();
        let light = node("b", 1);
        let v = view(
            vec![heavy, light],
            vec![job(1, "wc"), job(9, "wc")],
            vec![map(1, 50, &["a", "b"]), map(1, 51, &["a", "b"])],
        );
        assert!(s.assign(&v, Trigger::Heartbeat("a".into())).is_empty());
        assert_eq!(s.assign(&v, Trigger::Heartbeat("b".into())).len(), 1);
    }

    #[test]
    fn compound_grows_within_a_heartbeat() {
        // Three free slots on a light node: the classifier learnt that a
        // node with three tasks' worth is overloaded, so it stops there.
        let mut s = trained();
        let mut n = node("b", 4);
        n.free_map_slots = 4;
        let v = view(
            vec![n],
            vec![job(1, "wc"), job(9, "wc")],
            (60..64).map(|i| map(1, i, &["b"])).collect(),
        );
        let a = s.assign(&v, Trigger::Heartbeat("b".into()));
        // 0.9 cores each: 1.8 of 4 is under half, 2.7 is not.
        assert_eq!(a.len(), 3, "{a:?}");
    }

    #[test]
    fn an_idle_node_still_gets_the_most_probable_task() {
        let mut s = CompatNb::from_params(&params(&[("min_accept", "0.99")])).unwrap();
        let v = view(
            vec![node("a", 2), node("b", 2)],
            vec![job(1, "wc"), job(2, "wc")],
            vec![map(1, 0, &["b"]), map(2, 0, &["a"])],
        );
        let a = s.assign(&v, Trigger::Heartbeat("a".into()));
        // Nothing reaches 0.99; the node runs nothing, so one task anyway:
        // untrained, every posterior is 0.5, and FIFO order breaks the tie.
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].task.job, 1);
        // A busy node gets nothing under the same threshold.
        let mut busy = node("a", 2);
        busy.running = vec![running(1, 9)];
        let v = view(
            vec![busy, node("b", 2)],
            vec![job(1, "wc")],
            vec![map(1, 0, &["b"])],
        );
        assert!(s.assign(&v, Trigger::Heartbeat("a".into())).is_empty());
    }

    #[test]
    fn fifo_first_passing_job_and_its_most_compatible_task() {
        let mut s = CompatNb::default();
        // Teach it that off-rack placements are bad and node-local good.
        let nl = Locality::NodeLocal as usize;
        let off = Locality::OffRack as usize;
        let phi = phi_level(&node("a", 1).resources);
        let tv = tv_level(MAP_PRIOR);
        for _ in 0..5 {
            s.classifier.train(&[phi, nl, tv, 0], true);
            s.classifier.train(&[phi, off, tv, 0], false);
        }
        let mut far = node("c", 1);
        far.rack = "r2".into();
        let v = view(
            vec![node("a", 1), far],
            vec![job(1, "wc"), job(2, "wc")],
            // Job 1 only has an off-rack task for a; job 2 a local one.
            vec![map(1, 0, &["c"]), map(2, 5, &["c"]), map(2, 6, &["a"])],
        );
        let a = s.assign(&v, Trigger::Heartbeat("a".into()));
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].task, tid(2, TaskKind::Map, 6));
    }

    #[test]
    fn avoid_list_and_reduces() {
        let mut s = CompatNb::default();
        let mut t = map(1, 0, &["a"]);
        t.avoid = vec!["a".into()];
        let reduce = PendingTask {
            id: tid(1, TaskKind::Reduce, 0),
            kind: TaskKind::Reduce,
            block: None,
            replicas: vec![],
            ..map(1, 0, &[])
        };
        let v = view(
            vec![node("a", 2), node("b", 2)],
            vec![job(1, "wc")],
            vec![t, reduce],
        );
        let a = s.assign(&v, Trigger::Heartbeat("a".into()));
        assert_eq!(
            a,
            vec![Assignment {
                task: tid(1, TaskKind::Reduce, 0),
                node: "a".into()
            }]
        );
        assert!(s.assign(&v, Trigger::JobAdded(1)).is_empty());
        // Alone in the cluster, the avoided node is better than nothing.
        let mut t = map(1, 0, &["a"]);
        t.avoid = vec!["a".into()];
        let v = view(vec![node("a", 2)], vec![job(1, "wc")], vec![t]);
        assert_eq!(s.assign(&v, Trigger::Heartbeat("a".into())).len(), 1);
    }

    #[test]
    fn task_vectors_are_learnt_from_reports() {
        let mut s = CompatNb::default();
        assert_eq!(s.task_vector(Some("wc"), TaskKind::Map), MAP_PRIOR);
        assert_eq!(s.task_vector(None, TaskKind::Reduce), REDUCE_PRIOR);
        let v = view(vec![node("a", 1)], vec![], vec![]);
        s.on_task_finished(&v, &report(tid(1, TaskKind::Map, 0), "wc", "a"));
        let got = s.task_vector(Some("wc"), TaskKind::Map);
        assert_eq!(
            got,
            TaskVector {
                cpu: 0.9,
                mem: (200 << 20) as f64,
                disk: 15e6,
                net: 0.0
            }
        );
        // A remote read loads the network instead; the mean moves halfway.
        let mut r = report(tid(1, TaskKind::Map, 1), "wc", "a");
        r.locality = Locality::RackLocal;
        s.on_task_finished(&v, &r);
        let got = s.task_vector(Some("wc"), TaskKind::Map);
        assert!(
            (got.disk - 10e6).abs() < 1e-6 && (got.net - 5e6).abs() < 1e-6,
            "{got:?}"
        );
        // Reduces read their shuffle; failed attempts and zero runtimes
        // teach nothing.
        s.on_task_finished(&v, &report(tid(1, TaskKind::Reduce, 0), "wc", "a"));
        assert_eq!(s.task_vector(Some("wc"), TaskKind::Reduce).net, 10e6);
        let mut f = report(tid(2, TaskKind::Map, 0), "sort", "a");
        f.succeeded = false;
        s.on_task_finished(&v, &f);
        f.succeeded = true;
        f.runtime_s = 0.0;
        s.on_task_finished(&v, &f);
        assert_eq!(s.task_vector(Some("sort"), TaskKind::Map), MAP_PRIOR);
    }

    #[test]
    fn compound_sums_running_tasks_by_job_type() {
        let mut s = CompatNb::default();
        let v = view(vec![node("a", 1)], vec![], vec![]);
        s.on_task_finished(&v, &report(tid(1, TaskKind::Map, 0), "wc", "a"));
        let mut n = node("a", 1);
        n.running = vec![
            running(1, 1),
            running(1, 2),
            RunningTask {
                id: tid(7, TaskKind::Reduce, 0),
                started: 0.0,
            },
        ];
        let types: HashMap<u64, &str> = [(1, "wc")].into_iter().collect();
        let c = s.compound(&n, &types);
        let wc = s.task_vector(Some("wc"), TaskKind::Map);
        assert!((c.cpu - (2.0 * wc.cpu + REDUCE_PRIOR.cpu)).abs() < 1e-9);
        assert!((c.net - REDUCE_PRIOR.net).abs() < 1e-9);
        // 2.8 cores of 4: 0.7, the second level.
        assert_eq!(compound_level(c, &n, &v) % 4, 1);
    }

    #[test]
    fn state_round_trips() {
        let s = trained();
        let text = s.save_state().expect("it learnt something");
        let mut t = CompatNb::default();
        assert!(t.save_state().is_none());
        t.load_state(&text).unwrap();
        assert_eq!(t.classifier, s.classifier);
        assert_eq!(t.map_vectors, s.map_vectors);
        assert_eq!(t.reduce_vectors, s.reduce_vectors);
        assert_eq!(t.save_state().unwrap(), text);
    }

    #[test]
    fn corrupt_state_is_refused_and_changes_nothing() {
        let s = trained();
        let text = s.save_state().unwrap();
        let mut t = trained();
        let before = t.classifier.clone();
        let mut bad: Vec<String> = vec![
            "".into(),
            "{}".into(),
            text.replacen("\"version\":1", "\"version\":2", 1),
            text.replacen("\"classes\":[10,10]", "\"classes\":[11,10]", 1),
            text.replacen("\"classes\":[10,10]", "\"classes\":[10,10],\"x\":1", 1),
            text.replacen("\"records\":", "\"records\":-", 1),
            text.replacen("\"cpu\":", "\"cpu\":-", 1),
        ];
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["classifier"]["counts"][1].as_array_mut().unwrap().pop();
        bad.push(v.to_string());
        for b in bad {
            assert_ne!(b, text);
            assert!(t.load_state(&b).is_err(), "accepted {b:.80}");
            assert_eq!(t.classifier, before);
        }
    }

    #[test]
    fn parameters_are_validated() {
        let s = CompatNb::from_params(&BTreeMap::new()).unwrap();
        assert_eq!(s.params, Params::default());
        let s = CompatNb::from_params(&params(&[
            ("min_accept", "0.7"),
            ("cpu_max", "80"),
            ("mem_max", "off"),
            ("load_max", "1.5"),
        ]))
        .unwrap();
        assert_eq!(
            s.params,
            Params {
                min_accept: 0.7,
                cpu_max: Some(80.0),
                mem_max: None,
                load_max: Some(1.5)
            }
        );
        for (k, v) in [
            ("min_accept", "1.5"),
            ("min_accept", "x"),
            ("min_accept", "NaN"),
            ("cpu_max", "0"),
            ("cpu_max", "101"),
            ("mem_max", "-1"),
            ("load_max", "0"),
        ] {
            assert!(
                matches!(
                    CompatNb::from_params(&params(&[(k, v)])),
                    Err(SchedError::BadValue { .. })
                ),
                "{k}={v}"
            );
        }
        assert!(matches!(
            CompatNb::from_params(&params(&[("bogus", "1")])),
            Err(SchedError::UnknownParam { .. })
        ));
        // Through the registry, as the master config selects it.
        let mut spec = SchedulerSpec::new(NAME);
        spec.params = params(&[("min_accept", "0.6")]);
        assert_eq!(build(&spec).unwrap().name(), NAME);
        spec.params = params(&[("min_accept", "2")]);
        assert!(build(&spec).is_err());
    }
}
