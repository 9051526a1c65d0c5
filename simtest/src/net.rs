//! tonic over turmoil's simulated TCP: a stream of accepted connections for
//! the servers (`serve_with_incoming_shutdown`) and a connector for the
//! clients (`Endpoint::connect_with_connector_lazy`), as turmoil's own gRPC
//! example does. Every channel has a connect timeout and a per-call
//! deadline in simulated time, so that a call into a partition fails instead
//! of waiting forever (turmoil drops the segments of a partitioned link and,
//! unlike a kernel, never retransmits them).

use futures::Stream;
use hyper_util::rt::TokioIo;
use rpc::dfs::{ChannelMaker, DfsError};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tonic::transport::{Channel, Endpoint, Uri};

/// Longest a simulated RPC may take before the caller gives up. Several
/// heartbeat intervals, so that a held link (messages delayed, not lost)
/// usually outlasts it only when the hold itself is long.
pub const RPC_DEADLINE: Duration = Duration::from_millis(1500);
const CONNECT_TIMEOUT: Duration = Duration::from_millis(500);
const KEEPALIVE: Duration = Duration::from_millis(400);

/// One accepted or dialled simulated TCP connection.
pub struct Conn(turmoil::net::TcpStream);

impl tonic::transport::server::Connected for Conn {
    type ConnectInfo = ();
    fn connect_info(&self) {}
}

impl AsyncRead for Conn {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

/// Connections accepted on `port` of the current simulated host.
pub async fn incoming(port: u16) -> std::io::Result<impl Stream<Item = std::io::Result<Conn>>> {
    let listener = turmoil::net::TcpListener::bind(("0.0.0.0", port)).await?;
    Ok(futures::stream::unfold(listener, |l| async move {
        let next = l.accept().await.map(|(s, _)| Conn(s));
        Some((next, l))
    }))
}

/// A lazy channel to `addr` ("ip:port") over simulated TCP.
pub fn channel(addr: &str) -> Result<Channel, DfsError> {
    let endpoint =
        Endpoint::from_shared(format!("http://{addr}")).map_err(|e| DfsError::Connect {
            addr: addr.into(),
            msg: e.to_string(),
        })?;
    let connector = tower::service_fn(|uri: Uri| async move {
        let authority = uri.authority().map(|a| a.to_string()).unwrap_or_default();
        let s = turmoil::net::TcpStream::connect(authority).await?;
        Ok::<_, std::io::Error>(TokioIo::new(Conn(s)))
    });
    Ok(endpoint
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(RPC_DEADLINE)
        // turmoil never retransmits what a partition dropped, so a
        // connection that crossed one is wedged for good; a kernel would
        // retransmit after the heal. HTTP/2 pings find the wedged
        // connection and drop it, and the channel dials a fresh one.
        .http2_keep_alive_interval(KEEPALIVE)
        .keep_alive_timeout(KEEPALIVE)
        .keep_alive_while_idle(true)
        .connect_with_connector_lazy(connector))
}

/// The channel maker `rpc::dfs::Dfs::connect_with` takes.
pub fn maker() -> ChannelMaker {
    Arc::new(channel)
}
