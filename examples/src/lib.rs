//! The client side of the runtime: the `mr` command line, and (with the
//! MapReduce engine) the built-in jobs the workers run.
//!
//! # Layout
//! - [`cli`]: one module per `mr` command group (`fs`, `cache`, `cluster`).
//! - [`output`]: terminal progress and human tables.

pub mod cli;
pub mod output;
