//! An optional locality index over a `ClusterView`'s pending tasks, so
//! that a heartbeat decision on a big cluster looks at the few tasks that
//! can be local to the node instead of scanning every pending task.
//!
//! Per node: the pending maps with a cached copy there, and those with a
//! replica there; per rack: those with a cached copy or a replica in the
//! rack (with a count of holders, so that one holder leaving does not hide
//! another); all pending maps by job; the reduces by job and position.
//! Every set is ordered by [`TaskId`], so a job's maps come out by index.
//!
//! The policies ask the view (`ClusterView::best_map`,
//! `ClusterView::first_map_at`, ...), which answers from the index when
//! the view carries one and by scanning `pending` otherwise; both give the
//! same answer (tested on random views). The simulator keeps an index up to
//! date in place (`ClusterView::push_pending`,
//! `ClusterView::remove_pending`, `ClusterView::set_cached`); the
//! master builds its view afresh and does without.
//!
//! # Why a level-by-level search is exact
//!
//! The policies want the least `(locality, index)` among a job's usable
//! maps (or the least index at one exact level). The search goes through
//! the levels best first; at level L it takes the least-index usable task
//! of a set S_L that holds every task whose locality on the node is exactly
//! L and only tasks whose locality is at most L:
//!
//! | L                | S_L                                                  |
//! |------------------|------------------------------------------------------|
//! | cache-local      | cached on the node                                   |
//! | node-local       | a replica on the node; generators (no input) with no |
//! |                  | holder in the node's rack                             |
//! | cache-rack-local | cached somewhere in the rack                         |
//! | rack-local       | a replica somewhere in the rack                      |
//! | off-rack         | every pending map                                    |
//!
//! Had a usable task of a better level existed, the search would have
//! stopped at that level; so the task found at L has level exactly L, and
//! it is the least index among the usable tasks of that level.
//! (`ClusterView::locality` makes a generator with a holder in the rack
//! rack-local, worse than the node-local it is elsewhere; such generators
//! are rare and their level is computed one by one.)

use super::task::{Locality, PendingTask, TaskId, TaskKind};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::RangeInclusive;

/// All map ids of `job`, in index order.
pub(crate) fn job_maps(job: u64) -> RangeInclusive<TaskId> {
    let id = |index| TaskId {
        job,
        kind: TaskKind::Map,
        index,
    };
    id(0)..=id(u32::MAX)
}

/// What the index needs of a node: its name and its rack.
#[derive(Debug, Clone, Copy)]
pub struct NodeSite<'a> {
    pub name: &'a str,
    pub rack: &'a str,
}

/// A fast hash for task ids and positions (multiply-rotate, as rustc's
/// FxHash): the index hashes a task id on every lookup, and SipHash's
/// resistance to chosen keys buys nothing here.
#[derive(Debug, Clone, Copy, Default)]
pub struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u8(&mut self, x: u8) {
        self.write_u64(x as u64);
    }
    fn write_u32(&mut self, x: u32) {
        self.write_u64(x as u64);
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
    fn write_isize(&mut self, x: isize) {
        self.write_u64(x as u64);
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// A `HashMap` keyed by task ids or positions, with [`IdHasher`].
pub type IdMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<IdHasher>>;

/// A job's pending map input: what ACL's cached fraction is made of.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JobInput {
    pub maps: u32,
    /// Maps whose block some node caches (`cached_on` not empty).
    pub cached_maps: u32,
    pub bytes: u64,
    pub cached_bytes: u64,
}

/// One indexed pending task.
#[derive(Debug, Clone)]
struct Entry {
    /// Where it is in `pending`.
    pos: usize,
    kind: TaskKind,
    /// No input block: local anywhere it has no holder in the rack.
    generator: bool,
    /// Nodes caching its block, as positions in `nodes`.
    cache: Vec<u32>,
    /// Nodes storing it, as positions in `nodes`.
    disk: Vec<u32>,
    input_bytes: u64,
    /// `cached_on` is not empty (whether or not the nodes are in the view).
    cached: bool,
    /// `avoid` is not empty.
    avoids: bool,
}

/// A pending task by position: its id and, inline when there are at most
/// [`INLINE`], its input's holders, so that a walk over sampled positions
/// (CLQLMRS's training) reads one small record per task rather than
/// chasing the hash table and two vectors.
#[derive(Debug, Clone, Copy)]
struct AtPos {
    id: TaskId,
    generator: bool,
    /// Holders caching, then storing; `u8::MAX`: too many, see `entries`.
    n_cache: u8,
    n_disk: u8,
    nodes: [u32; INLINE],
}

/// Holders kept inline per position.
const INLINE: usize = 6;

impl AtPos {
    fn of(id: TaskId, e: &Entry) -> AtPos {
        let mut nodes = [0u32; INLINE];
        let fits = e.cache.len() + e.disk.len() <= INLINE;
        if fits {
            nodes[..e.cache.len()].copy_from_slice(&e.cache);
            nodes[e.cache.len()..e.cache.len() + e.disk.len()].copy_from_slice(&e.disk);
        }
        AtPos {
            id,
            generator: e.generator,
            n_cache: if fits { e.cache.len() as u8 } else { u8::MAX },
            n_disk: e.disk.len().min(INLINE) as u8,
            nodes,
        }
    }
}

/// See the module docs. Built by `ClusterView::with_locality_index`.
#[derive(Debug, Clone, Default)]
pub struct LocalityIndex {
    /// Node name → position in `nodes` (its own copy: the index must not
    /// depend on `node_index` being built).
    node_pos: HashMap<String, u32>,
    /// Rack number of each node, by position.
    rack: Vec<u32>,
    entries: IdMap<TaskId, Entry>,
    /// The pending tasks by position, as in `pending`.
    by_pos: Vec<AtPos>,
    /// Every pending map.
    maps: BTreeSet<TaskId>,
    /// Generators with no holder in the view: node-local everywhere.
    gens: BTreeSet<TaskId>,
    /// Generators with a holder: levels computed one by one.
    odd: BTreeSet<TaskId>,
    node_cache: Vec<BTreeSet<TaskId>>,
    node_disk: Vec<BTreeSet<TaskId>>,
    /// Per rack: task → holders in the rack.
    rack_cache: Vec<BTreeMap<TaskId, u32>>,
    rack_disk: Vec<BTreeMap<TaskId, u32>>,
    /// Per rack: the maps with a holder in it, by [`rack_key`] then id, so
    /// that a policy whose rack price grows with the input takes the K
    /// cheapest without a pass over the rack's maps.
    rack_by_size: Vec<BTreeSet<(u64, TaskId)>>,
    /// Pending reduces by (job, position in `pending`).
    reduces: BTreeSet<(u64, usize)>,
    /// Maps that read a block some view node holds, by input size.
    by_size: BTreeSet<(u64, TaskId)>,
    /// Maps that read a block no view node holds.
    homeless: BTreeSet<TaskId>,
    /// Maps with nodes to avoid.
    avoiding: BTreeSet<TaskId>,
    /// Per job with pending maps.
    jobs: BTreeMap<u64, JobInput>,
}

impl LocalityIndex {
    /// The index of `pending` over the nodes `sites` (a view's nodes, in
    /// order: `ClusterView::sites`); `None` when two pending tasks share an
    /// id (the policies then scan, as without an index).
    pub fn build(sites: &[NodeSite<'_>], pending: &[PendingTask]) -> Option<LocalityIndex> {
        let node_pos: HashMap<String, u32> = sites
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.to_string(), i as u32))
            .collect();
        // Racks numbered in order of first appearance, as
        // `ClusterView::rack_numbers` numbers them.
        let mut numbers: HashMap<&str, u32> = HashMap::new();
        let rack: Vec<u32> = sites
            .iter()
            .map(|n| {
                let k = numbers.len() as u32;
                *numbers.entry(n.rack).or_insert(k)
            })
            .collect();
        let racks = rack.iter().map(|&r| r as usize + 1).max().unwrap_or(0);
        let mut ix = LocalityIndex {
            node_pos,
            rack,
            node_cache: vec![BTreeSet::new(); sites.len()],
            node_disk: vec![BTreeSet::new(); sites.len()],
            rack_cache: vec![BTreeMap::new(); racks],
            rack_disk: vec![BTreeMap::new(); racks],
            rack_by_size: vec![BTreeSet::new(); racks],
            ..Default::default()
        };
        for (pos, t) in pending.iter().enumerate() {
            if !ix.insert(pos, t) {
                return None;
            }
        }
        Some(ix)
    }

    /// Indexed tasks: equals `pending.len()` when the index is current.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Nodes the index was built for.
    pub fn nodes(&self) -> usize {
        self.rack.len()
    }

    /// Position of node `name` in `nodes`.
    pub fn node_position(&self, name: &str) -> Option<usize> {
        self.node_pos.get(name).map(|&i| i as usize)
    }

    /// Each node's rack number (as `ClusterView::rack_numbers`).
    pub fn racks(&self) -> &[u32] {
        &self.rack
    }

    /// Position of task `id` in `pending`.
    pub fn position(&self, id: TaskId) -> Option<usize> {
        self.entries.get(&id).map(|e| e.pos)
    }

    /// Positions in `nodes` of the holders of task `id`'s input, cached and
    /// on disk, in the order of `cached_on` and `replicas` (names not in
    /// the view left out).
    pub fn holders(&self, id: TaskId) -> Option<(&[u32], &[u32])> {
        self.entries
            .get(&id)
            .map(|e| (e.cache.as_slice(), e.disk.as_slice()))
    }

    /// The pending maps of `job` (0 when it has none).
    pub fn job_input(&self, job: u64) -> JobInput {
        self.jobs.get(&job).copied().unwrap_or_default()
    }

    /// Jobs with pending maps, by id.
    pub fn map_jobs(&self) -> impl Iterator<Item = u64> + '_ {
        self.jobs.keys().copied()
    }

    /// Pending reduces.
    pub fn reduce_count(&self) -> usize {
        self.reduces.len()
    }

    /// Positions in `pending` of `job`'s reduces, in that order.
    pub fn reduces_of(&self, job: u64) -> impl Iterator<Item = usize> + '_ {
        self.reduces
            .range((job, 0)..=(job, usize::MAX))
            .map(|r| r.1)
    }

    /// Adds `t`, at `pos` in `pending`. False if its id is indexed already.
    pub(crate) fn insert(&mut self, pos: usize, t: &PendingTask) -> bool {
        if self.entries.contains_key(&t.id) {
            return false;
        }
        let resolve = |names: &[String]| -> Vec<u32> {
            names
                .iter()
                .filter_map(|n| self.node_pos.get(n).copied())
                .collect()
        };
        let e = Entry {
            pos,
            kind: t.kind,
            generator: t.block.is_none(),
            cache: resolve(&t.cached_on),
            disk: resolve(&t.replicas),
            input_bytes: t.input_bytes,
            cached: !t.cached_on.is_empty(),
            avoids: !t.avoid.is_empty(),
        };
        self.link(t.id, &e);
        let at = AtPos::of(t.id, &e);
        match pos.cmp(&self.by_pos.len()) {
            std::cmp::Ordering::Less => self.by_pos[pos] = at,
            std::cmp::Ordering::Equal => self.by_pos.push(at),
            std::cmp::Ordering::Greater => return false,
        }
        self.entries.insert(t.id, e);
        true
    }

    /// The task at `pos` in `pending` left as `Vec::swap_remove` leaves it
    /// (after [`LocalityIndex::remove`], before [`LocalityIndex::moved`]).
    pub(crate) fn swap_removed(&mut self, pos: usize) {
        if pos < self.by_pos.len() {
            self.by_pos.swap_remove(pos);
        }
    }

    /// The task at `pos` in `pending`: its id, whether it is a generator,
    /// and the positions in `nodes` of its input's holders (cached, on
    /// disk), as [`LocalityIndex::holders`].
    pub fn at(&self, pos: usize) -> (TaskId, bool, &[u32], &[u32]) {
        let a = &self.by_pos[pos];
        if a.n_cache == u8::MAX {
            let (c, d) = self.holders(a.id).unwrap_or((&[], &[]));
            return (a.id, a.generator, c, d);
        }
        let (c, d) = (a.n_cache as usize, a.n_disk as usize);
        (a.id, a.generator, &a.nodes[..c], &a.nodes[c..c + d])
    }

    /// Removes task `id`; its position is free (the caller moves another
    /// task there with [`LocalityIndex::moved`]).
    pub(crate) fn remove(&mut self, id: TaskId) {
        if let Some(e) = self.entries.remove(&id) {
            self.unlink(id, &e);
        }
    }

    /// Task `id` now sits at `pos`.
    pub(crate) fn moved(&mut self, id: TaskId, pos: usize) {
        if let Some(e) = self.entries.get_mut(&id) {
            if e.kind == TaskKind::Reduce {
                self.reduces.remove(&(id.job, e.pos));
                self.reduces.insert((id.job, pos));
            }
            e.pos = pos;
        }
    }

    fn link(&mut self, id: TaskId, e: &Entry) {
        if e.kind == TaskKind::Reduce {
            self.reduces.insert((id.job, e.pos));
            return;
        }
        self.maps.insert(id);
        let held = !(e.cache.is_empty() && e.disk.is_empty());
        if e.generator {
            if held {
                self.odd.insert(id);
            } else {
                self.gens.insert(id);
            }
        } else if held {
            self.by_size.insert((e.input_bytes, id));
        } else {
            self.homeless.insert(id);
        }
        if e.avoids {
            self.avoiding.insert(id);
        }
        for &h in &e.cache {
            self.node_cache[h as usize].insert(id);
            *self.rack_cache[self.rack[h as usize] as usize]
                .entry(id)
                .or_default() += 1;
        }
        for &h in &e.disk {
            self.node_disk[h as usize].insert(id);
            *self.rack_disk[self.rack[h as usize] as usize]
                .entry(id)
                .or_default() += 1;
        }
        for r in self.holder_racks(e) {
            self.rack_by_size[r as usize].insert((rack_key(e), id));
        }
        let j = self.jobs.entry(id.job).or_default();
        j.maps += 1;
        j.bytes += e.input_bytes;
        if e.cached {
            j.cached_maps += 1;
            j.cached_bytes += e.input_bytes;
        }
    }

    fn unlink(&mut self, id: TaskId, e: &Entry) {
        if e.kind == TaskKind::Reduce {
            self.reduces.remove(&(id.job, e.pos));
            return;
        }
        self.maps.remove(&id);
        self.gens.remove(&id);
        self.odd.remove(&id);
        self.by_size.remove(&(e.input_bytes, id));
        self.homeless.remove(&id);
        self.avoiding.remove(&id);
        fn drop_one(m: &mut BTreeMap<TaskId, u32>, id: TaskId) {
            if let Some(c) = m.get_mut(&id) {
                *c -= 1;
                if *c == 0 {
                    m.remove(&id);
                }
            }
        }
        for &h in &e.cache {
            self.node_cache[h as usize].remove(&id);
            drop_one(&mut self.rack_cache[self.rack[h as usize] as usize], id);
        }
        for &h in &e.disk {
            self.node_disk[h as usize].remove(&id);
            drop_one(&mut self.rack_disk[self.rack[h as usize] as usize], id);
        }
        for r in self.holder_racks(e) {
            self.rack_by_size[r as usize].remove(&(rack_key(e), id));
        }
        if let Some(j) = self.jobs.get_mut(&id.job) {
            j.maps -= 1;
            j.bytes -= e.input_bytes;
            if e.cached {
                j.cached_maps -= 1;
                j.cached_bytes -= e.input_bytes;
            }
            if j.maps == 0 {
                self.jobs.remove(&id.job);
            }
        }
    }

    /// The racks of `e`'s holders, each once.
    fn holder_racks(&self, e: &Entry) -> Vec<u32> {
        let mut r: Vec<u32> = e
            .cache
            .iter()
            .chain(&e.disk)
            .map(|&h| self.rack[h as usize])
            .collect();
        r.sort_unstable();
        r.dedup();
        r
    }

    /// The locality of indexed map `id` on node `n`, by the rule of
    /// `ClusterView::locality`.
    pub fn level(&self, id: TaskId, n: usize) -> Option<Locality> {
        self.entries.get(&id).map(|e| self.level_of(e, n))
    }

    fn level_of(&self, e: &Entry, n: usize) -> Locality {
        let n32 = n as u32;
        if e.cache.contains(&n32) {
            return Locality::CacheLocal;
        }
        if e.disk.contains(&n32) {
            return Locality::NodeLocal;
        }
        let r = self.rack[n];
        let near = |hs: &[u32]| hs.iter().any(|&h| self.rack[h as usize] == r);
        if near(&e.cache) {
            Locality::CacheRackLocal
        } else if near(&e.disk) {
            Locality::RackLocal
        } else if e.generator {
            Locality::NodeLocal
        } else {
            Locality::OffRack
        }
    }

    /// The position in `pending` of the least-index map of `job` in the
    /// sets that hold the tasks of locality at most `level` on node `n`
    /// (see the module docs), accepted by `ok`; `exact`: only tasks of
    /// exactly that level.
    fn first_at(
        &self,
        job: u64,
        n: usize,
        level: Locality,
        exact: bool,
        ok: &mut dyn FnMut(usize) -> bool,
    ) -> Option<usize> {
        let r = self.rack[n] as usize;
        let mut take = |id: &TaskId| -> Option<usize> {
            let e = &self.entries[id];
            if exact && self.level_of(e, n) != level {
                return None;
            }
            ok(e.pos).then_some(e.pos)
        };
        let range = job_maps(job);
        match level {
            Locality::CacheLocal => self.node_cache[n].range(range).find_map(take),
            Locality::NodeLocal => {
                // Three sources; the least id wins.
                let disk = self.node_disk[n]
                    .range(range.clone())
                    .find(|id| take(id).is_some());
                let gens = self.gens.range(range.clone()).find(|id| take(id).is_some());
                let odd = self.odd.range(range).find(|id| {
                    self.level_of(&self.entries[id], n) == Locality::NodeLocal && take(id).is_some()
                });
                [disk, gens, odd]
                    .into_iter()
                    .flatten()
                    .min()
                    .map(|id| self.entries[id].pos)
            }
            Locality::CacheRackLocal => {
                self.rack_cache[r].range(range).find_map(|(id, _)| take(id))
            }
            Locality::RackLocal => self.rack_disk[r].range(range).find_map(|(id, _)| take(id)),
            Locality::OffRack => self.maps.range(range).find_map(take),
        }
    }

    /// The locality of entry `e` on node `n` by replicas alone (see
    /// `ClusterView::disk_locality`).
    fn disk_level_of(&self, e: &Entry, n: usize) -> Locality {
        if e.disk.contains(&(n as u32)) {
            return Locality::NodeLocal;
        }
        let r = self.rack[n];
        if e.disk.iter().any(|&h| self.rack[h as usize] == r) {
            Locality::RackLocal
        } else if e.generator {
            Locality::NodeLocal
        } else {
            Locality::OffRack
        }
    }

    /// Position of the least `(locality by replicas, index)` map of `job`
    /// on node `n` accepted by `ok`, if that locality is at most `worst`.
    /// The search is exact for the reason the module docs give, with the
    /// sets: a replica on the node or a generator (node-local), a replica
    /// in the rack (rack-local), every map (off-rack).
    pub fn best_on_disk(
        &self,
        job: u64,
        n: usize,
        worst: Locality,
        ok: &mut dyn FnMut(usize) -> bool,
    ) -> Option<(Locality, usize)> {
        if !self.jobs.contains_key(&job) || worst < Locality::NodeLocal {
            return None;
        }
        let r = self.rack[n] as usize;
        let range = job_maps(job);
        let mut take = |id: &TaskId| ok(self.entries[id].pos);
        let mut node_local = || {
            let disk = self.node_disk[n].range(range.clone()).find(|id| take(id));
            let gens = self.gens.range(range.clone()).find(|id| take(id));
            let odd = self.odd.range(range.clone()).find(|id| {
                self.disk_level_of(&self.entries[id], n) == Locality::NodeLocal && take(id)
            });
            [disk, gens, odd].into_iter().flatten().min().copied()
        };
        let found = match node_local() {
            Some(id) => Some((Locality::NodeLocal, id)),
            None if worst >= Locality::RackLocal => {
                match self.rack_disk[r]
                    .range(range.clone())
                    .find(|(id, _)| take(id))
                {
                    Some((id, _)) => Some((Locality::RackLocal, *id)),
                    None if worst >= Locality::OffRack => self
                        .maps
                        .range(range)
                        .find(|id| take(id))
                        .map(|id| (Locality::OffRack, *id)),
                    None => None,
                }
            }
            None => None,
        };
        found.map(|(l, id)| (l, self.entries[&id].pos))
    }

    /// Position of the least `(locality, index)` map of `job` on node `n`
    /// accepted by `ok`, if its locality is at most `worst`.
    pub fn best(
        &self,
        job: u64,
        n: usize,
        worst: Locality,
        ok: &mut dyn FnMut(usize) -> bool,
    ) -> Option<(Locality, usize)> {
        if !self.jobs.contains_key(&job) {
            return None;
        }
        Locality::ALL
            .into_iter()
            .take_while(|l| *l <= worst)
            .find_map(|l| self.first_at(job, n, l, false, ok).map(|p| (l, p)))
    }

    /// Position of the least-index map of `job` whose locality on node `n`
    /// is exactly `level`, accepted by `ok`.
    pub fn first_exact(
        &self,
        job: u64,
        n: usize,
        level: Locality,
        ok: &mut dyn FnMut(usize) -> bool,
    ) -> Option<usize> {
        if !self.jobs.contains_key(&job) {
            return None;
        }
        self.first_at(job, n, level, true, ok)
    }

    /// Positions of the maps with a holder (cache or disk) on node `n`, by
    /// id.
    pub fn held_on(&self, n: usize) -> impl Iterator<Item = usize> + '_ {
        merge_ids(self.node_cache[n].iter(), self.node_disk[n].iter())
            .map(|id| self.entries[id].pos)
    }

    /// Positions of the maps cached on node `n`, by id.
    pub fn cached_at(&self, n: usize) -> impl Iterator<Item = usize> + '_ {
        self.node_cache[n].iter().map(|id| self.entries[id].pos)
    }

    /// Positions of the maps stored on node `n`, by id.
    pub fn stored_at(&self, n: usize) -> impl Iterator<Item = usize> + '_ {
        self.node_disk[n].iter().map(|id| self.entries[id].pos)
    }

    /// Positions of the maps with a holder in rack `r`, by id.
    pub fn held_in_rack(&self, r: u32) -> impl Iterator<Item = usize> + '_ {
        let r = r as usize;
        merge_ids(self.rack_cache[r].keys(), self.rack_disk[r].keys())
            .map(|id| self.entries[id].pos)
    }

    /// Positions of the maps with a holder in rack `r`, by [`rack_key`]
    /// (smallest input first, generators as empty inputs), ties by id.
    pub fn in_rack_by_size(&self, r: u32) -> impl Iterator<Item = usize> + '_ {
        self.rack_by_size[r as usize]
            .iter()
            .map(|(_, id)| self.entries[id].pos)
    }

    /// Positions of the maps with a holder in the view that read a block
    /// (not generators), smallest input first (ties by id).
    pub fn by_size(&self) -> impl Iterator<Item = usize> + '_ {
        self.by_size.iter().map(|(_, id)| self.entries[id].pos)
    }

    /// Positions of the maps that read a block no view node holds, by id.
    pub fn homeless(&self) -> impl Iterator<Item = usize> + '_ {
        self.homeless.iter().map(|id| self.entries[id].pos)
    }

    /// Positions of the generators (maps without an input block), by id.
    pub fn generators(&self) -> impl Iterator<Item = usize> + '_ {
        merge_ids(self.gens.iter(), self.odd.iter()).map(|id| self.entries[id].pos)
    }

    /// Positions of the maps with nodes to avoid, by id.
    pub fn avoiding(&self) -> impl Iterator<Item = usize> + '_ {
        self.avoiding.iter().map(|id| self.entries[id].pos)
    }

    /// Maps with nodes to avoid.
    pub fn avoiding_count(&self) -> usize {
        self.avoiding.len()
    }

    /// Positions of every pending map of `job`, by index.
    pub fn maps_of(&self, job: u64) -> impl Iterator<Item = usize> + '_ {
        self.maps
            .range(job_maps(job))
            .map(|id| self.entries[id].pos)
    }
}

/// A map's order in its racks' size lists: generators (which read nothing
/// wherever they run) first, then by input size.
fn rack_key(e: &Entry) -> u64 {
    if e.generator {
        0
    } else {
        e.input_bytes.saturating_add(1)
    }
}

/// Two ascending id streams merged, duplicates once.
fn merge_ids<'a>(
    a: impl Iterator<Item = &'a TaskId>,
    b: impl Iterator<Item = &'a TaskId>,
) -> impl Iterator<Item = &'a TaskId> {
    let mut a = a.peekable();
    let mut b = b.peekable();
    std::iter::from_fn(move || match (a.peek(), b.peek()) {
        (Some(x), Some(y)) => {
            if x < y {
                a.next()
            } else if y < x {
                b.next()
            } else {
                b.next();
                a.next()
            }
        }
        (Some(_), None) => a.next(),
        (None, Some(_)) => b.next(),
        (None, None) => None,
    })
}
