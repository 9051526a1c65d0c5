//! `mr fs put|get|cat|ls|rm|stat`.

use crate::output::{table, Progress};
use anyhow::Context;
use common::config::ClusterConfig;
use common::dfs::{Dfs, DfsError, PutOptions};
use common::path::DfsPath;
use common::units::format_size;
use std::path::Path;

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
) -> anyhow::Result<()> {
    let path = remote(path)?;
    let meta =
        std::fs::metadata(local).with_context(|| format!("cannot read {}", local.display()))?;
    if !meta.is_file() {
        anyhow::bail!("{} is not a regular file", local.display());
    }
    if let Some(r) = replication {
        common::config::validate_replication(r).map_err(anyhow::Error::msg)?;
    }
    if let Some(b) = block_size {
        common::config::validate_block_size(b).map_err(anyhow::Error::msg)?;
    }
    let file = tokio::fs::File::open(local)
        .await
        .with_context(|| format!("cannot open {}", local.display()))?;
    let dfs = Dfs::connect(cfg)?;
    let opts = PutOptions {
        replication: replication.unwrap_or(0),
        block_size: block_size.unwrap_or(0),
        overwrite,
        writer: String::new(),
    };
    let mut progress = Progress::new(&format!("put {path}"), Some(meta.len()));
    let reader = tokio::io::BufReader::with_capacity(4 << 20, file);
    let n = dfs
        .put(&path, reader, &opts, |done| progress.bytes(done))
        .await?;
    progress.finish();
    eprintln!(
        "put {} -> {path}: {} in {:.2}s",
        local.display(),
        format_size(n),
        progress.elapsed_s()
    );
    Ok(())
}

pub async fn get(cfg: &ClusterConfig, path: &str, local: &Path) -> anyhow::Result<()> {
    let path = remote(path)?;
    let dfs = Dfs::connect(cfg)?;
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
            eprintln!(
                "get {path} -> {}: {} in {:.2}s",
                local.display(),
                format_size(n),
                progress.elapsed_s()
            );
            Ok(())
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e.into())
        }
    }
}

pub async fn cat(cfg: &ClusterConfig, path: &str) -> anyhow::Result<()> {
    let path = remote(path)?;
    let dfs = Dfs::connect(cfg)?;
    let mut out = tokio::io::stdout();
    match dfs.get(&path, &mut out, |_| {}).await {
        Ok(_) => Ok(()),
        // A closed pipe (`mr fs cat X | head`) is not an error.
        Err(DfsError::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(e.into()),
    }
}

pub async fn ls(cfg: &ClusterConfig, path: &str, as_json: bool) -> anyhow::Result<()> {
    let path = DfsPath::parse(path)?.to_string();
    let dfs = Dfs::connect(cfg)?;
    let entries = dfs
        .master()
        .list_files(proto::PathRequest { path })
        .await
        .map_err(DfsError::from)?
        .into_inner()
        .entries;
    if as_json {
        let v: Vec<_> = entries.iter().map(common::json::list_entry).collect();
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    let rows: Vec<Vec<String>> = entries
        .iter()
        .map(|e| {
            vec![
                if e.is_dir { "d" } else { "-" }.to_string(),
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
        table(&["T", "REPL", "BYTES", "SIZE", "BLOCKS", "PATH"], &rows)
    );
    Ok(())
}

pub async fn rm(cfg: &ClusterConfig, path: &str) -> anyhow::Result<()> {
    let path = DfsPath::parse(path)?;
    if path.is_root() {
        anyhow::bail!("refusing to delete the whole namespace: name a file or directory");
    }
    let dfs = Dfs::connect(cfg)?;
    let r = dfs
        .master()
        .delete_file(proto::PathRequest {
            path: path.to_string(),
        })
        .await
        .map_err(DfsError::from)?
        .into_inner();
    eprintln!("deleted {} file(s) under {path}", r.files_deleted);
    Ok(())
}

pub async fn stat(cfg: &ClusterConfig, path: &str, as_json: bool) -> anyhow::Result<()> {
    let path = remote(path)?;
    let dfs = Dfs::connect(cfg)?;
    let st = dfs.stat(&path).await?;
    let names = |v: &[proto::WorkerAddr]| v.iter().map(|w| w.name.clone()).collect::<Vec<_>>();
    if as_json {
        let out = common::json::file_status(&st);
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
