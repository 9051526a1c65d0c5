//! Write a MapReduce job in Rust and run it on an `mr` cluster.
//!
//! A job is a type implementing [`Job`]: a `map` over input records and,
//! optionally, a `reduce` over each key's values. Build it into a program
//! whose `main` hands the job to [`run`]; submit the program with
//! `mr job run program --program PATH --input IN --output OUT`. The client
//! asks the program for its [`JobPlan`] (formats, partitioning, map-only)
//! before it submits, so the master plans the job without its code; every
//! worker then runs the program once per task and speaks a framed binary
//! protocol with it over stdin and stdout ([`wire`]): no text parsing on the
//! way in or out.
//!
//! ```no_run
//! use mrjob::{Emit, Job, TaskCtx};
//!
//! /// Counts words: the map emits `(word, 1)`, the reduce sums.
//! struct WordCount;
//!
//! impl Job for WordCount {
//!     fn name(&self) -> &'static str {
//!         "my-wordcount"
//!     }
//!     fn has_combiner(&self) -> bool {
//!         true
//!     }
//!     fn map(&self, _ctx: &mut TaskCtx, line: &[u8], _: &[u8], out: &mut dyn Emit) {
//!         for w in line.split(|c| c.is_ascii_whitespace()).filter(|w| !w.is_empty()) {
//!             out.emit(w, b"1");
//!         }
//!     }
//!     fn reduce(
//!         &self,
//!         _ctx: &mut TaskCtx,
//!         word: &[u8],
//!         counts: &mut dyn Iterator<Item = &[u8]>,
//!         out: &mut dyn Emit,
//!     ) {
//!         let n: u64 = counts
//!             .filter_map(|c| std::str::from_utf8(c).ok()?.parse::<u64>().ok())
//!             .sum();
//!         out.emit(word, n.to_string().as_bytes());
//!     }
//! }
//!
//! fn main() {
//!     mrjob::run(WordCount)
//! }
//! ```
//!
//! The same trait is what the runtime's built-in jobs (WordCount, Sort,
//! TeraSort) implement, so a job written here runs as fast as they do but
//! for the pipes between the worker and the program.

mod job;
pub mod plan;
mod runner;
pub mod spec;
pub mod wire;

pub use job::{Emit, InputFormat, Job, JobParams, OutputFormat, Partitioning, TaskCtx};
pub use plan::JobPlan;
pub use runner::{run, run_records, run_task, Records, TaskMode};
