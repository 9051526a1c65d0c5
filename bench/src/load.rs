//! Offered load as a knob and slot use as a measurement.
//!
//! Offered load: the workload's task-seconds (maps and reduces, as measured
//! alone on an idle cluster) over the cluster's slot-seconds in the span of
//! the arrivals. A replay sets it by compressing the arrivals: with `T`
//! task-seconds, `S` slots and a trace span of `D` seconds, load `L` needs
//! a replayed span of `T / (L * S)`, so a compression of `D * L * S / T`.
//!
//! Slot use: busy slot-seconds over available slot-seconds between the
//! first submit and the last commit, measured per run from the attempts'
//! own start and end times, map and reduce slots apart.

use serde_json::Value;

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
