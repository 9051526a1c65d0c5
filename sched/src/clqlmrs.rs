//! CLQLMRS (Ghazali, Adabi, Rezaee, Down, Movaghar, "CLQLMRS: improving
//! cache locality in MapReduce job scheduling using Q-learning", J. Cloud
//! Computing 11:45, 2022): a SARSA agent learns where to place map tasks so
//! that cache and data locality are high, with no waiting.
//!
//! The paper's MDP ("Design of CLQLMRS", "Modeling cache-locality
//! scheduling as an MDP"), as implemented here:
//! - States: CL, DL, CRL, DRL, NO, the locality the last placement reached:
//!   the five [`Locality`] levels. An episode starts in NO.
//! - Rewards (Table 2 and the five cases of "The CLQLMRS algorithm"):
//!   `R = w × N_level / N` with w = +1, +0.5, -0.25, -0.5, -1 for CL, DL,
//!   CRL, DRL, NO; `N_level` the tasks the step placed at that level (one:
//!   see "Reading the reward" below), and N the episode's tasks (the
//!   paper's M + R; the environment holds maps only, as a reduce has no
//!   input locality and is placed by [`assign_reduces`]). [`reward`].
//! - SARSA ("Q-learning and the SARSA algorithm", Algorithm 1):
//!   `Q(S,A) ← Q(S,A) + α[R + γQ(S',A') − Q(S,A)]`, with A' chosen
//!   ε-greedily from S' before the update; a terminal step uses Q(S',·) = 0.
//! - Parameters ("Implementing the proposed algorithm"): ε = 1, α = 0.1,
//!   γ = 0.95, ε multiplied by 0.999 after every 10 episodes; a zero
//!   Q-table; an episode ends when no task is left or no slot is free.
//! - Environment ("Environment implementation"): Init takes the number of
//!   tasks and a cache capacity and declares "the distribution of data and
//!   the location of cached data ... by using a random distribution of data
//!   blocks among DataNodes which remain fixed during all training
//!   episodes": here `env_tasks` blocks with the view's replication placed
//!   at random on the live cluster's nodes (their racks and map slots), a
//!   fraction `env_cached` of them cached on one holder, drawn once per
//!   cluster shape. Step places one task and returns the next state and
//!   reward; Reset "frees all slots" (every map slot of every node, busy
//!   or not in the live cluster) and unschedules every task.
//!
//! # Action encoding
//!
//! The paper's action is "assign task T_i to node W_j" (A: T → W) and it
//! leaves open how the Q-table indexes that. Raw (task, node) pairs would
//! not generalise: task ids never recur across jobs and a table over them
//! grows with the cluster (the paper's own "Conclusion and future work"
//! names this as its scaling problem). Here an action is **the locality
//! class of the candidate picked for the slot on offer**: on a free slot of
//! node W, action `a` places the first pending map (queue order) whose
//! locality on W is `a`; it is available only when such a map exists. The
//! Q-table is thus 5 states × 5 actions, the same for every job, task and
//! node; it is learnt once and applies at once to new jobs and a changed
//! cluster, and a live decision is a lookup. The slot on offer comes from
//! the environment, as a heartbeat does in the live master (the seam lets a
//! heartbeat policy place tasks on the heartbeating node only), so training
//! and live decisions face the same choice.
//!
//! # Training and live decisions
//!
//! - Offline, as the paper trains its Gym agent before it schedules:
//!   before the first live decision, `warmup_episodes` episodes at once;
//!   then every call to `assign` runs at most `train_steps` more SARSA
//!   steps (episodes carry over from one call to the next), so a decision's
//!   work is bounded whatever the cluster size; training stops after
//!   `max_episodes` (0: never).
//! - Online, from real completions, only with `online=true` (the paper has
//!   no such step): a map placed live remembers (S, A); when it finishes,
//!   S' is the locality the worker measured, R the same formula over the
//!   job's maps, and A' the action the live policy takes in S' for the slot
//!   the task just freed. Off by default because it mixes two scales into
//!   one table: the job's N is not the episode's, and a live run has no
//!   episode end, so the pairs the live policy uses drift away from the
//!   offline estimates and soon lose to pairs it does not use.
//! - Live decisions are greedy over the available classes: exploring costs
//!   nothing in the environment and a slow job in the cluster. The live
//!   state is the locality of the last live placement. Ties (an untrained
//!   table) go to the better locality, so a fresh master places sensibly.
//!   Classes are chosen without regard to job order, as the paper's agent
//!   picks from the whole task pool; within a class, queue order decides.
//!
//! # Reading the reward, and why the policy once took no cache-local task
//!
//! Our first version read N_level as the episode's count so far, this
//! task included, trained on the live maps with only the slots free at
//! the moment, and learnt online; in `mr sim scenario clqlmrs-fig5` it
//! took 0 % cache-local tasks at every cache size. Three things did it,
//! and the paper's text settles each:
//! - Slots: Reset "frees all slots". With only the free slots of a busy
//!   cluster an episode was one step long, so only the row of the start
//!   state (NO) was ever trained offline; the others kept zeros, and the
//!   live policy, once in state DL, picked DL (a positive entry learnt
//!   online) over CL (still 0) for the rest of the run.
//! - Environment: the paper's is a random placement of blocks and cached
//!   blocks, fixed across episodes, not the live maps. On the live maps a
//!   new job's blocks are cached nowhere, the table trains with no
//!   cache-local candidate at all, and a Q-table that starts at zero then
//!   values the class it never saw below every class it did.
//! - N_level: "the number of tasks with cache locality" in `R_{t+1}` is
//!   read here as the tasks the step placed at that level, one, so that a
//!   step earns `w / N` and the episode's cumulative reward ("the sum of
//!   these three rewards", Figure 2) is `Σ w × N_level / N` over the
//!   final counts. The running count gives the same Figure 2 numbers (each
//!   level is reached once there) but makes the return `Σ w · K(K+1)/2N`,
//!   which pays more for concentrating placements on the most common level
//!   than for taking the odd cache-local one: with plentiful node-local
//!   candidates, all-DL outearns any mix with CL, which contradicts Table
//!   2's stated design ("the greatest reward for cache locality") and the
//!   paper's results. Its phrase "rewards greater locality rates in a
//!   nonlinear fashion" reads as the running count; we take the weights
//!   across levels (1, 0.5, -0.25, -0.5, -1) as the nonlinearity, and keep
//!   the running count as `reward=running` for comparison.
//!
//! With the step reward every step's return depends on its action only, so
//! a trained table ranks CL > DL > CRL > DRL > NO in every row (the test
//! `trained_table_ranks_cl_dl_crl_drl_no`). What is left: the state (the
//! last placement's level) carries no information about the future, so the
//! rows differ by estimation noise only; with the paper's α = 0.1 that noise
//! is about the size of the gaps between the lower classes, and now and then
//! a row ranks DL over CL for a while. And a policy that never waits cannot
//! beat the cache-local rate of one that does (ACL) when the block is
//! cached on a busy node.
//!
//! # Why a variant waits (`clqlmrs-wait`)
//!
//! No reading of the MDP above reproduces the paper's job times on our
//! clusters (`mr bench paper clqlmrs`, `docs/bench/papers/clqlmrs.md`):
//! when the asking node holds none of the pending blocks, every class on
//! offer is remote, the agent must place one (its action set has no "wait"
//! action), and a remote read on a shaped network costs more than the
//! heartbeat or two a holder takes to ask. FIFO pays the same, which is
//! why the faithful policy tracks FIFO; delay scheduling and ACL, which
//! wait, are faster. The smallest change that lets the learnt ranking pay
//! off is delay scheduling's one rule: `wait` (`clqlmrs-wait`: 1.5
//! heartbeats) skips a job whose best map on the asking node is not cache-
//! or node-local until the job has been skipped that long, the timer
//! cleared by a local launch. The Q-table, its training and the choice
//! among classes are unchanged; `clqlmrs` stays the paper's agent.
//! - Randomness (the environment's placement, exploration, its slot order) comes
//!   from a seeded `fastrand::Rng`; no clock is read.
//! - Reduces go through [`assign_reduces`]; a task is not placed on a node
//!   in its `avoid` list while other nodes exist; generators are local
//!   anywhere ([`ClusterView::locality`]).

use super::error::SchedError;
use super::index::IdMap;
use super::*;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// Table 2's weights, in [`Locality::ALL`] order (CL, DL, CRL, DRL, NO).
pub const WEIGHTS: [f64; 5] = [1.0, 0.5, -0.25, -0.5, -1.0];

/// Rows are states, columns actions, both in [`Locality::ALL`] order.
pub type QTable = [[f64; 5]; 5];

/// What N_level in `R = w × N_level / N` counts (see the module doc,
/// "Reading the reward").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NLevel {
    /// The tasks the step's action placed at the level: one. The episode's
    /// cumulative reward is then `Σ w × N_level / N` over its final counts,
    /// as the Figure 2 example sums it. The paper's reading, the default.
    #[default]
    Step,
    /// The episode's tasks at the level so far, this one included: the
    /// step reward grows with the count (`reward=running`), kept to show
    /// what it does to the learnt order.
    Running,
}

fn ix(l: Locality) -> usize {
    match l {
        Locality::CacheLocal => 0,
        Locality::NodeLocal => 1,
        Locality::CacheRackLocal => 2,
        Locality::RackLocal => 3,
        Locality::OffRack => 4,
    }
}

/// The step reward of "The CLQLMRS algorithm", cases 1-5: the level's
/// weight times the share of the `n` tasks that reached it (`n_level`,
/// counting this one).
pub fn reward(level: Locality, n_level: u32, n: u32) -> f64 {
    WEIGHTS[ix(level)] * n_level as f64 / n.max(1) as f64
}

/// The knobs, with the paper's values as defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// α ∈ (0, 1): the paper's 0.1.
    pub learning_rate: f64,
    /// γ ∈ (0, 1): the paper's 0.95.
    pub discount: f64,
    /// Starting ε ∈ [0, 1]: the paper starts at 1 (all exploration).
    pub epsilon: f64,
    /// Factor ∈ (0, 1] applied to ε every `decay_every` episodes: 0.999.
    pub epsilon_decay: f64,
    /// Episodes between two decays: the paper's 10.
    pub decay_every: u64,
    /// The paper's "maximum number of episodes" (Init, Reset); 0: no limit,
    /// so the table keeps following a changing cluster.
    pub max_episodes: u64,
    /// SARSA steps in the environment per `assign` call: bounds a
    /// decision's work (64 steps, with the environment resets they bring,
    /// take about 0.3 ms at 100 nodes and 1000 pending maps in a release
    /// build); 0 turns offline training off.
    pub train_steps: u32,
    /// Tasks in one environment episode (the paper's Init "number of
    /// tasks"), blocks placed at random on the cluster, so a step costs the
    /// same on a large queue. 64: enough that a slot usually finds candidates of
    /// several classes, few enough that a step scans little.
    pub env_tasks: usize,
    /// Seed of the policy's random numbers.
    pub seed: u64,
    /// What N_level counts: `step` (default) or `running`.
    pub n_level: NLevel,
    /// Also learn from real completions (off by default, see the module
    /// doc).
    pub online: bool,
    /// Fraction of the training environment's blocks cached on one of
    /// their holders: the paper's Init takes a cache capacity and gives no
    /// value; 0.5 makes cache-local and node-local candidates about as
    /// common, so both are learnt from the start.
    pub env_cached: f64,
    /// Episodes trained at once before the first live decision, the
    /// paper's offline training before the scheduler is used: a table
    /// trained a few steps per decision is mostly zeros at first, and a
    /// zero entry of a rare class (cache-local) loses to any positive one.
    /// 2000: enough for every row of the table to take the paper's order
    /// on the test clusters. 0: none.
    pub warmup_episodes: u64,
    /// Not the paper's: how long a job may be skipped when the learnt best
    /// class on the asking node is not local (cache- or node-local), as
    /// delay scheduling waits, before a non-local map of it is placed.
    /// `None` (the default, `wait=off`): never, the paper's agent. The
    /// variant `clqlmrs-wait` sets 1.5 heartbeats (`wait=hb`), delay
    /// scheduling's default; see "Why a variant waits" in the module doc.
    pub wait: Option<Wait>,
}

/// How long `clqlmrs-wait` skips a job for want of a local map.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Wait {
    Seconds(f64),
    /// 1.5 heartbeat intervals of the live view.
    Heartbeats,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            learning_rate: 0.1,
            discount: 0.95,
            epsilon: 1.0,
            epsilon_decay: 0.999,
            decay_every: 10,
            max_episodes: 0,
            train_steps: 64,
            env_tasks: 64,
            seed: 0x5eed_c1a1_3a45,
            n_level: NLevel::Step,
            online: false,
            warmup_episodes: 2000,
            env_cached: 0.5,
            wait: None,
        }
    }
}

const KEYS: &str = "learning_rate, discount, epsilon, epsilon_decay, decay_every, \
                    max_episodes, train_steps, env_tasks, seed, reward, online, \
                    warmup_episodes, env_cached, wait";

impl Params {
    pub fn from_params(p: &BTreeMap<String, String>) -> Result<Self, SchedError> {
        let mut out = Params::default();
        for (k, v) in p {
            let bad = |why: &str| SchedError::BadValue {
                name: "clqlmrs".into(),
                param: k.clone(),
                value: v.clone(),
                why: why.into(),
            };
            let real = |ok: &dyn Fn(f64) -> bool, why: &str| {
                v.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && ok(*x))
                    .ok_or_else(|| bad(why))
            };
            let whole = |min: u64, why: &str| {
                v.trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|x| *x >= min)
                    .ok_or_else(|| bad(why))
            };
            match k.as_str() {
                "learning_rate" => {
                    out.learning_rate = real(&|x| x > 0.0 && x < 1.0, "expected 0 < α < 1")?
                }
                "discount" => out.discount = real(&|x| x > 0.0 && x < 1.0, "expected 0 < γ < 1")?,
                "epsilon" => {
                    out.epsilon = real(&|x| (0.0..=1.0).contains(&x), "expected 0 <= ε <= 1")?
                }
                "epsilon_decay" => {
                    out.epsilon_decay =
                        real(&|x| x > 0.0 && x <= 1.0, "expected a factor in (0, 1]")?
                }
                "decay_every" => out.decay_every = whole(1, "expected episodes >= 1")?,
                "max_episodes" => {
                    out.max_episodes = whole(0, "expected episodes >= 0 (0: no limit)")?
                }
                "train_steps" => {
                    out.train_steps = u32::try_from(whole(0, "expected steps >= 0")?)
                        .map_err(|_| bad("at most 4294967295 steps"))?
                }
                "env_tasks" => {
                    out.env_tasks = usize::try_from(whole(1, "expected tasks >= 1")?)
                        .map_err(|_| bad("too many tasks"))?
                }
                "seed" => out.seed = whole(0, "expected an integer >= 0")?,
                "env_cached" => {
                    out.env_cached = real(
                        &|x| (0.0..=1.0).contains(&x),
                        "expected a fraction in [0, 1]",
                    )?
                }
                "warmup_episodes" => out.warmup_episodes = whole(0, "expected episodes >= 0")?,
                "wait" => {
                    out.wait = match v.trim() {
                        "off" => None,
                        "hb" => Some(Wait::Heartbeats),
                        _ => Some(Wait::Seconds(real(
                            &|x| x >= 0.0,
                            "expected off, hb (1.5 heartbeats) or seconds >= 0",
                        )?)),
                    }
                }
                "online" => {
                    out.online = match v.trim() {
                        "true" => true,
                        "false" => false,
                        _ => return Err(bad("expected true or false")),
                    }
                }
                "reward" => {
                    out.n_level = match v.trim() {
                        "step" => NLevel::Step,
                        "running" => NLevel::Running,
                        _ => return Err(bad("expected step or running")),
                    }
                }
                _ => {
                    return Err(SchedError::UnknownParam {
                        name: "clqlmrs".into(),
                        param: k.clone(),
                        takes: KEYS.into(),
                    })
                }
            }
        }
        Ok(out)
    }
}

/// A task of the environment: its holders as node and rack indices, so a
/// locality test is a few integer comparisons, not name lookups. The
/// indices live in the environment's one buffer ([`Env::buf`]): an episode
/// starts with one allocation, not four per task.
#[derive(Debug, Clone)]
struct EnvTask {
    /// A generator reads nothing: local everywhere.
    generator: bool,
    /// Where in the buffer: nodes caching the block (the cache hash
    /// table's pairs), nodes storing it on disk (the data hash table's
    /// pairs), the racks of each (for cache and data rack locality); each
    /// list ends where the next begins, the last at `end`.
    cached: u32,
    replicas: u32,
    cached_racks: u32,
    replica_racks: u32,
    end: u32,
}

/// The training environment of "Environment implementation": a fixed
/// placement of blocks and cached blocks, tasks to place and free slots to
/// fill.
/// Self-contained (node indices, not names), so an episode may outlive the
/// view it was built from.
#[derive(Debug, Clone)]
pub struct Env {
    /// The task pool, in queue order: a class's first task is placed.
    tasks: Vec<EnvTask>,
    /// The tasks' holders and their racks.
    buf: Vec<u32>,
    /// Racks and free slots of the nodes, shared by the episodes built
    /// from one view.
    nodes: EnvNodes,
    /// One entry per free slot (its node): the order in which slots are
    /// offered is drawn from it, as heartbeats arrive in any order.
    slots: Slots,
    /// Which tasks this episode has placed.
    scheduled: Vec<bool>,
    /// Tasks not placed yet: the episode ends at 0.
    left: usize,
    /// Tasks that reached each level this episode (the running N_level).
    counts: [u32; 5],
    /// What the step reward's N_level counts.
    n_level: NLevel,
    /// S_t: the level the last placement reached.
    state: Locality,
    /// A_t, chosen and not yet taken: (node, task, class).
    next: Option<(usize, usize, Locality)>,
}

/// The nodes as an environment sees them: each node's rack and, for the
/// nodes with free map slots, how many (in node order). Taken once per
/// decision and shared by the episodes it starts, so that an episode costs
/// its tasks and slots, not a pass over every node.
#[derive(Debug, Clone)]
struct EnvNodes {
    rack: Arc<Vec<u32>>,
    cap: Arc<Vec<(u32, u32)>>,
    /// Running totals of `cap`'s free slots: entry k's slots end at ends[k].
    ends: Arc<Vec<u32>>,
}

impl EnvNodes {
    fn of(view: &ClusterView) -> EnvNodes {
        let rack = match view.locality_index() {
            Some(ix) => ix.racks().to_vec(),
            None => view.rack_numbers(),
        };
        let cap: Vec<(u32, u32)> = view
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (i as u32, n.map_slots.max(n.free_map_slots)))
            .filter(|&(_, slots)| slots > 0)
            .collect();
        let ends = cap
            .iter()
            .scan(0u32, |total, &(_, f)| {
                *total += f;
                Some(*total)
            })
            .collect();
        EnvNodes {
            rack: Arc::new(rack),
            cap: Arc::new(cap),
            ends: Arc::new(ends),
        }
    }
}

/// The free slots of an episode as the list `cap` spells out (each node
/// repeated once per free slot), without writing it out: an episode of a
/// few steps on a large cluster would otherwise pay for every free slot at
/// each reset. Slot `p` is the list's entry unless a `swap_remove` moved
/// another there (`moved`), so draws give what `Vec::swap_remove` on the
/// written-out list would, and the same random numbers the same slots.
#[derive(Debug, Clone, Default)]
struct Slots {
    len: usize,
    moved: IdMap<usize, u32>,
}

impl Slots {
    fn reset(&mut self, nodes: &EnvNodes) {
        self.len = nodes.ends.last().copied().unwrap_or(0) as usize;
        self.moved.clear();
    }

    fn get(&self, nodes: &EnvNodes, p: usize) -> u32 {
        match self.moved.get(&p) {
            Some(&n) => n,
            None => nodes.cap[nodes.ends.partition_point(|&e| e as usize <= p)].0,
        }
    }

    /// Takes slot `at` out, the last slot filling its place.
    fn swap_remove(&mut self, nodes: &EnvNodes, at: usize) -> u32 {
        let taken = self.get(nodes, at);
        let last = self.len - 1;
        if at != last {
            let l = self.get(nodes, last);
            self.moved.insert(at, l);
        }
        self.moved.remove(&last);
        self.len = last;
        taken
    }
}

impl Env {
    /// Init: the environment of an explicit cluster, its slots the view's
    /// free map slots. `tasks` are indices into `view.pending` (maps), in
    /// the order classes are searched.
    pub fn new(view: &ClusterView, tasks: &[usize]) -> Env {
        Env::with_nodes(view, tasks, EnvNodes::of(view))
    }

    fn with_nodes(view: &ClusterView, tasks: &[usize], nodes: EnvNodes) -> Env {
        let rack = &nodes.rack;
        let index = |name: &String| view.position(name).map(|i| i as u32);
        let ix = view.locality_index();
        let mut buf: Vec<u32> = Vec::with_capacity(tasks.len() * 12);
        let mut scratch: Vec<u32> = Vec::new();
        let mut racks_of = |buf: &mut Vec<u32>, from: usize, to: usize| {
            scratch.clear();
            scratch.extend(buf[from..to].iter().map(|&i| rack[i as usize]));
            scratch.sort_unstable();
            scratch.dedup();
            buf.extend_from_slice(&scratch);
        };
        let tasks: Vec<EnvTask> = tasks
            .iter()
            .map(|&i| {
                // The holders' positions, as the index resolved them or by
                // name.
                let start = buf.len();
                let (generator, mid) = match ix {
                    Some(ix) => {
                        let (_, generator, c, d) = ix.at(i);
                        buf.extend_from_slice(c);
                        let mid = buf.len();
                        buf.extend_from_slice(d);
                        (generator, mid)
                    }
                    None => {
                        let t = &view.pending[i];
                        buf.extend(t.cached_on.iter().filter_map(index));
                        let mid = buf.len();
                        buf.extend(t.replicas.iter().filter_map(index));
                        (t.block.is_none(), mid)
                    }
                };
                let nodes_end = buf.len();
                racks_of(&mut buf, start, mid);
                let racks_mid = buf.len();
                racks_of(&mut buf, mid, nodes_end);
                EnvTask {
                    generator,
                    cached: start as u32,
                    replicas: mid as u32,
                    cached_racks: nodes_end as u32,
                    replica_racks: racks_mid as u32,
                    end: buf.len() as u32,
                }
            })
            .collect();
        let mut env = Env {
            nodes,
            buf,
            scheduled: vec![false; tasks.len()],
            left: tasks.len(),
            tasks,
            slots: Slots::default(),
            counts: [0; 5],
            n_level: NLevel::Step,
            state: Locality::OffRack,
            next: None,
        };
        env.reset();
        env
    }

    /// Init as "Environment implementation" describes it: `tasks` blocks
    /// given `replication` holders at random among the cluster's nodes,
    /// each cached, with probability `cached`, on one of its holders (HDFS
    /// caches where a replica is stored); the placement stays fixed for
    /// every episode trained on it. Random, not the live maps, so that
    /// every locality class occurs in training whatever the live caches
    /// hold at the moment.
    fn random(
        nodes: EnvNodes,
        tasks: usize,
        replication: usize,
        cached: f64,
        rng: &mut fastrand::Rng,
    ) -> Env {
        let count = nodes.rack.len();
        let mut buf: Vec<u32> = Vec::with_capacity(tasks * 8);
        let mut list = Vec::with_capacity(tasks);
        for _ in 0..tasks {
            let mut holders: Vec<u32> = Vec::new();
            while holders.len() < replication.clamp(1, count.max(1)) && count > 0 {
                let n = rng.u32(..count as u32);
                if !holders.contains(&n) {
                    holders.push(n);
                }
            }
            let cache: Vec<u32> = if !holders.is_empty() && rng.f64() < cached {
                vec![holders[rng.usize(..holders.len())]]
            } else {
                vec![]
            };
            let racks = |of: &[u32]| {
                let mut r: Vec<u32> = of.iter().map(|&n| nodes.rack[n as usize]).collect();
                r.sort_unstable();
                r.dedup();
                r
            };
            let start = buf.len() as u32;
            buf.extend_from_slice(&cache);
            let mid = buf.len() as u32;
            buf.extend_from_slice(&holders);
            let nodes_end = buf.len() as u32;
            buf.extend(racks(&cache));
            let racks_mid = buf.len() as u32;
            buf.extend(racks(&holders));
            list.push(EnvTask {
                generator: false,
                cached: start,
                replicas: mid,
                cached_racks: nodes_end,
                replica_racks: racks_mid,
                end: buf.len() as u32,
            });
        }
        let mut env = Env {
            nodes,
            buf,
            scheduled: vec![false; list.len()],
            left: list.len(),
            tasks: list,
            slots: Slots::default(),
            counts: [0; 5],
            n_level: NLevel::Step,
            state: Locality::OffRack,
            next: None,
        };
        env.reset();
        env
    }

    /// The same environment, its rewards read as `n_level` says.
    pub fn with_n_level(mut self, n_level: NLevel) -> Env {
        self.n_level = n_level;
        self
    }

    /// Reset: every task unscheduled, every slot free, back to NO.
    pub fn reset(&mut self) {
        self.scheduled.iter_mut().for_each(|s| *s = false);
        self.left = self.tasks.len();
        self.slots.reset(&self.nodes);
        self.counts = [0; 5];
        self.state = Locality::OffRack;
        self.next = None;
    }

    /// The episode is over: no task left or no slot free.
    pub fn done(&self) -> bool {
        self.left == 0 || self.slots.len == 0
    }

    /// N: the episode's tasks.
    pub fn n(&self) -> u32 {
        self.tasks.len() as u32
    }

    /// Locality of task `t` on node `w`, by the rule of
    /// [`ClusterView::locality`].
    pub fn level(&self, t: usize, w: usize) -> Locality {
        let task = &self.tasks[t];
        let w32 = w as u32;
        let r = self.nodes.rack[w];
        let list = |from: u32, to: u32| &self.buf[from as usize..to as usize];
        if list(task.cached, task.replicas).contains(&w32) {
            Locality::CacheLocal
        } else if list(task.replicas, task.cached_racks).contains(&w32) {
            Locality::NodeLocal
        } else if list(task.cached_racks, task.replica_racks).contains(&r) {
            Locality::CacheRackLocal
        } else if list(task.replica_racks, task.end).contains(&r) {
            Locality::RackLocal
        } else if task.generator {
            Locality::NodeLocal
        } else {
            Locality::OffRack
        }
    }

    /// Per class, the first unscheduled task of that locality on `w`.
    fn candidates(&self, w: usize) -> [Option<usize>; 5] {
        let mut c = [None; 5];
        let mut found = 0;
        for t in (0..self.tasks.len()).filter(|&t| !self.scheduled[t]) {
            let slot = &mut c[ix(self.level(t, w))];
            if slot.is_none() {
                *slot = Some(t);
                found += 1;
                if found == 5 {
                    break;
                }
            }
        }
        c
    }

    /// Offers a random free slot: its node.
    fn draw_slot(&mut self, rng: &mut fastrand::Rng) -> Option<usize> {
        if self.slots.len == 0 {
            return None;
        }
        let at = rng.usize(..self.slots.len);
        Some(self.slots.swap_remove(&self.nodes, at) as usize)
    }

    /// Places task `t` on `w`, whose slot is already taken: the next state
    /// and the step reward.
    fn place(&mut self, t: usize, w: usize) -> (Locality, f64) {
        debug_assert!(!self.scheduled[t]);
        let level = self.level(t, w);
        self.scheduled[t] = true;
        self.left -= 1;
        self.counts[ix(level)] += 1;
        self.state = level;
        let n_level = match self.n_level {
            NLevel::Step => 1,
            NLevel::Running => self.counts[ix(level)],
        };
        (level, reward(level, n_level, self.n()))
    }

    /// Step for the paper's explicit action T_t → W_w: the next state and
    /// the reward, or `None` when the task is placed or the node full.
    pub fn step(&mut self, t: usize, w: usize) -> Option<(Locality, f64)> {
        if self.scheduled.get(t) != Some(&false) {
            return None;
        }
        // A node with no free slot left has no entry.
        let at = (0..self.slots.len).find(|&p| self.slots.get(&self.nodes, p) as usize == w)?;
        self.slots.swap_remove(&self.nodes, at);
        Some(self.place(t, w))
    }
}

/// What [`Scheduler::save_state`] writes.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Saved {
    policy: String,
    version: u32,
    epsilon: f64,
    episodes: u64,
    /// state → action → Q, by [`Locality::as_str`] names.
    q: BTreeMap<String, BTreeMap<String, f64>>,
}

/// 2: tables learnt with the step reward on the random environment; a
/// version-1 table was learnt with the running count on the live maps and
/// may rank node-local over cache-local, so it is refused (the master then
/// starts afresh and warms up).
const STATE_VERSION: u32 = 2;

/// The `clqlmrs` policy.
#[derive(Debug)]
pub struct Clqlmrs {
    /// As configured; the learnt ε lives in `epsilon`.
    params: Params,
    /// Q(state, action), what is learnt and saved.
    q: QTable,
    /// The current exploration rate, decayed as episodes complete.
    epsilon: f64,
    /// Episodes completed, for the decay schedule and `max_episodes`.
    episodes: u64,
    /// Seeded: the same views give the same decisions and the same table.
    rng: fastrand::Rng,
    /// The episode in progress, carried from one decision to the next.
    env: Option<Env>,
    /// The live S_t: what the last live placement reached.
    live_state: Locality,
    /// Maps placed live and not finished: their (S, A) for the online
    /// update when they report.
    placed: HashMap<TaskId, (Locality, Locality)>,
    /// `placed` is pruned once it outgrows this (twice the map slots).
    prune_above: usize,
    /// Per job, its maps finished at each level: the online N_level.
    job_levels: HashMap<u64, [u32; 5]>,
    /// The warm-up training is done (or a saved table was loaded).
    warmed: bool,
    /// The training environment every episode starts from (Reset), built
    /// once per cluster shape.
    template: Option<Env>,
    /// `clqlmrs-wait`: per job, when it was first skipped for want of a
    /// local map (delay scheduling's timer); cleared by a local launch.
    skipped_since: HashMap<u64, f64>,
}

/// Replicas per block in the view (the mean over a few pending maps; 3,
/// HDFS's default, when there are none).
fn replication(view: &ClusterView) -> usize {
    let maps: Vec<usize> = view
        .pending
        .iter()
        .filter(|t| t.kind == TaskKind::Map && t.block.is_some())
        .take(64)
        .map(|t| t.replicas.len())
        .collect();
    if maps.is_empty() {
        return 3;
    }
    (maps.iter().sum::<usize>() as f64 / maps.len() as f64)
        .round()
        .max(1.0) as usize
}

impl Default for Clqlmrs {
    fn default() -> Self {
        Clqlmrs::new(Params::default())
    }
}

impl Clqlmrs {
    pub fn new(params: Params) -> Self {
        Clqlmrs {
            q: [[0.0; 5]; 5],
            epsilon: params.epsilon,
            episodes: 0,
            rng: fastrand::Rng::with_seed(params.seed),
            env: None,
            live_state: Locality::OffRack,
            placed: HashMap::new(),
            prune_above: 0,
            job_levels: HashMap::new(),
            warmed: false,
            template: None,
            skipped_since: HashMap::new(),
            params,
        }
    }

    pub fn from_params(p: &BTreeMap<String, String>) -> Result<Self, SchedError> {
        Ok(Clqlmrs::new(Params::from_params(p)?))
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    pub fn q(&self, state: Locality, action: Locality) -> f64 {
        self.q[ix(state)][ix(action)]
    }

    pub fn set_q(&mut self, state: Locality, action: Locality, v: f64) {
        self.q[ix(state)][ix(action)] = v;
    }

    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }

    pub fn episodes(&self) -> u64 {
        self.episodes
    }

    /// The SARSA update of Algorithm 1; `next` is (S', A'), `None` at the
    /// end of an episode (Q of a terminal state is 0).
    pub fn sarsa_update(
        &mut self,
        s: Locality,
        a: Locality,
        r: f64,
        next: Option<(Locality, Locality)>,
    ) {
        let ahead = next.map_or(0.0, |(s2, a2)| self.q(s2, a2));
        let q = &mut self.q[ix(s)][ix(a)];
        *q += self.params.learning_rate * (r + self.params.discount * ahead - *q);
    }

    /// Greedy over the available classes; ties to the better locality.
    fn greedy(&self, s: Locality, avail: &[Option<usize>; 5]) -> Option<Locality> {
        let row = &self.q[ix(s)];
        let mut best: Option<usize> = None;
        for a in (0..5).filter(|&a| avail[a].is_some()) {
            if best.is_none_or(|b| row[a] > row[b]) {
                best = Some(a);
            }
        }
        best.map(|a| Locality::ALL[a])
    }

    /// ε-greedy: a uniformly random available class with probability ε.
    fn explore(&mut self, s: Locality, avail: &[Option<usize>; 5]) -> Option<Locality> {
        if self.rng.f64() < self.epsilon {
            let open: Vec<usize> = (0..5).filter(|&a| avail[a].is_some()).collect();
            if open.is_empty() {
                return None;
            }
            return Some(Locality::ALL[open[self.rng.usize(..open.len())]]);
        }
        self.greedy(s, avail)
    }

    /// Draws the next slot and chooses A for it.
    fn choose_in(&mut self, env: &mut Env) -> Option<(usize, usize, Locality)> {
        let w = env.draw_slot(&mut self.rng)?;
        let avail = env.candidates(w);
        let a = self.explore(env.state, &avail)?;
        Some((w, avail[ix(a)].expect("available"), a))
    }

    fn end_episode(&mut self) {
        self.episodes += 1;
        if self.episodes.is_multiple_of(self.params.decay_every) {
            self.epsilon *= self.params.epsilon_decay;
        }
    }

    fn training_over(&self) -> bool {
        self.params.max_episodes != 0 && self.episodes >= self.params.max_episodes
    }

    /// One SARSA step in the environment, starting an episode (Reset and
    /// the first A) when none is in progress. False when there is nothing
    /// to train on.
    fn train_step(&mut self, view: &ClusterView, nodes: &mut Option<EnvNodes>) -> bool {
        let mut env = match self.env.take() {
            Some(env) => env,
            None => {
                let stale = self
                    .template
                    .as_ref()
                    .is_none_or(|t| t.nodes.rack.len() != view.nodes.len());
                if stale {
                    let nodes = nodes.get_or_insert_with(|| EnvNodes::of(view)).clone();
                    let env = Env::random(
                        nodes,
                        self.params.env_tasks,
                        replication(view),
                        self.params.env_cached,
                        &mut self.rng,
                    );
                    self.template = Some(env.with_n_level(self.params.n_level));
                }
                let mut env = self.template.clone().expect("built above");
                if env.done() {
                    return false;
                }
                env.next = self.choose_in(&mut env);
                if env.next.is_none() {
                    return false;
                }
                env
            }
        };
        let Some((w, t, a)) = env.next.take() else {
            return false;
        };
        let s = env.state;
        let (s2, r) = env.place(t, w);
        if env.done() {
            self.sarsa_update(s, a, r, None);
            self.end_episode();
            return true;
        }
        match self.choose_in(&mut env) {
            Some((w2, t2, a2)) => {
                self.sarsa_update(s, a, r, Some((s2, a2)));
                env.next = Some((w2, t2, a2));
                self.env = Some(env);
            }
            None => {
                self.sarsa_update(s, a, r, None);
                self.end_episode();
            }
        }
        true
    }

    /// Offline training on the view's environment, at most `steps` steps.
    pub fn train(&mut self, view: &ClusterView, steps: u32) {
        let mut nodes = None;
        for _ in 0..steps {
            if self.training_over() || !self.train_step(view, &mut nodes) {
                return;
            }
        }
    }

    /// Trains until `episodes` more episodes have completed (or training
    /// stops): for tests and warm-up runs.
    pub fn train_episodes(&mut self, view: &ClusterView, episodes: u64) {
        let target = self.episodes + episodes;
        let mut nodes = None;
        while self.episodes < target {
            if self.training_over() || !self.train_step(view, &mut nodes) {
                return;
            }
        }
    }

    fn ranks(view: &ClusterView) -> HashMap<u64, u64> {
        view.jobs.iter().map(|j| (j.id, j.order)).collect()
    }

    /// The live placement of maps on `node`: one greedy class per slot.
    fn place_maps(&mut self, view: &ClusterView, node: &NodeView) -> Vec<Assignment> {
        if node.free_map_slots == 0 {
            return vec![];
        }
        if self.skipped_since.len() > 2 * view.jobs.len() + 16 {
            let live: HashSet<u64> = view.jobs.iter().map(|j| j.id).collect();
            self.skipped_since.retain(|j, _| live.contains(j));
        }
        let mut classes = LiveClasses::new(view, node);
        let mut out = Vec::new();
        for _ in 0..node.free_map_slots {
            let avail: [Option<usize>; 5] =
                std::array::from_fn(|a| classes.head(a).is_some().then_some(0));
            let Some(a) = self.greedy(self.live_state, &avail) else {
                break;
            };
            let t = classes.head(ix(a)).expect("available");
            if let Some(w) = self.params.wait {
                let job = t.id.job;
                if a.is_local() {
                    self.skipped_since.remove(&job);
                } else {
                    let wait = match w {
                        Wait::Seconds(s) => s,
                        Wait::Heartbeats => 1.5 * view.heartbeat_interval,
                    };
                    let since = *self.skipped_since.entry(job).or_insert(view.now);
                    if view.now - since < wait {
                        break;
                    }
                }
            }
            classes.pop(ix(a));
            self.placed.insert(t.id, (self.live_state, a));
            self.live_state = a;
            out.push(Assignment {
                task: t.id,
                node: node.name.clone(),
            });
        }
        out
    }

    /// Forgets placements whose attempt will never report (its node died,
    /// the job was killed): only when they outnumber the slots, so the scan
    /// is rare.
    fn prune(&mut self, view: &ClusterView) {
        // The bound is looked up only past the last one seen: summing the
        // slots of every node at each decision costs more than the scan.
        if self.placed.len() <= self.prune_above {
            return;
        }
        let slots: usize = view.nodes.iter().map(|n| n.map_slots as usize).sum();
        self.prune_above = 2 * slots + 64;
        if self.placed.len() <= self.prune_above {
            return;
        }
        let alive: HashSet<TaskId> = view
            .nodes
            .iter()
            .flat_map(|n| n.running.iter().map(|r| r.id))
            .chain(view.pending.iter().map(|t| t.id))
            .collect();
        self.placed.retain(|id, _| alive.contains(id));
    }
}

/// Per locality class, the maps that may run on a node in queue order
/// (job rank, job, index): sorted lists from one scan of `pending`, or, with
/// the view's locality index, each class's next map looked up when asked.
enum LiveClasses<'v> {
    Scan {
        classes: [Vec<(u64, u64, u32, &'v PendingTask)>; 5],
        at: [usize; 5],
    },
    Indexed {
        view: &'v ClusterView,
        node: &'v NodeView,
        /// Jobs with pending maps, in queue order.
        jobs: Vec<u64>,
        /// Per class, its first map not taken, once looked up.
        head: [Option<Option<&'v PendingTask>>; 5],
        taken: HashSet<TaskId>,
    },
}

impl<'v> LiveClasses<'v> {
    fn new(view: &'v ClusterView, node: &'v NodeView) -> Self {
        let rank = Clqlmrs::ranks(view);
        let rank_of = |job: u64| rank.get(&job).copied().unwrap_or(u64::MAX);
        if view.locality_index().is_some() {
            let mut jobs = view.jobs_with_maps();
            jobs.sort_by_key(|&j| (rank_of(j), j));
            return LiveClasses::Indexed {
                view,
                node,
                jobs,
                head: [None; 5],
                taken: HashSet::new(),
            };
        }
        let mut classes: [Vec<(u64, u64, u32, &PendingTask)>; 5] = Default::default();
        for t in view.pending.iter().filter(|t| t.kind == TaskKind::Map) {
            if t.avoids(&node.name, &view.nodes) {
                continue;
            }
            classes[ix(view.locality(t, node))].push((rank_of(t.job), t.job, t.id.index, t));
        }
        for c in classes.iter_mut() {
            c.sort_unstable_by_key(|&(r, j, i, _)| (r, j, i));
        }
        LiveClasses::Scan {
            classes,
            at: [0; 5],
        }
    }

    /// The first map of class `a` not taken yet.
    fn head(&mut self, a: usize) -> Option<&'v PendingTask> {
        match self {
            LiveClasses::Scan { classes, at } => classes[a].get(at[a]).map(|c| c.3),
            LiveClasses::Indexed {
                view,
                node,
                jobs,
                head,
                taken,
            } => *head[a].get_or_insert_with(|| {
                let (view, node): (&'v ClusterView, &'v NodeView) = (view, node);
                jobs.iter().find_map(|&j| {
                    view.first_map_at(j, node, Locality::ALL[a], |t| {
                        !(taken.contains(&t.id) || t.avoids(&node.name, &view.nodes))
                    })
                })
            }),
        }
    }

    /// Takes the first map of class `a`.
    fn pop(&mut self, a: usize) {
        let first = self.head(a);
        match self {
            LiveClasses::Scan { at, .. } => at[a] += 1,
            LiveClasses::Indexed { head, taken, .. } => {
                if let Some(t) = first {
                    taken.insert(t.id);
                }
                head[a] = None;
            }
        }
    }
}

impl Scheduler for Clqlmrs {
    fn name(&self) -> &'static str {
        if self.params.wait.is_some() {
            "clqlmrs-wait"
        } else {
            "clqlmrs"
        }
    }

    fn assign(&mut self, view: &ClusterView, trigger: Trigger) -> Vec<Assignment> {
        if !self.warmed {
            self.train_episodes(view, self.params.warmup_episodes);
            // Done once there was something to train on.
            self.warmed = self.episodes > 0 || self.params.warmup_episodes == 0;
        }
        self.train(view, self.params.train_steps);
        let Some(node) = trigger.node().and_then(|n| view.node(n)) else {
            return vec![];
        };
        self.prune(view);
        let mut out = self.place_maps(view, node);
        out.extend(assign_reduces(view, node, &view.jobs_fifo()));
        out
    }

    fn on_task_finished(&mut self, view: &ClusterView, report: &TaskReport) {
        if !self.params.online || report.task.kind != TaskKind::Map {
            return;
        }
        let Some((s, a)) = self.placed.remove(&report.task) else {
            return;
        };
        if !report.succeeded {
            return;
        }
        let job = report.task.job;
        let live: HashSet<u64> = view.jobs.iter().map(|j| j.id).collect();
        self.job_levels.retain(|j, _| *j == job || live.contains(j));
        let s2 = report.locality;
        let counts = self.job_levels.entry(job).or_default();
        counts[ix(s2)] += 1;
        let seen: u32 = counts.iter().sum();
        let n = view
            .jobs
            .iter()
            .find(|j| j.id == job)
            .map_or(0, |j| j.maps_total + j.reduces_total)
            .max(seen);
        let n_level = match self.params.n_level {
            NLevel::Step => 1,
            NLevel::Running => counts[ix(s2)],
        };
        let r = reward(s2, n_level, n);
        // A': what the live policy does in S' with the slot just freed.
        let next = view.node(&report.node).and_then(|node| {
            let mut classes = LiveClasses::new(view, node);
            let avail: [Option<usize>; 5] =
                std::array::from_fn(|a| classes.head(a).is_some().then_some(0));
            self.greedy(s2, &avail).map(|a2| (s2, a2))
        });
        self.sarsa_update(s, a, r, next);
    }

    fn save_state(&self) -> Option<String> {
        let q = Locality::ALL
            .iter()
            .map(|&s| {
                let row = Locality::ALL
                    .iter()
                    .map(|&a| (a.as_str().to_string(), self.q(s, a)))
                    .collect();
                (s.as_str().to_string(), row)
            })
            .collect();
        let saved = Saved {
            policy: "clqlmrs".into(),
            version: STATE_VERSION,
            epsilon: self.epsilon,
            episodes: self.episodes,
            q,
        };
        serde_json::to_string_pretty(&saved).ok()
    }

    fn load_state(&mut self, state: &str) -> Result<(), String> {
        let saved: Saved =
            serde_json::from_str(state).map_err(|e| format!("not a CLQLMRS state: {e}"))?;
        if saved.policy != "clqlmrs" {
            return Err(format!("state of policy {:?}, not clqlmrs", saved.policy));
        }
        if saved.version != STATE_VERSION {
            return Err(format!(
                "state version {} (this build reads {STATE_VERSION})",
                saved.version
            ));
        }
        if !(saved.epsilon.is_finite() && (0.0..=1.0).contains(&saved.epsilon)) {
            return Err(format!("epsilon {} is not in [0, 1]", saved.epsilon));
        }
        let mut q: QTable = [[0.0; 5]; 5];
        if saved.q.len() != 5 {
            return Err(format!("q has {} states, not the 5 levels", saved.q.len()));
        }
        for (s, row) in &saved.q {
            let si = Locality::parse(s).ok_or_else(|| format!("unknown state {s:?}"))?;
            if row.len() != 5 {
                return Err(format!("state {s} has {} actions, not 5", row.len()));
            }
            for (a, v) in row {
                let ai = Locality::parse(a).ok_or_else(|| format!("unknown action {a:?}"))?;
                if !v.is_finite() {
                    return Err(format!("Q({s}, {a}) = {v} is not finite"));
                }
                q[ix(si)][ix(ai)] = *v;
            }
        }
        self.q = q;
        self.epsilon = saved.epsilon;
        self.episodes = saved.episodes;
        self.warmed = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{job, map, node, view};

    const CL: Locality = Locality::CacheLocal;
    const DL: Locality = Locality::NodeLocal;
    const CRL: Locality = Locality::CacheRackLocal;
    const DRL: Locality = Locality::RackLocal;
    const NO: Locality = Locality::OffRack;

    /// Figure 2: DN1..DN4 in two racks (odd nodes in rack 1, as in
    /// Figure 3), DB1 and DB2 stored on DN1, DB3 cached on DN4; T_i reads
    /// DB_i. (HDFS caches a block where a replica is stored, so DB3 is on
    /// DN4's disk too; cache locality is checked first either way.)
    fn figure2() -> ClusterView {
        view(
            vec![
                node("DN1", "rack1", 1),
                node("DN2", "rack2", 1),
                node("DN3", "rack1", 1),
                node("DN4", "rack2", 1),
            ],
            vec![job(1, 3)],
            vec![
                map(1, 0, 1, &["DN1"], &[]),
                map(1, 1, 2, &["DN1"], &[]),
                map(1, 2, 3, &["DN4"], &["DN4"]),
            ],
        )
    }

    #[test]
    fn figure2_episode_rewards() {
        let v = figure2();
        let mut env = Env::new(&v, &[0, 1, 2]);
        assert_eq!(env.n(), 3);
        // A1 = T1 → DN1: data locality, +0.5/3.
        assert_eq!(env.step(0, 0), Some((DL, 0.5 / 3.0)));
        assert!(!env.done());
        // A2 = T2 → DN3: DN3 shares rack 1 with DN1, data rack locality.
        assert_eq!(env.step(1, 2), Some((DRL, -0.5 / 3.0)));
        // A3 = T3 → DN4: DB3 is cached there, cache locality, +1/3.
        assert_eq!(env.step(2, 3), Some((CL, 1.0 / 3.0)));
        // No task left: the episode is over.
        assert!(env.done());
        // A node's one slot cannot be used twice.
        env.reset();
        assert!(env.step(0, 0).is_some());
        assert_eq!(env.step(1, 0), None);
    }

    #[test]
    fn a_step_earns_its_own_tasks_share() {
        // N_level is the step's one task: every data-local placement earns
        // +0.5/N, and the episode's sum is w × N_level / N per level.
        let mut v = figure2();
        v.nodes[0].map_slots = 2;
        v.nodes[0].free_map_slots = 2;
        let mut env = Env::new(&v, &[0, 1, 2]);
        assert_eq!(env.step(0, 0), Some((DL, 0.5 / 3.0)));
        assert_eq!(env.step(1, 0), Some((DL, 0.5 / 3.0)));
    }

    #[test]
    fn running_rewards_grow_with_the_level_count() {
        // reward=running: N_level counts this episode's tasks at the level,
        // this one too.
        let mut v = figure2();
        v.nodes[0].map_slots = 2;
        v.nodes[0].free_map_slots = 2;
        let mut env = Env::new(&v, &[0, 1, 2]).with_n_level(NLevel::Running);
        assert_eq!(env.step(0, 0), Some((DL, 0.5 / 3.0)));
        assert_eq!(env.step(1, 0), Some((DL, 0.5 * 2.0 / 3.0)));
        // Reset starts the counts again.
        env.reset();
        assert_eq!(env.step(1, 0), Some((DL, 0.5 / 3.0)));
        assert_eq!(reward(NO, 2, 4), -0.5);
        assert_eq!(reward(CRL, 1, 1), -0.25);
    }

    #[test]
    fn environment_slots_are_every_map_slot() {
        // Reset "frees all slots": DN4 is busy in the view, but its slot is
        // the environment's; a node with no map slot at all offers none.
        let mut v = figure2();
        v.nodes[3].free_map_slots = 0;
        let mut env = Env::new(&v, &[0, 1, 2]);
        assert_eq!(env.step(2, 3), Some((CL, 1.0 / 3.0)));
        for n in v.nodes.iter_mut() {
            n.map_slots = 0;
            n.free_map_slots = 0;
        }
        let mut c = Clqlmrs::default();
        c.train(&v, 64);
        assert_eq!(c.episodes(), 0, "nothing to train on with no slot");
    }

    #[test]
    fn environment_levels_match_the_view() {
        let mut v = figure2();
        v.pending.push(map(1, 3, 4, &["DN2"], &["DN3"]));
        let mut g = map(1, 4, 0, &[], &[]);
        g.block = None;
        v.pending.push(g);
        let env = Env::new(&v, &[0, 1, 2, 3, 4]);
        for (t, task) in v.pending.iter().enumerate() {
            for (w, n) in v.nodes.iter().enumerate() {
                assert_eq!(env.level(t, w), v.locality(task, n), "{t} on {}", n.name);
            }
        }
        assert_eq!(env.level(3, 0), CRL);
    }

    #[test]
    fn sarsa_updates_along_figure2() {
        // The Figure 2 episode with a zero table, then one step by hand.
        let mut c = Clqlmrs::default();
        c.sarsa_update(NO, DL, 0.5 / 3.0, Some((DL, DRL)));
        c.sarsa_update(DL, DRL, -0.5 / 3.0, Some((DRL, CL)));
        c.sarsa_update(DRL, CL, 1.0 / 3.0, None);
        assert!((c.q(NO, DL) - 0.1 * 0.5 / 3.0).abs() < 1e-15);
        assert!((c.q(DL, DRL) + 0.1 * 0.5 / 3.0).abs() < 1e-15);
        assert!((c.q(DRL, CL) - 0.1 / 3.0).abs() < 1e-15);
        // Q(NO,DL) = 1/60; R = 1/3, Q(DL,DRL) = -1/60:
        // 1/60 + 0.1 × (1/3 + 0.95 × (-1/60) - 1/60) = 0.04675.
        c.sarsa_update(NO, DL, 1.0 / 3.0, Some((DL, DRL)));
        assert!((c.q(NO, DL) - 0.04675).abs() < 1e-15);
    }

    #[test]
    fn epsilon_decays_every_ten_episodes() {
        let mut c = Clqlmrs::default();
        let v = figure2();
        assert_eq!(c.epsilon(), 1.0);
        c.train_episodes(&v, 9);
        assert_eq!((c.episodes(), c.epsilon()), (9, 1.0));
        c.train_episodes(&v, 1);
        assert_eq!(c.epsilon(), 0.999);
        c.train_episodes(&v, 15);
        assert_eq!(c.epsilon(), 0.999 * 0.999);
        c.train_episodes(&v, 5);
        assert_eq!(c.episodes(), 30);
        assert!((c.epsilon() - 0.999f64.powi(3)).abs() < 1e-15);
    }

    #[test]
    fn max_episodes_stops_training() {
        let mut p = BTreeMap::new();
        p.insert("max_episodes".to_string(), "4".to_string());
        let mut c = Clqlmrs::from_params(&p).unwrap();
        c.train_episodes(&figure2(), 10);
        assert_eq!(c.episodes(), 4);
    }

    #[test]
    fn training_is_bounded_per_decision() {
        // The environment has Figure 2's four one-slot nodes: an episode is
        // four steps, and 64 steps per decision make 16 episodes.
        let mut p = BTreeMap::new();
        p.insert("warmup_episodes".to_string(), "0".to_string());
        let mut c = Clqlmrs::from_params(&p).unwrap();
        let v = figure2();
        c.assign(&v, Trigger::JobAdded(1));
        assert_eq!(c.episodes(), 16);
    }

    /// A small view with all five classes on node a (rack r1): cached on a,
    /// stored on a, cached on b (r1), stored on b, stored on c (r2).
    fn five_classes() -> ClusterView {
        view(
            vec![node("a", "r1", 1), node("b", "r1", 1), node("c", "r2", 1)],
            vec![job(1, 5)],
            vec![
                map(1, 0, 10, &["c"], &[]),
                map(1, 1, 11, &["b"], &[]),
                map(1, 2, 12, &["c"], &["b"]),
                map(1, 3, 13, &["a"], &[]),
                map(1, 4, 14, &["c"], &["a"]),
            ],
        )
    }

    /// A training cluster: 8 nodes in 2 racks, one slot each (as in the
    /// paper's Figure 3), half of them busy; 40 maps with 3 replicas, a
    /// third of them cached.
    fn training_view() -> ClusterView {
        let nodes: Vec<NodeView> = (0..8)
            .map(|i| node(&format!("n{i}"), &format!("r{}", i % 2), 1))
            .collect();
        let mut rng = fastrand::Rng::with_seed(7);
        let pending = (0..40)
            .map(|i| {
                let mut reps: Vec<String> = Vec::new();
                while reps.len() < 3 {
                    let n = format!("n{}", rng.usize(..8));
                    if !reps.contains(&n) {
                        reps.push(n);
                    }
                }
                let cached = if i % 3 == 0 {
                    vec![reps[0].clone()]
                } else {
                    vec![]
                };
                let mut t = map(1, i, i as u64, &[], &[]);
                t.replicas = reps;
                t.cached_on = cached;
                t
            })
            .collect();
        let mut nodes = nodes;
        for n in nodes.iter_mut().skip(4) {
            n.free_map_slots = 0;
        }
        view(nodes, vec![job(1, 40)], pending)
    }

    /// A cluster where every class occurs: 12 nodes with one slot in 3
    /// racks, 60 maps with 2 replicas each, every other one cached on its
    /// first replica's node.
    fn all_classes_view() -> ClusterView {
        let nodes: Vec<NodeView> = (0..12)
            .map(|i| node(&format!("n{i}"), &format!("r{}", i % 3), 1))
            .collect();
        let mut rng = fastrand::Rng::with_seed(7);
        let pending = (0..60)
            .map(|i| {
                let mut reps: Vec<String> = Vec::new();
                while reps.len() < 2 {
                    let n = format!("n{}", rng.usize(..12));
                    if !reps.contains(&n) {
                        reps.push(n);
                    }
                }
                let mut t = map(1, i, i as u64, &[], &[]);
                if i % 2 == 0 {
                    t.cached_on = vec![reps[0].clone()];
                }
                t.replicas = reps;
                t
            })
            .collect();
        view(nodes, vec![job(1, 60)], pending)
    }

    #[test]
    fn trained_table_ranks_cl_dl_crl_drl_no() {
        // A learning rate of 0.05, not the paper's 0.1, only narrows the
        // estimates' noise: CRL and DRL earn -0.25/N and -0.5/N, a gap the
        // noise of α = 0.1 can cover after 2000 episodes.
        let mut c = Clqlmrs::new(Params {
            learning_rate: 0.05,
            ..Params::default()
        });
        c.train_episodes(&all_classes_view(), 2000);
        // Every row, whatever the last placement reached: the paper's
        // order of Table 2.
        for s in Locality::ALL {
            for w in Locality::ALL.windows(2) {
                assert!(
                    c.q(s, w[0]) > c.q(s, w[1]),
                    "Q({s:?}, {:?}) = {} over Q({s:?}, {:?}) = {}",
                    w[0],
                    c.q(s, w[0]),
                    w[1],
                    c.q(s, w[1])
                );
            }
        }
        // Live, the table alone deciding: node a, one slot at a time, all
        // five classes on offer at first.
        let mut p = BTreeMap::new();
        p.insert("train_steps".to_string(), "0".to_string());
        let mut live = Clqlmrs::from_params(&p).unwrap();
        live.load_state(&c.save_state().unwrap()).unwrap();
        let mut v = five_classes();
        let mut got = Vec::new();
        for _ in 0..5 {
            let a = live.assign(&v, Trigger::Heartbeat("a".into()));
            assert_eq!(a.len(), 1);
            let t = v.pending.iter().position(|t| t.id == a[0].task).unwrap();
            got.push(v.locality(&v.pending[t], &v.nodes[0]));
            v.pending.remove(t);
        }
        assert_eq!(got, vec![CL, DL, CRL, DRL, NO]);
    }

    #[test]
    fn untrained_table_places_best_locality_first() {
        let mut p = BTreeMap::new();
        p.insert("train_steps".to_string(), "0".to_string());
        p.insert("warmup_episodes".to_string(), "0".to_string());
        let mut c = Clqlmrs::from_params(&p).unwrap();
        let mut v = five_classes();
        v.nodes[0].free_map_slots = 5;
        let a = c.assign(&v, Trigger::Heartbeat("a".into()));
        let idx: Vec<u32> = a.iter().map(|x| x.task.index).collect();
        assert_eq!(idx, vec![4, 3, 2, 1, 0]);
    }

    #[test]
    fn online_update_from_a_finished_map() {
        let mut p = BTreeMap::new();
        p.insert("train_steps".to_string(), "0".to_string());
        p.insert("online".to_string(), "true".to_string());
        p.insert("warmup_episodes".to_string(), "0".to_string());
        let mut c = Clqlmrs::from_params(&p).unwrap();
        let mut v = five_classes();
        let a = c.assign(&v, Trigger::Heartbeat("a".into()));
        assert_eq!(a[0].task.index, 4);
        v.pending.retain(|t| t.id != a[0].task);
        // The block was evicted before the read: the worker measured
        // node-local, not cache-local. S = NO, A = CL, S' = DL; the job has
        // N = 5 tasks, 1 of them DL: R = 0.5 × 1/5. A' on a from DL: CL is
        // gone, the zero table's tie goes to DL (task 3).
        c.on_task_finished(
            &v,
            &TaskReport {
                task: a[0].task,
                node: "a".into(),
                locality: DL,
                succeeded: true,
                ..Default::default()
            },
        );
        assert!((c.q(NO, CL) - 0.1 * 0.5 / 5.0).abs() < 1e-15);
        // A report for a task it did not place teaches nothing.
        c.on_task_finished(
            &v,
            &TaskReport {
                task: v.pending[0].id,
                node: "a".into(),
                locality: NO,
                succeeded: true,
                ..Default::default()
            },
        );
        assert!((c.q(NO, NO)).abs() < 1e-15);
    }

    #[test]
    fn save_load_round_trip() {
        let mut c = Clqlmrs::default();
        c.train_episodes(&training_view(), 50);
        let text = c.save_state().unwrap();
        let mut d = Clqlmrs::default();
        d.load_state(&text).unwrap();
        // Exact: serde_json parses floats with `float_roundtrip`.
        for s in Locality::ALL {
            for a in Locality::ALL {
                assert_eq!(c.q(s, a), d.q(s, a), "Q({s:?}, {a:?})");
            }
        }
        assert_eq!(d.epsilon(), c.epsilon());
        assert_eq!(d.episodes(), c.episodes());
        assert!(c.q(NO, CL) != 0.0, "something was learnt");
    }

    #[test]
    fn refuses_a_corrupt_state() {
        use serde_json::{json, Value};
        let mut c = Clqlmrs::default();
        c.set_q(CL, CL, 0.5);
        let good = c.save_state().unwrap();
        let edit = |f: &dyn Fn(&mut Value)| {
            let mut v: Value = serde_json::from_str(&good).unwrap();
            f(&mut v);
            v.to_string()
        };
        let bad = [
            String::new(),
            "not json".into(),
            "{}".into(),
            good[..good.len() / 2].to_string(),
            edit(&|v| v["policy"] = json!("acl")),
            edit(&|v| v["version"] = json!(STATE_VERSION + 1)),
            // A version-1 table: the running-count reward on the live maps.
            edit(&|v| v["version"] = json!(1)),
            edit(&|v| v["epsilon"] = json!(1.5)),
            edit(&|v| v["episodes"] = json!(-1)),
            edit(&|v| v["extra"] = json!(1)),
            edit(&|v| v["q"]["node_local"]["x"] = json!(1)),
            edit(&|v| v["q"]["cache_local"]["cache_local"] = json!("0.5")),
            edit(&|v| v["q"]["cache_local"]["cache_local"] = Value::Null),
            edit(&|v| {
                v["q"]["node_local"]
                    .as_object_mut()
                    .unwrap()
                    .remove("off_rack");
            }),
            edit(&|v| {
                v["q"].as_object_mut().unwrap().remove("rack_local");
            }),
            edit(&|v| {
                let q = v["q"].as_object_mut().unwrap();
                let row = q.remove("rack_local").unwrap();
                q.insert("rack_lokal".into(), row);
            }),
            good.replace("0.5", "1e999"),
        ];
        for b in &bad {
            let mut d = Clqlmrs::default();
            assert!(d.load_state(b).is_err(), "accepted: {b}");
            assert_eq!(d.q(CL, CL), 0.0, "a refused state leaves the table");
        }
        let mut d = Clqlmrs::default();
        d.load_state(&good).unwrap();
        assert_eq!(d.q(CL, CL), 0.5);
    }

    #[test]
    fn avoids_a_node_that_failed_the_task() {
        let mut c = Clqlmrs::default();
        let mut v = five_classes();
        v.pending.retain(|t| t.id.index == 4);
        v.pending[0].avoid = vec!["a".into()];
        assert!(c.assign(&v, Trigger::Heartbeat("a".into())).is_empty());
        assert_eq!(c.assign(&v, Trigger::Heartbeat("b".into())).len(), 1);
    }

    /// `clqlmrs-wait` skips a job whose best map on the asking node is not
    /// local for 1.5 heartbeats, then places it; the faithful policy places
    /// it at once; a local launch restarts the wait.
    #[test]
    fn the_wait_variant_skips_a_non_local_map_until_it_has_waited() {
        let only = |index: u32, now: f64| {
            let mut v = five_classes();
            v.pending.retain(|t| t.id.index == index);
            v.now = now;
            v
        };
        let hb = five_classes().heartbeat_interval;
        let mut faithful = Clqlmrs::default();
        assert_eq!(faithful.name(), "clqlmrs");
        assert_eq!(
            faithful
                .assign(&only(0, 10.0), Trigger::Heartbeat("a".into()))
                .len(),
            1
        );
        let spec = SchedulerSpec::new("clqlmrs-wait");
        let mut w = crate::registry::build(&spec).unwrap();
        assert_eq!(w.name(), "clqlmrs-wait");
        let a = Trigger::Heartbeat("a".into());
        assert!(w.assign(&only(0, 10.0), a.clone()).is_empty());
        assert!(w.assign(&only(0, 10.0 + 1.4 * hb), a.clone()).is_empty());
        assert_eq!(w.assign(&only(0, 10.0 + 1.5 * hb), a.clone()).len(), 1);
        // A cache-local map goes at once and clears the job's timer.
        assert_eq!(w.assign(&only(4, 20.0), a.clone()).len(), 1);
        assert!(w.assign(&only(0, 20.0 + hb), a.clone()).is_empty());
        let mut p = BTreeMap::new();
        p.insert("wait".to_string(), "2.5".to_string());
        assert_eq!(
            Params::from_params(&p).unwrap().wait,
            Some(Wait::Seconds(2.5))
        );
        p.insert("wait".to_string(), "-1".to_string());
        assert!(Params::from_params(&p).is_err());
    }

    #[test]
    fn deterministic_for_a_seed() {
        let run = || {
            let mut c = Clqlmrs::default();
            c.train_episodes(&training_view(), 200);
            c.save_state().unwrap()
        };
        assert_eq!(run(), run());
    }

    #[test]
    fn params() {
        let mut p = BTreeMap::new();
        for (k, v) in [
            ("learning_rate", "0.2"),
            ("discount", "0.9"),
            ("epsilon", "0.5"),
            ("epsilon_decay", "0.99"),
            ("decay_every", "5"),
            ("max_episodes", "100"),
            ("train_steps", "8"),
            ("env_tasks", "16"),
            ("seed", "42"),
        ] {
            p.insert(k.to_string(), v.to_string());
        }
        let c = Clqlmrs::from_params(&p).unwrap();
        assert_eq!(c.params().learning_rate, 0.2);
        assert_eq!(c.params().env_tasks, 16);
        assert_eq!(c.epsilon(), 0.5);
        assert_eq!(Params::default().learning_rate, 0.1);
        assert_eq!(Params::default().discount, 0.95);
        assert_eq!(Params::default().epsilon, 1.0);
        assert_eq!(Params::default().epsilon_decay, 0.999);
        assert_eq!(Params::default().decay_every, 10);
        for (k, v) in [
            ("learning_rate", "0"),
            ("learning_rate", "1"),
            ("discount", "1.0"),
            ("discount", "NaN"),
            ("epsilon", "-0.1"),
            ("epsilon_decay", "0"),
            ("decay_every", "0"),
            ("max_episodes", "-1"),
            ("env_tasks", "0"),
            ("seed", "x"),
        ] {
            let mut p = BTreeMap::new();
            p.insert(k.to_string(), v.to_string());
            assert!(
                matches!(Clqlmrs::from_params(&p), Err(SchedError::BadValue { .. })),
                "{k}={v}"
            );
        }
        let mut p = BTreeMap::new();
        p.insert("alpha".to_string(), "0.1".to_string());
        assert!(matches!(
            Clqlmrs::from_params(&p),
            Err(SchedError::UnknownParam { .. })
        ));
    }
}
