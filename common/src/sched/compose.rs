//! Job ordering and locality technique, kept apart: the matchmaking paper
//! evaluates FIFO and Fair each with delay scheduling and with matchmaking,
//! and HybSMRP pairs its dynamic priority with a localization ID. A
//! [`Composed`] scheduler asks a [`JobOrder`] for the order in which jobs
//! are offered a node's slots, and a [`Technique`] for which of their maps
//! the node gets; reduces are placed by [`super::assign_reduces`].

use super::*;

/// The order in which jobs are offered slots (FIFO, fair share, capacity,
/// HybSMRP's dynamic priority).
pub trait JobOrder: Send {
    fn name(&self) -> &'static str;
    fn order(&mut self, view: &ClusterView) -> Vec<u64>;
    fn on_job_added(&mut self, _job: &JobView) {}
}

/// Which maps a node gets, given jobs in order (Hadoop's default rule,
/// delay scheduling, matchmaking, the localization ID).
pub trait Technique: Send {
    fn name(&self) -> &'static str;
    fn pick(&mut self, view: &ClusterView, node: &NodeView, order: &[u64]) -> Vec<Assignment>;
    fn on_job_added(&mut self, _job: &JobView) {}
}

pub struct Composed {
    /// The name it was selected with.
    pub name: &'static str,
    pub order: Box<dyn JobOrder>,
    pub technique: Box<dyn Technique>,
}

impl Scheduler for Composed {
    fn name(&self) -> &'static str {
        self.name
    }

    fn assign(&mut self, view: &ClusterView, trigger: Trigger) -> Vec<Assignment> {
        let Some(node) = trigger.node().and_then(|n| view.node(n)) else {
            return vec![];
        };
        let order = self.order.order(view);
        let mut out = self.technique.pick(view, node, &order);
        out.extend(assign_reduces(view, node, &order));
        out
    }

    fn on_job_added(&mut self, job: &JobView) {
        self.order.on_job_added(job);
        self.technique.on_job_added(job);
    }
}

/// Strict submission order.
#[derive(Debug, Default)]
pub struct FifoOrder;

impl JobOrder for FifoOrder {
    fn name(&self) -> &'static str {
        "fifo"
    }
    fn order(&mut self, view: &ClusterView) -> Vec<u64> {
        view.jobs_fifo()
    }
}

/// Hadoop's default locality rule (see [`super::fifo`]).
#[derive(Debug, Default)]
pub struct HadoopDefault;

impl Technique for HadoopDefault {
    fn name(&self) -> &'static str {
        "default"
    }
    fn pick(&mut self, view: &ClusterView, node: &NodeView, order: &[u64]) -> Vec<Assignment> {
        super::fifo::assign_maps_fifo(view, node, order)
    }
}
