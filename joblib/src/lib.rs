//! The job library, as Hadoop's examples jar: the built-in jobs the workers
//! run. The `mr` client, the benchmark harness, its reports and the engine
//! `mr local` runs these jobs with in one process are the `cli` crate.
//! How it fits with the other crates: `docs/architecture.md`.
//!
//! # Layout
//! - [`jobs`]: the built-in jobs behind one `Job` trait, and their record formats.
//! - [`spec`]: job parameters on the wire.

pub mod jobs;
pub use mrjob::spec;
