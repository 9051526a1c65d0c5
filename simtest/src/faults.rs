//! The nemesis: a seeded plan of faults over simulated time, applied by the
//! run between steps. Each fault has an end (restart, repair, release), and
//! everything still broken is healed once the job has ended, so that the
//! checks judge a cluster that had every chance to recover.

use crate::cluster::{Layout, CLIENT, MASTER};
use std::time::Duration;

#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// kill -9 a worker (its disk survives); `Restart` brings it back.
    Crash(usize),
    Restart(usize),
    /// Crash and restart at once.
    Bounce(usize),
    /// kill -9 the master and restart it on the same data directory.
    BounceMaster,
    /// Cut a worker off from the master (both ways); `Repair` heals it.
    Partition(usize),
    Repair(usize),
    /// Cut a rack off from the master, the client and the other racks.
    PartitionRack(usize),
    RepairRack(usize),
    /// Hold the messages between a worker and the master (a paused
    /// process, a stalled link): delivered late on `Release`.
    Hold(usize),
    Release(usize),
    /// A worker sends again every report it sent (late duplicates).
    Replay(usize),
}

#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// (when, fault), by time.
    pub events: Vec<(Duration, Fault)>,
}

impl Plan {
    pub fn random(rng: &mut fastrand::Rng, layout: &Layout) -> Plan {
        let mut events = Vec::new();
        let episodes = rng.usize(0..=5);
        for _ in 0..episodes {
            // While the job runs (it starts at about 0.35 s and takes one
            // to a few seconds), when faults matter.
            let at = Duration::from_millis(rng.u64(300..2500));
            let dur = Duration::from_millis(match rng.u8(0..3) {
                // Shorter than expiry (a flap), around it, far longer.
                0 => rng.u64(20..400),
                1 => rng.u64(400..800),
                _ => rng.u64(800..3000),
            });
            let w = rng.usize(0..layout.workers);
            let (start, stop) = match rng.u8(0..18) {
                0..=2 => (Fault::Crash(w), Some(Fault::Restart(w))),
                3 => (Fault::Bounce(w), None),
                4 | 5 => (Fault::BounceMaster, None),
                6..=8 => (Fault::Partition(w), Some(Fault::Repair(w))),
                9 => {
                    let r = rng.usize(0..layout.racks);
                    (Fault::PartitionRack(r), Some(Fault::RepairRack(r)))
                }
                10..=13 => (Fault::Hold(w), Some(Fault::Release(w))),
                _ => (Fault::Replay(w), None),
            };
            events.push((at, start));
            if let Some(stop) = stop {
                events.push((at + dur, stop));
            }
        }
        events.sort_by_key(|e| e.0);
        Plan { events }
    }
}

/// Applies one fault to the simulation.
pub fn apply(sim: &mut turmoil::Sim<'_>, layout: &Layout, f: &Fault, replay: &[crate::Flag]) {
    let w = |i: usize| layout.worker(i);
    match f {
        Fault::Crash(i) => {
            if sim.is_host_running(w(*i)) {
                sim.crash(w(*i))
            }
        }
        Fault::Restart(i) => {
            if !sim.is_host_running(w(*i)) {
                sim.bounce(w(*i))
            }
        }
        Fault::Bounce(i) => sim.bounce(w(*i)),
        Fault::BounceMaster => sim.bounce(MASTER),
        Fault::Partition(i) => sim.partition(w(*i), MASTER),
        Fault::Repair(i) => sim.repair(w(*i), MASTER),
        Fault::PartitionRack(r) => {
            for (a, b) in rack_cut(layout, *r) {
                sim.partition(a, b);
            }
        }
        Fault::RepairRack(r) => {
            for (a, b) in rack_cut(layout, *r) {
                sim.repair(a, b);
            }
        }
        Fault::Hold(i) => sim.hold(w(*i), MASTER),
        Fault::Release(i) => sim.release(w(*i), MASTER),
        Fault::Replay(i) => *replay[*i].lock().unwrap() = true,
    }
}

/// The links a rack partition cuts.
fn rack_cut(layout: &Layout, r: usize) -> Vec<(String, String)> {
    let inside: Vec<usize> = (0..layout.workers)
        .filter(|i| layout.rack_of(*i) == format!("r{}", r + 1))
        .collect();
    let mut v = Vec::new();
    for &i in &inside {
        v.push((layout.worker(i), MASTER.to_string()));
        v.push((layout.worker(i), CLIENT.to_string()));
        for j in (0..layout.workers).filter(|j| !inside.contains(j)) {
            v.push((layout.worker(i), layout.worker(j)));
        }
    }
    v
}

/// Undoes every fault: every link repaired and released, every crashed
/// worker restarted.
pub fn heal(sim: &mut turmoil::Sim<'_>, layout: &Layout) {
    let mut hosts = vec![MASTER.to_string(), CLIENT.to_string()];
    hosts.extend(layout.worker_names());
    for (n, a) in hosts.iter().enumerate() {
        for b in &hosts[n + 1..] {
            sim.repair(a.as_str(), b.as_str());
            sim.release(a.as_str(), b.as_str());
        }
    }
    for name in layout.worker_names() {
        if !sim.is_host_running(name.as_str()) {
            sim.bounce(name.as_str());
        }
    }
}
