//! Offered load as a knob and slot use as a measurement.
//!
//! Offered load, per resource: the workload's map task-seconds over the map
//! slot-seconds, and its reduce task-seconds over the reduce slot-seconds,
//! in the span of the arrivals (task-seconds as measured alone on an idle
//! cluster). Maps and reduces do not share slots, so one load over both
//! hides the bottleneck: issue 41's "load 0.9" was 1.01 on the reduce
//! slots and 0.19 on the map slots. A report's load is the bottleneck's
//! (the larger), and a target load compresses the arrivals until the
//! bottleneck reaches it: with task-seconds `Tm`, `Tr` on `Sm`, `Sr` slots
//! and a trace span of `D` seconds, load `L` needs a compression of
//! `D * L / max(Tm / Sm, Tr / Sr)`.
//!
//! Sustained: the replayed arrivals span at least [`SUSTAINED_SPAN`] times
//! the longest job's time alone. Below that a run is one burst of
//! arrivals and a drain, and its "load" is mostly the drain.
//!
//! Slot use: busy slot-seconds over available slot-seconds between the
//! first submit and the last commit, measured per run from the attempts'
//! own start and end times, map and reduce slots apart.

use serde_json::Value;

/// The replayed span over the longest job alone below which a run is a
/// burst and a drain rather than a sustained load.
pub const SUSTAINED_SPAN: f64 = 3.0;

/// Offered load per resource.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Offered {
    pub map: f64,
    pub reduce: f64,
}

impl Offered {
    /// The task-seconds `map_s` and `reduce_s` on `map_slots` and
    /// `reduce_slots` when the arrivals span `replayed_span_s` seconds.
    pub fn of(
        (map_s, reduce_s): (f64, f64),
        (map_slots, reduce_slots): (u32, u32),
        replayed_span_s: f64,
    ) -> Offered {
        let one = |t: f64, slots: u32| {
            if t <= 0.0 {
                0.0
            } else if replayed_span_s <= 0.0 || slots == 0 {
                f64::INFINITY
            } else {
                t / (slots as f64 * replayed_span_s)
            }
        };
        Offered {
            map: one(map_s, map_slots),
            reduce: one(reduce_s, reduce_slots),
        }
    }

    /// The bottleneck's load: what a report calls the load.
    pub fn bottleneck(&self) -> f64 {
        self.map.max(self.reduce)
    }

    /// Which slots are the bottleneck.
    pub fn bottleneck_name(&self) -> &'static str {
        if self.reduce > self.map {
            "reduce"
        } else {
            "map"
        }
    }
}

/// The compression that brings the bottleneck resource's offered load to
/// `load`; `None` when the slice has no span, nothing to run, or work for
/// slots the cluster lacks.
pub fn compression_for_bottleneck(
    load: f64,
    task_s: (f64, f64),
    slots: (u32, u32),
    span_s: f64,
) -> Option<f64> {
    // The bottleneck's task-seconds per slot over a 1-second span.
    let demand = Offered::of(task_s, slots, 1.0).bottleneck();
    if !(load > 0.0 && span_s > 0.0 && demand > 0.0 && demand.is_finite()) {
        return None;
    }
    Some(span_s * load / demand)
}

/// Whether arrivals over `replayed_span_s` are a sustained load for jobs
/// whose longest takes `longest_alone_s` alone.
pub fn sustained(replayed_span_s: f64, longest_alone_s: f64) -> bool {
    replayed_span_s >= SUSTAINED_SPAN * longest_alone_s
}

/// The compression that makes `task_s` task-seconds offered over a trace
/// span of `span_s` seconds come to `load` on `slots` slots. `None` when
/// the slice has no span (one job, or all at once) or nothing to run.
pub fn compression_for(load: f64, task_s: f64, slots: u32, span_s: f64) -> Option<f64> {
    if !(load > 0.0 && task_s > 0.0 && span_s > 0.0 && slots > 0) {
        return None;
    }
    Some(span_s * load * slots as f64 / task_s)
}

/// The offered load of `task_s` task-seconds on `slots` slots when the
/// arrivals span `replayed_span_s` seconds.
pub fn offered(task_s: f64, slots: u32, replayed_span_s: f64) -> f64 {
    if replayed_span_s <= 0.0 || slots == 0 {
        return f64::INFINITY;
    }
    task_s / (slots as f64 * replayed_span_s)
}

/// One attempt's time in a slot (ms since the epoch, the master's clock).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Busy {
    pub map: bool,
    pub start_ms: u64,
    pub end_ms: u64,
}

/// The attempts in a job's history (`mr job history` JSON lines): every
/// record with a `kind` of `map` or `reduce` and both times, failed ones
/// included (they held a slot all the same).
pub fn attempts(history: &[String]) -> Vec<Busy> {
    history
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| {
            let map = match v["kind"].as_str()? {
                "map" => true,
                "reduce" => false,
                _ => return None,
            };
            let (s, e) = (v["start_ms"].as_u64()?, v["end_ms"].as_u64()?);
            (e >= s && s > 0).then_some(Busy {
                map,
                start_ms: s,
                end_ms: e,
            })
        })
        .collect()
}

/// Task-seconds of the attempts, (maps, reduces).
pub fn task_seconds(a: &[Busy]) -> (f64, f64) {
    let mut t = (0.0, 0.0);
    for b in a {
        let s = (b.end_ms - b.start_ms) as f64 / 1e3;
        if b.map {
            t.0 += s;
        } else {
            t.1 += s;
        }
    }
    t
}

/// Map- and reduce-slot use over the window `[from_ms, to_ms]` with
/// `map_slots` and `reduce_slots` in the cluster: each attempt's time
/// inside the window over the slots' time in it.
pub fn slot_use(
    a: &[Busy],
    from_ms: u64,
    to_ms: u64,
    map_slots: u32,
    reduce_slots: u32,
) -> (f64, f64) {
    let window = to_ms.saturating_sub(from_ms) as f64;
    if window <= 0.0 {
        return (0.0, 0.0);
    }
    let (mut m, mut r) = (0.0, 0.0);
    for b in a {
        let busy = b.end_ms.min(to_ms).saturating_sub(b.start_ms.max(from_ms)) as f64;
        if b.map {
            m += busy;
        } else {
            r += busy;
        }
    }
    let frac = |busy: f64, slots: u32| {
        if slots == 0 {
            0.0
        } else {
            busy / (window * slots as f64)
        }
    };
    (frac(m, map_slots), frac(r, reduce_slots))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compression_gives_the_load_asked() {
        // 600 task-seconds on 12 slots over a 3600 s trace span: load 0.5
        // needs a span of 100 s, a compression of 36.
        let c = compression_for(0.5, 600.0, 12, 3600.0).unwrap();
        assert!((c - 36.0).abs() < 1e-9);
        assert!((offered(600.0, 12, 3600.0 / c) - 0.5).abs() < 1e-9);
        assert!(compression_for(0.5, 600.0, 12, 0.0).is_none());
        assert!(compression_for(0.0, 600.0, 12, 10.0).is_none());
    }

    #[test]
    fn the_bottleneck_sets_the_compression() {
        // Issue 41's shape: 12 map and 6 reduce slots, 60 map and 280
        // reduce task-seconds over a 1,928 s trace span. Per slot over one
        // second: maps 5, reduces 46.7: the reduces are the bottleneck.
        let (t, s) = ((60.0, 280.0), (12, 6));
        let c = compression_for_bottleneck(0.9, t, s, 1928.0).unwrap();
        let o = Offered::of(t, s, 1928.0 / c);
        assert!((o.reduce - 0.9).abs() < 1e-9 && (o.map - 0.9 * 5.0 / (280.0 / 6.0)).abs() < 1e-9);
        assert_eq!((o.bottleneck(), o.bottleneck_name()), (o.reduce, "reduce"));
        // Map-bound the other way round.
        let o = Offered::of((100.0, 1.0), (2, 2), 100.0);
        assert_eq!((o.map, o.reduce, o.bottleneck_name()), (0.5, 0.005, "map"));
        // Reduce work without reduce slots has no finite load.
        assert!(compression_for_bottleneck(0.5, (1.0, 1.0), (2, 0), 10.0).is_none());
        assert_eq!(Offered::of((1.0, 0.0), (2, 0), 10.0).reduce, 0.0);
        assert!(compression_for_bottleneck(0.5, t, s, 0.0).is_none());
    }

    #[test]
    fn sustained_needs_three_longest_jobs_of_arrivals() {
        // Issue 41: arrivals over 3-10 s against jobs of up to several s.
        assert!(!sustained(10.0, 4.0));
        assert!(sustained(12.0, 4.0));
    }

    #[test]
    fn attempts_and_slot_use_from_history() {
        let h: Vec<String> = [
            r#"{"kind":"map","start_ms":1000,"end_ms":3000,"state":"succeeded"}"#,
            r#"{"kind":"map","start_ms":2000,"end_ms":6000,"state":"failed"}"#,
            r#"{"kind":"reduce","start_ms":5000,"end_ms":9000}"#,
            r#"{"type":"job","state":"succeeded"}"#,
            "not json",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let a = attempts(&h);
        assert_eq!(a.len(), 3);
        assert_eq!(task_seconds(&a), (6.0, 4.0));
        // Window 1 s to 9 s, 2 map and 1 reduce slots: maps busy 6 s of 16,
        // the reduce 4 s of 8.
        assert_eq!(slot_use(&a, 1000, 9000, 2, 1), (6.0 / 16.0, 0.5));
        // A window that cuts attempts counts only their part inside it.
        assert_eq!(slot_use(&a, 2000, 4000, 2, 1), (3.0 / 4.0, 0.0));
    }
}
