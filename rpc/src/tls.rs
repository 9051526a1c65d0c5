//! TLS on the wire, when `cluster.toml` has a `[tls]` section.
//!
//! Without it the cluster token crosses the network in clear text on every
//! call, so anyone who can read the LAN can run jobs, read every file and
//! stop the cluster. With it every gRPC server (master, workers) and the
//! web UI speak TLS only, and every client verifies the server against the
//! cluster CA. gRPC is mutual: a server also asks its caller for a
//! certificate of the same CA, so a host without one cannot even reach the
//! token check. The token stays the authentication of a call; the
//! certificates keep it secret and keep strangers off the ports. The web UI
//! asks no client certificate (a browser has none): the token guards it.
//!
//! Files (`mr config init --tls` writes them, `cli::certs`):
//! `[tls] ca` is the CA's certificate; `[tls] dir` holds `NAME.pem` and
//! `NAME.key` for each process: `master`, each worker by its name, and
//! `client` for the `mr` CLI (`MR_TLS_NAME` picks another). The CA's key
//! is kept apart (`ca.key` beside `cluster.toml`), so that copying the
//! directory to hosts never ships it.

use common::config::ClusterConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
pub use tokio_rustls;
pub use tokio_rustls::rustls;
use tonic::transport::{Certificate, ClientTlsConfig, Identity, ServerTlsConfig};

/// A handshake that has not finished in this long is given up, on both
/// sides: a peer that connects and says nothing must not hold a task.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The identity a client presents when nothing else is said (defined with
/// the config, which defaults `[tls] me` to it).
pub use common::config::CLIENT_NAME;

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("TLS: cannot read {path}: {err} (make it with `mr config init --tls`)")]
    Read { path: PathBuf, err: std::io::Error },
    #[error("TLS: {path}: {msg}")]
    Bad { path: PathBuf, msg: String },
    #[error("TLS: {0}")]
    Other(String),
}

fn read(path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|err| TlsError::Read {
        path: path.to_path_buf(),
        err,
    })
}

/// The PEM files of one process: the CA, its certificate and its key,
/// each checked to hold what it should, so that a wrong file is named at
/// start and not as a failed handshake later.
struct Pems {
    ca: Vec<u8>,
    cert: Vec<u8>,
    key: Vec<u8>,
}

fn pems(cfg: &ClusterConfig, name: &str) -> Result<Option<Pems>, TlsError> {
    let Some(t) = &cfg.tls else { return Ok(None) };
    let ca = read(&t.ca)?;
    certs_in(&ca, &t.ca)?;
    let (cert_path, key_path) = (t.cert_path(name), t.key_path(name));
    let cert = read(&cert_path)?;
    certs_in(&cert, &cert_path)?;
    let key = read(&key_path)?;
    key_in(&key, &key_path)?;
    Ok(Some(Pems { ca, cert, key }))
}

fn certs_in(pem: &[u8], path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certs: Vec<_> = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<_, _>>()
        .map_err(|e| TlsError::Bad {
            path: path.into(),
            msg: format!("not a PEM certificate: {e}"),
        })?;
    if certs.is_empty() {
        return Err(TlsError::Bad {
            path: path.into(),
            msg: "holds no certificate".into(),
        });
    }
    Ok(certs)
}

fn key_in(pem: &[u8], path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    PrivateKeyDer::from_pem_slice(pem).map_err(|e| TlsError::Bad {
        path: path.into(),
        msg: format!("not a PEM private key: {e}"),
    })
}

/// What a client dials with: the CA to verify servers against and the
/// identity `cfg.tls.me` to present. `None` without `[tls]`.
pub fn client_config(cfg: &ClusterConfig) -> Result<Option<ClientTlsConfig>, TlsError> {
    let name = cfg.tls.as_ref().map(|t| t.me.clone()).unwrap_or_default();
    Ok(pems(cfg, &name)?.map(|p| {
        ClientTlsConfig::new()
            .ca_certificate(Certificate::from_pem(p.ca))
            .identity(Identity::from_pem(p.cert, p.key))
            .timeout(HANDSHAKE_TIMEOUT)
    }))
}

/// What gRPC server `name` (master, a worker) serves with: its identity,
/// and the CA its callers' certificates must chain to. `None` without
/// `[tls]`.
pub fn server_config(cfg: &ClusterConfig, name: &str) -> Result<Option<ServerTlsConfig>, TlsError> {
    Ok(pems(cfg, name)?.map(|p| {
        ServerTlsConfig::new()
            .identity(Identity::from_pem(p.cert, p.key))
            .client_ca_root(Certificate::from_pem(p.ca))
            .timeout(HANDSHAKE_TIMEOUT)
    }))
}

/// The web UI's rustls configuration (HTTP/1.1, no client certificate: a
/// browser has none, and the token guards every route with data).
pub fn web_config(
    cfg: &ClusterConfig,
    name: &str,
) -> Result<Option<Arc<rustls::ServerConfig>>, TlsError> {
    let Some(t) = &cfg.tls else { return Ok(None) };
    let Some(p) = pems(cfg, name)? else {
        return Ok(None);
    };
    let certs = certs_in(&p.cert, &t.cert_path(name))?;
    let key = key_in(&p.key, &t.key_path(name))?;
    let mut sc = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| TlsError::Other(e.to_string()))?
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .map_err(|e| TlsError::Bad {
        path: t.cert_path(name),
        msg: format!("certificate and key do not go together: {e}"),
    })?;
    sc.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Some(Arc::new(sc)))
}

/// A rustls client trusting only the CA in `ca_pem`: for tests and tools
/// that talk HTTPS to the web UI.
/// Whether a DER certificate was issued to the process `name`: the CLI's
/// issuance (`cli::certs`) puts each process's name among its
/// certificate's DNS names, and no other process's.
pub fn names(der: &[u8], name: &str) -> bool {
    let der = CertificateDer::from(der);
    let Ok(cert) = webpki::EndEntityCert::try_from(&der) else {
        return false;
    };
    let Ok(dns) = rustls::pki_types::ServerName::try_from(name) else {
        return false;
    };
    cert.verify_is_valid_for_subject_name(&dns).is_ok()
}

/// Refuses a worker's call when TLS is on and the caller's certificate
/// does not name the worker `name` it speaks for: with it, a host holding
/// one worker's key (and each is given only its own) cannot register or
/// report as another. Without TLS there is no certificate and nothing to
/// check.
pub fn check_peer_is<T>(req: &tonic::Request<T>, name: &str) -> Result<(), tonic::Status> {
    let Some(certs) = req.peer_certs() else {
        return Ok(());
    };
    if certs.first().is_some_and(|c| names(c.as_ref(), name)) {
        return Ok(());
    }
    tracing::warn!(
        worker = name,
        "permission denied: the caller's certificate is not the worker's"
    );
    Err(tonic::Status::permission_denied(format!(
        "permission denied: the caller's certificate does not name worker {name:?}: \
         each worker must dial with its own certificate"
    )))
}

pub fn https_client(ca_pem: &[u8]) -> Result<Arc<rustls::ClientConfig>, TlsError> {
    let mut roots = rustls::RootCertStore::empty();
    for c in certs_in(ca_pem, Path::new("<ca>"))? {
        roots
            .add(c)
            .map_err(|e| TlsError::Other(format!("bad CA certificate: {e}")))?;
    }
    Ok(Arc::new(
        rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Other(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth(),
    ))
}
