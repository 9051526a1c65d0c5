//! `mr fs put|get|cat|ls|rm|stat|mkdir|chmod|chown`. `cat`, `ls`, `get` and `rm` take globs
//! in the last path component (`cli/glob.rs`), and `cat DIR` prints a job's
//! output: the directory's `part-*` files in order.

use super::{glob, parse_size};
use crate::output::{table, Progress};
use anyhow::Context;
use clap::Subcommand;
use common::config::ClusterConfig;
use common::path::DfsPath;
use common::units::format_size;
use rpc::dfs::{Dfs, DfsError, PutOptions};
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub enum FsCmd {
    /// Copy a local file into the cluster; returns once every replica is durable.
    Put {
        /// The local file; `-` reads standard input to its end.
        local: PathBuf,
        path: String,
        /// Replicas per block (default: the cluster's).
        #[arg(long, short = 'r')]
        replication: Option<u32>,
        /// Block size, e.g. 64MiB (default: the cluster's).
        #[arg(long, value_parser = parse_size)]
        block_size: Option<u64>,
        /// Replace an existing file.
        #[arg(long, short = 'f')]
        force: bool,
        #[arg(long)]
        json: bool,
    },
    /// Copy a file out of the cluster; with a glob (`'/out/part-*'`), every
    /// match into the existing directory LOCAL.
    Get {
        path: String,
        local: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Print files to standard output: a file, a glob (`'/out/part-*'`,
    /// matches in name order), or a directory's `part-*` files in order.
    Cat { path: String },
    /// List a directory (default: the root), or what a glob matches.
    Ls {
        #[arg(default_value = "/")]
        path: String,
        #[arg(long)]
        json: bool,
    },
    /// Delete a file, or a directory and everything under it; a glob
    /// deletes every match.
    Rm {
        path: String,
        #[arg(long)]
        json: bool,
    },
    /// Make a directory and its missing parents, owned by you. Others may
    /// then add nothing to it unless its mode lets them.
    Mkdir {
        path: String,
        /// Permission bits in octal (owner, group, others), e.g. 700.
        #[arg(long, short = 'm', default_value = "755", value_parser = parse_mode)]
        mode: u32,
    },
    /// Change a file's or directory's permission bits (yours, or as an
    /// admin anyone's): `r` lets others read a file or list a directory,
    /// `w` on a directory lets them add to it and delete from it.
    Chmod {
        /// Octal, e.g. 600 (only you), 644 (everyone reads), 777.
        #[arg(value_parser = parse_mode)]
        mode: u32,
        path: String,
    },
    /// Give a file or directory to another user (admins only).
    Chown { owner: String, path: String },
    /// A file's blocks, their replicas and where they are cached.
    Stat {
        path: String,
        #[arg(long)]
        json: bool,
    },
}

/// Runs one `mr fs` command.
pub async fn dispatch(cfg: &ClusterConfig, c: FsCmd) -> anyhow::Result<()> {
    match c {
        FsCmd::Put {
            local,
            path,
            replication,
            block_size,
            force,
            json,
        } => put(cfg, &local, &path, replication, block_size, force, json).await,
        FsCmd::Get { path, local, json } => get(cfg, &path, &local, json).await,
        FsCmd::Cat { path } => cat(cfg, &path).await,
        FsCmd::Ls { path, json } => ls(cfg, &path, json).await,
        FsCmd::Rm { path, json } => rm(cfg, &path, json).await,
        FsCmd::Stat { path, json } => stat(cfg, &path, json).await,
        FsCmd::Mkdir { path, mode } => mkdir(cfg, &path, mode).await,
        FsCmd::Chmod { mode, path } => set_attr(cfg, &path, Some(mode), "").await,
        FsCmd::Chown { owner, path } => set_attr(cfg, &path, None, &owner).await,
    }
}

fn remote(path: &str) -> anyhow::Result<String> {
    Ok(DfsPath::parse_file(path)?.to_string())
}

pub async fn put(
    cfg: &ClusterConfig,
    local: &Path,
    path: &str,
    replication: Option<u32>,
    block_size: Option<u64>,
    overwrite: bool,
    json: bool,
) -> anyhow::Result<()> {
    let path = remote(path)?;
    let stdin = local == Path::new("-");
    let size = if stdin {
        None
    } else {
        let meta =
            std::fs::metadata(local).with_context(|| format!("cannot read {}", local.display()))?;
        if !meta.is_file() {
            anyhow::bail!("{} is not a regular file", local.display());
        }
        Some(meta.len())
    };
    if let Some(r) = replication {
        common::config::validate_replication(r).map_err(anyhow::Error::msg)?;
    }
    if let Some(b) = block_size {
        common::config::validate_block_size(b).map_err(anyhow::Error::msg)?;
    }
    // `-` as `hdfs dfs -put -`: a producer's output, of no size known
    // up front (the progress shows bytes only).
    let file: Box<dyn tokio::io::AsyncRead + Unpin + Send> = if stdin {
        Box::new(tokio::io::stdin())
    } else {
        Box::new(
            tokio::fs::File::open(local)
                .await
                .with_context(|| format!("cannot open {}", local.display()))?,
        )
    };
    let dfs = Dfs::connect(cfg)?;
    let opts = PutOptions {
        replication: replication.unwrap_or(0),
        block_size: block_size.unwrap_or(0),
        overwrite,
        writer: String::new(),
    };
    let mut progress = Progress::new(&format!("put {path}"), size);
    let reader = tokio::io::BufReader::with_capacity(4 << 20, file);
    let n = dfs
        .put(&path, reader, &opts, |done| progress.bytes(done))
        .await?;
    progress.finish();
    if json {
        let v = serde_json::json!({"local": local, "path": path, "bytes": n,
                                   "secs": progress.elapsed_s()});
        println!("{v}");
    } else {
        eprintln!(
            "put {} -> {path}: {} in {:.2}s",
            local.display(),
            format_size(n),
            progress.elapsed_s()
        );
    }
    Ok(())
}

/// Copies one file, or every file a glob matches into the directory
/// `local`.
pub async fn get(cfg: &ClusterConfig, path: &str, local: &Path, json: bool) -> anyhow::Result<()> {
    let dfs = Dfs::connect(cfg)?;
    let matches = glob::expand(&dfs, path).await?;
    let mut files = Vec::new();
    if glob::is_glob(path) {
        if !local.is_dir() {
            anyhow::bail!(
                "{path} matches {} file(s): the destination {} must be an existing directory",
                matches.len(),
                local.display()
            );
        }
        for m in &matches {
            let name = m.rsplit('/').next().unwrap_or(m);
            files.push((m.clone(), local.join(name)));
        }
    } else {
        files.push((path.to_string(), local.to_path_buf()));
    }
    let mut done = Vec::new();
    for (remote_path, target) in files {
        let n = get_one(&dfs, &remote_path, &target, json).await?;
        done.push(serde_json::json!({"path": remote_path, "local": target, "bytes": n}));
    }
    if json {
        let total: u64 = done.iter().map(|d| d["bytes"].as_u64().unwrap_or(0)).sum();
        println!("{}", serde_json::json!({"files": done, "bytes": total}));
    }
    Ok(())
}

async fn get_one(dfs: &Dfs, path: &str, local: &Path, quiet: bool) -> anyhow::Result<u64> {
    let path = remote(path)?;
    let size = dfs.stat(&path).await?.size;
    // Write beside the target and rename: a failed get leaves nothing behind.
    let tmp = local.with_extension(format!("mr-get-{}", std::process::id()));
    let file = tokio::fs::File::create(&tmp)
        .await
        .with_context(|| format!("cannot create {}", tmp.display()))?;
    let mut out = tokio::io::BufWriter::with_capacity(4 << 20, file);
    let mut progress = Progress::new(&format!("get {path}"), Some(size));
    let res = dfs.get(&path, &mut out, |d| progress.bytes(d)).await;
    progress.finish();
    match res {
        Ok(n) => {
            out.into_inner().sync_all().await?;
            std::fs::rename(&tmp, local)
                .with_context(|| format!("cannot write {}", local.display()))?;
            if !quiet {
                eprintln!(
                    "get {path} -> {}: {} in {:.2}s",
                    local.display(),
                    format_size(n),
                    progress.elapsed_s()
                );
            }
            Ok(n)
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e.into())
        }
    }
}

/// Prints every file `path` names (a glob, several), a directory as its
/// `part-*` files in order.
pub async fn cat(cfg: &ClusterConfig, path: &str) -> anyhow::Result<()> {
    let dfs = Dfs::connect(cfg)?;
    let mut files = Vec::new();
    for m in glob::expand(&dfs, path).await? {
        files.extend(files_of(&dfs, &m).await?);
    }
    let mut out = tokio::io::stdout();
    for f in files {
        match dfs.get(&f, &mut out, |_| {}).await {
            Ok(_) => {}
            // A closed pipe (`mr fs cat X | head`) is not an error.
            Err(DfsError::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// A file is itself; a directory is its `part-*` files in name order, a
/// job's output as Hadoop's `fs -cat DIR/part-*` reads it.
async fn files_of(dfs: &Dfs, path: &str) -> anyhow::Result<Vec<String>> {
    let path = DfsPath::parse(path)?.to_string();
    let entries = dfs.list(&path).await?;
    if let [e] = entries.as_slice() {
        if e.path == path && !e.is_dir {
            return Ok(vec![path]);
        }
    }
    let mut parts: Vec<String> = entries
        .into_iter()
        .filter(|e| !e.is_dir && e.path.rsplit('/').next().unwrap_or("").starts_with("part-"))
        .map(|e| e.path)
        .collect();
    parts.sort();
    if parts.is_empty() {
        anyhow::bail!("{path} is a directory with no part-* files: name a file in it");
    }
    Ok(parts)
}

pub async fn ls(cfg: &ClusterConfig, path: &str, as_json: bool) -> anyhow::Result<()> {
    let dfs = Dfs::connect(cfg)?;
    let mut entries = Vec::new();
    for m in glob::expand(&dfs, path).await? {
        entries.extend(dfs.list(&DfsPath::parse(&m)?.to_string()).await?);
    }
    if as_json {
        let v: Vec<_> = entries.iter().map(rpc::json::list_entry).collect();
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    let rows: Vec<Vec<String>> = entries
        .iter()
        .map(|e| {
            vec![
                rpc::json::mode_string(e.is_dir, e.mode),
                e.owner.clone(),
                if e.is_dir {
                    "-".into()
                } else {
                    e.replication.to_string()
                },
                e.size.to_string(),
                format_size(e.size),
                e.blocks.to_string(),
                if e.is_dir {
                    format!("{}/", e.path)
                } else {
                    e.path.clone()
                },
            ]
        })
        .collect();
    print!(
        "{}",
        table(
            &["PERM", "OWNER", "REPL", "BYTES", "SIZE", "BLOCKS", "PATH"],
            &rows
        )
    );
    Ok(())
}

fn parse_mode(s: &str) -> Result<u32, String> {
    match u32::from_str_radix(s, 8) {
        Ok(m) if m <= 0o777 => Ok(m),
        _ => Err(format!(
            "{s:?}: give the permission bits as three octal digits (owner, group, others), \
             e.g. 755 or 640"
        )),
    }
}

pub async fn mkdir(cfg: &ClusterConfig, path: &str, mode: u32) -> anyhow::Result<()> {
    let path = remote(path)?;
    let dfs = Dfs::connect(cfg)?;
    dfs.master()
        .mkdir(proto::MkdirRequest {
            path: path.clone(),
            mode,
        })
        .await
        .map_err(DfsError::from)?;
    eprintln!("made {path} (mode {mode:o})");
    Ok(())
}

async fn set_attr(
    cfg: &ClusterConfig,
    path: &str,
    mode: Option<u32>,
    owner: &str,
) -> anyhow::Result<()> {
    let path = remote(path)?;
    let dfs = Dfs::connect(cfg)?;
    dfs.master()
        .set_attr(proto::SetAttrRequest {
            path,
            mode: mode.unwrap_or(0),
            has_mode: mode.is_some(),
            owner: owner.to_string(),
        })
        .await
        .map_err(DfsError::from)?;
    Ok(())
}

pub async fn rm(cfg: &ClusterConfig, path: &str, json: bool) -> anyhow::Result<()> {
    let dfs = Dfs::connect(cfg)?;
    let matches = glob::expand(&dfs, path).await?;
    let mut deleted = Vec::new();
    for m in matches {
        let path = DfsPath::parse(&m)?;
        if path.is_root() {
            anyhow::bail!("refusing to delete the whole namespace: name a file or directory");
        }
        let r = dfs
            .master()
            .delete_file(proto::PathRequest {
                path: path.to_string(),
            })
            .await
            .map_err(DfsError::from)?
            .into_inner();
        if !json {
            eprintln!("deleted {} file(s) under {path}", r.files_deleted);
        }
        deleted
            .push(serde_json::json!({"path": path.to_string(), "files_deleted": r.files_deleted}));
    }
    if json {
        let total: u64 = deleted
            .iter()
            .map(|d| d["files_deleted"].as_u64().unwrap_or(0))
            .sum();
        println!(
            "{}",
            serde_json::json!({"deleted": deleted, "files_deleted": total})
        );
    }
    Ok(())
}

pub async fn stat(cfg: &ClusterConfig, path: &str, as_json: bool) -> anyhow::Result<()> {
    let path = remote(path)?;
    let dfs = Dfs::connect(cfg)?;
    let st = dfs.stat(&path).await?;
    let names = |v: &[proto::WorkerAddr]| v.iter().map(|w| w.name.clone()).collect::<Vec<_>>();
    if as_json {
        let out = rpc::json::file_status(&st);
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    println!(
        "{}: {} ({} bytes), replication {}, block size {}, {} block(s)",
        st.path,
        format_size(st.size),
        st.size,
        st.replication,
        format_size(st.block_size),
        st.blocks.len()
    );
    let rows: Vec<Vec<String>> = st
        .blocks
        .iter()
        .map(|b| {
            let i = b.block.unwrap_or_default();
            vec![
                i.id.to_string(),
                i.len.to_string(),
                names(&b.replicas).join(","),
                names(&b.cached_on).join(","),
                names(&b.pinned_on).join(","),
            ]
        })
        .collect();
    print!(
        "{}",
        table(
            &["BLOCK", "LEN", "REPLICAS", "CACHED ON", "PINNED ON"],
            &rows
        )
    );
    Ok(())
}
