//! The one route of commands to workers. Each event the coordinator
//! handles (a registration, a heartbeat, a task report, a file operation,
//! a tick, ...) gets one `Outbox`; the owners put what workers must do in
//! it however deep the call that decides it (the loser of a speculated
//! task found in a task report, the holders of a block a commit deleted);
//! the coordinator flushes it into the workers' queues once, at the end of
//! the event, still under the master's lock ([`super::Cluster::flush`]).
//! Nothing else queues a command, so no command waits on a delivery that
//! someone may forget: an outbox dropped with commands in it panics in
//! debug builds.

use protocol::Command;

#[derive(Debug, Default)]
pub struct Outbox {
    /// `(worker name, command)`, in the order they were decided.
    commands: Vec<(String, Command)>,
}

impl Outbox {
    /// Queues `c` for `worker`; it reaches the worker's queue when the
    /// event ends, if the worker is alive then.
    pub fn send(&mut self, worker: &str, c: Command) {
        self.commands.push((worker.to_string(), c));
    }

    /// Whether `c` is already queued for `worker` in this event.
    pub fn holds(&self, worker: &str, c: &Command) -> bool {
        self.commands.iter().any(|(w, x)| w == worker && x == c)
    }

    /// Takes what this event queued for `worker` so far, in order: for the
    /// answer to a worker that leaves, whose queue dies with it.
    pub fn take_for(&mut self, worker: &str) -> Vec<Command> {
        let (mine, rest) = std::mem::take(&mut self.commands)
            .into_iter()
            .partition(|(w, _)| w == worker);
        self.commands = rest;
        mine.into_iter().map(|(_, c)| c).collect()
    }

    /// Drops what this event queued for `worker` so far: it registers
    /// again, and commands meant for its previous incarnation die with it,
    /// as its queue does.
    pub fn discard_for(&mut self, worker: &str) {
        self.commands.retain(|(w, _)| w != worker);
    }

    /// Every command queued, in order, for a test to look at.
    #[cfg(test)]
    pub fn into_commands(mut self) -> Vec<(String, Command)> {
        self.commands.drain(..).collect()
    }

    /// Every command, in order, leaving the outbox empty (for the flush).
    pub(super) fn drain(&mut self) -> std::vec::Drain<'_, (String, Command)> {
        self.commands.drain(..)
    }
}

impl Drop for Outbox {
    fn drop(&mut self) {
        debug_assert!(
            self.commands.is_empty() || std::thread::panicking(),
            "an event's outbox was dropped with commands never flushed: {:?}",
            self.commands
        );
    }
}
