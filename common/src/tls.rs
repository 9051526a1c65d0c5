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
//! Files (`mr config init --tls` writes them, [`write_cluster_certs`]):
//! `[tls] ca` is the CA's certificate; `[tls] dir` holds `NAME.pem` and
//! `NAME.key` for each process: `master`, each worker by its name, and
//! `client` for the `mr` CLI (`MR_TLS_NAME` picks another). The CA's key
//! is kept apart (`ca.key` beside `cluster.toml`), so that copying the
//! directory to hosts never ships it.

use crate::config::ClusterConfig;
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
pub use crate::config::CLIENT_NAME;

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("TLS: cannot read {path}: {err} (make it with `mr config init --tls`)")]
    Read { path: PathBuf, err: std::io::Error },
    #[error("TLS: {path}: {msg}")]
    Bad { path: PathBuf, msg: String },
    #[error("TLS: cannot write {path}: {err}")]
    Write { path: PathBuf, err: std::io::Error },
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
/// Whether a DER certificate was issued to the process `name`:
/// [`write_cluster_certs`] puts each process's name among its certificate's
/// DNS names, and no other process's.
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

/// The certificate authority of one cluster.
pub struct Ca {
    key: rcgen::KeyPair,
    /// The CA certificate, PEM.
    pub cert_pem: String,
}

/// The CA's subject: fixed, because a CA reloaded from its key is rebuilt
/// from it to sign more certificates ([`Ca::load`]).
const CA_NAME: &str = "mini-MapReduce cluster CA";

fn ca_params() -> rcgen::CertificateParams {
    let mut p = rcgen::CertificateParams::default();
    p.distinguished_name
        .push(rcgen::DnType::CommonName, CA_NAME);
    p.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Constrained(0));
    p.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::CrlSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    set_validity(&mut p);
    p
}

/// From last year to ten years on: long enough for a test cluster, short
/// enough that a lost key does not stay good for ever.
fn set_validity(p: &mut rcgen::CertificateParams) {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let year = 1970 + (secs / 31_556_952) as i32;
    p.not_before = rcgen::date_time_ymd(year - 1, 1, 1);
    p.not_after = rcgen::date_time_ymd(year + 10, 1, 1);
}

fn gen_err(e: rcgen::Error) -> TlsError {
    TlsError::Other(format!("certificate generation failed: {e}"))
}

impl Ca {
    /// A new CA with a fresh key (ECDSA P-256).
    pub fn new() -> Result<Ca, TlsError> {
        let key = rcgen::KeyPair::generate().map_err(gen_err)?;
        let cert_pem = ca_params().self_signed(&key).map_err(gen_err)?.pem();
        Ok(Ca { key, cert_pem })
    }

    /// The CA of an earlier `init`, to sign more certificates that chain to
    /// the certificate every process already trusts.
    pub fn load(key_pem: &str, cert_pem: String) -> Result<Ca, TlsError> {
        let key = rcgen::KeyPair::from_pem(key_pem).map_err(gen_err)?;
        Ok(Ca { key, cert_pem })
    }

    pub fn key_pem(&self) -> String {
        self.key.serialize_pem()
    }

    /// A certificate for process `name` valid for `sans` (IP addresses and
    /// DNS names), usable to serve and to dial; returns (cert, key) PEM.
    pub fn issue(&self, name: &str, sans: &[String]) -> Result<(String, String), TlsError> {
        let key = rcgen::KeyPair::generate().map_err(gen_err)?;
        let mut p = rcgen::CertificateParams::new(sans.to_vec()).map_err(gen_err)?;
        p.distinguished_name.push(rcgen::DnType::CommonName, name);
        p.is_ca = rcgen::IsCa::ExplicitNoCa;
        p.key_usages = vec![
            rcgen::KeyUsagePurpose::DigitalSignature,
            rcgen::KeyUsagePurpose::KeyEncipherment,
        ];
        p.extended_key_usages = vec![
            rcgen::ExtendedKeyUsagePurpose::ServerAuth,
            rcgen::ExtendedKeyUsagePurpose::ClientAuth,
        ];
        set_validity(&mut p);
        p.use_authority_key_identifier_extension = true;
        let issuer = rcgen::Issuer::new(ca_params(), &self.key);
        let cert = p.signed_by(&key, &issuer).map_err(gen_err)?;
        Ok((cert.pem(), key.serialize_pem()))
    }
}

/// One certificate written by [`write_cluster_certs`].
#[derive(Debug, Clone)]
pub struct Issued {
    pub name: String,
    pub sans: Vec<String>,
}

/// The names a process is reached by: the IPs of its addresses, its name,
/// `localhost` when it listens on loopback, and `extra`.
fn sans_for(name: &str, addrs: &[&str], extra: &[String]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    let mut push = |s: String| {
        if !v.contains(&s) {
            v.push(s);
        }
    };
    for a in addrs {
        if let Ok(sa) = a.parse::<std::net::SocketAddr>() {
            push(sa.ip().to_string());
            if sa.ip().is_loopback() {
                push("localhost".into());
            }
        } else if let Some((host, _)) = a.rsplit_once(':') {
            // A DNS name (Kubernetes, Docker Swarm): peers dial the name.
            push(host.to_string());
        }
    }
    push(name.to_string());
    for e in extra {
        push(e.clone());
    }
    v
}

fn write_file(path: &Path, data: &str, secret: bool) -> Result<(), TlsError> {
    use std::io::Write;
    let werr = |err| TlsError::Write {
        path: path.to_path_buf(),
        err,
    };
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if secret {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = secret;
    let mut f = o.open(path).map_err(werr)?;
    f.write_all(data.as_bytes()).map_err(werr)
}

/// Makes (or reuses) the cluster CA and a certificate per process of
/// `cfg`: the master, each worker, and the client. The CA's certificate
/// goes to `dir/ca.pem` and its key to `ca_key`; an existing pair is
/// reused, so certificates issued again (a worker added, an address
/// changed) still chain to what running processes trust. `extra` names go
/// into every server certificate (a host name, a NAT address).
pub fn write_cluster_certs(
    cfg: &ClusterConfig,
    dir: &Path,
    ca_key: &Path,
    extra: &[String],
) -> Result<Vec<Issued>, TlsError> {
    std::fs::create_dir_all(dir).map_err(|err| TlsError::Write {
        path: dir.to_path_buf(),
        err,
    })?;
    let ca_pem = dir.join("ca.pem");
    let ca = if ca_key.exists() && ca_pem.exists() {
        let key = String::from_utf8_lossy(&read(ca_key)?).into_owned();
        let cert = String::from_utf8_lossy(&read(&ca_pem)?).into_owned();
        Ca::load(&key, cert)?
    } else {
        let ca = Ca::new()?;
        write_file(ca_key, &ca.key_pem(), true)?;
        write_file(&ca_pem, &ca.cert_pem, false)?;
        ca
    };
    if let Some(w) = cfg
        .workers
        .iter()
        .find(|w| ["master", CLIENT_NAME, "ca"].contains(&w.name.as_str()))
    {
        return Err(TlsError::Other(format!(
            "a worker named {:?} would share its certificate files with another process: rename it",
            w.name
        )));
    }
    let mut wanted: Vec<(String, Vec<String>)> = Vec::new();
    let mut master_addrs = vec![cfg.master.addr.as_str()];
    if let Some(h) = &cfg.master.http_addr {
        master_addrs.push(h);
    }
    wanted.push(("master".into(), sans_for("master", &master_addrs, extra)));
    for w in &cfg.workers {
        wanted.push((w.name.clone(), sans_for(&w.name, &[&w.addr], extra)));
    }
    wanted.push((CLIENT_NAME.into(), vec![CLIENT_NAME.into()]));
    let mut out = Vec::new();
    for (name, sans) in wanted {
        let (cert, key) = ca.issue(&name, &sans)?;
        write_file(&dir.join(format!("{name}.pem")), &cert, false)?;
        write_file(&dir.join(format!("{name}.key")), &key, true)?;
        out.push(Issued { name, sans });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONF: &str = "token = \"t\"\n[master]\naddr = \"10.77.0.1:7070\"\n\
        http_addr = \"10.77.0.1:7080\"\ndata_dir = \"/tmp/m\"\n\
        [[workers]]\nname = \"w1\"\naddr = \"10.77.1.1:7100\"\ndata_dir = \"/tmp/w1\"\n";

    #[test]
    fn certificates_carry_the_addresses_and_load_from_paths_relative_to_the_file() {
        let dir = std::env::temp_dir().join(format!("mr-tls-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let cfg = ClusterConfig::parse(CONF).unwrap();
        let issued = write_cluster_certs(
            &cfg,
            &dir.join("tls"),
            &dir.join("ca.key"),
            &["mr.lan".into()],
        )
        .unwrap();
        let sans = |n: &str| issued.iter().find(|i| i.name == n).unwrap().sans.clone();
        assert_eq!(sans("master"), ["10.77.0.1", "master", "mr.lan"]);
        assert_eq!(sans("w1"), ["10.77.1.1", "w1", "mr.lan"]);
        assert_eq!(sans(CLIENT_NAME), [CLIENT_NAME]);
        // A certificate names its own process and no other.
        let der = |n: &str| {
            CertificateDer::from_pem_slice(
                &std::fs::read(dir.join(format!("tls/{n}.pem"))).unwrap(),
            )
            .unwrap()
        };
        assert!(names(&der("w1"), "w1"));
        assert!(!names(&der("w1"), "w2") && !names(&der(CLIENT_NAME), "w1"));
        assert!(!names(&der("master"), "w1") && !names(b"junk", "w1"));
        // Issued again: the same CA, new leaves.
        let ca = std::fs::read(dir.join("tls/ca.pem")).unwrap();
        write_cluster_certs(&cfg, &dir.join("tls"), &dir.join("ca.key"), &[]).unwrap();
        assert_eq!(std::fs::read(dir.join("tls/ca.pem")).unwrap(), ca);

        let file = dir.join("cluster.toml");
        std::fs::write(
            &file,
            format!("{CONF}[tls]\nca = \"tls/ca.pem\"\ndir = \"tls\"\n"),
        )
        .unwrap();
        let loaded = ClusterConfig::load(&file).unwrap();
        assert_eq!(loaded.tls.as_ref().unwrap().ca, dir.join("tls/ca.pem"));
        assert_eq!(loaded.ui_url().unwrap(), "https://10.77.0.1:7080/");
        assert!(client_config(&loaded).unwrap().is_some());
        assert!(server_config(&loaded, "w1").unwrap().is_some());
        assert!(web_config(&loaded, "master").unwrap().is_some());
        let e = server_config(&loaded, "w9").unwrap_err();
        assert!(e.to_string().contains("w9.pem"), "{e}");
        std::fs::write(dir.join("tls/w1.key"), "not a key").unwrap();
        let e = server_config(&loaded, "w1").unwrap_err();
        assert!(e.to_string().contains("private key"), "{e}");
        assert!(client_config(&ClusterConfig::parse(CONF).unwrap())
            .unwrap()
            .is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_dns_address_is_a_san_of_its_certificate() {
        let named = CONF
            .replace("10.77.0.1:7070", "mr-master:7070")
            .replace("10.77.1.1:7100", "mr-worker-0.mr-worker:7100");
        let cfg = ClusterConfig::parse(&named).unwrap();
        assert_eq!(
            sans_for("master", &[&cfg.master.addr, "10.77.0.1:7080"], &[]),
            ["mr-master", "10.77.0.1", "master"]
        );
        assert_eq!(
            sans_for("w1", &[&cfg.workers[0].addr], &[]),
            ["mr-worker-0.mr-worker", "w1"]
        );
    }

    #[test]
    fn a_worker_may_not_take_another_process_name() {
        let cfg = ClusterConfig::parse(&CONF.replace("\"w1\"", "\"client\"")).unwrap();
        let dir = std::env::temp_dir().join(format!("mr-tls-unit2-{}", std::process::id()));
        let e = write_cluster_certs(&cfg, &dir.join("tls"), &dir.join("ca.key"), &[]).unwrap_err();
        assert!(e.to_string().contains("rename"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
