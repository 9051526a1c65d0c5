//! Job ordering and locality technique, kept apart: the matchmaking paper
//! evaluates FIFO and Fair each with delay scheduling and with matchmaking,
//! and HybSMRP pairs its dynamic priority with a localization ID. A
//! [`Composed`] scheduler asks a [`JobOrder`] for the order in which jobs
//! are offered a node's slots, and a [`Technique`] for which of their maps
//! the node gets; reduces are placed by [`super::assign_reduces`].
//!
//! The technique owns the slot loop of a heartbeat but asks a [`Queue`] for
//! the job order before each slot and tells it of each launch: an order
//! that depends on what runs (fair share, capacity) sorts again after every
//! assignment, as Hadoop's Fair and Capacity schedulers do, so that a
//! heartbeat's free slots are spread over pools or queues instead of all
//! going to whichever was first when the heartbeat came in.

use super::*;
use std::collections::HashMap;

/// The order in which jobs are offered slots (FIFO, fair share, capacity,
/// HybSMRP's dynamic priority).
pub trait JobOrder: Send {
    fn name(&self) -> &'static str;
    fn order(&mut self, view: &ClusterView) -> Vec<u64>;
    /// Whether the order changes as this heartbeat launches maps, and so
    /// must be computed again after each one ([`JobOrder::order_after`]).
    fn resorts(&self) -> bool {
        false
    }
    /// The order once this heartbeat has launched `launched` more maps
    /// (job → count) than the view shows running; asked only when
    /// [`JobOrder::resorts`].
    fn order_after(&mut self, view: &ClusterView, _launched: &HashMap<u64, u32>) -> Vec<u64> {
        self.order(view)
    }
    fn on_job_added(&mut self, _job: &JobView) {}
}

/// The jobs in the order they are offered a heartbeat's next slot.
pub struct Queue<'a> {
    view: &'a ClusterView,
    /// The order to ask again after each launch; `None`: it does not change
    /// within a heartbeat.
    resort: Option<&'a mut dyn JobOrder>,
    jobs: Vec<u64>,
    /// Maps launched so far in this heartbeat, per job.
    launched: HashMap<u64, u32>,
}

impl<'a> Queue<'a> {
    /// An order that holds for the whole heartbeat.
    pub fn fixed(view: &'a ClusterView, jobs: Vec<u64>) -> Self {
        Queue {
            view,
            resort: None,
            jobs,
            launched: HashMap::new(),
        }
    }

    /// `order`'s order now (`jobs`, which it computed), asked again after
    /// each launch if it re-sorts.
    pub fn new(view: &'a ClusterView, order: &'a mut dyn JobOrder, jobs: Vec<u64>) -> Self {
        let resort = if order.resorts() { Some(order) } else { None };
        Queue {
            view,
            resort,
            jobs,
            launched: HashMap::new(),
        }
    }

    /// Jobs in the order they are offered the next slot.
    pub fn jobs(&self) -> &[u64] {
        &self.jobs
    }

    /// Whether the order may change after a launch.
    pub fn resorts(&self) -> bool {
        self.resort.is_some()
    }

    /// A map of `job` was given a slot of this heartbeat.
    pub fn launched(&mut self, job: u64) {
        if let Some(order) = self.resort.as_deref_mut() {
            *self.launched.entry(job).or_default() += 1;
            self.jobs = order.order_after(self.view, &self.launched);
        }
    }
}

/// Which maps a node gets, given jobs in order (Hadoop's default rule,
/// delay scheduling, matchmaking, the localization ID).
pub trait Technique: Send {
    fn name(&self) -> &'static str;
    fn pick(&mut self, view: &ClusterView, node: &NodeView, queue: &mut Queue) -> Vec<Assignment>;
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
        let mut queue = Queue::new(view, self.order.as_mut(), order.clone());
        let mut out = self.technique.pick(view, node, &mut queue);
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
