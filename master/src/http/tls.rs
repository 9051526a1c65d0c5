//! The web UI over TLS. axum serves any [`axum::serve::Listener`]; this one
//! hands it only connections whose handshake is done. Each handshake runs
//! in its own task, so a peer that connects and stays silent delays no one
//! else (and is dropped after [`HANDSHAKE_TIMEOUT`]).

use axum::serve::Listener;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

pub struct TlsListener {
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    addr: SocketAddr,
    acceptor: tokio::task::JoinHandle<()>,
}

impl TlsListener {
    pub fn new(
        listener: TcpListener,
        config: Arc<rpc::tls::rustls::ServerConfig>,
    ) -> std::io::Result<Self> {
        let addr = listener.local_addr()?;
        let (tx, ready) = mpsc::channel(64);
        let tls = TlsAcceptor::from(config);
        let acceptor = tokio::spawn(async move {
            loop {
                let (tcp, peer) = match listener.accept().await {
                    Ok(c) => c,
                    Err(e) => {
                        // Out of descriptors and the like: as axum's own
                        // TCP listener does, wait instead of spinning.
                        tracing::warn!("web UI accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                };
                let tls = tls.clone();
                let tx = tx.clone();
                tokio::spawn(async move {
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, tls.accept(tcp)).await {
                        Ok(Ok(s)) => {
                            let _ = tx.send((s, peer)).await;
                        }
                        Ok(Err(e)) => tracing::debug!(%peer, "web UI TLS handshake failed: {e}"),
                        Err(_) => tracing::debug!(%peer, "web UI TLS handshake timed out"),
                    }
                });
            }
        });
        Ok(TlsListener {
            ready,
            addr,
            acceptor,
        })
    }
}

impl Drop for TlsListener {
    /// Closes the listening socket with the server, as a plain listener's
    /// drop would.
    fn drop(&mut self) {
        self.acceptor.abort();
    }
}

impl Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(c) => c,
            // The acceptor holds a sender until it is aborted with us.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        Ok(self.addr)
    }
}
