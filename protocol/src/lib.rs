//! The master–worker control protocol as plain types. The master, the
//! worker and the simulated worker of `simtest` all speak it through these
//! types; [`wire`] is the one place that turns them into protobuf and back,
//! at each side's gRPC edge. [`session`] (the worker's side of the
//! exchange: register, heartbeat, re-register) and [`attempts`] (its
//! running attempts and the cleanups waiting for them) are the worker's
//! core without I/O, which the real worker and the simulated one both
//! drive.
//!
//! Block and shuffle tokens and the master's keys are not here: they are
//! signed and checked at the edges (`master/src/grpc/tokens.rs`, the
//! worker's `edge/`), on the wire messages themselves.

pub mod attempts;
pub mod block;
pub mod command;
pub mod heartbeat;
pub mod report;
pub mod session;
pub mod task;
pub mod wire;

pub use block::{BlockInfo, BlockLocation, WorkerAddr};
pub use command::Command;
pub use heartbeat::{Heartbeat, Poll, Registered, Registration, Reply, StopAnswer};
pub use report::{TaskMetrics, TaskReport};
pub use task::{
    Launch, LaunchKind, MapLaunch, MapOutputLocation, OutputSpec, ReduceLaunch, Refused, TaskRef,
};
