//! One decision: the policy asked once over a fresh view, its assignments
//! checked and turned into launch commands, then speculative backups in
//! the slots it left free. When new work appears between heartbeats, every
//! node with a free slot is offered at once ([`MasterState::offer_idle`]),
//! so that a job's first tasks do not wait for a heartbeat.

use super::view::view_shape;
use super::MasterState;
use crate::cluster::Outbox;
use crate::jobs::launch::launch;
use protocol::{BlockInfo, BlockLocation, Command};
use sched::{Assignment, ClusterView, NodeView, TaskId, TaskKind, Trigger};
use std::collections::HashMap;
use std::time::Instant;

impl MasterState {
    /// Asks the policy for assignments over `view` and queues the launches.
    pub(super) fn schedule(
        &mut self,
        view: &mut ClusterView,
        trigger: Trigger,
        now: Instant,
        out: &mut Outbox,
    ) {
        // Asked even with nothing pending while jobs run: learning policies
        // (compat-nb) watch the nodes' load on every heartbeat.
        if view.nodes.is_empty() || view.jobs.is_empty() {
            return;
        }
        let t0 = Instant::now();
        let assignments = self.jobs.assign(view, trigger);
        let took = t0.elapsed();
        self.stats.decided(&self.jobs.scheduler_spec().name, took);
        if !assignments.is_empty() {
            tracing::debug!(n = assignments.len(), ?took, "scheduler decision");
        }
        for a in assignments {
            self.launch(view, a, now, out);
        }
        if self.cfg.scheduler.speculative {
            self.speculate(view, now, out);
        }
    }

    /// Offers every live node with a free slot to the policy, one decision
    /// each (`Trigger::Offer`), as their heartbeats would, because work
    /// appeared that no heartbeat was offered yet: a job arrived, its
    /// reduces became runnable, a task went back to the queue. Without it a
    /// heartbeat policy, which places tasks only on the node that offers,
    /// leaves new work waiting up to a heartbeat interval. Nodes are offered
    /// in the order that favours locality: most pending maps cached there,
    /// then stored there, then by name (the order real heartbeats arrive
    /// in is arbitrary).
    pub(super) fn offer_idle(&mut self, view: &mut ClusterView, now: Instant, out: &mut Outbox) {
        if view.pending.is_empty() {
            return;
        }
        for node in offer_order(view) {
            if view.pending.is_empty() {
                break;
            }
            self.schedule(view, Trigger::Offer(node), now, out);
        }
    }

    /// [`MasterState::offer_idle`] over a view of its own: for an event
    /// that decides nothing else.
    pub(super) fn offer_all(&mut self, now: Instant, out: &mut Outbox) {
        if let Some(mut view) = self.event_view(now) {
            self.offer_idle(&mut view, now, out);
            self.check_view(&view, now);
            self.keep_view(view);
        }
    }

    /// Debug builds (every test) check, at the end of each event that
    /// decided, that the view kept through it is the one a fresh build
    /// gives: a launch or an ending that the view missed would have the
    /// next decision of the same event, or of the next event, place a task
    /// twice or on a full node.
    pub(super) fn check_view(&self, view: &ClusterView, now: Instant) {
        if cfg!(debug_assertions) {
            // A view with no job left is not built at all.
            if self.jobs.active().next().is_none() && view.jobs.is_empty() {
                return;
            }
            let fresh = self.cluster_view(now);
            assert_eq!(
                view_shape(view),
                view_shape(&fresh),
                "the view kept through the event went stale"
            );
        }
    }

    /// Speculative execution (see [`crate::jobs::Job::speculation_candidates`]
    /// for the rule): after the policy's own assignments, so backups only
    /// take the slots it left free, each candidate gets one backup on an
    /// alive worker with a free slot of its kind, not its running worker nor
    /// in `avoid`.
    fn speculate(&mut self, view: &mut ClusterView, now: Instant, out: &mut Outbox) {
        let cands = self.jobs.speculation_candidates(now);
        for (id, not_on) in cands {
            let Some(node) = backup_node(&view.nodes, id.kind, &not_on) else {
                continue;
            };
            let Some(epoch) = self.cluster.alive(&node).map(|w| w.epoch) else {
                continue;
            };
            let Some(attempt) = self.jobs.launch_backup(id, &node, epoch, now) else {
                continue;
            };
            tracing::info!(job = id.job, task = ?id.kind, index = id.index, attempt, node = %node, "speculative backup launched");
            view.backup_launched(id, &node);
            self.view_launched_on(&node);
            self.send_launch(id, &node, attempt, epoch, out);
        }
    }

    fn launch(&mut self, view: &mut ClusterView, a: Assignment, now: Instant, out: &mut Outbox) {
        let Some(node) = view.node(&a.node) else {
            return;
        };
        // The view's running attempts are the tables' (`check_view`).
        let used = node.running.iter().filter(|r| r.id.kind == a.task.kind);
        let fits = match a.task.kind {
            TaskKind::Map => (used.count() as u32) < node.map_slots,
            TaskKind::Reduce => (used.count() as u32) < node.reduce_slots,
        };
        let Some(epoch) = self.cluster.alive(&a.node).map(|w| w.epoch) else {
            return;
        };
        let Some(runnable) = self.jobs.launchable(a.task) else {
            return;
        };
        if !fits || !runnable {
            tracing::warn!(task = ?a.task, node = %a.node, "scheduler returned an impossible assignment; ignored");
            return;
        }
        let Some(attempt) = self.jobs.launch(a.task, &a.node, epoch, now) else {
            return;
        };
        tracing::info!(job = a.task.job, task = ?a.task.kind, index = a.task.index, attempt, node = %a.node, "task launched");
        view.launched(a.task, &a.node);
        self.view_launched_on(&a.node);
        self.send_launch(a.task, &a.node, attempt, epoch, out);
    }

    /// Queues the launch command of `attempt` of task `id` for `node`.
    fn send_launch(&self, id: TaskId, node: &str, attempt: u32, epoch: u64, out: &mut Outbox) {
        let (blocks, cluster) = (&self.blocks, &self.cluster);
        let locate = |b: &BlockInfo| BlockLocation {
            block: *b,
            replicas: blocks.replicas(b.id, cluster),
            cached_on: blocks.cached_on(b.id, cluster),
        };
        let Some(job) = self.jobs.get(id.job) else {
            return;
        };
        let l = launch(job, id, attempt, epoch, &locate);
        out.send(node, Command::Launch(Box::new(l)));
    }
}

/// The nodes with a free slot, most pending maps cached there first, then
/// most stored there, then by name. Counted from the pending maps' holders,
/// so that the cost is the pending maps', not the nodes': the nodes that
/// hold none follow in the view's order, which is by name.
fn offer_order(view: &ClusterView) -> Vec<String> {
    let mut held: HashMap<&str, (usize, usize)> = HashMap::new();
    for t in view.pending.iter().filter(|t| t.kind == TaskKind::Map) {
        for n in &t.cached_on {
            held.entry(n).or_default().0 += 1;
        }
        for n in &t.replicas {
            held.entry(n).or_default().1 += 1;
        }
    }
    let free = |n: &NodeView| n.free_map_slots > 0 || n.free_reduce_slots > 0;
    let mut first: Vec<(usize, usize, &str)> = held
        .iter()
        .filter(|(n, _)| view.node(n).is_some_and(free))
        .map(|(n, &(c, s))| (c, s, *n))
        .collect();
    first.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(b.2)));
    let rest = (view.nodes.iter())
        .filter(|n| free(n) && !held.contains_key(n.name.as_str()))
        .map(|n| n.name.clone());
    first
        .into_iter()
        .map(|(_, _, n)| n.to_string())
        .chain(rest)
        .collect()
}

/// The node for a backup of a `kind` task: alive (in the view), with a
/// free slot of that kind, not in `not_on`; the one with the most free slots
/// (then by name). The view takes the slot once the backup is launched.
fn backup_node(nodes: &[NodeView], kind: TaskKind, not_on: &[String]) -> Option<String> {
    let free = |n: &NodeView| match kind {
        TaskKind::Map => n.free_map_slots,
        TaskKind::Reduce => n.free_reduce_slots,
    };
    nodes
        .iter()
        .filter(|n| free(n) > 0 && !not_on.contains(&n.name))
        .min_by(|a, b| free(b).cmp(&free(a)).then_with(|| a.name.cmp(&b.name)))
        .map(|n| n.name.clone())
}

#[cfg(test)]
mod speculation_tests {
    use super::*;
    use crate::jobs::{Job, JobSpec};
    use common::config::ClusterConfig;
    use protocol::{Registration, TaskRef, TaskReport};
    use std::time::Duration;

    fn state(speculative: bool) -> (MasterState, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!(
            "mr-spec-{}-{}",
            std::process::id(),
            fastrand::u64(..)
        ));
        let toml = format!(
            "token = \"t\"\n[master]\naddr = \"127.0.0.1:7070\"\ndata_dir = {:?}\n\
             [scheduler]\nspeculative = {speculative}\n\
             [[workers]]\nname = \"w1\"\naddr = \"127.0.0.1:7101\"\ndata_dir = \"/x1\"\n\
             [[workers]]\nname = \"w2\"\naddr = \"127.0.0.1:7102\"\ndata_dir = \"/x2\"\n",
            dir.join("m")
        );
        let cfg = ClusterConfig::parse(&toml).unwrap();
        assert_eq!(cfg.scheduler.speculative, speculative);
        (MasterState::open(cfg, Instant::now()).unwrap(), dir)
    }

    fn register(st: &mut MasterState, name: &str, now: Instant) -> u64 {
        st.on_register(
            Registration {
                protocol_version: common::PROTOCOL_VERSION,
                name: name.into(),
                addr: format!("{name}:1"),
                rack: "r1".into(),
                map_slots: 2,
                reduce_slots: 1,
                ..Default::default()
            },
            now,
        )
        .unwrap()
        .epoch
    }

    /// Four maps: 0, 1 on w1, 2, 3 on w2; all but map 3 done after 2 s.
    /// Returns the commands w1 got by 5 s, when map 3 is a straggler.
    fn run(speculative: bool) -> (MasterState, Vec<Command>) {
        let (mut st, dir) = state(speculative);
        let t0 = Instant::now();
        let e1 = register(&mut st, "w1", t0);
        let e2 = register(&mut st, "w2", t0);
        let spec = JobSpec::wordcount_for_tests(1);
        let mut j = Job::new(1, 1, spec, vec![], 4, "fifo", t0);
        for (i, (w, e)) in [("w1", e1), ("w1", e1), ("w2", e2), ("w2", e2)]
            .into_iter()
            .enumerate()
        {
            j.launch(TaskKind::Map, i as u32, w, e, t0);
        }
        st.jobs.insert_for_tests(j);
        let at2 = t0 + Duration::from_secs(2);
        for (i, (w, e)) in [("w1", e1), ("w1", e1), ("w2", e2)].into_iter().enumerate() {
            st.on_task_report(
                TaskReport {
                    worker: w.into(),
                    epoch: e,
                    task: TaskRef {
                        job_id: 1,
                        is_map: true,
                        index: i as u32,
                        attempt: 0,
                    },
                    succeeded: true,
                    ..Default::default()
                },
                at2,
            );
        }
        st.cluster.take_commands("w1");
        let mut out = Outbox::default();
        let now = t0 + Duration::from_secs(5);
        let mut view = st.event_view(now).expect("a job is active");
        st.schedule(&mut view, Trigger::Heartbeat("w1".into()), now, &mut out);
        st.check_view(&view, now);
        st.cluster.flush(out);
        let cmds = st.cluster.take_commands("w1");
        let _ = std::fs::remove_dir_all(dir);
        (st, cmds)
    }

    fn launches(cmds: &[Command]) -> Vec<TaskRef> {
        cmds.iter()
            .filter_map(|c| match c {
                Command::Launch(l) => Some(l.task),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_backup_launches_only_when_enabled() {
        let (st, cmds) = run(false);
        assert!(launches(&cmds).is_empty());
        assert_eq!(st.jobs.get(1).unwrap().speculative_launched(), 0);
        let (st, cmds) = run(true);
        let l = launches(&cmds);
        assert_eq!(l.len(), 1, "{cmds:?}");
        assert_eq!((l[0].is_map, l[0].index, l[0].attempt), (true, 3, 1));
        // The backup holds a slot of w1; w2's attempt keeps its own.
        assert_eq!(st.jobs.slots_used("w1"), (1, 0));
        assert_eq!(st.jobs.slots_used("w2"), (1, 0));
        assert_eq!(st.jobs.get(1).unwrap().speculative_launched(), 1);
    }

    /// A command decided deep inside an event (the job owner, applying a
    /// task report, kills the losing attempt of a speculated task) reaches
    /// the loser's worker's queue when the event ends, with no delivery
    /// step between: the event's one outbox is flushed once.
    #[test]
    fn a_kill_decided_deep_in_a_task_report_reaches_the_losers_queue() {
        let (mut st, _) = run(true);
        // Map 3 runs as attempt 0 on w2 and as its backup, attempt 1, on w1.
        let e1 = st.cluster.get("w1").unwrap().epoch;
        st.cluster.take_commands("w2");
        let backup_won = TaskReport {
            worker: "w1".into(),
            epoch: e1,
            task: TaskRef {
                job_id: 1,
                is_map: true,
                index: 3,
                attempt: 1,
            },
            succeeded: true,
            ..Default::default()
        };
        let reply = st.on_task_report(backup_won, Instant::now());
        let loser = Command::KillTask(TaskRef {
            job_id: 1,
            is_map: true,
            index: 3,
            attempt: 0,
        });
        assert_eq!(
            st.cluster
                .take_commands("w2")
                .into_iter()
                .filter(|c| *c == loser)
                .count(),
            1
        );
        assert!(!reply.commands.contains(&loser), "{:?}", reply.commands);
    }

    #[test]
    fn backup_node_is_never_the_running_worker_and_needs_a_free_slot() {
        let node = |name: &str, free_map: u32| NodeView {
            name: name.into(),
            map_slots: 2,
            free_map_slots: free_map,
            ..Default::default()
        };
        let not_on = vec!["w2".to_string()];
        let mut nodes = vec![node("w1", 0), node("w2", 2), node("w3", 1)];
        assert_eq!(
            backup_node(&nodes, TaskKind::Map, &not_on),
            Some("w3".into())
        );
        // Its slot taken (as the view takes it at the launch): nothing left
        // but the running worker.
        nodes[2].free_map_slots = 0;
        assert_eq!(backup_node(&nodes, TaskKind::Map, &not_on), None);
        assert_eq!(backup_node(&nodes, TaskKind::Reduce, &[]), None);
    }
}
