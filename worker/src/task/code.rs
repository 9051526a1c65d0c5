//! What an attempt runs: a built-in job's code, in this process, or an
//! external job's command or program ([`crate::task::external`]), with the
//! formats and partitioning the job declared, decided once per attempt.

use crate::task::external::External;
use joblib::jobs::registry::Registry;
use joblib::jobs::{
    InputFormat, Job, JobParams, OutputFormat, Partitioning, ResolveError, ResolvedJob,
};
use std::sync::Arc;

#[derive(Clone)]
pub enum Code {
    Builtin(Arc<dyn Job>),
    External(Arc<External>),
}

/// A job resolved for one attempt.
#[derive(Clone)]
pub struct TaskCode {
    pub code: Code,
    pub params: JobParams,
    pub input_format: InputFormat,
    pub output_format: OutputFormat,
    pub partitioning: Partitioning,
    /// The maps write the job's output parts; no reduce runs.
    pub map_only: bool,
}

impl TaskCode {
    /// The code a launch names: an external job's when its parameters
    /// name a command or a program, else the job `name` of `jobs`.
    pub fn decode(
        jobs: &Registry,
        name: &str,
        params_json: &str,
        plan_json: &str,
    ) -> Result<TaskCode, String> {
        let params = mrjob::spec::params_from_json(params_json)?;
        if let Some(x) = External::decode(&params, plan_json)? {
            let plan = x.plan.clone();
            return Ok(TaskCode {
                code: Code::External(Arc::new(x)),
                params,
                input_format: plan.input_format,
                output_format: plan.output_format,
                partitioning: plan.partitioning,
                map_only: plan.map_only,
            });
        }
        let r = ResolvedJob::decode_in(jobs, name, params_json).map_err(|e| match e {
            ResolveError::UnknownJob(_) => format!("this worker has no job {name:?}"),
            ResolveError::BadParams(m) => m,
        })?;
        Ok(TaskCode {
            map_only: r.job.map_only(),
            code: Code::Builtin(r.job),
            params: r.params,
            input_format: r.input_format,
            output_format: r.output_format,
            partitioning: r.partitioning,
        })
    }
}

impl std::fmt::Debug for TaskCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let code = match &self.code {
            Code::Builtin(j) => j.name().to_string(),
            Code::External(x) => format!("{:?}", x.run),
        };
        f.debug_struct("TaskCode")
            .field("code", &code)
            .field("input_format", &self.input_format)
            .field("output_format", &self.output_format)
            .field("partitioning", &self.partitioning)
            .field("map_only", &self.map_only)
            .finish()
    }
}
