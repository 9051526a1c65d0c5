//! A job resolved for one task: the program found by name, its parameters
//! decoded from the launch's JSON, and what they select (formats,
//! partitioning), all decided once and passed down to the attempt.

use super::{registry, InputFormat, Job, JobParams, OutputFormat, Partitioning};
use std::sync::Arc;

/// A job and its decoded parameters, with the formats and partitioning
/// they select.
#[derive(Clone)]
pub struct ResolvedJob {
    pub job: Arc<dyn Job>,
    pub params: JobParams,
    pub input_format: InputFormat,
    pub output_format: OutputFormat,
    pub partitioning: Partitioning,
}

/// Why a job spec could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResolveError {
    /// No job of that name in the registry.
    UnknownJob(String),
    /// The parameters are not the JSON `spec::params_to_json` writes.
    BadParams(String),
}

impl std::fmt::Display for ResolveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResolveError::UnknownJob(name) => write!(f, "no job {name:?}"),
            ResolveError::BadParams(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for ResolveError {}

impl ResolvedJob {
    /// `job` with `params`, its formats and partitioning asked once.
    pub fn new(job: Arc<dyn Job>, params: JobParams) -> Self {
        ResolvedJob {
            input_format: job.input_format(&params),
            output_format: job.output_format(&params),
            partitioning: job.partitioning(&params),
            job,
            params,
        }
    }

    /// Looks job `name` up among this library's jobs and decodes
    /// `params_json` (what a task launch carries).
    pub fn decode(name: &str, params_json: &str) -> Result<Self, ResolveError> {
        Self::decode_in(&registry::Registry::builtins(), name, params_json)
    }

    /// [`ResolvedJob::decode`] with the jobs of `jobs`.
    pub fn decode_in(
        jobs: &registry::Registry,
        name: &str,
        params_json: &str,
    ) -> Result<Self, ResolveError> {
        let job: Arc<dyn Job> = jobs
            .lookup(name)
            .ok_or_else(|| ResolveError::UnknownJob(name.into()))?;
        let params = crate::spec::params_from_json(params_json).map_err(ResolveError::BadParams)?;
        Ok(Self::new(job, params))
    }
}

impl std::fmt::Debug for ResolvedJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResolvedJob")
            .field("job", &self.job.name())
            .field("params", &self.params)
            .field("input_format", &self.input_format)
            .field("output_format", &self.output_format)
            .field("partitioning", &self.partitioning)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_once_what_the_job_would_answer() {
        let mut p = JobParams::default();
        p.extra.insert("total_order".into(), "true".into());
        let r = ResolvedJob::decode("sort", &crate::spec::params_to_json(&p)).unwrap();
        assert_eq!(r.job.name(), "sort");
        assert_eq!(r.partitioning, Partitioning::TotalOrder);
        assert_eq!(r.input_format, InputFormat::KvRecords);
        assert_eq!(
            ResolvedJob::decode("nope", "").unwrap_err(),
            ResolveError::UnknownJob("nope".into())
        );
        assert!(matches!(
            ResolvedJob::decode("sort", "{"),
            Err(ResolveError::BadParams(_))
        ));
    }

    #[test]
    fn validators_run_one_reducer() {
        for name in registry::NAMES {
            let j = registry::lookup(name).unwrap();
            assert_eq!(j.is_validator(), j.fixed_reducers() == Some(1), "{name}");
            if let Some(v) = j.validator() {
                assert!(registry::lookup(v).unwrap().is_validator(), "{name} → {v}");
            }
        }
    }
}
