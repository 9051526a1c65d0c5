//! Deterministic simulation of the master/worker protocol under turmoil.
//!
//! The master is the real one (`master::open` + `master::serve`: state, edit
//! log, expiry, re-replication, the tonic service behind the token
//! interceptor); the workers are models of the worker's side of the
//! protocol (`worker/src/control/heartbeat.rs`, `executor.rs`) serving the real
//! `mr.v1.Worker` service with an in-memory disk; the client is the real
//! DFS client. All of them are turmoil hosts on one thread, on a seeded
//! network with crashes, restarts, partitions and held messages, so a
//! failing seed replays exactly. Why models and not the worker crate: it
//! reads blocks through `memmap2`, spills to files and runs tasks on
//! blocking threads that call back into the runtime, none of which turmoil
//! can simulate; the models keep the protocol and drop the I/O. What they
//! keep is the worker's own: the message types and their wire form
//! (`protocol`, as the real worker and master use them) and the rules of
//! registering, heartbeating and re-registering (`protocol::session`) and
//! of keeping the running attempts (`protocol::attempts`), which the real
//! worker drives too.
//!
//! Why turmoil rather than madsim: no `--cfg` build of the whole workspace
//! and no patched tokio/tonic; stock tonic runs over turmoil's sockets
//! through a connector and an incoming stream (see [`net`]). Its limits:
//! anything outside tokio (real threads, blocking I/O, the system clock)
//! is not simulated, which the models and the master's clock seam
//! (`master::now`) account for.
//!
//! # Layout
//! - [`net`]: tonic over turmoil's TCP (incoming stream, connector, deadlines).
//! - [`cluster`]: host names, addresses, the simulated `cluster.toml`.
//! - [`master_host`]: the real master as a host.
//! - [`node`], [`service`], [`worker`], [`task`]: the model worker: its
//!   state, its gRPC service, its heartbeat and commands, its attempts.
//! - [`wordcount`]: the job the models run, and its oracle.
//! - [`client`]: the client's script through the real DFS client.
//! - [`faults`]: the nemesis plan and how each fault is applied.
//! - [`history`]: the ground truth recorded during a run.
//! - [`checks`]: the invariants judged at the end.
//! - [`run`]: one seeded run from start to verdict.

pub mod checks;
pub mod client;
pub mod cluster;
pub mod faults;
pub mod history;
pub mod master_host;
pub mod net;
pub mod node;
pub mod run;
pub mod service;
pub mod task;
pub mod wordcount;
pub mod worker;

pub use run::{run, Failure, Outcome};

/// A flag the run sets and a host reads.
pub type Flag = std::sync::Arc<std::sync::Mutex<bool>>;

/// Installs a log subscriber printing simulated time when `MR_SIM_LOG` is
/// set (its value is the filter, e.g. `debug` or `master=info`).
pub fn init_logging() {
    if let Ok(filter) = std::env::var("MR_SIM_LOG") {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_timer(SimTime)
            .with_test_writer()
            .try_init();
    }
}

struct SimTime;

impl tracing_subscriber::fmt::time::FormatTime for SimTime {
    fn format_time(&self, w: &mut tracing_subscriber::fmt::format::Writer<'_>) -> std::fmt::Result {
        write!(w, "{:?}", turmoil::sim_elapsed().unwrap_or_default())
    }
}
