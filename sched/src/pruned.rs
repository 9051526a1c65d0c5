//! The LSAP family (lsap, lsap-fair) at scale: an assignment of all
//! idle slots × all pending maps is exact but, at 5000 nodes and 100 000
//! pending maps, a dense matrix of 10⁹ entries. Two steps keep it exact
//! and small.
//!
//! # 1. Candidate pruning (which tasks can matter)
//!
//! Every policy of the family prices a task on a slot by where the slot's
//! node stands to the task's input (`Region`: a cached copy on the node,
//! a replica on the node, a cached copy in the rack, a replica in the rack,
//! neither), times a per-node factor σ (1 for both; the route allows any),
//! plus a per-task constant; and the price never falls from one region to
//! the next in that order (checked). With S idle slots and F pending maps
//! that must avoid some node, let K = S + F. The candidate tasks are:
//!
//! - per idle node: the K cheapest (on that node) of the maps it holds;
//! - per rack with an idle node: the K cheapest (at the rack's region) of
//!   the maps with a copy in the rack;
//! - the K cheapest maps at the last region (no copy in the rack), over
//!   all maps (the policy knows its order: by input size for lsap);
//! - every map with nodes to avoid.
//!
//! **Lemma.** Some optimal assignment of the full problem uses candidates
//! only. Take an optimal one that uses the fewest non-candidates, and say
//! slot j (node n, rack r) holds a non-candidate i. Take the list for j's
//! relation to i: n's if n holds i's input, else r's if the rack holds a
//! copy, else the global one. i belongs to that list's class but is not in
//! the list, so the list has K tasks each at most as expensive as i in that
//! region (on n itself, for n's list). At most S − 1 of them are used by
//! other slots and at most F avoid some node, so one of them, i', is free
//! and may run on n. Its price on j is at most its price in the list's
//! region (the price never falls towards the node: n may hold a copy of
//! i', or r may), so moving j from i to i' (i is left waiting) costs
//! nothing more and uses one non-candidate fewer: a contradiction. (When
//! fewer maps are pending than K, every list holds its whole class and
//! nothing is pruned.) The avoid penalty (forbidden pairs) only concerns
//! the F tasks, which are all kept. Equal-cost classes make this cheap:
//! with lsap's three prices (0, DS/BW in the rack, DS/BW across racks) a
//! list is the first K of a class by input size.
//!
//! The rack and global lists compare a task's price on different nodes,
//! which needs σ equal on them: where it is not, the rack's class is kept
//! whole (σ is 1 for lsap and lsap-fair). lsap-fair's tasks outside DLT
//! cost the same on every slot: they form one more class, whose K
//! cheapest are each group's first K by FC.
//!
//! So solving over the candidates loses nothing: its optimum is the full
//! problem's. Ties between equal-cost assignments may go another way than
//! the dense solver's.
//!
//! # 2. A sparse solve with a certificate (how to solve it fast)
//!
//! Small pruned problems (up to 2^21 entries) go to the dense solver as
//! before. Large ones (the first decision of a run: 10 000 idle slots
//! against tens of thousands of candidates) go to [`hungarian::solve_implicit`]: each slot starts with
//! the tasks local to its node and a few from its rack's and the global
//! lists, and the LP certificate (every reduced cost ≥ 0) is checked over
//! the whole candidate matrix per task and region: within a region the
//! price is one number (times σ), so the slots of the region are walked
//! from the highest potential down only while a violation is possible.
//! Violations join the graph and the search repeats; the result is optimal
//! on the pruned problem, hence on the full one.

use super::hungarian::{self, Implicit};
use super::index::{IdMap, LocalityIndex};
use super::*;
use std::collections::{BTreeMap, HashMap, HashSet};

/// Where a node stands to a task's input, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Region {
    CacheNode = 0,
    DiskNode = 1,
    CacheRack = 2,
    DiskRack = 3,
    Rest = 4,
}

/// Below this many matrix entries (tasks × idle slots), the family solves
/// the full problem densely, as it always did (unless the view carries a
/// locality index).
pub(crate) const PRUNE_ABOVE: usize = 1 << 20;
/// Pruned problems up to this many entries are solved densely too.
pub(crate) const DENSE_MAX: usize = 1 << 21;
/// Entries per list a slot starts with in the sparse solve.
const FIRST_EDGES: usize = 6;
/// Violations taken per task and region in one certification round.
const FIX_PER_REGION: usize = 16;

/// When to prune (tests force it on small views).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) enum Prune {
    Auto,
    Never,
    /// Prune, and solve as [`Prune::Auto`] would.
    Always,
    /// Prune, and solve by the certificate route however small.
    Sparse,
}

impl Prune {
    /// Prune a problem of `tasks` × `slots`: always when the view carries
    /// a locality index (the candidates come from it, far cheaper than a
    /// pass over the queue), else when it is large.
    pub(crate) fn applies(self, indexed: bool, tasks: usize, slots: usize) -> bool {
        match self {
            Prune::Auto => indexed || tasks.saturating_mul(slots) > PRUNE_ABOVE,
            Prune::Always | Prune::Sparse => true,
            Prune::Never => false,
        }
    }

    /// The pruned problem goes to the dense solver.
    pub(crate) fn dense(self, entries: usize) -> bool {
        self != Prune::Sparse && entries <= DENSE_MAX
    }
}

/// One candidate task, its input's holders as node and rack numbers.
#[derive(Debug, Clone)]
pub(crate) struct Cand {
    /// Position in `pending`.
    pub pos: usize,
    cache: Vec<u32>,
    disk: Vec<u32>,
    cache_racks: Vec<u32>,
    disk_racks: Vec<u32>,
    /// Price per [`Region`], before the node factor.
    pub cost: [f64; 5],
    /// Added on every node.
    pub extra: f64,
    /// Nodes it must not go to (it failed there and the view has others).
    avoid: Vec<u32>,
}

impl Cand {
    pub(crate) fn new(view: &ClusterView, ix: &LocalityIndex, pos: usize) -> Cand {
        let t = &view.pending[pos];
        let rack = ix.racks();
        let (c, d) = ix.holders(t.id).unwrap_or((&[], &[]));
        let dedup = |h: &[u32]| {
            let mut h = h.to_vec();
            h.sort_unstable();
            h.dedup();
            h
        };
        let (cache, disk) = (dedup(c), dedup(d));
        let racks = |h: &[u32]| dedup(&h.iter().map(|&n| rack[n as usize]).collect::<Vec<_>>());
        let avoid = if !t.avoid.is_empty() && view.nodes.iter().any(|n| !t.avoid.contains(&n.name))
        {
            dedup(
                &t.avoid
                    .iter()
                    .filter_map(|n| ix.node_position(n).map(|p| p as u32))
                    .collect::<Vec<_>>(),
            )
        } else {
            vec![]
        };
        Cand {
            pos,
            cache_racks: racks(&cache),
            disk_racks: racks(&disk),
            cache,
            disk,
            cost: [0.0; 5],
            extra: 0.0,
            avoid,
        }
    }

    pub(crate) fn region(&self, n: usize, rack: &[u32]) -> Region {
        let n32 = n as u32;
        if self.cache.binary_search(&n32).is_ok() {
            Region::CacheNode
        } else if self.disk.binary_search(&n32).is_ok() {
            Region::DiskNode
        } else if self.cache_racks.binary_search(&rack[n]).is_ok() {
            Region::CacheRack
        } else if self.disk_racks.binary_search(&rack[n]).is_ok() {
            Region::DiskRack
        } else {
            Region::Rest
        }
    }

    /// The region of the other nodes of rack `r` (not holding the input).
    fn rack_region(&self, r: u32) -> Region {
        if self.cache_racks.binary_search(&r).is_ok() {
            Region::CacheRack
        } else if self.disk_racks.binary_search(&r).is_ok() {
            Region::DiskRack
        } else {
            Region::Rest
        }
    }

    fn holds(&self, n: u32) -> bool {
        self.cache.binary_search(&n).is_ok() || self.disk.binary_search(&n).is_ok()
    }

    fn near(&self, r: u32) -> bool {
        self.rack_region(r) != Region::Rest
    }

    /// The price never falls from a region to the next (the lemma's
    /// premise).
    pub(crate) fn monotone(&self) -> bool {
        self.cost.windows(2).all(|w| w[0] <= w[1])
    }

    pub(crate) fn forbidden(&self, n: usize) -> bool {
        !self.avoid.is_empty() && self.avoid.binary_search(&(n as u32)).is_ok()
    }
}

/// Which tasks [`Slots::local_lists`] prices, and how it finds the K
/// cheapest of a node's or a rack's.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Pools<'a> {
    /// Every indexed map has a price; on a node holding its input it costs
    /// the same as any other map held there, and at a rack's region its
    /// price never falls along the index's rack order (generators, then by
    /// input size). So a node's list is its first K maps by id and a
    /// rack's its first K in that order (ties by id): read from the index
    /// without a pass over the node's or the rack's maps, which at
    /// 10,000 nodes and a million pending maps was most of a decision.
    Ordered,
    /// Only these tasks have a price: a node's or a rack's pool is the
    /// ones held there, each priced.
    Among(&'a [usize]),
}

/// The slots, their nodes' racks and factors, and what selection needs.
pub(crate) struct Slots<'a> {
    pub view: &'a ClusterView,
    pub ix: &'a LocalityIndex,
    /// Node of each idle slot (as `lsap::idle_slots`).
    pub slots: &'a [usize],
    /// σ per node; `None`: 1 everywhere.
    pub factor: Option<&'a [f64]>,
    /// Job → queue rank (ties between equal prices go to queue order).
    pub rank: &'a IdMap<u64, usize>,
}

impl Slots<'_> {
    /// K = S + F.
    pub(crate) fn k(&self) -> usize {
        self.slots.len() + self.ix.avoiding_count()
    }

    pub(crate) fn sigma(&self, n: usize) -> f64 {
        self.factor.map_or(1.0, |f| f[n])
    }

    /// Queue order of the task at `pos`.
    pub(crate) fn queue_key(&self, pos: usize) -> (usize, TaskId) {
        // The id from the index's compact record, not the task's.
        let id = self.ix.at(pos).0;
        (self.rank.get(&id.job).copied().unwrap_or(usize::MAX), id)
    }

    fn idle_nodes(&self) -> Vec<usize> {
        let mut n = self.slots.to_vec();
        n.sort_unstable();
        n.dedup();
        n
    }

    /// σ is the same on every idle node of rack `r` (all when `None`).
    fn uniform_sigma(&self, nodes: &[usize]) -> bool {
        match self.factor {
            None => true,
            Some(f) => nodes.windows(2).all(|w| f[w[0]] == f[w[1]]),
        }
    }

    /// The K cheapest of `pool` by `price` (then queue order).
    pub(crate) fn cheapest(
        &self,
        pool: Vec<usize>,
        k: usize,
        price: impl Fn(usize) -> f64,
    ) -> Vec<usize> {
        if pool.len() <= k {
            return pool;
        }
        self.cheapest_priced(pool.into_iter().map(|p| (p, price(p))).collect(), k)
    }

    /// The K cheapest of `priced` (then queue order).
    fn cheapest_priced(&self, priced: Vec<(usize, f64)>, k: usize) -> Vec<usize> {
        if k == 0 {
            return vec![];
        }
        let mut keyed: Vec<(f64, (usize, TaskId), usize)> = priced
            .into_iter()
            .map(|(p, x)| (x, self.queue_key(p), p))
            .collect();
        keyed.select_nth_unstable_by(k - 1, |a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        keyed.truncate(k);
        keyed.into_iter().map(|x| x.2).collect()
    }

    /// Where node `n` stands to the input of the task at `pos`.
    pub(crate) fn region(&self, pos: usize, n: usize) -> Region {
        // By position: the holders inline, no lookup by id.
        let (_, _, c, d) = self.ix.at(pos);
        let rack = self.ix.racks();
        let n32 = n as u32;
        let near = |h: &[u32]| h.iter().any(|&x| rack[x as usize] == rack[n]);
        if c.contains(&n32) {
            Region::CacheNode
        } else if d.contains(&n32) {
            Region::DiskNode
        } else if near(c) {
            Region::CacheRack
        } else if near(d) {
            Region::DiskRack
        } else {
            Region::Rest
        }
    }

    /// The region of rack `r`'s nodes that do not hold the task's input.
    fn rack_region(&self, pos: usize, r: u32) -> Region {
        let (_, _, c, d) = self.ix.at(pos);
        let rack = self.ix.racks();
        if c.iter().any(|&x| rack[x as usize] == r) {
            Region::CacheRack
        } else if d.iter().any(|&x| rack[x as usize] == r) {
            Region::DiskRack
        } else {
            Region::Rest
        }
    }

    /// The per-node and per-rack lists of the lemma, and every map with
    /// nodes to avoid. `costs(pos)` is a task's price per region and its
    /// constant, `None` for a task the policy leaves out; `pools` says
    /// which tasks those are and how a list is drawn. The global list is
    /// the caller's.
    pub(crate) fn local_lists(
        &self,
        costs: &dyn Fn(usize) -> Option<([f64; 5], f64)>,
        pools: Pools<'_>,
    ) -> Vec<usize> {
        let k = self.k();
        let mut out: Vec<usize> = self.ix.avoiding().filter(|&p| costs(p).is_some()).collect();
        let nodes = self.idle_nodes();
        for &n in &nodes {
            if let Pools::Ordered = pools {
                out.extend(self.ix.held_on(n).take(k));
                continue;
            }
            // Each task priced once. On a node holding its input a task
            // is at CacheNode or DiskNode; where the two prices agree the
            // region need not be looked up.
            let sigma = self.sigma(n);
            let priced: Vec<(usize, f64)> = self
                .ix
                .held_on(n)
                .filter_map(|p| {
                    let (c, e) = costs(p)?;
                    let at = if c[0] == c[1] {
                        c[0]
                    } else {
                        c[self.region(p, n) as usize]
                    };
                    Some((p, sigma * at + e))
                })
                .collect();
            if priced.len() <= k {
                out.extend(priced.into_iter().map(|(p, _)| p));
                continue;
            }
            out.extend(self.cheapest_priced(priced, k));
        }
        let rack = self.ix.racks();
        let mut by_rack: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        for &n in &nodes {
            by_rack.entry(rack[n]).or_default().push(n);
        }
        // Among: each listed task under the racks of its holders.
        let mut among_in: HashMap<u32, Vec<usize>> = HashMap::new();
        if let Pools::Among(list) = pools {
            for &p in list {
                // By position: the holders inline, no lookup by id.
                let (_, _, c, d) = self.ix.at(p);
                let mut rs: Vec<u32> = c.iter().chain(d).map(|&h| rack[h as usize]).collect();
                rs.sort_unstable();
                rs.dedup();
                for r in rs.into_iter().filter(|r| by_rack.contains_key(r)) {
                    among_in.entry(r).or_default().push(p);
                }
            }
        }
        for (r, members) in by_rack {
            let uniform = self.uniform_sigma(&members);
            let pool: Vec<usize> = match pools {
                Pools::Ordered if uniform => {
                    out.extend(self.ix.in_rack_by_size(r).take(k));
                    continue;
                }
                // σ differs within the rack: the class is kept whole.
                Pools::Ordered => self.ix.held_in_rack(r).collect(),
                Pools::Among(_) => among_in.remove(&r).unwrap_or_default(),
            };
            if pool.len() <= k || !uniform {
                out.extend(pool);
                continue;
            }
            let sigma = self.sigma(members[0]);
            let priced: IdMap<usize, f64> = pool
                .iter()
                .filter_map(|&p| {
                    costs(p).map(|(c, e)| (p, sigma * c[self.rack_region(p, r) as usize] + e))
                })
                .collect();
            out.extend(self.cheapest(pool, k, |p| priced[&p]));
        }
        out
    }

    /// σ is the same on every idle node (the global list compares prices
    /// across all of them).
    #[allow(dead_code)]
    pub(crate) fn sigma_uniform(&self) -> bool {
        self.uniform_sigma(&self.idle_nodes())
    }

    /// The candidate tasks in queue order, as [`Cand`]s priced by `costs`.
    /// None when a price falls towards the node (the lemma does not hold).
    pub(crate) fn cands(
        &self,
        mut picked: Vec<usize>,
        costs: &dyn Fn(usize) -> Option<([f64; 5], f64)>,
    ) -> Option<Vec<Cand>> {
        picked.sort_unstable();
        picked.dedup();
        let mut keyed: Vec<((usize, TaskId), usize)> =
            picked.into_iter().map(|p| (self.queue_key(p), p)).collect();
        keyed.sort_unstable();
        let mut out = Vec::with_capacity(keyed.len());
        for (_, p) in keyed {
            let Some((cost, extra)) = costs(p) else {
                continue;
            };
            let mut c = Cand::new(self.view, self.ix, p);
            c.cost = cost;
            c.extra = extra;
            if !c.monotone() {
                return None;
            }
            out.push(c);
        }
        Some(out)
    }
}

/// The pruned problem: idle slots × candidate tasks, priced per region.
pub(crate) struct Problem<'a> {
    slots: &'a [usize],
    rack: &'a [u32],
    factor: Option<&'a [f64]>,
    cands: &'a [Cand],
    /// Added to a forbidden pair: more than any assignment of allowed
    /// pairs costs (as `lsap::assign_matrix` does).
    big: f64,
    /// Rows are the candidates (fewer tasks than slots), else the slots.
    by_task: bool,
    /// Slots by node and by rack, and all slots.
    node_slots: HashMap<u32, Vec<u32>>,
    rack_slots: HashMap<u32, Vec<u32>>,
    /// Candidates holding their input on a node, with a copy in a rack
    /// (cheapest at the rack first), and all by price at the last region.
    node_cands: HashMap<u32, Vec<u32>>,
    rack_cands: HashMap<u32, Vec<u32>>,
    rest_cands: Vec<u32>,
    avoiders: Vec<u32>,
}

impl<'a> Problem<'a> {
    pub(crate) fn new(
        slots: &'a [usize],
        rack: &'a [u32],
        factor: Option<&'a [f64]>,
        cands: &'a [Cand],
    ) -> Self {
        let sigma = |n: usize| factor.map_or(1.0, |f| f[n]);
        let max_sigma = slots.iter().map(|&n| sigma(n)).fold(1.0f64, f64::max);
        let max = cands
            .iter()
            .map(|c| max_sigma * c.cost[Region::Rest as usize] + c.extra)
            .fold(0.0f64, |a, x| a.max(x.abs()));
        let big = if cands.iter().any(|c| !c.avoid.is_empty()) {
            (max + 1.0) * (slots.len().min(cands.len()) as f64 + 1.0)
        } else {
            0.0
        };
        let mut node_slots: HashMap<u32, Vec<u32>> = HashMap::new();
        let mut rack_slots: HashMap<u32, Vec<u32>> = HashMap::new();
        for (j, &n) in slots.iter().enumerate() {
            node_slots.entry(n as u32).or_default().push(j as u32);
            rack_slots.entry(rack[n]).or_default().push(j as u32);
        }
        let mut node_cands: HashMap<u32, Vec<u32>> = HashMap::new();
        let mut rack_cands: HashMap<u32, Vec<u32>> = HashMap::new();
        let mut avoiders = Vec::new();
        for (i, c) in cands.iter().enumerate() {
            for &h in c.cache.iter().chain(&c.disk) {
                if node_slots.contains_key(&h) {
                    node_cands.entry(h).or_default().push(i as u32);
                }
            }
            for &r in c.cache_racks.iter().chain(&c.disk_racks) {
                if rack_slots.contains_key(&r) {
                    rack_cands.entry(r).or_default().push(i as u32);
                }
            }
            if !c.avoid.is_empty() {
                avoiders.push(i as u32);
            }
        }
        for (&r, list) in rack_cands.iter_mut() {
            list.dedup();
            list.sort_by(|&a, &b| {
                let p = |i: u32| cands[i as usize].cost[cands[i as usize].rack_region(r) as usize];
                p(a).total_cmp(&p(b)).then(a.cmp(&b))
            });
        }
        for list in node_cands.values_mut() {
            list.dedup();
        }
        let mut rest_cands: Vec<u32> = (0..cands.len() as u32).collect();
        rest_cands.sort_by(|&a, &b| {
            let p =
                |i: u32| cands[i as usize].cost[Region::Rest as usize] + cands[i as usize].extra;
            p(a).total_cmp(&p(b)).then(a.cmp(&b))
        });
        Problem {
            slots,
            rack,
            factor,
            cands,
            big,
            by_task: cands.len() < slots.len(),
            node_slots,
            rack_slots,
            node_cands,
            rack_cands,
            rest_cands,
            avoiders,
        }
    }

    fn sigma(&self, n: usize) -> f64 {
        self.factor.map_or(1.0, |f| f[n])
    }

    /// Slot j × candidate i, without the failed-node penalty.
    pub(crate) fn price_unpenalised(&self, j: usize, i: usize) -> f64 {
        let n = self.slots[j];
        let c = &self.cands[i];
        self.sigma(n) * c.cost[c.region(n, self.rack) as usize] + c.extra
    }

    /// Slot j × candidate i.
    pub(crate) fn price(&self, j: usize, i: usize) -> f64 {
        let base = self.price_unpenalised(j, i);
        if self.cands[i].forbidden(self.slots[j]) {
            base + self.big
        } else {
            base
        }
    }

    /// (slot, candidate) of row i and column j.
    fn pair(&self, row: usize, col: usize) -> (usize, usize) {
        if self.by_task {
            (col, row)
        } else {
            (row, col)
        }
    }

    /// The optimal (slot, candidate) pairs.
    pub(crate) fn solve(&self) -> Vec<(usize, usize)> {
        hungarian::solve_implicit(self)
            .into_iter()
            .enumerate()
            .map(|(r, c)| self.pair(r, c))
            .collect()
    }

    /// `k` entries of `list` from offset `at` (cyclic).
    fn spread(list: &[u32], at: usize, k: usize) -> impl Iterator<Item = u32> + '_ {
        let len = list.len().max(1);
        (0..k.min(list.len())).map(move |t| list[(at + t) % len])
    }
}

impl Implicit for Problem<'_> {
    fn rows(&self) -> usize {
        if self.by_task {
            self.cands.len()
        } else {
            self.slots.len()
        }
    }

    fn cols(&self) -> usize {
        if self.by_task {
            self.slots.len()
        } else {
            self.cands.len()
        }
    }

    fn cost(&self, row: usize, col: usize) -> f64 {
        let (j, i) = self.pair(row, col);
        self.price(j, i)
    }

    fn candidates(&self, row: usize, out: &mut Vec<(u32, f64)>) {
        let k = FIRST_EDGES;
        if self.by_task {
            // A task: the slots on its holders, a few in each of its racks
            // and a few anywhere (all, if it must avoid a node).
            let c = &self.cands[row];
            if !c.avoid.is_empty() {
                out.extend((0..self.slots.len()).map(|j| (j as u32, self.price(j, row))));
                return;
            }
            let mut cols: Vec<u32> = Vec::new();
            for h in c.cache.iter().chain(&c.disk) {
                cols.extend(self.node_slots.get(h).into_iter().flatten());
            }
            for r in c.cache_racks.iter().chain(&c.disk_racks) {
                if let Some(l) = self.rack_slots.get(r) {
                    cols.extend(Self::spread(l, row * k, k));
                }
            }
            let all: Vec<u32> = (0..self.slots.len() as u32).collect();
            cols.extend(Self::spread(&all, row * k, k));
            out.extend(cols.into_iter().map(|j| (j, self.price(j as usize, row))));
            return;
        }
        // A slot: the tasks local to its node, a few with a copy in its
        // rack, a few of the cheapest anywhere (spread, so that slots with
        // equal prices start from different tasks), and the avoiders.
        let n = self.slots[row] as u32;
        let r = self.rack[n as usize];
        let mut cols: Vec<u32> = self.node_cands.get(&n).cloned().unwrap_or_default();
        if let Some(l) = self.rack_cands.get(&r) {
            let ordinal = self.rack_slots[&r]
                .iter()
                .position(|&j| j as usize == row)
                .unwrap_or(0);
            cols.extend(Self::spread(l, ordinal * k, k));
        }
        cols.extend(Self::spread(&self.rest_cands, row * k, k));
        cols.extend(&self.avoiders);
        out.extend(cols.into_iter().map(|i| (i, self.price(row, i as usize))));
    }

    fn violations(&self, u: &[f64], v: &[f64], eps: f64, out: &mut Vec<(u32, u32)>) {
        let (ps, pt) = if self.by_task { (v, u) } else { (u, v) };
        let push = |out: &mut Vec<(u32, u32)>, j: usize, i: usize| {
            out.push(if self.by_task {
                (i as u32, j as u32)
            } else {
                (j as u32, i as u32)
            });
        };
        let desc = |list: &[u32]| -> Vec<u32> {
            let mut l = list.to_vec();
            l.sort_by(|&a, &b| ps[b as usize].total_cmp(&ps[a as usize]));
            l
        };
        let all: Vec<u32> = (0..self.slots.len() as u32).collect();
        let global = desc(&all);
        let min_sigma = |l: &[u32]| {
            l.iter()
                .map(|&j| self.sigma(self.slots[j as usize]))
                .fold(f64::INFINITY, f64::min)
        };
        let global_sigma = min_sigma(&global);
        let racks: HashMap<u32, (Vec<u32>, f64)> = self
            .rack_slots
            .iter()
            .map(|(&r, l)| (r, (desc(l), min_sigma(l))))
            .collect();
        let mut seen: HashSet<u32> = HashSet::new();
        for (i, c) in self.cands.iter().enumerate() {
            let ok = |j: usize| self.price(j, i) - ps[j] - pt[i] >= -eps;
            if !c.avoid.is_empty() {
                for j in 0..self.slots.len() {
                    if !ok(j) {
                        push(out, j, i);
                    }
                }
                continue;
            }
            // Its holders' slots.
            for h in c.cache.iter().chain(&c.disk) {
                for &j in self.node_slots.get(h).into_iter().flatten() {
                    if !ok(j as usize) {
                        push(out, j as usize, i);
                    }
                }
            }
            // A region's slots from the highest potential down, while one
            // could still be violated: later ones have a lower potential
            // and σ at least the region's least.
            let mut walk =
                |order: &[u32], sigma: f64, region: Region, skip: &dyn Fn(u32) -> bool| {
                    let floor = sigma * c.cost[region as usize] + c.extra - pt[i];
                    let mut fixed = 0;
                    for &j in order {
                        let ju = j as usize;
                        if skip(self.slots[ju] as u32) {
                            continue;
                        }
                        if !ok(ju) {
                            push(out, ju, i);
                            fixed += 1;
                            if fixed == FIX_PER_REGION {
                                break;
                            }
                        }
                        if floor - ps[ju] >= -eps {
                            break;
                        }
                    }
                };
            seen.clear();
            for &r in c.cache_racks.iter().chain(&c.disk_racks) {
                if !seen.insert(r) {
                    continue;
                }
                if let Some((order, sigma)) = racks.get(&r) {
                    walk(order, *sigma, c.rack_region(r), &|n| c.holds(n));
                }
            }
            walk(&global, global_sigma, Region::Rest, &|n| {
                c.holds(n) || c.near(self.rack[n as usize])
            });
        }
    }
}
