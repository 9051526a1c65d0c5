//! lsap-sched (Guo, Fox, Zhou: "Investigation of Data Locality and Fairness
//! in MapReduce", section 3.2 and its algorithm skeleton): all idle map
//! slots and all pending maps are considered at once. C(i, j), the cost of
//! running task i in slot j, follows eq. (1): 0 when the slot's node holds
//! the task's input, else the input size over the bandwidth from the
//! replica best connected to the slot's node (same rack or across racks,
//! from the view's bandwidth figures). The cost matrix is solved optimally
//! ([`super::hungarian`]); the paper's zero-cost dummies only square the
//! matrix, and the rectangular solve drops them by construction: with more
//! tasks than slots, the tasks left without a real slot wait.
//!
//! Dl-sched (the heartbeat-at-a-time greedy rule) is not optimal: the
//! paper's Figure 1 (tested below) has it place one local task where two
//! are possible. Cached copies count as replicas here: a cached block is
//! data the node need not fetch.

use super::registry::SchedError;
use super::*;
use std::collections::BTreeMap;

#[derive(Debug, Default)]
pub struct Lsap;

impl Lsap {
    pub fn from_params(p: &BTreeMap<String, String>) -> Result<Self, SchedError> {
        if let Some(k) = p.keys().next() {
            return Err(SchedError::UnknownParam {
                name: "lsap".into(),
                param: k.clone(),
                takes: "no parameters".into(),
            });
        }
        Ok(Lsap)
    }
}

/// Eq. (1): the cost of running `t` on `node`.
pub fn cost(view: &ClusterView, t: &PendingTask, node: &NodeView) -> f64 {
    if t.block.is_none() || view.locality(t, node).is_local() {
        return 0.0;
    }
    let best_bw = t
        .replicas
        .iter()
        .chain(t.cached_on.iter())
        .filter_map(|r| view.node(r))
        .map(|src| {
            if src.rack == node.rack {
                view.rack_bandwidth
            } else {
                view.cross_rack_bandwidth
            }
        })
        .fold(0.0f64, f64::max);
    if best_bw <= 0.0 {
        // No live replica, or no bandwidth figures: uniform cost, as [14].
        return 1.0;
    }
    t.input_bytes as f64 / best_bw
}

/// The idle map slots of the view, one entry per slot, and the pending maps;
/// solves eq. (3) over them. Shared by lsap and lsap-fair.
pub fn solve_view(view: &ClusterView, extra: impl Fn(&PendingTask) -> f64) -> Vec<Assignment> {
    let slots: Vec<&NodeView> = view
        .nodes
        .iter()
        .flat_map(|n| std::iter::repeat_n(n, n.free_map_slots as usize))
        .collect();
    let tasks: Vec<&PendingTask> = view
        .pending
        .iter()
        .filter(|t| t.kind == TaskKind::Map)
        .collect();
    if slots.is_empty() || tasks.is_empty() {
        return vec![];
    }
    let others = view.nodes.len() > 1;
    let (n, m) = (slots.len(), tasks.len());
    let mut c = vec![0.0; n * m];
    for (i, s) in slots.iter().enumerate() {
        for (j, t) in tasks.iter().enumerate() {
            // A node where the task already failed is a last resort.
            let avoid = if others && t.avoid.contains(&s.name) {
                1e9
            } else {
                0.0
            };
            c[i * m + j] = cost(view, t, s) + extra(t) + avoid;
        }
    }
    super::hungarian::solve_flat(n, m, &c)
        .into_iter()
        .enumerate()
        .filter_map(|(i, j)| {
            j.map(|j| Assignment {
                task: tasks[j].id,
                node: slots[i].name.clone(),
            })
        })
        .collect()
}

impl Scheduler for Lsap {
    fn name(&self) -> &'static str {
        "lsap"
    }

    fn assign(&mut self, view: &ClusterView, trigger: Trigger) -> Vec<Assignment> {
        let mut out = solve_view(view, |_| 0.0);
        if let Some(node) = trigger.node().and_then(|n| view.node(n)) {
            out.extend(assign_reduces(view, node, &view.jobs_fifo()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn node(name: &str) -> NodeView {
        NodeView {
            name: name.into(),
            rack: "r1".into(),
            map_slots: 1,
            reduce_slots: 0,
            free_map_slots: 1,
            free_reduce_slots: 0,
            resources: Resources::default(),
            cached_blocks: HashSet::new(),
        }
    }

    fn map(index: u32, replicas: &[&str]) -> PendingTask {
        PendingTask {
            id: TaskId {
                job: 1,
                kind: TaskKind::Map,
                index,
            },
            job: 1,
            kind: TaskKind::Map,
            block: Some(index as u64),
            replicas: replicas.iter().map(|s| s.to_string()).collect(),
            cached_on: vec![],
            input_bytes: 64 << 20,
            avoid: vec![],
            runnable_since: 0.0,
        }
    }

    #[test]
    fn figure_1_lsap_gets_two_local_tasks_where_greedy_gets_one() {
        // T1's block is on A and B, T2's only on A; one idle slot on each.
        let v = ClusterView {
            heartbeat_interval: 1.0,
            nodes: vec![node("A"), node("B")],
            pending: vec![map(1, &["A", "B"]), map(2, &["A"])],
            rack_bandwidth: 125e6,
            cross_rack_bandwidth: 37.5e6,
            ..Default::default()
        };
        let local = |a: &[Assignment]| {
            a.iter()
                .filter(|x| {
                    let t = v.pending.iter().find(|t| t.id == x.task).unwrap();
                    v.locality(t, v.node(&x.node).unwrap()).is_local()
                })
                .count()
        };
        // dl-sched: A heartbeats first and takes T1, B gets T2.
        let mut greedy = Vec::new();
        let mut left: Vec<&PendingTask> = v.pending.iter().collect();
        for n in &v.nodes {
            let pick = left
                .iter()
                .position(|t| v.locality(t, n).is_local())
                .unwrap_or(0);
            greedy.push(Assignment {
                task: left.remove(pick).id,
                node: n.name.clone(),
            });
        }
        assert_eq!(local(&greedy), 1);
        let a = Lsap.assign(&v, Trigger::JobAdded(1));
        assert_eq!(a.len(), 2);
        assert_eq!(local(&a), 2, "{a:?}");
    }

    #[test]
    fn more_tasks_than_slots_fills_every_slot_once() {
        let v = ClusterView {
            nodes: vec![node("A"), node("B")],
            pending: (0..5).map(|i| map(i, &["C"])).collect(),
            rack_bandwidth: 125e6,
            cross_rack_bandwidth: 37.5e6,
            ..Default::default()
        };
        let a = Lsap.assign(&v, Trigger::JobAdded(1));
        assert_eq!(a.len(), 2);
        assert_ne!(a[0].node, a[1].node);
    }
}
