//! `[master]`: the master's addresses, directories and leases.

use super::*;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MasterConfig {
    /// Where the master listens for workers and clients (gRPC).
    pub addr: String,
    /// Edit log and snapshots of the namespace; job history and the
    /// scheduler's learnt state.
    pub data_dir: PathBuf,
    /// More directories holding the namespace's edit log and snapshots,
    /// written alike with `data_dir`'s, as HDFS writes every
    /// `dfs.namenode.name.dir`: with them on other disks, losing one disk
    /// loses no acknowledged edit and does not stop the master. Adding one
    /// is one line: it is filled from the others at the next start. No
    /// two may be the same or one inside another.
    #[serde(default)]
    pub data_dirs: Vec<PathBuf>,
    /// Edits between two snapshots; a snapshot bounds restart replay time.
    #[serde(default = "default_snapshot_every")]
    pub snapshot_every: u64,
    /// Where the master serves its web UI, REST API (`/api/...`) and
    /// Prometheus `/metrics` over HTTP; none when absent. Must differ from
    /// `addr`: gRPC and the browser do not share a port.
    #[serde(default)]
    pub http_addr: Option<String>,
    /// The fraction of the namespace's blocks that must have a reported
    /// replica before the master leaves safe mode after a start (no
    /// deletion, no re-replication before): HDFS's
    /// `dfs.namenode.safemode.threshold-pct`. In `0.0..=1.0`; 0 leaves it
    /// once the heartbeat expiry has passed.
    #[serde(default = "default_safemode_threshold")]
    pub safemode_threshold: f64,
    /// How long a worker keeps a block the namespace does not know, in its
    /// quarantine directory, before deleting it: time for an operator to
    /// restore an older or lost fsimage and get the blocks back. Read by
    /// the workers (they share this file).
    #[serde(deserialize_with = "de_duration", default = "default_quarantine_grace")]
    pub quarantine_grace: Duration,
    /// How long the holder of a write may stay silent (no create, no new
    /// block) before another client's create of the same path may recover
    /// its lease: HDFS's LeaseManager soft limit (60 s there too). Shorter
    /// frees a path sooner after a writer dies; longer spares a slow writer
    /// that fills a block more slowly than this.
    #[serde(deserialize_with = "de_duration", default = "default_lease_soft")]
    pub lease_soft: Duration,
    /// Silence after which the master itself recovers a lease, closing the
    /// file at its last complete block: HDFS's LeaseManager hard limit (1 h
    /// there too), so that a writer killed mid-put neither locks its path
    /// nor leaves orphan blocks until the next restart. At least `lease_soft`.
    #[serde(deserialize_with = "de_duration", default = "default_lease_hard")]
    pub lease_hard: Duration,
    /// Free space each of the master's metadata disks (under `data_dir`
    /// and every `data_dirs`) must keep: below it the master enters safe
    /// mode by itself, before a full disk fails an edit-log write, and
    /// leaves it once space is back. HDFS's
    /// `dfs.namenode.resource.du.reserved` (100 MiB there too).
    #[serde(deserialize_with = "de_size", default = "default_reserved_space")]
    pub reserved_space: u64,
}

impl MasterConfig {
    /// Where the namespace's edit log and snapshots are written:
    /// `data_dir`, then every `data_dirs`.
    pub fn metadata_dirs(&self) -> Vec<PathBuf> {
        std::iter::once(&self.data_dir)
            .chain(&self.data_dirs)
            .cloned()
            .collect()
    }

    /// The metadata directories are distinct and none is inside another:
    /// two copies in one place are one copy, and a copy inside another
    /// directory would be written over by it. Compared as written (after
    /// dropping `.` and trailing slashes): symbolic links and mounts are
    /// the operator's to get right.
    pub(super) fn validate_dirs(&self) -> Result<(), String> {
        let dirs = self.metadata_dirs();
        let norm: Vec<PathBuf> = (dirs.iter())
            .map(|d| {
                (d.components())
                    .filter(|c| *c != std::path::Component::CurDir)
                    .collect()
            })
            .collect();
        for i in 0..dirs.len() {
            for j in i + 1..dirs.len() {
                let (a, b) = (&dirs[i], &dirs[j]);
                if norm[i] == norm[j] {
                    return Err(format!(
                        "master.data_dirs: {} and {} are the same directory; data_dir and \
                         every data_dirs entry each hold a copy of the namespace, so each \
                         needs its own",
                        a.display(),
                        b.display()
                    ));
                }
                let (outer, inner) = if norm[j].starts_with(&norm[i]) {
                    (a, b)
                } else if norm[i].starts_with(&norm[j]) {
                    (b, a)
                } else {
                    continue;
                };
                return Err(format!(
                    "master.data_dirs: {} is inside {}; each copy of the namespace needs a \
                     directory of its own, not nested in another (best on another disk)",
                    inner.display(),
                    outer.display()
                ));
            }
        }
        Ok(())
    }
}

pub(super) fn default_reserved_space() -> u64 {
    100 << 20
}

pub(super) fn default_snapshot_every() -> u64 {
    10_000
}

pub(super) fn default_safemode_threshold() -> f64 {
    0.999
}

pub(super) fn default_quarantine_grace() -> Duration {
    Duration::from_secs(24 * 3600)
}

pub(super) fn default_lease_soft() -> Duration {
    Duration::from_secs(60)
}

pub(super) fn default_lease_hard() -> Duration {
    Duration::from_secs(3600)
}
