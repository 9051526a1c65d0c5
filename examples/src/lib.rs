//! The client side of the runtime: the `mr` command line, and (with the
//! MapReduce engine) the built-in jobs the workers run.
//!
//! # Layout
//! - [`bench`]: `mr bench`, the benchmark harness and its reports.
//! - [`cli`]: one module per `mr` command group (`fs`, `cache`, `cluster`).
//! - [`output`]: terminal progress and human tables.
//! - [`jobs`]: the built-in jobs behind one `Job` trait, and their record formats.
//! - [`spec`]: job parameters on the wire.

pub mod bench;
pub mod cli;
pub mod jobs;
pub mod local;
pub mod output;
pub mod spec;
