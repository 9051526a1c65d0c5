//! The scheduler seam: what the master knows at a decision point
//! ([`ClusterView`]), what a policy returns ([`Assignment`]), and the
//! policies themselves, one file each. Pure code with no I/O and no clock of
//! its own (`now` comes in the view), so the master, the simulator and unit
//! tests run exactly the same decisions.
//! How it fits with the other crates: `docs/architecture.md`.

pub mod acl;
pub mod atlas;
pub mod capacity;
pub mod clqlmrs;
pub mod compat_nb;
pub mod compose;
pub mod delay;
pub mod error;
pub mod fair;
pub mod fifo;
pub mod hungarian;
pub mod hybsmrp;
pub mod index;
pub mod lsap;
pub mod lsap_fair;
pub mod matchmaking;
pub mod pruned;
pub mod registry;
pub mod shares;
pub mod synth;
pub mod task;
#[cfg(test)]
pub(crate) mod testkit;
pub mod view;
mod view_update;

pub use error::SchedError;
pub use index::{JobInput, LocalityIndex};
pub use registry::{build, check_config, SchedulerSpec};
pub use view::*;

/// A placement policy. Called on a heartbeat from a node (or on an event);
/// returns at most as many assignments as there are free slots.
pub trait Scheduler: Send {
    /// The name it was selected with.
    fn name(&self) -> &'static str;
    fn assign(&mut self, view: &ClusterView, trigger: Trigger) -> Vec<Assignment>;
    fn on_job_added(&mut self, _job: &JobView) {}
    /// Feedback for learning schedulers (SARSA reward, Naive-Bayes training).
    fn on_task_finished(&mut self, _view: &ClusterView, _report: &TaskReport) {}
    /// What a learning policy has learnt (the CLQLMRS Q-table, the
    /// Naive-Bayes counts), as text the master keeps in its data directory
    /// so that a restart does not forget it. `None`: nothing worth keeping.
    fn save_state(&self) -> Option<String> {
        None
    }
    /// Takes back what [`Scheduler::save_state`] wrote. An error leaves the
    /// policy as it was (the master logs it and starts fresh).
    fn load_state(&mut self, _state: &str) -> Result<(), String> {
        Ok(())
    }
}

/// Reduce placement shared by every policy that has no opinion on reduces
/// (none of the papers places reduces): at most one reduce per heartbeat, as
/// Hadoop's JobQueueTaskScheduler does, from jobs in queue order whose maps
/// are all done.
pub fn assign_reduces(
    view: &ClusterView,
    node: &NodeView,
    jobs_in_order: &[u64],
) -> Vec<Assignment> {
    if node.free_reduce_slots == 0 {
        return vec![];
    }
    let ix = view.locality_index();
    if ix.is_some_and(|ix| ix.reduce_count() == 0) {
        return vec![];
    }
    for job in jobs_in_order {
        let usable = |t: &&PendingTask| !t.avoids(&node.name, &view.nodes);
        let first = match ix {
            // The job's reduces in `pending` order, as the scan meets them.
            Some(ix) => ix.reduces_of(*job).map(|p| &view.pending[p]).find(usable),
            None => view
                .pending
                .iter()
                .filter(|t| t.job == *job && t.kind == TaskKind::Reduce)
                .find(usable),
        };
        if let Some(t) = first {
            return vec![Assignment {
                task: t.id,
                node: node.name.clone(),
            }];
        }
    }
    vec![]
}
