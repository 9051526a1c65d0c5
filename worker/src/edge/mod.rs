//! The gRPC edge: the server's thin handlers, the clients of the master
//! and of other workers, and the conversions between protobuf and the
//! worker's own types. Only these modules name protobuf types.
//!
//! - [`master_client`]: the calls to the master, and the link's state.
//! - [`safety`]: what the master last said of stopping this worker.
//! - [`shuffle`]: serving map-output partitions to reducers.
//! - [`peers`]: the calls to other workers (pipeline, reads, shuffle).
//! - [`service`]: the thin gRPC handlers (block writes and reads).
//! - [`error`]: the handlers' failures and their gRPC codes.
//! - [`convert`]: protobuf to the worker's types and back, between workers
//!   (the master's messages convert in `protocol::wire`).
//! - [`health`]: the plain-HTTP liveness and readiness probe endpoint.

pub mod convert;
pub mod error;
pub mod health;
pub mod master_client;
pub mod peers;
pub mod safety;
pub mod service;
pub mod shuffle;
