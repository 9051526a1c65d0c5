//! The built-in jobs the workers run, as Hadoop's examples jar: WordCount,
//! Sort, TeraSort, the generators (RandomTextWriter, RandomWriter, TeraGen)
//! and the validators (TeraValidate, SortValidate), each behind [`Job`].
//!
//! A job is pure code over byte records: the worker's executor feeds it the
//! records of a block (see [`formats`]), collects what it emits, partitions,
//! sorts, shuffles and feeds the reducer. Nothing here does I/O, so the same
//! code runs in a task, in `mr local` and in unit tests.

pub mod formats;
pub mod gen;
pub mod registry;
pub mod resolved;
pub mod sort;
pub mod swim;
pub mod tally;
pub mod terasort;
pub mod wordcount;

pub use resolved::{ResolveError, ResolvedJob};

pub use mrjob::{Emit, InputFormat, Job, JobParams, JobPlan, OutputFormat, Partitioning, TaskCtx};

/// A built-in job: a [`Job`] plus what the benchmark harness and the client
/// know of it that no user job declares.
pub trait Builtin: Job {
    /// Validators (teravalidate, sortvalidate) check another job's output
    /// and count what they found: the job fails when their counters say
    /// the check failed (`unsorted`, or `records`/`checksum` unlike the
    /// `expect_records`/`expect_checksum` parameters), its report written
    /// all the same.
    fn is_validator(&self) -> bool {
        false
    }
    /// The number of reducers the job runs with, whatever was asked:
    /// validators gather every map's summary in one reduce.
    fn fixed_reducers(&self) -> Option<u32> {
        None
    }
    /// Counters of the job that wrote this job's input, copied into this
    /// job's parameters (unless given) at submission, as (counter,
    /// parameter): teravalidate compares with what TeraSort's maps counted
    /// on their input.
    fn inherited_counters(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }
    /// The job that checks this job's output, if there is one (a sort's
    /// output goes to sortvalidate, TeraSort's to teravalidate).
    fn validator(&self) -> Option<&'static str> {
        None
    }
    /// The plan the client submits the job with: the job's own answers and
    /// the harness's.
    fn plan(&self, params: &JobParams) -> JobPlan {
        JobPlan {
            validator: self.is_validator(),
            inherit: self
                .inherited_counters()
                .iter()
                .map(|(c, p)| (c.to_string(), p.to_string()))
                .collect(),
            ..JobPlan::of(self, params)
        }
    }
}

/// A job's per-task state behind a lock that survives a panic in another
/// task (the panicking task's entry is simply abandoned), as the worker's
/// own locks do (`common::sync::lock`; this crate does not link `common`).
fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
