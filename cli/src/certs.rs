//! The cluster CA and a certificate per process, as `mr config init --tls`
//! writes them. Issuance is the CLI's alone: no daemon links `rcgen`; they
//! only load what is written here (`rpc::tls`), whose module docs say which
//! files go where.

use common::config::{ClusterConfig, CLIENT_NAME};
use rpc::tls::TlsError;
use std::path::{Path, PathBuf};

/// Why the CA or a certificate could not be made or written. Reading and
/// generation fail as the loader's [`TlsError`] does (same messages).
#[derive(Debug, thiserror::Error)]
pub enum CertError {
    #[error(transparent)]
    Tls(#[from] TlsError),
    #[error("TLS: cannot write {path}: {err}")]
    Write { path: PathBuf, err: std::io::Error },
}

fn read(path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|err| TlsError::Read {
        path: path.to_path_buf(),
        err,
    })
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

fn gen_err(e: rcgen::Error) -> CertError {
    TlsError::Other(format!("certificate generation failed: {e}")).into()
}

impl Ca {
    /// A new CA with a fresh key (ECDSA P-256).
    pub fn new() -> Result<Ca, CertError> {
        let key = rcgen::KeyPair::generate().map_err(gen_err)?;
        let cert_pem = ca_params().self_signed(&key).map_err(gen_err)?.pem();
        Ok(Ca { key, cert_pem })
    }

    /// The CA of an earlier `init`, to sign more certificates that chain to
    /// the certificate every process already trusts.
    pub fn load(key_pem: &str, cert_pem: String) -> Result<Ca, CertError> {
        let key = rcgen::KeyPair::from_pem(key_pem).map_err(gen_err)?;
        Ok(Ca { key, cert_pem })
    }

    pub fn key_pem(&self) -> String {
        self.key.serialize_pem()
    }

    /// A certificate for process `name` valid for `sans` (IP addresses and
    /// DNS names), usable to serve and to dial; returns (cert, key) PEM.
    pub fn issue(&self, name: &str, sans: &[String]) -> Result<(String, String), CertError> {
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

fn write_file(path: &Path, data: &str, secret: bool) -> Result<(), CertError> {
    use std::io::Write;
    let werr = |err| CertError::Write {
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
) -> Result<Vec<Issued>, CertError> {
    std::fs::create_dir_all(dir).map_err(|err| CertError::Write {
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
        ))
        .into());
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
    use rpc::tls::rustls::pki_types::pem::PemObject;
    use rpc::tls::rustls::pki_types::CertificateDer;
    use rpc::tls::{client_config, names, server_config, web_config};

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
