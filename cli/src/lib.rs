//! The client side of the runtime: the `mr` command line, the benchmark
//! harness and its reports, and `mr local`'s one-process engine. The jobs
//! themselves are the `joblib` crate, which the workers link too.
//! How it fits with the other crates: `docs/architecture.md`.
//!
//! # Layout
//! - [`bench`]: `mr bench`, the benchmark harness and its reports; its
//!   clap arguments in [`bench::command`].
//! - [`certs`]: the cluster CA and certificates of `mr config init --tls`.
//! - [`cmd`]: one module per `mr` command group (`fs`, `cache`, `cluster`,
//!   ...), each with its clap arguments; `main.rs` keeps the top level.
//! - [`local`]: a job in one process (the sort/merge engine of `mr local`).
//! - [`output`]: terminal progress and human tables.

pub mod bench;
pub mod certs;
pub mod cmd;
pub mod local;
pub mod output;
