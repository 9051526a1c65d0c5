//! The job library, as Hadoop's examples jar: the built-in jobs the workers
//! run and the engine `mr local` runs them with in one process. The `mr`
//! client, the benchmark harness and its reports are the `cli` crate.
//! How it fits with the other crates: `docs/architecture.md`.
//!
//! # Layout
//! - [`jobs`]: the built-in jobs behind one `Job` trait, and their record formats.
//! - [`local`]: a job in one process (the sort/merge engine of `mr local`).
//! - [`spec`]: job parameters on the wire.

pub mod jobs;
pub mod local;
pub mod spec;
