//! Adaptive Cache Local scheduling (ACL), the cache-aware baseline of the
//! CLQLMRS paper (Ghazali, Adabi, Rezaee, Down, Movaghar, "CLQLMRS:
//! improving cache locality in MapReduce job scheduling using Q-learning",
//! J. Cloud Computing 11:45, 2022). Its section "Related work" describes ACL
//! (its reference [12]): the scheduler skips a job's task up to C times to
//! obtain cache locality, C being tied to the current percentage of the
//! job's input that is cached; "similar to Delay [13], to prevent
//! starvation", once the task has been skipped D times it is launched on a
//! node holding its input. "CLQLMRS evaluation", "Impact of data block size
//! on local tasks", fixes C = 3 for the rest of the experiments ("a
//! reasonable trade-off between scheduling overhead and cache hit ratio"),
//! and the same section notes that "the number of skips is set to be
//! proportional to the percentage of cached input data for the job".
//!
//! How C adapts: on every offer, job j may skip `C_j = ⌈C · f_j⌉` times for
//! cache locality, where `f_j` is the fraction of the input bytes of j's
//! pending maps that some node holds in its cache (task counts when the
//! sizes are all zero). A fully cached job waits the full C, a job with
//! nothing cached does not wait for the cache at all (C_j = 0), and any
//! cached input buys at least one skip. Only pending maps count: finished
//! maps will not be read again, so they cannot make waiting worthwhile.
//!
//! What D buys: the paper's text says that once the task has been skipped D
//! times "the task is launched on a node that contains input data and has a
//! free slot", so the D skips are spent waiting for data locality, and only
//! after them does the job go to the next level down, rack locality, as
//! delay scheduling, which the text names as the model, goes from node to
//! rack. (An earlier version of ours accepted any map, off-rack included,
//! as soon as the D skips ran out.)
//!
//! Where the paper is silent, this project's choices:
//! - The skips run in sequence, as delay scheduling's locality levels do:
//!   a job first accepts only cache-local maps; after C_j skips it accepts
//!   node-local ones too; after D further skips, cache-rack- and rack-local
//!   ones; after D more, any map (the best level the node offers): delay
//!   scheduling's rack wait, which the paper does not size, set to D as our
//!   `delay` sets its rack wait to its node wait. A launch sets the job's
//!   level to the level launched, so a job that gets a cache-local map
//!   waits for the cache again, one that gets a node-local map waits D
//!   skips before going to another node of the rack, and one that went
//!   remote keeps launching until a better launch resets it.
//! - A skip is one heartbeat offer of a node with free map slots to a job
//!   whose best map on that node is not acceptable yet; a job is skipped at
//!   most once per heartbeat (its best map on the node only gets worse as
//!   the heartbeat's slots fill).
//! - D defaults to 3, equal to the paper's C: the paper tunes only C.
//! - Jobs are offered slots in FIFO order; a job with no map for the node
//!   (or only maps that failed there, while other nodes exist) is passed over
//!   without a skip. Generators are local anywhere (`ClusterView::locality`).
//! - ACL's cache-affinity eviction is the workers' cache policy, not the
//!   scheduler's, and is not modelled here. Reduces go through
//!   [`assign_reduces`].

use super::error::SchedError;
use super::*;
use std::collections::{BTreeMap, HashMap, HashSet};

/// The paper's C (section "Impact of data block size on local tasks").
pub const DEFAULT_C: u32 = 3;
/// D, the skips spent waiting for data locality (and again for rack
/// locality): the paper gives none; the same as C.
pub const DEFAULT_D: u32 = 3;

/// The locality a job currently accepts, loosened by skips.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Level {
    /// Only cache-local maps.
    #[default]
    Cache,
    /// Cache- or node-local maps.
    Node,
    /// Any map whose input is in the node's rack (cached or stored).
    Rack,
    /// Any map.
    Any,
}

impl Level {
    fn of(l: Locality) -> Level {
        match l {
            Locality::CacheLocal => Level::Cache,
            Locality::NodeLocal => Level::Node,
            Locality::CacheRackLocal | Locality::RackLocal => Level::Rack,
            Locality::OffRack => Level::Any,
        }
    }
}

/// A job's waiting state: delay scheduling's (level, skip count) pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct JobWait {
    /// The worst locality the job takes now.
    pub level: Level,
    /// Skips since the job last launched a map or loosened its level.
    pub skips: u32,
}

/// The `acl` policy.
#[derive(Debug)]
pub struct Acl {
    /// Skips a fully cached job waits for a cache-local slot.
    c: u32,
    /// Skips a job waits for a node-local slot once it accepts one, and
    /// then for a rack-local one.
    d: u32,
    /// Per job: what it accepts now and how long it has waited. Absent:
    /// never skipped nor launched, the same as the default.
    waits: HashMap<u64, JobWait>,
}

impl Default for Acl {
    fn default() -> Self {
        Acl::new(DEFAULT_C, DEFAULT_D)
    }
}

impl Acl {
    pub fn new(c: u32, d: u32) -> Self {
        Acl {
            c,
            d,
            waits: HashMap::new(),
        }
    }

    pub fn from_params(p: &BTreeMap<String, String>) -> Result<Self, SchedError> {
        let mut acl = Acl::default();
        for (k, v) in p {
            let count = || -> Result<u32, SchedError> {
                v.trim().parse::<u32>().map_err(|_| SchedError::BadValue {
                    name: "acl".into(),
                    param: k.clone(),
                    value: v.clone(),
                    why: "expected a whole number of skips >= 0".into(),
                })
            };
            match k.as_str() {
                "c" => acl.c = count()?,
                "d" => acl.d = count()?,
                _ => {
                    return Err(SchedError::UnknownParam {
                        name: "acl".into(),
                        param: k.clone(),
                        takes: "c, d".into(),
                    })
                }
            }
        }
        Ok(acl)
    }

    /// C_j for a job whose pending input is `cached_fraction` cached.
    pub fn cache_skips(&self, cached_fraction: f64) -> u32 {
        let f = cached_fraction.clamp(0.0, 1.0);
        // The epsilon keeps 3 × (1/3) from rounding up to 2.
        (self.c as f64 * f - 1e-9).ceil().max(0.0) as u32
    }

    /// The job's waiting state, for tests and the UI.
    pub fn wait(&self, job: u64) -> JobWait {
        self.waits.get(&job).copied().unwrap_or_default()
    }

    /// The job's level after the skips it has had, given its C_j.
    fn loosen(&self, w: &mut JobWait, c_j: u32) {
        if w.level == Level::Cache && w.skips >= c_j {
            *w = JobWait {
                level: Level::Node,
                skips: 0,
            };
        }
        if w.level == Level::Node && w.skips >= self.d {
            *w = JobWait {
                level: Level::Rack,
                skips: 0,
            };
        }
        if w.level == Level::Rack && w.skips >= self.d {
            *w = JobWait {
                level: Level::Any,
                skips: 0,
            };
        }
    }

    /// Maps for `node`, jobs offered in `order`.
    pub fn pick(&mut self, view: &ClusterView, node: &NodeView, order: &[u64]) -> Vec<Assignment> {
        let live: HashSet<u64> = view.jobs.iter().map(|j| j.id).collect();
        self.waits.retain(|j, _| live.contains(j));
        if node.free_map_slots == 0 {
            return vec![];
        }
        let mut cands = Candidates::new(view, node);
        let fraction = |job: &u64| -> f64 {
            let i = cands.input(*job);
            if i.bytes > 0 {
                i.cached_bytes as f64 / i.bytes as f64
            } else if i.maps > 0 {
                i.cached_maps as f64 / i.maps as f64
            } else {
                0.0
            }
        };
        let fractions: HashMap<u64, f64> = order.iter().map(|j| (*j, fraction(j))).collect();
        let mut skipped: HashSet<u64> = HashSet::new();
        let mut out = Vec::new();
        let mut free = node.free_map_slots;
        'slots: while free > 0 {
            for job in order {
                if skipped.contains(job) {
                    continue;
                }
                let Some((level, id)) = cands.peek(*job) else {
                    continue;
                };
                let c_j = self.cache_skips(fractions[job]);
                let mut w = self.wait(*job);
                self.loosen(&mut w, c_j);
                let best = Level::of(level);
                if best <= w.level {
                    cands.take(*job, id);
                    self.waits.insert(
                        *job,
                        JobWait {
                            level: best,
                            skips: 0,
                        },
                    );
                    out.push(Assignment {
                        task: id,
                        node: node.name.clone(),
                    });
                    free -= 1;
                    continue 'slots;
                }
                w.skips += 1;
                self.waits.insert(*job, w);
                skipped.insert(*job);
            }
            break;
        }
        out
    }
}

/// A job's maps that may run on the node, by `(locality, index)`.
type Sorted = Vec<(Locality, u32, TaskId)>;

/// Each job's maps that may run on the node, best `(locality, index)`
/// first, and its pending input: from the locality index when the view has
/// one, else from one scan of `pending`.
enum Candidates<'v> {
    Scan {
        /// Per job, sorted, and how many of them this heartbeat launched.
        lists: HashMap<u64, (Sorted, usize)>,
        input: HashMap<u64, JobInput>,
    },
    Indexed {
        view: &'v ClusterView,
        node: &'v NodeView,
        taken: HashSet<TaskId>,
    },
}

impl<'v> Candidates<'v> {
    fn new(view: &'v ClusterView, node: &'v NodeView) -> Self {
        if view.locality_index().is_some() {
            return Candidates::Indexed {
                view,
                node,
                taken: HashSet::new(),
            };
        }
        let mut lists: HashMap<u64, (Sorted, usize)> = HashMap::new();
        let mut input: HashMap<u64, JobInput> = HashMap::new();
        for t in view.pending.iter().filter(|t| t.kind == TaskKind::Map) {
            let e = input.entry(t.job).or_default();
            e.bytes += t.input_bytes;
            e.maps += 1;
            if !t.cached_on.is_empty() {
                e.cached_bytes += t.input_bytes;
                e.cached_maps += 1;
            }
            if !t.avoids(&node.name, &view.nodes) {
                lists
                    .entry(t.job)
                    .or_default()
                    .0
                    .push((view.locality(t, node), t.id.index, t.id));
            }
        }
        for c in lists.values_mut() {
            c.0.sort_unstable();
        }
        Candidates::Scan { lists, input }
    }

    /// The job's pending maps, cached or not (for f_j).
    fn input(&self, job: u64) -> JobInput {
        match self {
            Candidates::Scan { input, .. } => input.get(&job).copied().unwrap_or_default(),
            Candidates::Indexed { view, .. } => view
                .locality_index()
                .map(|ix| ix.job_input(job))
                .unwrap_or_default(),
        }
    }

    /// The job's best map not launched yet.
    fn peek(&self, job: u64) -> Option<(Locality, TaskId)> {
        match self {
            Candidates::Scan { lists, .. } => {
                let (list, at) = lists.get(&job)?;
                list.get(*at).map(|&(l, _, id)| (l, id))
            }
            Candidates::Indexed { view, node, taken } => view
                .best_map(job, node, Locality::OffRack, |t| {
                    !(taken.contains(&t.id) || t.avoids(&node.name, &view.nodes))
                })
                .map(|(l, t)| (l, t.id)),
        }
    }

    /// Launches the job's best map, `id`.
    fn take(&mut self, job: u64, id: TaskId) {
        match self {
            Candidates::Scan { lists, .. } => {
                if let Some((_, at)) = lists.get_mut(&job) {
                    *at += 1;
                }
            }
            Candidates::Indexed { taken, .. } => {
                taken.insert(id);
            }
        }
    }
}

impl Scheduler for Acl {
    fn name(&self) -> &'static str {
        "acl"
    }

    fn assign(&mut self, view: &ClusterView, trigger: Trigger) -> Vec<Assignment> {
        let Some(node) = trigger.node().and_then(|n| view.node(n)) else {
            return vec![];
        };
        let order = view.jobs_fifo();
        let mut out = self.pick(view, node, &order);
        out.extend(assign_reduces(view, node, &order));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{self, job, node};

    /// Map `index` of `job`, reading block `100 * job + index`.
    fn map(job: u64, index: u32, replicas: &[&str], cached: &[&str]) -> PendingTask {
        testkit::map(job, index, 100 * job + index as u64, replicas, cached)
    }

    /// a, b in rack r1; c in r2; one free map slot each; a job of three
    /// maps for each job in `pending`.
    fn view(pending: Vec<PendingTask>) -> ClusterView {
        let mut jobs: Vec<u64> = pending.iter().map(|t| t.job).collect();
        jobs.dedup();
        testkit::view(
            vec![node("a", "r1", 1), node("b", "r1", 1), node("c", "r2", 1)],
            jobs.into_iter().map(|j| job(j, 3)).collect(),
            pending,
        )
    }

    /// Heartbeats from `n` until something is assigned; the skips before.
    fn skips_until_launch(acl: &mut Acl, v: &ClusterView, n: &str) -> (u32, Vec<Assignment>) {
        for skips in 0..100 {
            let a = acl.assign(v, Trigger::Heartbeat(n.into()));
            if !a.is_empty() {
                return (skips, a);
            }
        }
        panic!("never launched");
    }

    #[test]
    fn cache_skips_follow_the_cached_fraction() {
        let acl = Acl::default();
        assert_eq!(acl.cache_skips(1.0), 3);
        assert_eq!(acl.cache_skips(2.0 / 3.0), 2);
        assert_eq!(acl.cache_skips(1.0 / 3.0), 1);
        assert_eq!(acl.cache_skips(0.01), 1, "any cached input buys one skip");
        assert_eq!(acl.cache_skips(0.0), 0);
        assert_eq!(Acl::new(5, 3).cache_skips(0.5), 3);
    }

    #[test]
    fn fully_cached_job_waits_c_skips_then_takes_node_local() {
        // Job 1's map is on a's disk and in b's cache: all its input is
        // cached, so a is refused C = 3 times, then gets it node-local.
        let v = view(vec![map(1, 0, &["a"], &["b"])]);
        let mut acl = Acl::default();
        let (skips, a) = skips_until_launch(&mut acl, &v, "a");
        assert_eq!(skips, 3);
        assert_eq!(a[0].task.index, 0);
        assert_eq!(acl.wait(1).level, Level::Node);
    }

    #[test]
    fn cache_local_launches_at_once() {
        let v = view(vec![map(1, 0, &["a"], &["b"])]);
        let mut acl = Acl::default();
        let a = acl.assign(&v, Trigger::Heartbeat("b".into()));
        assert_eq!(a.len(), 1);
        assert_eq!(acl.wait(1), JobWait::default());
    }

    #[test]
    fn partly_cached_job_waits_less() {
        // One of three maps cached: C_j = ⌈3 · 1/3⌉ = 1.
        let v = view(vec![
            map(1, 0, &["a"], &["c"]),
            map(1, 1, &["a"], &[]),
            map(1, 2, &["a"], &[]),
        ]);
        let mut acl = Acl::default();
        let (skips, a) = skips_until_launch(&mut acl, &v, "a");
        assert_eq!(skips, 1);
        // The best the node offers: a node-local map, in index order.
        assert_eq!(a[0].task.index, 0);
    }

    #[test]
    fn uncached_job_waits_d_skips_for_data_locality_then_rack() {
        // Nothing cached: no cache wait. b shares a's rack: refused D = 2
        // times (the skips that buy data locality), then it gets the map
        // rack-local.
        let v = view(vec![map(1, 0, &["a"], &[])]);
        let mut acl = Acl::default();
        assert_eq!(acl.assign(&v, Trigger::Heartbeat("a".into())).len(), 1);
        let v = view(vec![map(1, 1, &["a"], &[])]);
        let mut acl = Acl::new(3, 2);
        let (skips, _) = skips_until_launch(&mut acl, &v, "b");
        assert_eq!(skips, 2, "d = 2");
        assert_eq!(acl.wait(1).level, Level::Rack);
    }

    #[test]
    fn d_skips_do_not_open_off_rack() {
        // c is in the other rack: after the D skips for data locality the
        // job accepts rack-local maps, not c's off-rack one; D more skips
        // for rack locality, then anything.
        let v = view(vec![map(1, 1, &["a"], &[])]);
        let mut acl = Acl::new(3, 2);
        for _ in 0..2 {
            assert!(acl.assign(&v, Trigger::Heartbeat("c".into())).is_empty());
        }
        assert!(
            acl.assign(&v, Trigger::Heartbeat("c".into())).is_empty(),
            "D skips buy rack locality next, not an off-rack launch"
        );
        assert_eq!(acl.wait(1).level, Level::Rack);
        let (skips, _) = skips_until_launch(&mut acl, &v, "c");
        assert_eq!(skips, 1, "2 + 2 skips in all");
        assert_eq!(acl.wait(1).level, Level::Any);
    }

    #[test]
    fn cached_job_waits_c_then_d_then_d_before_going_off_rack() {
        // Cached on b, stored on b: c (other rack) waits C + D + D = 9.
        let v = view(vec![map(1, 0, &["b"], &["b"])]);
        let mut acl = Acl::default();
        let (skips, _) = skips_until_launch(&mut acl, &v, "c");
        assert_eq!(skips, 9);
        // a, in b's rack, waits C + D = 6.
        let mut acl = Acl::default();
        let (skips, _) = skips_until_launch(&mut acl, &v, "a");
        assert_eq!(skips, 6);
    }

    #[test]
    fn a_skipped_job_lets_the_next_one_run() {
        // Job 1 waits for b's cache; job 2 has a map local to a.
        let v = view(vec![map(1, 0, &["a"], &["b"]), map(2, 0, &["a"], &[])]);
        let mut acl = Acl::default();
        let a = acl.assign(&v, Trigger::Heartbeat("a".into()));
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].task.job, 2);
        assert_eq!(acl.wait(1).skips, 1);
    }

    #[test]
    fn one_skip_per_heartbeat_whatever_the_free_slots() {
        let mut v = view(vec![map(1, 0, &["b"], &["b"]), map(1, 1, &["b"], &["b"])]);
        v.nodes[0].free_map_slots = 4;
        let mut acl = Acl::default();
        assert!(acl.assign(&v, Trigger::Heartbeat("a".into())).is_empty());
        assert_eq!(acl.wait(1).skips, 1);
    }

    #[test]
    fn launching_locally_restarts_the_wait() {
        // After C = 3 skips, a node-local launch sets the job's level to
        // node-local: the next rack-local offer waits D more skips, not C.
        let v = view(vec![map(1, 0, &["a"], &["c"]), map(1, 1, &["a"], &["c"])]);
        let mut acl = Acl::new(3, 2);
        let (skips, a) = skips_until_launch(&mut acl, &v, "a");
        assert_eq!((skips, a.len()), (3, 1));
        let v = view(vec![map(1, 1, &["a"], &["c"])]);
        assert_eq!(acl.wait(1).level, Level::Node);
        let (skips, _) = skips_until_launch(&mut acl, &v, "b");
        assert_eq!(skips, 2);
    }

    #[test]
    fn avoids_a_node_that_failed_the_task() {
        let mut t = map(1, 0, &["a"], &[]);
        t.avoid = vec!["a".into()];
        let v = view(vec![t]);
        let mut acl = Acl::new(0, 0);
        assert!(acl.assign(&v, Trigger::Heartbeat("a".into())).is_empty());
        assert_eq!(acl.assign(&v, Trigger::Heartbeat("b".into())).len(), 1);
    }

    #[test]
    fn generators_are_local_anywhere() {
        let mut t = map(1, 0, &[], &[]);
        t.block = None;
        let v = view(vec![t]);
        let mut acl = Acl::default();
        assert_eq!(acl.assign(&v, Trigger::Heartbeat("c".into())).len(), 1);
    }

    #[test]
    fn params() {
        let mut p = BTreeMap::new();
        p.insert("c".to_string(), "5".to_string());
        p.insert("d".to_string(), "0".to_string());
        let acl = Acl::from_params(&p).unwrap();
        assert_eq!((acl.c, acl.d), (5, 0));
        p.insert("d".to_string(), "-1".to_string());
        assert!(matches!(
            Acl::from_params(&p),
            Err(SchedError::BadValue { .. })
        ));
        p.insert("d".to_string(), "1.5".to_string());
        assert!(matches!(
            Acl::from_params(&p),
            Err(SchedError::BadValue { .. })
        ));
        let mut p = BTreeMap::new();
        p.insert("wait".to_string(), "1".to_string());
        assert!(matches!(
            Acl::from_params(&p),
            Err(SchedError::UnknownParam { .. })
        ));
    }
}
