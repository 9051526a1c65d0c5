//! The client side of the runtime: the `mr` command line, the benchmark
//! harness and its reports. The jobs themselves are the `examples` crate,
//! which the workers link too.
//! How it fits with the other crates: `docs/architecture.md`.
//!
//! # Layout
//! - [`bench`]: `mr bench`, the benchmark harness and its reports; its
//!   clap arguments in [`bench::command`].
//! - [`cmd`]: one module per `mr` command group (`fs`, `cache`, `cluster`,
//!   ...), each with its clap arguments; `main.rs` keeps the top level.
//! - [`output`]: terminal progress and human tables.

pub mod bench;
pub mod cmd;
pub mod output;
