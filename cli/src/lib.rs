//! The client side of the runtime: the `mr` command line and `mr local`'s
//! one-process engine; `mr bench` runs the `bench` crate. The jobs
//! themselves are the `joblib` crate, which the workers link too.
//! How it fits with the other crates: `docs/architecture.md`.
//!
//! # Layout
//! - [`certs`]: the cluster CA and certificates of `mr config init --tls`.
//! - [`cmd`]: one module per `mr` command group (`fs`, `cache`, `cluster`,
//!   ...), each with its clap arguments; `main.rs` keeps the top level.
//! - [`harness`]: what `mr bench` (the `bench` crate) borrows from the CLI.
//! - [`local`]: a job in one process (the sort/merge engine of `mr local`).
//! - [`output`]: terminal progress and human tables.

pub mod certs;
pub mod cmd;
pub mod harness;
pub mod local;
pub mod output;
