//! The network side every process shares: what speaks the gRPC protocol
//! (`proto`) or guards its ports. Kept apart from `common`, so that what
//! needs only the plain types (the policies, the simulator) links no tonic
//! and no rustls.
//! How it fits with the other crates: `docs/architecture.md`.
//!
//! # Layout
//! - [`dfs`]: the file-system client: put, get, block reads and writes.
//! - [`auth`]: the cluster-token interceptors every server and client uses.
//! - [`tls`]: TLS for every port, from the files `mr config init --tls`
//!   writes.
//! - [`json`]: JSON shapes shared by the CLI's `--json` and the REST API.

pub mod auth;
pub mod dfs;
pub mod json;
pub mod tls;
