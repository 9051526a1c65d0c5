//! Types shared by every process of the runtime: plain types with no network
//! stack (no tonic, no rustls, no protobuf), so that the policies and the
//! simulator can link them; what speaks the wire is the `rpc` crate.
//! How it fits with the other crates: `docs/architecture.md`.
//!
//! # Layout
//! - [`config`]: `cluster.toml`, parsed and validated.
//! - [`blocktoken`]: block access and shuffle tokens, signed and checked.
//! - [`units`]: sizes (`64MiB`) and durations (`1s`) from outside.
//! - [`path`]: namespace paths, normalised and unable to escape the root.
//! - [`placement`]: HDFS's rack-aware replica placement, pure.
//! - [`resources`]: a worker's resource vector, from sample to policy.
//! - [`locality`]: the five locality levels of a placement.
//! - [`shipped`]: files shipped with a job, named by their SHA-256.
//! - [`shutdown`]: the daemons' stop signal.
//! - [`sync`]: a `Mutex` lock that survives a panic while it was held.
//! - [`logging`]: tracing set-up for the daemons.

pub mod blocktoken;
pub mod config;
pub mod locality;
pub mod logging;
pub mod path;
pub mod placement;
pub mod resources;
pub mod role;
pub mod shipped;
pub mod shutdown;
pub mod sync;
pub mod units;

/// Wire protocol version: a worker of another version is refused at
/// registration with a message naming both versions.
pub const PROTOCOL_VERSION: u32 = 1;

/// Largest data chunk in one gRPC message: far below tonic's 4 MiB default so
/// that no message ever hits it.
pub const CHUNK: usize = 1 << 20;

/// The wall clock's replacement, when one was set.
static WALL_CLOCK: std::sync::OnceLock<fn() -> Option<u64>> = std::sync::OnceLock::new();

/// Replaces the wall clock [`now_ms`] reads, for this whole process: the
/// deterministic simulation (`simtest/`) passes its simulated clock, which
/// answers `None` outside a simulation. The daemons never call it.
pub fn set_wall_clock(f: fn() -> Option<u64>) {
    let _ = WALL_CLOCK.set(f);
}

/// Milliseconds since the Unix epoch, for timestamps shown to users (and
/// the master's epochs, which must outlive a restart).
pub fn now_ms() -> u64 {
    if let Some(ms) = WALL_CLOCK.get().and_then(|f| f()) {
        return ms;
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
