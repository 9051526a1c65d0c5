//! Safe mode, as HDFS's NameNode has it: after a start the namespace is
//! loaded but where its blocks are is not known until workers report. Until
//! enough of them have (a `threshold` fraction of the namespace's blocks
//! with a live replica), or an operator leaves it, the master serves reads
//! but deletes nothing and re-replicates nothing: a block that looks
//! missing or over-replicated then may only not have been reported yet.
//! An operator can also enter it by hand (before maintenance); then only
//! an operator leaves it.
//!
//! Clients' writes and deletes are refused meanwhile, as HDFS's NameNode
//! throws its `SafeModeException` ("Name node is in safe mode"): the
//! namespace is read-only while the block map is incomplete, and an
//! operator entering it for maintenance wants nothing to change. Reads,
//! `stat` and `ls` go on. See [`SafeModeStatus::refusal`].
//!
//! A third way in: the metadata disk running low (HDFS's
//! NameNodeResourceChecker against `dfs.namenode.resource.du.reserved`).
//! A full disk fails an edit-log write, so the master stops taking
//! namespace changes while it still has room to log them, and takes them
//! again once space is back; that reason lasts as long as the disk is
//! low, whatever an operator does, and does not end a manual safe mode.

use std::time::Instant;

#[derive(Debug, Clone)]
pub struct SafeMode {
    /// True while no block is deleted and none re-replicated.
    on: bool,
    /// Entered by an operator: only an operator leaves it.
    manual: bool,
    /// The fraction of the namespace's blocks that must have a reported
    /// replica before safe mode ends by itself (HDFS's
    /// `dfs.namenode.safemode.threshold-pct`, 0.999).
    threshold: f64,
    /// And not before this: workers need a heartbeat expiry to register
    /// (HDFS's `safemode.extension`).
    not_before: Instant,
    /// Why the metadata disk is too full (see the module doc); safe mode
    /// holds while this is set.
    low_resources: Option<String>,
}

/// What `mr admin safemode get` shows.
#[derive(Debug, Clone, PartialEq)]
pub struct SafeModeStatus {
    pub on: bool,
    pub manual: bool,
    pub threshold: f64,
    /// Namespace blocks with at least one live replica reported.
    pub reported_blocks: u64,
    pub total_blocks: u64,
    /// Set while the metadata disk is below `reserved_space`: the reason.
    pub low_resources: Option<String>,
}

impl SafeMode {
    pub fn at_start(threshold: f64, not_before: Instant) -> Self {
        SafeMode {
            on: true,
            manual: false,
            threshold,
            not_before,
            low_resources: None,
        }
    }

    /// On for the start-up's reason: leaving depends on the block reports.
    pub fn awaits_reports(&self) -> bool {
        self.on && !self.manual
    }

    pub fn is_on(&self) -> bool {
        self.on || self.low_resources.is_some()
    }

    /// Why the metadata disk is too full, while it is.
    pub fn low_resources(&self) -> Option<&str> {
        self.low_resources.as_deref()
    }

    /// The resource check's verdict at each tick: `Some(reason)` while the
    /// metadata disk is below its reserve, `None` once it is back above.
    /// Returns true when this changed whether safe mode is on.
    pub fn set_low_resources(&mut self, reason: Option<String>) -> bool {
        let was = self.is_on();
        match (&self.low_resources, &reason) {
            (None, Some(r)) => tracing::error!(
                "entering safe mode: {r}; namespace changes are refused until space is freed"
            ),
            (Some(_), None) if self.on => tracing::warn!(
                "the metadata disk has space again; safe mode stays on for its other reason"
            ),
            (Some(_), None) => {
                tracing::warn!("leaving safe mode: the metadata disk has space again")
            }
            _ => {}
        }
        self.low_resources = reason;
        was != self.is_on()
    }

    /// Leaves safe mode when the reports reach the threshold (never a
    /// manual one). Returns true when it just left.
    /// An empty namespace does not wait for the extension: no block can be
    /// unreported, and refusing writes meanwhile would only fail the first
    /// puts of a fresh cluster.
    pub fn update(&mut self, reported: u64, total: u64, now: Instant) -> bool {
        if !self.on || self.manual || (total > 0 && now < self.not_before) {
            return false;
        }
        if reached(reported, total, self.threshold) {
            self.on = false;
            tracing::info!(
                reported,
                total,
                threshold = self.threshold,
                "leaving safe mode: enough blocks reported"
            );
            return true;
        }
        false
    }

    pub fn enter(&mut self) {
        self.on = true;
        self.manual = true;
        tracing::warn!("safe mode entered by an operator");
    }

    /// An operator's leave ends the start-up and manual reasons; a low
    /// disk holds safe mode until space is back (HDFS's NameNode likewise
    /// refuses to leave while its resources are low).
    pub fn leave(&mut self) {
        if self.on {
            tracing::warn!("safe mode left by an operator");
        }
        self.on = false;
        self.manual = false;
        if let Some(r) = &self.low_resources {
            tracing::warn!("safe mode stays on: {r}");
        }
    }

    pub fn status(&self, reported: u64, total: u64) -> SafeModeStatus {
        SafeModeStatus {
            on: self.is_on(),
            manual: self.manual,
            threshold: self.threshold,
            reported_blocks: reported,
            total_blocks: total,
            low_resources: self.low_resources.clone(),
        }
    }
}

impl SafeModeStatus {
    /// Why `what` (a write or a delete) is refused, for the user who asked:
    /// that the master is in safe mode, why it is, when it ends, and that
    /// `mr admin safemode leave` exists (HDFS's message says the same:
    /// the blocks reported against the threshold, or "It was turned on
    /// manually").
    pub fn refusal(&self, what: &str) -> String {
        let why = if let Some(r) = &self.low_resources {
            format!(
                "{r}. It leaves safe mode by itself once space is freed there{}.",
                if self.manual {
                    " (an operator entered it too: `mr admin safemode leave` ends that)"
                } else {
                    ""
                }
            )
        } else if self.manual {
            "An operator entered it (`mr admin safemode enter`); it lasts until one runs \
             `mr admin safemode leave`."
                .to_string()
        } else {
            let needed = (self.threshold * self.total_blocks as f64).ceil() as u64;
            format!(
                "It started recently and waits for the workers to report its blocks: \
                 {} of {} reported, {needed} needed (threshold {}); it leaves safe mode by \
                 itself once they are, and no sooner than one heartbeat expiry after its \
                 start. `mr admin safemode get` shows where it stands; `mr admin safemode \
                 leave` ends it now, at the risk of re-replicating blocks that were only not \
                 reported yet.",
                self.reported_blocks, self.total_blocks, self.threshold
            )
        };
        format!(
            "cannot {what}: the master is in safe mode, in which it takes no writes or \
             deletes, only reads. {why}"
        )
    }
}

/// An empty namespace has nothing to wait for.
fn reached(reported: u64, total: u64, threshold: f64) -> bool {
    total == 0 || reported as f64 >= threshold * total as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn leaves_at_the_threshold_after_the_extension_never_when_manual() {
        let t0 = Instant::now();
        let mut s = SafeMode::at_start(0.999, t0 + Duration::from_secs(5));
        assert!(!s.update(1000, 1000, t0), "before the extension");
        assert!(!s.update(998, 1000, t0 + Duration::from_secs(6)));
        assert!(s.is_on());
        assert!(s.update(999, 1000, t0 + Duration::from_secs(6)));
        assert!(!s.is_on());
        s.enter();
        assert!(!s.update(1000, 1000, t0 + Duration::from_secs(7)));
        assert!(s.is_on());
        s.leave();
        assert!(!s.is_on());
        let mut empty = SafeMode::at_start(0.999, t0 + Duration::from_secs(5));
        assert!(
            empty.update(0, 0, t0),
            "an empty namespace waits for nothing"
        );
    }

    #[test]
    fn a_refusal_says_why_and_how_it_ends() {
        let t0 = Instant::now();
        let mut s = SafeMode::at_start(0.999, t0);
        let m = s.status(2, 5).refusal("delete /f");
        assert!(
            m.starts_with("cannot delete /f: the master is in safe mode"),
            "{m}"
        );
        assert!(m.contains("2 of 5 reported, 5 needed"), "{m}");
        assert!(m.contains("mr admin safemode leave"), "{m}");
        s.enter();
        let m = s.status(5, 5).refusal("create /g");
        assert!(m.contains("An operator entered it"), "{m}");
        assert!(m.contains("mr admin safemode leave"), "{m}");
    }
}
