//! A job's plan: what the master needs to schedule it and the workers to
//! cut and write its records, declared as data. The client builds it (from
//! a built-in job, from Streaming's flags, or by asking a job program), so
//! neither the master nor a worker needs the job's code to plan it.

use crate::{InputFormat, Job, JobParams, OutputFormat, Partitioning};
use serde_json::{json, Value};

/// Everything about a job the runtime decides by, without its code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobPlan {
    pub input_format: InputFormat,
    pub output_format: OutputFormat,
    pub partitioning: Partitioning,
    /// The maps' output is the job's output: no reduce runs.
    pub map_only: bool,
    /// The map's output may be combined before the shuffle.
    pub has_combiner: bool,
    /// The job checks another job's output: it fails when its counters say
    /// the check failed (`unsorted`, or `records`/`checksum` unlike the
    /// `expect_records`/`expect_checksum` parameters).
    pub validator: bool,
    /// Counters of the job that wrote this job's input, copied into this
    /// job's parameters (unless given) at submission, as (counter,
    /// parameter).
    pub inherit: Vec<(String, String)>,
}

impl Default for JobPlan {
    /// Hadoop's defaults: text lines in, `key<TAB>value` lines out, hash
    /// partitioning, a reduce.
    fn default() -> Self {
        JobPlan {
            input_format: InputFormat::Lines,
            output_format: OutputFormat::TabLines,
            partitioning: Partitioning::Hash,
            map_only: false,
            has_combiner: false,
            validator: false,
            inherit: Vec::new(),
        }
    }
}

impl JobPlan {
    /// What `job` answers for `params`.
    pub fn of<J: Job + ?Sized>(job: &J, params: &JobParams) -> JobPlan {
        JobPlan {
            input_format: job.input_format(params),
            output_format: job.output_format(params),
            partitioning: job.partitioning(params),
            map_only: job.map_only(),
            has_combiner: job.has_combiner(),
            validator: false,
            inherit: Vec::new(),
        }
    }

    pub fn to_json(&self) -> String {
        let (input, len, key_len) = match self.input_format {
            InputFormat::Lines => ("lines", 0, 0),
            InputFormat::Fixed { len, key_len } => ("fixed", len, key_len),
            InputFormat::KvRecords => ("kv", 0, 0),
            InputFormat::Generated => ("generated", 0, 0),
        };
        let output = match self.output_format {
            OutputFormat::TabLines => "tab_lines",
            OutputFormat::KeyLines => "key_lines",
            OutputFormat::Lines => "lines",
            OutputFormat::KvRecords => "kv",
            OutputFormat::Raw => "raw",
        };
        let partitioning = match self.partitioning {
            Partitioning::Hash => "hash",
            Partitioning::TotalOrder => "total_order",
        };
        json!({
            "input": input,
            "record_len": len,
            "key_len": key_len,
            "output": output,
            "partitioning": partitioning,
            "map_only": self.map_only,
            "combiner": self.has_combiner,
            "validator": self.validator,
            "inherit": self.inherit,
        })
        .to_string()
    }

    /// Reads what [`JobPlan::to_json`] writes; a missing field takes the
    /// default, an unknown value is an error naming the field.
    pub fn from_json(s: &str) -> Result<JobPlan, String> {
        let v: Value = serde_json::from_str(s).map_err(|e| format!("job plan is not JSON: {e}"))?;
        if !v.is_object() {
            return Err("job plan is not a JSON object".into());
        }
        let str_of = |k: &str, d: &'static str| -> Result<String, String> {
            match v.get(k) {
                None | Some(Value::Null) => Ok(d.to_string()),
                Some(Value::String(s)) => Ok(s.clone()),
                Some(o) => Err(format!("job plan: {k} is {o}, not a string")),
            }
        };
        let bool_of = |k: &str| -> Result<bool, String> {
            match v.get(k) {
                None | Some(Value::Null) => Ok(false),
                Some(Value::Bool(b)) => Ok(*b),
                Some(o) => Err(format!("job plan: {k} is {o}, not true or false")),
            }
        };
        let usize_of = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0) as usize;
        let input_format = match str_of("input", "lines")?.as_str() {
            "lines" => InputFormat::Lines,
            "kv" => InputFormat::KvRecords,
            "generated" => InputFormat::Generated,
            "fixed" => {
                let (len, key_len) = (usize_of("record_len"), usize_of("key_len"));
                if len == 0 || key_len > len {
                    return Err(format!(
                        "job plan: fixed records of {len} bytes with {key_len}-byte keys"
                    ));
                }
                InputFormat::Fixed { len, key_len }
            }
            o => {
                return Err(format!(
                    "job plan: unknown input format {o:?} (lines, kv, fixed, generated)"
                ))
            }
        };
        let output_format = match str_of("output", "tab_lines")?.as_str() {
            "tab_lines" => OutputFormat::TabLines,
            "key_lines" => OutputFormat::KeyLines,
            "lines" => OutputFormat::Lines,
            "kv" => OutputFormat::KvRecords,
            "raw" => OutputFormat::Raw,
            o => {
                return Err(format!(
                    "job plan: unknown output format {o:?} (tab_lines, key_lines, lines, kv, raw)"
                ))
            }
        };
        let partitioning = match str_of("partitioning", "hash")?.as_str() {
            "hash" => Partitioning::Hash,
            "total_order" => Partitioning::TotalOrder,
            o => {
                return Err(format!(
                    "job plan: unknown partitioning {o:?} (hash, total_order)"
                ))
            }
        };
        let mut inherit = Vec::new();
        if let Some(a) = v.get("inherit").and_then(Value::as_array) {
            for pair in a {
                match pair.as_array().map(Vec::as_slice) {
                    Some([Value::String(c), Value::String(p)]) => {
                        inherit.push((c.clone(), p.clone()))
                    }
                    _ => {
                        return Err(format!(
                            "job plan: inherit entry {pair} is not [counter, parameter]"
                        ))
                    }
                }
            }
        }
        Ok(JobPlan {
            input_format,
            output_format,
            partitioning,
            map_only: bool_of("map_only")?,
            has_combiner: bool_of("combiner")?,
            validator: bool_of("validator")?,
            inherit,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_format() {
        let inputs = [
            InputFormat::Lines,
            InputFormat::KvRecords,
            InputFormat::Generated,
            InputFormat::Fixed {
                len: 100,
                key_len: 10,
            },
        ];
        let outputs = [
            OutputFormat::Lines,
            OutputFormat::KeyLines,
            OutputFormat::KvRecords,
            OutputFormat::Raw,
        ];
        for (i, input_format) in inputs.into_iter().enumerate() {
            let p = JobPlan {
                input_format,
                output_format: outputs[i],
                partitioning: if i % 2 == 0 {
                    Partitioning::Hash
                } else {
                    Partitioning::TotalOrder
                },
                map_only: i == 2,
                has_combiner: i == 1,
                validator: i == 3,
                inherit: vec![("records".into(), "expect_records".into())],
            };
            assert_eq!(JobPlan::from_json(&p.to_json()).unwrap(), p);
        }
    }

    #[test]
    fn defaults_and_errors() {
        assert_eq!(JobPlan::from_json("{}").unwrap(), JobPlan::default());
        for bad in [
            "[]",
            "{",
            r#"{"input":"csv"}"#,
            r#"{"input":"fixed","record_len":0}"#,
            r#"{"output":7}"#,
            r#"{"partitioning":"range"}"#,
            r#"{"map_only":"yes"}"#,
            r#"{"inherit":[["a"]]}"#,
        ] {
            assert!(JobPlan::from_json(bad).is_err(), "{bad}");
        }
    }
}
