//! Transfers sharing links: each flow crosses a set of links (a node's
//! port in or out, a rack's uplink up or down) and may have a cap of its
//! own; the links' capacities are divided among the flows crossing them by
//! max-min fairness (progressive filling), recomputed whenever a flow
//! starts or ends. This is what TCP flows through shaped ports and uplinks
//! settle to, and what a share fixed at a read's start misses: a read that
//! starts alone and is then joined slows down, and speeds up again when
//! the others end.

use std::collections::BTreeMap;

/// A flow's handle.
pub type FlowId = u64;

/// Below this many bytes a flow counts as done (rounding of `rate * dt`).
const EPS_BYTES: f64 = 1e-3;

#[derive(Debug, Clone)]
struct Flow {
    links: Vec<usize>,
    cap: f64,
    remaining: f64,
    rate: f64,
}

/// The links and the flows crossing them, advanced in time explicitly.
#[derive(Debug, Clone, Default)]
pub struct Network {
    capacity: Vec<f64>,
    flows: BTreeMap<FlowId, Flow>,
    next_id: FlowId,
    /// The time `remaining` was last brought up to date.
    at: f64,
}

impl Network {
    /// Links with these capacities (bytes/s), numbered in order.
    pub fn new(capacity: Vec<f64>) -> Self {
        Network {
            capacity,
            ..Default::default()
        }
    }

    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }

    /// Moves every flow on to `now` at its current rate.
    pub fn advance(&mut self, now: f64) {
        let dt = now - self.at;
        if dt > 0.0 {
            for f in self.flows.values_mut() {
                f.remaining = (f.remaining - f.rate * dt).max(0.0);
            }
        }
        self.at = self.at.max(now);
    }

    /// Starts a flow of `bytes` over `links` at `now`, at most `cap`
    /// bytes/s (`f64::INFINITY`: the links alone limit it; a flow over no
    /// link needs a finite cap). Every rate is recomputed.
    pub fn start(&mut self, now: f64, links: Vec<usize>, bytes: f64, cap: f64) -> FlowId {
        self.advance(now);
        debug_assert!(links.iter().all(|l| *l < self.capacity.len()));
        debug_assert!(!links.is_empty() || cap.is_finite());
        self.next_id += 1;
        self.flows.insert(
            self.next_id,
            Flow {
                links,
                cap,
                remaining: bytes.max(0.0),
                rate: 0.0,
            },
        );
        self.reallocate();
        self.next_id
    }

    /// The flows done by `now` (in id order), removed; the others' rates
    /// recomputed.
    pub fn finish_due(&mut self, now: f64) -> Vec<FlowId> {
        self.advance(now);
        let done: Vec<FlowId> = self
            .flows
            .iter()
            .filter(|(_, f)| f.remaining <= EPS_BYTES || f.remaining / f.rate <= 1e-9)
            .map(|(id, _)| *id)
            .collect();
        for id in &done {
            self.flows.remove(id);
        }
        if !done.is_empty() {
            self.reallocate();
        }
        done
    }

    /// When the next flow ends at the current rates, if any runs.
    pub fn next_end(&self) -> Option<f64> {
        self.flows
            .values()
            .map(|f| self.at + f.remaining / f.rate)
            .min_by(f64::total_cmp)
    }

    /// A flow's current rate, bytes/s.
    pub fn rate(&self, id: FlowId) -> Option<f64> {
        self.flows.get(&id).map(|f| f.rate)
    }

    /// Progressive filling: every unfrozen flow's rate rises together until
    /// a link it crosses is full or it reaches its cap; those flows freeze
    /// and the rest go on. The result is the max-min fair allocation.
    fn reallocate(&mut self) {
        let mut left = self.capacity.clone();
        let mut users = vec![0usize; left.len()];
        let mut open: Vec<FlowId> = Vec::with_capacity(self.flows.len());
        for (id, f) in self.flows.iter_mut() {
            f.rate = 0.0;
            open.push(*id);
            for &l in &f.links {
                users[l] += 1;
            }
        }
        while !open.is_empty() {
            let by_link = users
                .iter()
                .zip(&left)
                .filter(|(n, _)| **n > 0)
                .map(|(n, c)| c / *n as f64)
                .fold(f64::INFINITY, f64::min);
            let by_cap = open
                .iter()
                .map(|id| {
                    let f = &self.flows[id];
                    f.cap - f.rate
                })
                .fold(f64::INFINITY, f64::min);
            let step = by_link.min(by_cap).max(0.0);
            if !step.is_finite() {
                // Only flows with neither a link nor a cap: refused by
                // `start`'s contract; give them no rate rather than loop.
                break;
            }
            for id in &open {
                let f = self.flows.get_mut(id).expect("open flow");
                f.rate += step;
                for &l in &f.links {
                    left[l] -= step;
                }
            }
            let full: Vec<bool> = left
                .iter()
                .zip(&self.capacity)
                .map(|(l, c)| *l <= c * 1e-12)
                .collect();
            open.retain(|id| {
                let f = &self.flows[id];
                let frozen = f.rate >= f.cap * (1.0 - 1e-12) || f.links.iter().any(|&l| full[l]);
                if frozen {
                    for &l in &f.links {
                        users[l] -= 1;
                    }
                }
                !frozen
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three flows, computed by hand. Link 0 (10 B/s) carries a and b;
    /// link 1 (4 B/s) carries b and c. Filling: all rise to 2, when link 1
    /// is full (b, c frozen at 2); a rises alone to 8, filling link 0.
    #[test]
    fn max_min_shares_computed_by_hand() {
        let mut n = Network::new(vec![10.0, 4.0]);
        let a = n.start(0.0, vec![0], 80.0, f64::INFINITY);
        assert_eq!(n.rate(a), Some(10.0));
        let b = n.start(0.0, vec![0, 1], 12.0, f64::INFINITY);
        let c = n.start(0.0, vec![1], 40.0, f64::INFINITY);
        assert_eq!(
            (n.rate(a), n.rate(b), n.rate(c)),
            (Some(8.0), Some(2.0), Some(2.0))
        );
        // b ends first: 12 B at 2 B/s, at t = 6. a has 80 - 48 = 32 left,
        // c 40 - 12 = 28.
        assert_eq!(n.next_end(), Some(6.0));
        assert!(n.finish_due(5.9).is_empty());
        assert_eq!(n.finish_due(6.0), vec![b]);
        // Alone on their links again: a at 10, c at 4. a ends at 6 + 3.2,
        // c at 6 + 7.
        assert_eq!((n.rate(a), n.rate(c)), (Some(10.0), Some(4.0)));
        assert!((n.next_end().unwrap() - 9.2).abs() < 1e-9);
        assert_eq!(n.finish_due(9.2), vec![a]);
        assert!((n.next_end().unwrap() - 13.0).abs() < 1e-9);
        assert_eq!(n.finish_due(13.0), vec![c]);
        assert!(n.is_empty() && n.next_end().is_none());
    }

    /// A flow's own cap binds before the link's share, and the capacity it
    /// leaves goes to the others.
    #[test]
    fn a_capped_flow_leaves_the_rest_to_others() {
        let mut n = Network::new(vec![9.0]);
        let slow = n.start(0.0, vec![0], 100.0, 1.0);
        let x = n.start(0.0, vec![0], 100.0, f64::INFINITY);
        let y = n.start(0.0, vec![0], 100.0, f64::INFINITY);
        assert_eq!(n.rate(slow), Some(1.0));
        assert_eq!((n.rate(x), n.rate(y)), (Some(4.0), Some(4.0)));
        // A local transfer: no link, its cap only.
        let local = n.start(0.0, vec![], 50.0, 25.0);
        assert_eq!(n.rate(local), Some(25.0));
        assert_eq!(n.next_end(), Some(2.0));
    }
}
