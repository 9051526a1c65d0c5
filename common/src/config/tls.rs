//! `[tls]`: the certificates every process presents and checks.

use super::*;

/// The identity a client presents when nothing else is said.
pub const CLIENT_NAME: &str = "client";

/// `[tls]`: where the cluster CA and each process's certificate are.
/// `mr config init --tls` writes them and this section.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsConfig {
    /// The cluster CA's certificate, which every peer is verified against.
    pub ca: PathBuf,
    /// `NAME.pem` and `NAME.key` for each process: `master`, the workers
    /// by name, `client`.
    pub dir: PathBuf,
    /// Whose certificate this process presents when it dials; not in the
    /// file: a worker sets its name, the CLI `client` (or `MR_TLS_NAME`).
    #[serde(skip, default = "default_tls_me")]
    pub me: String,
}

pub(super) fn default_tls_me() -> String {
    CLIENT_NAME.into()
}

impl TlsConfig {
    pub fn cert_path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.pem"))
    }
    pub fn key_path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.key"))
    }
}
