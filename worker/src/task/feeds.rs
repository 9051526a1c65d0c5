//! Reduce slow-start on the worker: map outputs that finish after a reduce
//! was launched reach it here. The executor subscribes a reduce attempt
//! when it launches it, before any later command can name its job (the
//! commands of one answer are carried out in order); the master's
//! `MapOutputs` commands are published to every running reduce of the job;
//! the attempt's subscription ends with it.

use crate::task::table::TaskKey;
use common::sync::lock;
use protocol::MapOutputLocation;
use std::collections::HashMap;
use std::sync::Mutex;
use tokio::sync::mpsc;

/// Map outputs a running reduce is told of after its launch.
pub type Feed = mpsc::UnboundedReceiver<Vec<MapOutputLocation>>;

/// One subscriber: a reduce attempt.
type Sub = (TaskKey, u32);
type Sender = mpsc::UnboundedSender<Vec<MapOutputLocation>>;

/// The running reduces' subscriptions, by job.
#[derive(Default)]
pub struct Feeds {
    subs: Mutex<HashMap<u64, Vec<(Sub, Sender)>>>,
}

impl Feeds {
    /// Subscribes `attempt` of reduce `key` (another attempt of the same
    /// task is dropped: it is being replaced).
    pub fn subscribe(&self, key: TaskKey, attempt: u32) -> Feed {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut subs = lock(&self.subs);
        let job = subs.entry(key.0).or_default();
        job.retain(|((k, _), _)| *k != key);
        job.push(((key, attempt), tx));
        rx
    }

    /// Ends the subscription of `attempt` of `key`, if it is still its.
    pub fn unsubscribe(&self, key: TaskKey, attempt: u32) {
        let mut subs = lock(&self.subs);
        if let Some(job) = subs.get_mut(&key.0) {
            job.retain(|(s, _)| *s != (key, attempt));
            if job.is_empty() {
                subs.remove(&key.0);
            }
        }
    }

    /// Tells every running reduce of `job` of `outputs`; returns how many
    /// heard.
    pub fn publish(&self, job: u64, outputs: Vec<MapOutputLocation>) -> usize {
        let subs = lock(&self.subs);
        let Some(job) = subs.get(&job) else {
            return 0;
        };
        job.iter()
            .filter(|(_, tx)| tx.send(outputs.clone()).is_ok())
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(i: u32) -> MapOutputLocation {
        MapOutputLocation {
            map_index: i,
            ..Default::default()
        }
    }

    #[test]
    fn outputs_reach_the_running_reduces_of_their_job_only() {
        let f = Feeds::default();
        let mut a = f.subscribe((1, false, 0), 0);
        let mut b = f.subscribe((1, false, 1), 0);
        let mut other = f.subscribe((2, false, 0), 0);
        assert_eq!(f.publish(1, vec![loc(3)]), 2);
        assert_eq!(a.try_recv().unwrap(), vec![loc(3)]);
        assert_eq!(b.try_recv().unwrap(), vec![loc(3)]);
        assert!(other.try_recv().is_err());
        // An older attempt's end leaves the newer one subscribed.
        let mut a2 = f.subscribe((1, false, 0), 1);
        f.unsubscribe((1, false, 0), 0);
        assert_eq!(f.publish(1, vec![loc(4)]), 2);
        assert_eq!(a2.try_recv().unwrap(), vec![loc(4)]);
        f.unsubscribe((1, false, 0), 1);
        assert_eq!(f.publish(1, vec![loc(4)]), 1);
        assert!(a.try_recv().is_err());
        assert_eq!(f.publish(3, vec![loc(5)]), 0);
    }
}
