//! The master as a turmoil host: the real `master::open` and `master::serve`
//! (state, edit log on a real temporary directory, background expiry and
//! re-replication, the gRPC service behind the token interceptor), over
//! simulated TCP. A bounce reopens the same directory, as a restart does.

use crate::cluster::MASTER_PORT;
use crate::history::{self, note};
use common::config::ClusterConfig;
use master::core::MasterState;
use std::sync::{Arc, Mutex, Weak};

/// Where the run finds the current master incarnation's state.
pub type Slot = Arc<Mutex<Weak<Mutex<MasterState>>>>;

pub async fn run(cfg: ClusterConfig, history: history::Shared, slot: Slot) -> turmoil::Result {
    let state = master::open(cfg)?;
    *slot.lock().unwrap() = Arc::downgrade(&state);
    history.lock().unwrap().master_starts += 1;
    note(&history, "master starts");
    let incoming = crate::net::incoming(MASTER_PORT).await?;
    master::serve(state, incoming, std::future::pending()).await?;
    Ok(())
}
