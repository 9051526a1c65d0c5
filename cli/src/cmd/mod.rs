//! The `mr` command groups, one module each: its clap arguments, a
//! `dispatch` that `main` hands them to, and the functions that take the
//! parsed arguments and the cluster config and print the result; errors
//! travel up to `main` as `anyhow`.

pub mod admin;
pub mod cache;
pub mod cluster;
pub mod config;
pub mod fs;
pub mod glob;
pub mod job;
pub mod local;
pub mod sim;
pub mod userjob;

use common::config::{ClusterConfig, ConfigError};
use std::path::Path;

/// Loads the cluster file. Only a missing file gets the hint about
/// `--config`: a file that is there but wrong is reported with its path and
/// what is wrong in it (the TOML error names the line and column).
pub fn load_config(path: &Path) -> anyhow::Result<ClusterConfig> {
    let mut cfg = ClusterConfig::load(path).map_err(|e| config_error(path, e))?;
    sched::check_config(&cfg).map_err(|e| config_error(path, e))?;
    // The certificate the CLI shows under TLS: `client`, or another
    // process's where only that one is at hand (a container's health check).
    if let (Some(t), Ok(me)) = (&mut cfg.tls, std::env::var("MR_TLS_NAME")) {
        if !me.is_empty() {
            t.me = me;
        }
    }
    Ok(cfg)
}

fn config_error(path: &Path, e: ConfigError) -> anyhow::Error {
    match e {
        ConfigError::Read { ref err, .. } if err.kind() == std::io::ErrorKind::NotFound => {
            anyhow::anyhow!(
                "{e}: the client needs the cluster file: pass --config FILE or set MR_CONFIG"
            )
        }
        ConfigError::Invalid(msg) => anyhow::anyhow!("invalid config {}: {msg}", path.display()),
        other => other.into(),
    }
}

/// The flag parsers `mr bench` shares, from the crate below.
pub(crate) use bench::args::{parse_duration, parse_size, RecordFormat};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_file_is_reported_as_broken_not_as_missing() {
        let dir = std::env::temp_dir().join(format!("mr-cfg-err-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("cluster.toml");
        std::fs::write(&bad, "token = \"t\"\n[master\naddr = 1\n").unwrap();
        let e = format!("{:#}", load_config(&bad).unwrap_err());
        assert!(e.contains(&bad.display().to_string()), "{e}");
        assert!(e.contains("line 2"), "the TOML error names the line: {e}");
        assert!(!e.contains("pass --config"), "{e}");
        let missing = format!("{:#}", load_config(&dir.join("nope.toml")).unwrap_err());
        assert!(missing.contains("pass --config"), "{missing}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
