//! `mr config init`: what the launchers cannot write with `echo` into the
//! cluster file they made: the cluster CA and the processes' certificates.

use common::config::ClusterConfig;
use std::path::{Path, PathBuf};

/// Checks the cluster file; with `tls`, makes (or reuses) the cluster CA,
/// issues a certificate per process into `dir` (default: `tls` beside the
/// file) and adds a `[tls]` section pointing there. The CA's key goes to
/// `ca.key` beside the file, outside `dir`, so that copying `dir` to the
/// hosts never ships it. Running it again re-issues every certificate
/// under the same CA (after a worker was added, say).
pub fn init(config: &Path, tls: bool, dir: Option<&Path>, sans: &[String]) -> anyhow::Result<()> {
    let cfg = super::load_config(config)?;
    if !tls {
        println!(
            "{}: valid, {} workers; nothing to add (--tls makes a CA and certificates)",
            config.display(),
            cfg.workers.len()
        );
        return Ok(());
    }
    let base = match config.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let (dir, add_section) = match (&cfg.tls, dir) {
        (Some(t), Some(d)) if t.dir != d => anyhow::bail!(
            "{} already has [tls] with dir {}; drop --dir or edit the file",
            config.display(),
            t.dir.display()
        ),
        (Some(t), _) => (t.dir.clone(), false),
        (None, Some(d)) => (d.to_path_buf(), true),
        (None, None) => (base.join("tls"), true),
    };
    let ca_key = base.join("ca.key");
    let issued = common::tls::write_cluster_certs(&cfg, &dir, &ca_key, sans)?;
    for i in &issued {
        println!(
            "{:<8} {}  ({})",
            i.name,
            dir.join(format!("{}.pem", i.name)).display(),
            i.sans.join(", ")
        );
    }
    println!(
        "CA key   {} (keep it here: no process needs it)",
        ca_key.display()
    );
    if add_section {
        let rel = relative_to(&dir, &base);
        let section = format!(
            "\n[tls]   # written by mr config init --tls: TLS only, on every port\n\
             ca = {:?}\ndir = {:?}\n",
            rel.join("ca.pem").display().to_string(),
            rel.display().to_string()
        );
        let mut text = std::fs::read_to_string(config)?;
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&section);
        std::fs::write(config, &text)?;
        // What was written must load: a bad path shows now, not at start.
        let back = ClusterConfig::load(config)?;
        common::tls::client_config(&back)?;
        println!("added [tls] to {}", config.display());
    }
    Ok(())
}

/// `path` relative to `base` when it lies under it (so that the file and
/// the certificates can move together, to hosts and into containers).
fn relative_to(path: &Path, base: &Path) -> PathBuf {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    match abs(path).strip_prefix(abs(base)) {
        Ok(r) if !r.as_os_str().is_empty() => r.to_path_buf(),
        _ => abs(path),
    }
}
