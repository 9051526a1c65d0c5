//! Job parameters on the wire: [`JobParams`] as a JSON object, so that the
//! master and the workers need no schema change when a job grows a knob.

use crate::JobParams;

/// The parameters of jobs whose code the workers do not have: what the
/// client sets for `mr job run streaming` and `mr job run program`, and
/// the workers read.
pub mod keys {
    /// Streaming: the mapper's, reducer's and combiner's shell commands.
    pub const MAPPER: &str = "stream.map";
    pub const REDUCER: &str = "stream.reduce";
    pub const COMBINER: &str = "stream.combine";
    /// A job program: the block-store path of its binary (also a shipped
    /// file).
    pub const PROGRAM: &str = "program";
    /// Shipped files, one block-store path a line (`/.mr/files/SHA256/NAME`).
    pub const FILES: &str = "files";
    /// `K=V` lines added to the children's environment.
    pub const CMDENV: &str = "cmdenv";
    /// Seconds without progress before a task's child is killed (Hadoop's
    /// `mapreduce.task.timeout`).
    pub const TASK_TIMEOUT: &str = "task_timeout";
    /// Set by the worker in each map's parameters: the file its input
    /// block is of, under Hadoop's name (`mapreduce_map_input_file` in a
    /// Streaming command's environment).
    pub const INPUT_FILE: &str = "mapreduce.map.input.file";
}
use serde_json::{json, Map, Value};

pub fn params_to_json(p: &JobParams) -> String {
    let extra: Map<String, Value> = p
        .extra
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    json!({
        "size": p.size,
        "seed": p.seed,
        "maps": p.maps,
        "reducers": p.reducers,
        "format_lines": p.format_lines,
        "extra": extra,
    })
    .to_string()
}

pub fn params_from_json(s: &str) -> Result<JobParams, String> {
    if s.is_empty() {
        return Ok(JobParams::default());
    }
    let v: Value =
        serde_json::from_str(s).map_err(|e| format!("job parameters are not JSON: {e}"))?;
    let u = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
    let mut p = JobParams {
        size: u("size"),
        seed: u("seed"),
        maps: u("maps") as u32,
        reducers: u("reducers") as u32,
        format_lines: v
            .get("format_lines")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        ..Default::default()
    };
    if let Some(Value::Object(m)) = v.get("extra") {
        for (k, val) in m {
            let s = match val {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            p.extra.insert(k.clone(), s);
        }
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let mut p = JobParams {
            size: 5,
            seed: 7,
            maps: 3,
            reducers: 2,
            format_lines: true,
            ..Default::default()
        };
        p.extra.insert("total_order".into(), "true".into());
        let q = params_from_json(&params_to_json(&p)).unwrap();
        assert_eq!(
            (q.size, q.seed, q.maps, q.reducers, q.format_lines),
            (5, 7, 3, 2, true)
        );
        assert_eq!(q.extra["total_order"], "true");
    }
}
