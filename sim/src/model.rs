//! How long a task runs. A map: compute time (a fixed part, plus parts
//! proportional to its input and to its output), plus the time to read
//! the input at the bandwidth of its locality level
//! (or, with `shared_reads`, over the modelled network), with a little
//! seeded jitter. A reduce: its fetches over the network, then a fixed
//! part plus time proportional to its partition. The defaults are this project's measurements on
//! the emulated LAN at 1 Gbit/s host ports and 300 Mbit/s rack uplinks (a
//! 64 MiB block moved in 0.04 s node-local, 0.56 s rack-local, 1.9 s
//! off-rack); `mr sim calibrate` fits them to a real cluster's history.

use sched::Locality;

const MIB: f64 = (1 << 20) as f64;

#[derive(Debug, Clone, PartialEq)]
pub struct TaskModel {
    /// Seconds of compute per MiB of input.
    pub compute_s_per_mib: f64,
    /// A map's compute besides its input: a fixed part (launch, output
    /// file, commit) and seconds per MiB it emits. Both 0 by default (the
    /// papers' scenarios charge compute by input alone); `mr sim
    /// calibrate` fits them, because a map's work follows what it emits as
    /// much as what it reads: swim maps of one block take 0.03 s emitting
    /// 0.2 MiB and 0.4 s emitting 5 MiB on the same LAN.
    pub map_fixed_s: f64,
    pub compute_s_per_out_mib: f64,
    /// Read bandwidth per locality level, bytes/s, in [`Locality::ALL`]
    /// order: cache, node, cache-rack, rack, off-rack.
    pub bandwidth: [f64; 5],
    /// Each duration is scaled by a uniform factor in 1 ± jitter.
    pub jitter: f64,
    /// The job's tail after its last task (its last reduce, or its last
    /// map when it has no reduce): the commit, as a fixed part plus seconds
    /// per MiB of shuffle. Both 0 by default; `mr sim calibrate` fits them
    /// from the history's job ends.
    pub tail_fixed_s: f64,
    pub tail_s_per_shuffle_mib: f64,
    /// A reduce's time once its fetches are done (merge, the reduce
    /// function, the output write): a fixed part (launch, output file,
    /// commit of its part) plus seconds per MiB of its partition.
    pub reduce_fixed_s: f64,
    pub reduce_s_per_mib: f64,
    /// Remote transfers (map reads, shuffle fetches) share the network:
    /// each crosses its source's port out, its destination's port in and,
    /// between racks, both racks' uplinks; ports run at the rack level's
    /// bandwidth, uplinks at the off-rack level's, and concurrent transfers
    /// share them max-min fairly, re-evaluated whenever one starts or ends
    /// (`crate::network`). Off by default (the papers' scenarios were
    /// calibrated without it): each read then takes its level's bandwidth
    /// alone.
    pub shared_reads: bool,
}

impl Default for TaskModel {
    fn default() -> Self {
        TaskModel {
            compute_s_per_mib: 0.015,
            map_fixed_s: 0.0,
            compute_s_per_out_mib: 0.0,
            bandwidth: [4e9, 1.6e9, 120e6, 120e6, 35e6],
            jitter: 0.1,
            tail_fixed_s: 0.0,
            tail_s_per_shuffle_mib: 0.0,
            reduce_fixed_s: 0.0,
            reduce_s_per_mib: 0.015,
            shared_reads: false,
        }
    }
}

impl TaskModel {
    pub fn validate(&self) -> Result<(), String> {
        if ![
            self.compute_s_per_mib,
            self.map_fixed_s,
            self.compute_s_per_out_mib,
        ]
        .iter()
        .all(|x| *x >= 0.0 && x.is_finite())
        {
            return Err("the model's map compute must be 0 or more seconds".into());
        }
        if self.bandwidth.iter().any(|b| !(*b > 0.0 && b.is_finite())) {
            return Err("the model's bandwidths must be positive".into());
        }
        if !(0.0..1.0).contains(&self.jitter) {
            return Err("the model's jitter must be within 0..1".into());
        }
        if ![self.tail_fixed_s, self.tail_s_per_shuffle_mib]
            .iter()
            .all(|x| *x >= 0.0 && x.is_finite())
        {
            return Err("the model's tail must be 0 or more seconds".into());
        }
        if ![self.reduce_fixed_s, self.reduce_s_per_mib]
            .iter()
            .all(|x| *x >= 0.0 && x.is_finite())
        {
            return Err("the model's reduce time must be 0 or more seconds".into());
        }
        Ok(())
    }

    /// From a job's last task end to its commit, for `shuffle` bytes.
    pub fn tail_s(&self, shuffle: u64) -> f64 {
        self.tail_fixed_s + shuffle as f64 / MIB * self.tail_s_per_shuffle_mib
    }

    /// A map's compute without jitter, reading `bytes` and emitting `out`.
    pub fn map_compute_s(&self, bytes: u64, out: u64) -> f64 {
        self.map_fixed_s
            + bytes as f64 / MIB * self.compute_s_per_mib
            + out as f64 / MIB * self.compute_s_per_out_mib
    }

    /// Seconds without jitter.
    pub fn mean_duration(&self, level: Locality, bytes: u64, out: u64) -> f64 {
        let i = Locality::ALL.iter().position(|l| *l == level).unwrap_or(4);
        self.map_compute_s(bytes, out) + bytes as f64 / self.bandwidth[i]
    }

    /// The share of a task's time spent reading its input, as a worker
    /// reports it (`read_s`).
    pub fn read_fraction(&self, level: Locality, bytes: u64, out: u64) -> f64 {
        let i = Locality::ALL.iter().position(|l| *l == level).unwrap_or(4);
        let total = self.mean_duration(level, bytes, out);
        if total > 0.0 {
            bytes as f64 / self.bandwidth[i] / total
        } else {
            0.0
        }
    }

    /// A reduce's time after its fetches, for a partition of `bytes`,
    /// with the jitter.
    pub fn reduce_duration(&self, bytes: u64, rng: &mut fastrand::Rng) -> f64 {
        let f = 1.0 + self.jitter * (2.0 * rng.f64() - 1.0);
        (self.reduce_fixed_s + bytes as f64 / MIB * self.reduce_s_per_mib) * f
    }

    pub fn duration(&self, level: Locality, bytes: u64, out: u64, rng: &mut fastrand::Rng) -> f64 {
        let f = 1.0 + self.jitter * (2.0 * rng.f64() - 1.0);
        self.mean_duration(level, bytes, out) * f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_reads_cost_what_the_lan_measured() {
        let m = TaskModel::default();
        let b = 64 << 20;
        let compute = 64.0 * m.compute_s_per_mib;
        let read = |l| m.mean_duration(l, b, 0) - compute;
        assert!(read(Locality::NodeLocal) < 0.05);
        assert!((read(Locality::RackLocal) - 0.56).abs() < 0.02);
        assert!((read(Locality::OffRack) - 1.9).abs() < 0.02);
        assert!(read(Locality::CacheLocal) < read(Locality::NodeLocal));
        let mut rng = fastrand::Rng::with_seed(1);
        for _ in 0..100 {
            let d = m.duration(Locality::NodeLocal, b, 0, &mut rng);
            let mean = m.mean_duration(Locality::NodeLocal, b, 0);
            assert!((d - mean).abs() <= mean * m.jitter + 1e-12);
        }
    }
}
