//! Launch on submit: one doorbell per worker name that says whether its
//! queue holds commands. A worker keeps a long poll (`AwaitCommands`)
//! waiting on its bell, so a launch decided between two heartbeats reaches
//! it at once instead of with the next heartbeat.
//!
//! A `tokio::sync::watch` of a bool rather than a `Notify`: the value is
//! the queue's state, set and cleared under the master's lock together
//! with the queue itself, so a poll that arrives after the commands were
//! taken (by a task report's answer) does not wake for nothing, and one
//! that arrives after they were queued wakes at once. Bells are kept per
//! name, not per incarnation, so a poll never waits on a bell that a
//! re-registration replaced.

use std::collections::BTreeMap;
use std::time::Duration;
use tokio::sync::watch;

#[derive(Debug, Default)]
pub struct Doorbells {
    bells: BTreeMap<String, watch::Sender<bool>>,
}

impl Doorbells {
    /// Sets `worker`'s bell to whether its queue holds commands.
    pub fn set(&mut self, worker: &str, has_commands: bool) {
        match self.bells.get(worker) {
            Some(b) => {
                b.send_if_modified(|v| std::mem::replace(v, has_commands) != has_commands);
            }
            None => {
                self.bells
                    .insert(worker.to_string(), watch::channel(has_commands).0);
            }
        }
    }

    /// What a long poll waits on.
    pub fn listen(&mut self, worker: &str) -> Bell {
        let b = self
            .bells
            .entry(worker.to_string())
            .or_insert_with(|| watch::channel(false).0);
        Bell(b.subscribe())
    }
}

/// One worker's bell, held by a long poll outside the master's lock.
#[derive(Debug)]
pub struct Bell(watch::Receiver<bool>);

impl Bell {
    /// Whether the queue holds commands now or comes to within `wait`.
    pub async fn rung_within(mut self, wait: Duration) -> bool {
        matches!(
            tokio::time::timeout(wait, self.0.wait_for(|has| *has)).await,
            Ok(Ok(_))
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_poll_wakes_for_commands_queued_before_or_while_it_waits() {
        let mut d = Doorbells::default();
        d.set("w1", true);
        assert!(d.listen("w1").rung_within(Duration::from_secs(5)).await);
        d.set("w1", false);
        // Nothing queued: the poll times out.
        assert!(!d.listen("w1").rung_within(Duration::from_millis(20)).await);
        let bell = d.listen("w1");
        let poll = tokio::spawn(bell.rung_within(Duration::from_secs(3600)));
        tokio::task::yield_now().await;
        d.set("w1", true);
        assert!(poll.await.unwrap());
    }

    #[tokio::test]
    async fn commands_taken_before_the_poll_runs_do_not_wake_it() {
        let mut d = Doorbells::default();
        let bell = d.listen("w2");
        d.set("w2", true);
        d.set("w2", false);
        assert!(!bell.rung_within(Duration::from_millis(20)).await);
    }
}
