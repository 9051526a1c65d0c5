//! The conversation with the master: registration, heartbeats with the
//! resource vector, the commands its answers carry and how they are carried
//! out, and the graceful drain at shutdown. The messages themselves are
//! the `protocol` crate's.
//!
//! - [`monitor`]: the atop-like resource vector from `sysinfo`.
//! - [`heartbeat`]: registration and heartbeats.
//! - [`apply`]: the master's commands from heartbeat and report answers.
//! - [`drain`]: graceful shutdown: finish or hand back tasks, wait for the
//!   master to copy the blocks elsewhere, say goodbye.

pub mod apply;
pub mod drain;
pub mod heartbeat;
pub mod monitor;
