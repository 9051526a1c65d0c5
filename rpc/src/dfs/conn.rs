//! Channels and clients: every gRPC connection of the DFS client, over TCP
//! or TLS, with HTTP/2 keep-alive so that a silent peer fails its calls.

use super::{DfsError, MasterConn, Result, WorkerConn};
use crate::auth::TokenAttach;
use common::CHUNK;
use proto::master_client::MasterClient;
use proto::worker_client::WorkerClient;
use tonic::transport::{Channel, ClientTlsConfig, Endpoint};

/// Large enough for a whole chunk plus framing; both sides use the same limit.
const MAX_MESSAGE: usize = 2 * CHUNK + 4096;

/// The endpoint of `addr` (`IP:port` or a URL): with `tls`, `https` and
/// the server verified against the cluster CA; else plain `http`.
pub fn endpoint(addr: &str, tls: Option<&ClientTlsConfig>) -> Result<Endpoint> {
    let bad = |e: &dyn std::fmt::Display| DfsError::Connect {
        addr: addr.into(),
        msg: e.to_string(),
    };
    let host = addr
        .strip_prefix("http://")
        .or_else(|| addr.strip_prefix("https://"))
        .unwrap_or(addr);
    let scheme = if tls.is_some() { "https" } else { "http" };
    let ep = Endpoint::from_shared(format!("{scheme}://{host}")).map_err(|e| bad(&e))?;
    match tls {
        Some(t) => ep.tls_config(t.clone()).map_err(|e| bad(&e)),
        None => Ok(ep),
    }
}

pub(super) fn channel(addr: &str, tls: Option<&ClientTlsConfig>) -> Result<Channel> {
    Ok(endpoint(addr, tls)?
        .connect_timeout(std::time::Duration::from_secs(5))
        // A peer cut off without a reset (a partition, a paused host) must
        // not hang calls on an established connection forever: HTTP/2 pings
        // find it dead in KEEPALIVE + KEEPALIVE_TIMEOUT and fail the calls,
        // so that readers and writers go on to another replica.
        .http2_keep_alive_interval(KEEPALIVE)
        .keep_alive_timeout(KEEPALIVE_TIMEOUT)
        .keep_alive_while_idle(true)
        .tcp_nodelay(true)
        .connect_lazy())
}

/// HTTP/2 flow-control windows, bytes, of the workers' gRPC servers: what
/// a writer may have in flight to a worker before it waits for a window
/// update. The protocol's default (64 KiB) makes a sender of 1 MiB chunks
/// stop 16 times a chunk. Measured on a 6-worker loopback cluster of this
/// project's 2-core machine, `mr fs put` of 1 GiB at replication 2, medians
/// of 3: 6.54 s without them, 3.30 s and 4.91 s with them in two runs (157
/// against 310 and 209 MiB/s); Sort and TeraSort of 1 GiB were unchanged
/// within the runs' spread (their reduces write faster, their shuffles
/// compete for the same two cores). Clients keep the default window for
/// what they receive: larger ones made the shuffle slower, not faster.
pub const STREAM_WINDOW: u32 = 8 << 20;
pub const CONNECTION_WINDOW: u32 = 32 << 20;

/// HTTP/2 ping interval on every client channel.
pub const KEEPALIVE: std::time::Duration = std::time::Duration::from_secs(2);
/// A ping unanswered this long closes the connection.
pub const KEEPALIVE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(4);

/// Makes the channel to one address. The daemons and the CLI use TCP
/// ([`Dfs::connect`]); the deterministic simulation (`simtest/`) passes one
/// that dials turmoil's simulated sockets ([`Dfs::connect_with`]).
pub type ChannelMaker = std::sync::Arc<dyn Fn(&str) -> Result<Channel> + Send + Sync>;

/// A master client over plain TCP (tests; the daemons and the CLI go
/// through [`Dfs::connect`], which follows `[tls]`).
pub fn master_conn(addr: &str, token: &str) -> Result<MasterConn> {
    master_conn_on(channel(addr, None)?, token)
}

/// A master client over an existing channel.
pub fn master_conn_on(ch: Channel, token: &str) -> Result<MasterConn> {
    let attach = TokenAttach::new(token)?;
    Ok(MasterClient::with_interceptor(ch, attach)
        .max_decoding_message_size(64 << 20)
        .max_encoding_message_size(64 << 20))
}

/// A worker client over plain TCP (see [`master_conn`]).
pub fn worker_conn(addr: &str, token: &str) -> Result<WorkerConn> {
    worker_conn_on(channel(addr, None)?, token)
}

/// A worker client over an existing channel.
pub fn worker_conn_on(ch: Channel, token: &str) -> Result<WorkerConn> {
    let attach = TokenAttach::new(token)?;
    Ok(WorkerClient::with_interceptor(ch, attach)
        .max_decoding_message_size(MAX_MESSAGE)
        .max_encoding_message_size(MAX_MESSAGE))
}
