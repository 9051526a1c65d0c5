//! lsap-fair-sched (Guo, Fox, Zhou, "Investigation of Data Locality and
//! Fairness in MapReduce", section 3.3 and its "Algorithm skeleton of
//! lsap-fair-sched", lines 1-39): lsap-sched ([`super::lsap`]) with a cost
//! matrix that adds a fairness cost (FC) to the data locality cost (DLC),
//! C = FC + DLC (eq. 7), so that one optimal assignment trades locality
//! against the groups' rations. `alpha` scales DLC (eq. 8) and `beta` scales
//! FC: small alpha favours fairness, large alpha favours locality (Table 1).
//!
//! Groups are the jobs' pools (`--queue`); each has a weight (parameter
//! `weights`, `pool:w,...`; a pool not listed, or every pool when the
//! parameter is absent, weighs 1), normalised to sum 1 (eq. 4).
//!
//! Reconstructions, not the paper's formulas: the text of the paper we work
//! from has lost the typeset formulas 5-11 and prints only their prose.
//! (8) and (9) are written out in the listing, (7) and (11) are fixed by
//! their prose (a sum, a mean); (5), (6) and (10) are our readings of the
//! prose alone, and so are the defaults below. This is how each is read:
//! - (5) s_i = rt_i / Σ_j rt_j, "the ratio of map slots used by group G_i
//!   among all occupied map slots" (0 for every group when none is used).
//! - (6) GFC_i = β · (1 − w_i) · s_i. The prose fixes its properties: it
//!   grows with the group's usage, low GFC means high priority, FC ranges
//!   over [0, β] (Table 1: [0, 100]), and the tasks beyond a group's
//!   allocation get "a larger value (1 − w_i)·β" (lines 22-27). This form
//!   has all of them: it never exceeds the beyond-allocation cost, which it
//!   reaches only for a group holding every running task, and a heavier
//!   group pays less for the same usage. (β·s_i/w_i, the other plausible
//!   reading, would often cost a group's allocated tasks more than its
//!   unallocated ones, which the listing cannot intend.)
//! - (8) DLC = α · DS(T) / BW(T, slot), as line 33 writes it; DS/BW is
//!   eq. (1) of lsap-sched (seconds of transfer, see [`super::lsap::cost`]).
//! - (9) sto_i = AS · w_i − rt_i, as lines 13-16 write it; the number of
//!   tasks given GFC is its integer part ("the FC of at most sto_i tasks").
//! - (10) d_i = |s_i − w_i|, "the fairness distance between the actual
//!   resource allocation s_i and the desired allocation w_i", 0 when the
//!   group uses exactly its ration; (11) d = the mean of d_i over groups.
//!
//! Defaults (ours, not the paper's): it gives no values for α and β, only
//! Table 1's ranges;
//! β = 100 gives its FC range [0, 100], and α = 50 puts this project's
//! default off-rack read of a 64 MiB block (1.8 s at 300 Mbit/s) near 90,
//! the "both-favoured" row (DLC in [0, 100]).
//!
//! G is the set of groups with a job in the view: a configured group with
//! no job holds nothing and asks for nothing, and counting it would only
//! shrink every other group's AS · w_i. Generators (maps without an input
//! block) are co-located with every node. Failed-node avoidance, dummy
//! filtering and reduces are as in lsap-sched.
//!
//! At scale the problem is pruned and solved sparsely as lsap-sched's is
//! ([`super::pruned`]), with the same optimum; see
//! `LsapFair::pruned_cands` for how FC is found without a pass over TS.

use super::error::SchedError;
use super::index::IdMap;
use super::lsap::{eq1_by_region, idle_nodes, solve_maps, solve_pruned_with, with_reduces, Costs};
use super::pruned::{Cand, Pools, Prune, Slots};
use super::*;
use std::collections::{BTreeMap, HashMap};

/// α when not configured (see the module docs).
pub const DEFAULT_ALPHA: f64 = 50.0;
/// β when not configured: Table 1's FC range [0, 100].
pub const DEFAULT_BETA: f64 = 100.0;

/// The `lsap-fair` policy.
#[derive(Debug, Clone)]
pub struct LsapFair {
    /// Configured pool weights (not normalised; absent pools weigh 1).
    weights: BTreeMap<String, f64>,
    /// DLC scaling factor for non data local tasks.
    alpha: f64,
    /// FC scaling factor.
    beta: f64,
}

impl Default for LsapFair {
    fn default() -> Self {
        LsapFair::new(BTreeMap::new(), DEFAULT_ALPHA, DEFAULT_BETA)
    }
}

/// One group of the view.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub name: String,
    /// w_i, normalised over the view's groups (eq. 4).
    pub weight: f64,
    /// rt_i: its running map tasks.
    pub running: u32,
}

impl LsapFair {
    pub fn new(weights: BTreeMap<String, f64>, alpha: f64, beta: f64) -> Self {
        LsapFair {
            weights,
            alpha,
            beta,
        }
    }

    /// Parameters: `weights` (`pool:w,...`, each > 0), `alpha` and `beta`
    /// (numbers ≥ 0).
    pub fn from_params(p: &BTreeMap<String, String>) -> Result<Self, SchedError> {
        let bad = |param: &str, value: &str, why: &str| SchedError::BadValue {
            name: "lsap-fair".into(),
            param: param.into(),
            value: value.into(),
            why: why.into(),
        };
        let number = |k: &str, v: &str| -> Result<f64, SchedError> {
            v.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| bad(k, v, "must be a number >= 0"))
        };
        let mut s = LsapFair::default();
        for (k, v) in p {
            match k.as_str() {
                "weights" => {
                    s.weights = super::shares::parse("lsap-fair", k, v)?;
                    if s.weights.values().any(|w| *w <= 0.0) {
                        return Err(bad(k, v, "every weight must be > 0"));
                    }
                }
                "alpha" => s.alpha = number(k, v)?,
                "beta" => s.beta = number(k, v)?,
                _ => {
                    return Err(SchedError::UnknownParam {
                        name: "lsap-fair".into(),
                        param: k.clone(),
                        takes: "weights, alpha, beta".into(),
                    })
                }
            }
        }
        Ok(s)
    }

    /// The view's groups (pools with a job in the view, by name) with
    /// their normalised weights (eq. 4) and running map tasks.
    pub fn groups(&self, view: &ClusterView) -> Vec<Group> {
        let mut running: BTreeMap<&str, u32> = BTreeMap::new();
        for j in &view.jobs {
            *running.entry(j.pool.as_str()).or_default() += j.running_maps;
        }
        let raw: Vec<f64> = running
            .keys()
            .map(|p| self.weights.get(*p).copied().unwrap_or(1.0))
            .collect();
        let sum: f64 = raw.iter().sum();
        running
            .into_iter()
            .zip(raw)
            .map(|((name, rt), w)| Group {
                name: name.to_string(),
                weight: w / sum,
                running: rt,
            })
            .collect()
    }

    /// Eq. (10)-(11) for the view's groups under this policy's weights.
    pub fn fairness_distance_of(&self, view: &ClusterView) -> f64 {
        let g: Vec<(f64, f64)> = self
            .groups(view)
            .iter()
            .map(|g| (g.weight, g.running as f64))
            .collect();
        fairness_distance(&g)
    }

    /// Lines 1-35: the |TS| × |ISS| matrix C = FC + DLC (row-major, task i
    /// × slot j) for the given TS and ISS.
    pub fn cost_matrix(&self, view: &ClusterView, ts: &[&PendingTask], iss: &[usize]) -> Vec<f64> {
        let (alpha, beta) = (self.alpha, self.beta);
        // 3 and 5: w and gfc.
        let r = self.rations(view);
        let (groups, w, gfc) = (&r.groups, &r.w, &r.gfc);
        // G[i]: each group's tasks, in TS (queue) order; a task whose job
        // the view lacks joins no group and keeps the default FC of 0
        // (line 18).
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); groups.len()];
        for (i, t) in ts.iter().enumerate() {
            if let Some(g) = r.group_of(t.job) {
                members[g].push(i);
            }
        }
        // 4: ut ← the number of unscheduled tasks of each group.
        let ut: Vec<usize> = members.iter().map(Vec::len).collect();
        // 6-8: INS ← the nodes with idle slots.
        let ins = idle_nodes(iss);
        let costs = Costs::new(view, ts);
        // 9-12: DLT[g] ← the tasks of g whose input resides on a node of
        // INS (they can still be data local), in TS order.
        let dlt_mask: Vec<bool> = (0..ts.len())
            .map(|i| costs.resides_on_any(i, &ins))
            .collect();
        let dlt: Vec<Vec<usize>> = members
            .iter()
            .map(|m| m.iter().copied().filter(|&i| dlt_mask[i]).collect())
            .collect();
        // 13-16: sto.
        let sto = r.sto(view, &ut);
        // 18: fc ← 0 (per task: FC does not depend on the slot).
        let mut fc = vec![0.0; ts.len()];
        for i in 0..groups.len() {
            // 20-21: the group's tasks, and those that cannot be local.
            let tasks = &members[i];
            let ndlt: Vec<usize> = tasks.iter().copied().filter(|&t| !dlt_mask[t]).collect();
            // 22: the default, for tasks beyond the group's allocation.
            for &t in tasks {
                fc[t] = beta * (1.0 - w[i]);
            }
            // 23-26: the sto[i] tasks that get GFC: local-capable first.
            let chosen: Vec<usize> = if dlt[i].len() >= sto[i] {
                dlt[i][..sto[i]].to_vec()
            } else if ut[i] > sto[i] {
                let mut c = dlt[i].clone();
                c.extend_from_slice(&ndlt[..sto[i] - dlt[i].len()]);
                c
            } else {
                tasks.clone()
            };
            // 27
            for t in chosen {
                fc[t] = gfc[i];
            }
        }
        // 29: dlc ← 1; 30-33: for the tasks of DLT, 0 on a co-located
        // slot, else α · DS(T) / BW(T, slot).
        let mut c = Vec::with_capacity(ts.len() * iss.len());
        let mut per_node = vec![0.0; view.nodes.len()];
        for t in 0..ts.len() {
            for &n in &ins {
                per_node[n] = if !dlt_mask[t] {
                    1.0
                } else if costs.co_located(t, n) {
                    0.0
                } else {
                    alpha * costs.cost(t, n)
                };
            }
            // 35: C = fc + dlc.
            c.extend(iss.iter().map(|&n| fc[t] + per_node[n]));
        }
        c
    }
}

impl Scheduler for LsapFair {
    fn name(&self) -> &'static str {
        "lsap-fair"
    }

    fn assign(&mut self, view: &ClusterView, trigger: Trigger) -> Vec<Assignment> {
        with_reduces(view, trigger, self.assign_maps(view, Prune::Auto))
    }
}

/// Lines 3, 5 and 13-16 for one view, which the full and the pruned
/// problem both price with.
struct Rations {
    /// The view's groups ([`LsapFair::groups`]); the vectors below are
    /// per group, in this order.
    groups: Vec<Group>,
    /// w_i (eq. 4).
    w: Vec<f64>,
    /// rt_i.
    rt: Vec<f64>,
    /// GFC_i, eq. (6) over eq. (5).
    gfc: Vec<f64>,
    /// group(T) by T's job; a job the view lacks has none.
    group_of_job: IdMap<u64, usize>,
}

impl Rations {
    fn group_of(&self, job: u64) -> Option<usize> {
        self.group_of_job.get(&job).copied()
    }

    /// 13-16: sto ← the slots each group may still occupy, with AS = all
    /// map slots of the cluster and `ut` each group's unscheduled tasks.
    fn sto(&self, view: &ClusterView, ut: &[usize]) -> Vec<usize> {
        let all_slots: f64 = view.nodes.iter().map(|n| n.map_slots as f64).sum();
        (0..self.groups.len())
            .map(|i| {
                let diff = self.w[i] * all_slots - self.rt[i];
                if diff > 0.0 {
                    (diff.floor() as usize).min(ut[i])
                } else {
                    0
                }
            })
            .collect()
    }
}

impl LsapFair {
    /// 3 and 5 of the listing, and group(T): what both problems price with.
    fn rations(&self, view: &ClusterView) -> Rations {
        // 3: w ← rations/weights of all groups (eq. 4).
        let groups = self.groups(view);
        let g_of: HashMap<&str, usize> = groups
            .iter()
            .enumerate()
            .map(|(k, g)| (g.name.as_str(), k))
            .collect();
        let pool_of: HashMap<u64, &str> =
            view.jobs.iter().map(|j| (j.id, j.pool.as_str())).collect();
        let group_of_job = pool_of
            .into_iter()
            .filter_map(|(job, p)| g_of.get(p).map(|&g| (job, g)))
            .collect();
        let w: Vec<f64> = groups.iter().map(|g| g.weight).collect();
        let rt: Vec<f64> = groups.iter().map(|g| g.running as f64).collect();
        // 5: gfc ← GFC of all groups, eq. (6) over eq. (5).
        let s = usage_shares(&rt);
        let gfc: Vec<f64> = (0..groups.len())
            .map(|i| group_fairness_cost(self.beta, s[i], w[i]))
            .collect();
        Rations {
            groups,
            w,
            rt,
            gfc,
            group_of_job,
        }
    }

    /// The maps' assignment: the full problem, or (large problems, see
    /// [`super::pruned`]) the pruned one, which has the same optimum. The
    /// skeleton is lsap-sched's: 2: ISS ← the idle map slots; 1: TS ← the
    /// unscheduled tasks; lines 1-35's C; 36-39: expandToSquare(C, 0),
    /// R = lsap(C), filterDummy(R).
    pub(crate) fn assign_maps(&self, view: &ClusterView, prune: Prune) -> Vec<Assignment> {
        solve_maps(
            view,
            prune,
            |iss| solve_pruned_with(view, iss, prune, |sel| self.pruned_cands(view, sel)),
            |ts, iss| self.cost_matrix(view, ts, iss),
        )
    }

    /// Lines 1-35 on the pruned problem: its candidates, which
    /// `solve_pruned_with` solves (36-39). The price of a task is lines
    /// 3-35's, found without a pass over TS: DLT is the maps held on an
    /// idle node (and the generators), which the index lists; a group's
    /// tasks beyond DLT get GFC in TS order, so only the first few of them
    /// are looked at. Candidates, by the lemma of [`super::pruned`] with
    /// two classes of tasks: a DLT task is priced by region (FC + α·DS/BW,
    /// FC where its input is); any other costs FC + 1 on every slot, so the
    /// K cheapest of those are each group's first K by FC (those given
    /// GFC first).
    fn pruned_cands(&self, view: &ClusterView, sel: &Slots<'_>) -> Option<Vec<Cand>> {
        let ix = sel.ix;
        let (alpha, beta) = (self.alpha, self.beta);
        let k = sel.k();
        let r = self.rations(view);
        let gfc = &r.gfc;
        let group_of = |job: u64| r.group_of(job);
        let beyond: Vec<f64> = r.w.iter().map(|w| beta * (1.0 - w)).collect();
        let Dlt {
            dlt,
            in_dlt,
            jobs_of,
            mut fc,
            gfc_beyond_dlt,
        } = dlt_and_fc(view, sel, &r, &beyond);
        // A group's tasks outside DLT in TS order, priced on the way.
        let walk =
            |g: usize, fc: &mut IdMap<usize, f64>, until: &mut dyn FnMut(usize, usize) -> bool| {
                let mut at = 0;
                for &j in &jobs_of[g] {
                    for p in ix.maps_of(j) {
                        if in_dlt.contains_key(&p) {
                            continue;
                        }
                        let f = if at < gfc_beyond_dlt[g] {
                            gfc[g]
                        } else {
                            beyond[g]
                        };
                        fc.insert(p, f);
                        if until(at, p) {
                            return;
                        }
                        at += 1;
                    }
                }
            };
        let mut picked: Vec<usize> = Vec::new();
        for (g, &more) in gfc_beyond_dlt.iter().enumerate() {
            let want = if more >= k { k } else { more + k };
            walk(g, &mut fc, &mut |at, p| {
                picked.push(p);
                at + 1 >= want
            });
        }
        // Tasks failing somewhere, outside DLT: priced by their place in
        // their group's order (rare: a walk to them).
        for p in ix.avoiding() {
            let t = &view.pending[p];
            if in_dlt.contains_key(&p) || fc.contains_key(&p) {
                continue;
            }
            if let Some(g) = group_of(t.job) {
                walk(g, &mut fc, &mut |_, q| q == p);
            }
        }
        let fc = fc;
        // Tasks of jobs the view does not list: no group, FC 0 (line 18).
        let fc_of = |p: usize| -> Option<f64> {
            match group_of(view.pending[p].job) {
                Some(_) => fc.get(&p).copied(),
                None => Some(0.0),
            }
        };
        // 29-35: C = FC + DLC per region.
        let price_of = |p: usize| -> Option<([f64; 5], f64)> {
            if view.pending[p].kind != TaskKind::Map {
                return None;
            }
            let f = fc_of(p)?;
            if in_dlt.contains_key(&p) {
                Some((eq1_by_region(view, ix, p).map(|x| alpha * x), f))
            } else {
                Some(([1.0; 5], f))
            }
        };
        // The DLT's prices once each: the lists below ask for them several
        // times (node, rack, overall, candidates).
        let dlt_prices: IdMap<usize, ([f64; 5], f64)> = dlt
            .iter()
            .filter_map(|&p| price_of(p).map(|c| (p, c)))
            .collect();
        let price = |p: usize| -> Option<([f64; 5], f64)> {
            if in_dlt.contains_key(&p) {
                dlt_prices.get(&p).copied()
            } else {
                price_of(p)
            }
        };
        let dlt_price = |p: usize| dlt_prices.get(&p).copied();
        picked.extend(sel.local_lists(&dlt_price, Pools::Among(&dlt)));
        picked.extend(sel.cheapest(dlt.clone(), k, |p| {
            price(p).map_or(f64::INFINITY, |(c, e)| c[4] + e)
        }));
        picked.extend(ix.avoiding());
        // Outside DLT, jobs without a group: any K (all cost 1).
        let grouped: std::collections::HashSet<u64> = jobs_of.iter().flatten().copied().collect();
        let mut stray = 0;
        for j in ix.map_jobs().filter(|j| !grouped.contains(j)) {
            for p in ix.maps_of(j).filter(|p| !in_dlt.contains_key(p)) {
                if stray == k {
                    break;
                }
                picked.push(p);
                stray += 1;
            }
        }
        sel.cands(picked, &price)
    }
}

/// Lines 4-27 of Algorithm 1: the DLT tasks (held on an idle node, or
/// generators) in queue order, each group's jobs in queue order, and the
/// FC of every DLT task, with how many of each group's other tasks (in TS
/// order) get GFC.
struct Dlt {
    dlt: Vec<usize>,
    in_dlt: IdMap<usize, ()>,
    jobs_of: Vec<Vec<u64>>,
    fc: IdMap<usize, f64>,
    gfc_beyond_dlt: Vec<usize>,
}

fn dlt_and_fc(view: &ClusterView, sel: &Slots<'_>, r: &Rations, beyond: &[f64]) -> Dlt {
    let (ix, iss) = (sel.ix, sel.slots);
    let (groups, gfc) = (&r.groups, &r.gfc);
    let group_of = |job: u64| r.group_of(job);
    // 6-12: INS, and DLT: the maps held on an idle node, the generators.
    let ins = idle_nodes(iss);
    let mut dlt: Vec<usize> = ins.iter().flat_map(|&n| ix.held_on(n)).collect();
    dlt.extend(ix.generators());
    dlt.sort_unstable();
    dlt.dedup();
    dlt.sort_by_cached_key(|&p| sel.queue_key(p));
    let in_dlt: IdMap<usize, ()> = dlt.iter().map(|&p| (p, ())).collect();
    // 4: ut per group; each group's jobs in queue order.
    let mut jobs_of: Vec<Vec<u64>> = vec![Vec::new(); groups.len()];
    let mut ut = vec![0usize; groups.len()];
    let mut listed = std::collections::HashSet::new();
    for j in view.jobs_fifo() {
        if let Some(g) = group_of(j) {
            if listed.insert(j) {
                jobs_of[g].push(j);
                ut[g] += ix.job_input(j).maps as usize;
            }
        }
    }
    let mut dlt_of: Vec<Vec<usize>> = vec![Vec::new(); groups.len()];
    for &p in &dlt {
        if let Some(g) = group_of(view.pending[p].job) {
            dlt_of[g].push(p);
        }
    }
    // 13-16: sto.
    let sto = r.sto(view, &ut);
    // 18-27: FC of the DLT tasks, and how many of each group's other
    // tasks (in TS order) get GFC.
    let mut fc: IdMap<usize, f64> = IdMap::default();
    let mut gfc_beyond_dlt = vec![0usize; groups.len()];
    for g in 0..groups.len() {
        let d = &dlt_of[g];
        let (cut, more) = if d.len() >= sto[g] {
            (sto[g], 0)
        } else if ut[g] > sto[g] {
            (d.len(), sto[g] - d.len())
        } else {
            (d.len(), usize::MAX)
        };
        for (at, &p) in d.iter().enumerate() {
            fc.insert(p, if at < cut { gfc[g] } else { beyond[g] });
        }
        gfc_beyond_dlt[g] = more;
    }
    Dlt {
        dlt,
        in_dlt,
        jobs_of,
        fc,
        gfc_beyond_dlt,
    }
}

/// Eq. (5): each group's share of the occupied map slots, from its running
/// tasks; all 0 when nothing runs.
pub fn usage_shares(running: &[f64]) -> Vec<f64> {
    let sum: f64 = running.iter().sum();
    running
        .iter()
        .map(|r| if sum > 0.0 { r / sum } else { 0.0 })
        .collect()
}

/// Eq. (6) as read here: GFC_i = β · (1 − w_i) · s_i (see the module docs).
pub fn group_fairness_cost(beta: f64, s: f64, w: f64) -> f64 {
    beta * (1.0 - w) * s
}

/// Eq. (10)-(11): the mean over groups of |s_i − w_i|, from each group's
/// `(weight, running tasks)`. Weights are normalised to sum 1 (eq. 4) and
/// s_i follows eq. (5). 0 for no groups.
pub fn fairness_distance(groups: &[(f64, f64)]) -> f64 {
    if groups.is_empty() {
        return 0.0;
    }
    let wsum: f64 = groups.iter().map(|g| g.0).sum();
    let running: Vec<f64> = groups.iter().map(|g| g.1).collect();
    let s = usage_shares(&running);
    groups
        .iter()
        .zip(s)
        .map(|(g, s)| {
            let w = if wsum > 0.0 {
                g.0 / wsum
            } else {
                1.0 / groups.len() as f64
            };
            (s - w).abs()
        })
        .sum::<f64>()
        / groups.len() as f64
}

#[cfg(test)]
mod tests {
    use super::super::lsap::tests::{figure_1, map, random_cluster};
    use super::super::lsap::Lsap;
    use super::super::lsap::{idle_slots, unscheduled_maps};
    use super::*;
    use crate::testkit::{local_count, node, pooled_job, view};
    use std::collections::HashSet;

    /// Assignments made, and their total under the full problem's C.
    fn score(s: &LsapFair, v: &ClusterView, a: &[Assignment]) -> (usize, f64) {
        let ts = unscheduled_maps(v);
        let iss = idle_slots(v);
        let c = s.cost_matrix(v, &ts, &iss);
        let mut total = 0.0;
        for x in a {
            let i = ts.iter().position(|t| t.id == x.task).unwrap();
            let j = iss.iter().position(|&n| v.nodes[n].name == x.node).unwrap();
            total += c[i * iss.len() + j];
        }
        (a.len(), total)
    }

    #[test]
    fn pruning_keeps_the_optimum() {
        use super::super::lsap::tests::{check_slots, prunable};
        let mut rng = fastrand::Rng::with_seed(4);
        for seed in 0..300 {
            let mut v = prunable(seed);
            for j in v.jobs.iter_mut() {
                j.running_maps = rng.u32(0..6);
            }
            let s = LsapFair::from_params(&params(&[
                ("alpha", ["0.01", "50", "1000"][seed as usize % 3]),
                ("beta", ["100", "1", "0"][seed as usize / 3 % 3]),
                ("weights", "q1:1,q2:3"),
            ]))
            .unwrap();
            let full = s.assign_maps(&v, Prune::Never);
            let (n, want) = score(&s, &v, &full);
            for prune in [Prune::Always, Prune::Sparse] {
                for indexed in [false, true] {
                    let w = if indexed {
                        v.clone().with_locality_index()
                    } else {
                        v.clone()
                    };
                    let got = s.assign_maps(&w, prune);
                    check_slots(&v, &got);
                    let (m, have) = score(&s, &v, &got);
                    assert_eq!(m, n, "seed {seed} {prune:?}: {got:?} vs {full:?}");
                    assert!(
                        (have - want).abs() < 1e-9 * (1.0 + want.abs()),
                        "seed {seed} {prune:?}: cost {have} vs {want}"
                    );
                }
            }
        }
    }

    fn params(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn count(a: &[Assignment], job: u64) -> usize {
        a.iter().filter(|x| x.task.job == job).count()
    }

    /// Eight one-slot nodes: n0-n3 idle, n4-n7 each running one task (two
    /// of pool a's job 1, two of pool b's job 2). Job 1's eight maps are
    /// stored on the idle nodes, job 2's on the busy ones.
    fn two_groups() -> ClusterView {
        let mut nodes: Vec<NodeView> = (0..8)
            .map(|i| node(&format!("n{i}"), "r1", u32::from(i < 4)))
            .collect();
        for n in &mut nodes {
            n.map_slots = 1;
        }
        let mut pending = Vec::new();
        for i in 0..8u32 {
            pending.push(map(1, i, &[&format!("n{}", i % 4)]));
            pending.push(map(2, i, &[&format!("n{}", 4 + i % 4)]));
        }
        view(
            nodes,
            vec![pooled_job(1, "a", 2), pooled_job(2, "b", 2)],
            pending,
        )
    }

    #[test]
    fn fairness_favoured_spreads_tasks_across_groups() {
        let v = two_groups();
        // Pure locality: every idle slot takes a local task of pool a.
        let a = Lsap.assign(&v, Trigger::JobAdded(1));
        assert_eq!((count(&a, 1), count(&a, 2)), (4, 0));
        // Fairness favoured (α small against β): each pool may occupy
        // AS·w − rt = 8·0.5 − 2 = 2 more slots, and gets them.
        let mut s = LsapFair::from_params(&params(&[("alpha", "0.01"), ("beta", "100")])).unwrap();
        let a = s.assign(&v, Trigger::JobAdded(1));
        assert_eq!(a.len(), 4);
        assert_eq!((count(&a, 1), count(&a, 2)), (2, 2), "{a:?}");
        // Pool a's two are local ones (DLT first, line 24).
        assert_eq!(local_count(&v, &a), 2);
        // Locality favoured: back to four local tasks of pool a.
        let mut s = LsapFair::from_params(&params(&[("alpha", "1000"), ("beta", "1")])).unwrap();
        let a = s.assign(&v, Trigger::JobAdded(1));
        assert_eq!((count(&a, 1), count(&a, 2)), (4, 0));
    }

    #[test]
    fn weights_set_the_rations() {
        // Pool a weighs 3, b 1: sto_a = 8·0.75 − 2 = 4, sto_b = 0.
        let v = two_groups();
        let p = params(&[("alpha", "0.01"), ("weights", "a:3,b:1")]);
        let a = LsapFair::from_params(&p)
            .unwrap()
            .assign(&v, Trigger::JobAdded(1));
        assert_eq!((count(&a, 1), count(&a, 2)), (4, 0));
        // b weighs 3: sto_b = 4, and b takes every idle slot.
        let p = params(&[("alpha", "0.01"), ("weights", "a:1,b:3")]);
        let a = LsapFair::from_params(&p)
            .unwrap()
            .assign(&v, Trigger::JobAdded(1));
        assert_eq!((count(&a, 1), count(&a, 2)), (0, 4));
    }

    #[test]
    fn cost_matrix_follows_the_listing() {
        let v = two_groups();
        let s = LsapFair::new(BTreeMap::new(), 2.0, 100.0);
        let ts = unscheduled_maps(&v);
        let iss = idle_slots(&v);
        let c = s.cost_matrix(&v, &ts, &iss);
        let (w, share) = (0.5, 0.5);
        let gfc = 100.0 * (1.0 - w) * share; // 25
        let dflt = 100.0 * (1.0 - w); // 50
        let ds_bw = (64u64 << 20) as f64 / 125e6;
        let at = |job: u64, index: u32, slot: usize| {
            let i = ts
                .iter()
                .position(|t| t.job == job && t.id.index == index)
                .unwrap();
            c[i * iss.len() + slot]
        };
        // Job 1 (pool a, all in DLT): the first sto = 2 tasks get GFC.
        assert_eq!(at(1, 0, 0), gfc, "co-located: DLC 0");
        assert_eq!(at(1, 0, 1), gfc + 2.0 * ds_bw, "α·DS/BW");
        assert_eq!(at(1, 1, 1), gfc);
        assert_eq!(at(1, 2, 2), dflt);
        assert_eq!(at(1, 7, 0), dflt + 2.0 * ds_bw);
        // Job 2 (pool b, none local to an idle node): DLC 1 (line 29), GFC
        // for the first two of NDLT (line 26).
        assert_eq!(at(2, 0, 3), gfc + 1.0);
        assert_eq!(at(2, 1, 0), gfc + 1.0);
        assert_eq!(at(2, 2, 0), dflt + 1.0);
    }

    #[test]
    fn all_tasks_get_gfc_within_the_allocation() {
        // Line 25 fails (ut ≤ sto): every task of the group gets GFC.
        let mut v = two_groups();
        v.pending.retain(|t| t.job == 1 && t.id.index < 2);
        let s = LsapFair::default();
        let ts = unscheduled_maps(&v);
        let iss = idle_slots(&v);
        let c = s.cost_matrix(&v, &ts, &iss);
        assert_eq!(c[0], 25.0);
        assert_eq!(c[iss.len() + 1], 25.0);
    }

    #[test]
    fn figure_1_is_still_optimal_with_one_group() {
        let v = figure_1();
        let a = LsapFair::default().assign(&v, Trigger::JobAdded(1));
        assert_eq!(local_count(&v, &a), 2);
    }

    #[test]
    fn never_more_than_the_free_slots_and_each_task_once() {
        let mut rng = fastrand::Rng::with_seed(8);
        for _ in 0..200 {
            let (nodes, pending) = random_cluster(&mut rng);
            let names: Vec<String> = nodes.iter().map(|n| n.name.clone()).collect();
            let jobs = (1..=3)
                .map(|j| pooled_job(j, ["a", "b"][j as usize % 2], rng.u32(0..3)))
                .collect();
            let v = view(nodes, jobs, pending);
            let mut s =
                LsapFair::from_params(&params(&[("alpha", ["0", "1", "1000"][rng.usize(0..3)])]))
                    .unwrap();
            let a = s.assign(&v, Trigger::Heartbeat(names[0].clone()));
            let maps: Vec<&Assignment> =
                a.iter().filter(|x| x.task.kind == TaskKind::Map).collect();
            let free: u32 = v.nodes.iter().map(|n| n.free_map_slots).sum();
            assert_eq!(maps.len(), (free as usize).min(v.pending.len()));
            let ids: HashSet<TaskId> = a.iter().map(|x| x.task).collect();
            assert_eq!(ids.len(), a.len());
            for n in &v.nodes {
                let k = maps.iter().filter(|x| x.node == n.name).count();
                assert!(k <= n.free_map_slots as usize);
            }
        }
    }

    #[test]
    fn fairness_distance_eq_10_11() {
        assert_eq!(fairness_distance(&[]), 0.0);
        // Equal weights, 3 and 1 running: s = .75, .25; d = (.25 + .25) / 2.
        assert!((fairness_distance(&[(1.0, 3.0), (1.0, 1.0)]) - 0.25).abs() < 1e-12);
        // Exactly the ration: 0.
        assert_eq!(fairness_distance(&[(2.0, 4.0), (1.0, 2.0)]), 0.0);
        // Nothing running: s = 0, d = mean w.
        assert!((fairness_distance(&[(1.0, 0.0), (3.0, 0.0)]) - 0.5).abs() < 1e-12);
        // Scheduling fairly brings the view's distance down.
        let mut v = two_groups();
        let mut s = LsapFair::from_params(&params(&[("alpha", "0.01")])).unwrap();
        v.jobs[0].running_maps = 4;
        v.jobs[1].running_maps = 0;
        let d0 = s.fairness_distance_of(&v);
        let a = s.assign(&v, Trigger::JobAdded(1));
        v.jobs[0].running_maps += count(&a, 1) as u32;
        v.jobs[1].running_maps += count(&a, 2) as u32;
        assert!(s.fairness_distance_of(&v) < d0);
        assert_eq!(s.fairness_distance_of(&v), 0.0, "{a:?}");
    }

    #[test]
    fn parameters() {
        assert!(LsapFair::from_params(&BTreeMap::new()).is_ok());
        for bad in [
            ("alpha", "-1"),
            ("beta", "x"),
            ("weights", "a:0"),
            ("weights", "a"),
            ("gamma", "1"),
        ] {
            assert!(LsapFair::from_params(&params(&[bad])).is_err(), "{bad:?}");
        }
        let s = LsapFair::from_params(&params(&[("weights", "a:2,b:1")])).unwrap();
        let g = s.groups(&two_groups());
        assert_eq!(g[0].name, "a");
        assert!((g[0].weight - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(g[1].running, 2);
    }
}
