//! Running attempts (a `protocol::Launch` each): the executor and its
//! table of attempts, the map and reduce attempts with their input, sort
//! buffer, merge and output parts, and external programs.
//!
//! - [`executor`]: task lifecycle: launch, report (fenced), kill, clean up.
//! - [`runner`]: the owner of the task side (table, feeds, job registry,
//!   job directories), the handle the other groups hold.
//! - [`table`]: the table of running attempts the runner owns.
//! - [`progress`]: an attempt's progress counter, which the master times out.
//! - [`outcome`]: what an attempt reports: its metrics or its failure.
//! - [`hold`]: the fault tests' hold of a job's attempts until a file exists.
//! - [`input`]: a map's block read, cache → disk → remote, with its locality.
//! - [`map`], [`reduce`]: the two kinds of attempt.
//! - [`code`]: what an attempt runs: built-in code or an external process.
//! - [`external`]: Streaming commands and job programs as child processes.
//! - [`mapout`], [`merge`]: map-side sort and spill, reduce-side merge.
//! - [`segment`]: one map's partition as a reduce holds and merges it.
//! - [`part`]: output parts written record-aligned into the block store.
//! - [`partition`]: one partition of a map's output as the shuffle names it.
//! - [`feeds`]: reduce slow-start: map outputs that finish after a reduce
//!   was launched reach it here.

pub mod code;
pub mod executor;
pub mod external;
pub mod feeds;
pub mod hold;
pub mod input;
pub mod map;
pub mod mapout;
pub mod merge;
pub mod outcome;
pub mod part;
pub mod partition;
pub mod progress;
pub mod reduce;
pub mod runner;
pub mod segment;
pub mod table;
