//! Filling the namespace through the real client protocol, as HDFS's
//! NNThroughputBenchmark creates files and blocks against a real NameNode:
//! per file `CreateFile`, one `AddBlock` per block (with its offset in the
//! file), and `CompleteFile` listing each block with its length (the block
//! size), a CRC, the generation `AddBlock` gave and the targets the master
//! chose as the workers that stored it. No byte is written: the targets
//! are emulated workers, which from then on hold the block (in their next
//! heartbeat's delta and in every later full report, as after a real
//! write). Several files are written at once, each block after the other
//! within a file, as one client writes a file.

use super::workers::Fleet;
use anyhow::Context;
use rpc::dfs::MasterConn;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Blocks per file: large files, as a namespace of big data is.
pub const BLOCKS_PER_FILE: u64 = 1000;
/// Files written at once.
pub const WRITERS: usize = 8;

/// One file to write: its path and its number of blocks.
#[derive(Debug, Clone)]
pub struct FilePlan {
    pub path: String,
    pub blocks: u64,
}

/// `blocks` blocks as files of [`BLOCKS_PER_FILE`] under `dir` (the last
/// one shorter).
pub fn plan(dir: &str, blocks: u64) -> Vec<FilePlan> {
    let files = blocks.div_ceil(BLOCKS_PER_FILE);
    (0..files)
        .map(|f| FilePlan {
            path: format!("{dir}/f{f:06}"),
            blocks: (blocks - f * BLOCKS_PER_FILE).min(BLOCKS_PER_FILE),
        })
        .collect()
}

/// Writes every file of `files`, [`WRITERS`] at a time over `conns` (admin
/// channels); the blocks' targets then hold them in `fleet`. Prints a
/// progress line every few seconds unless `quiet`. Returns the blocks
/// created and the seconds it took.
pub async fn create(
    conns: &[MasterConn],
    fleet: &Fleet,
    files: Vec<FilePlan>,
    block_size: u64,
    what: &str,
    quiet: bool,
) -> anyhow::Result<(u64, f64)> {
    let total: u64 = files.iter().map(|f| f.blocks).sum();
    let files = Arc::new(files);
    let next = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicU64::new(0));
    let t = Instant::now();
    let writers = (0..WRITERS.min(files.len())).map(|w| {
        let conn = conns[w % conns.len()].clone();
        let (files, next, done) = (files.clone(), next.clone(), done.clone());
        async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(f) = files.get(i) else {
                    return Ok::<_, anyhow::Error>(());
                };
                write_file(conn.clone(), fleet, f, block_size, &done).await?;
            }
        }
    });
    let all = futures::future::try_join_all(writers);
    tokio::pin!(all);
    let mut every = tokio::time::interval(Duration::from_secs(5));
    every.tick().await;
    loop {
        tokio::select! {
            r = &mut all => { r?; break; }
            _ = every.tick() => {
                if !quiet {
                    let n = done.load(Ordering::Relaxed);
                    let secs = t.elapsed().as_secs_f64();
                    eprintln!(
                        "mr bench master: {what}: {n}/{total} blocks ({:.0}/s, {secs:.0}s)",
                        n as f64 / secs.max(1e-9)
                    );
                }
            }
        }
    }
    Ok((total, t.elapsed().as_secs_f64()))
}

async fn write_file(
    mut conn: MasterConn,
    fleet: &Fleet,
    f: &FilePlan,
    block_size: u64,
    done: &AtomicU64,
) -> anyhow::Result<()> {
    let created = conn
        .create_file(proto::CreateFileRequest {
            path: f.path.clone(),
            replication: 0,
            block_size,
            writer: String::new(),
            overwrite: false,
        })
        .await
        .with_context(|| format!("CreateFile {}", f.path))?
        .into_inner();
    let mut blocks = Vec::with_capacity(f.blocks as usize);
    for i in 0..f.blocks {
        let b = conn
            .add_block(proto::AddBlockRequest {
                path: f.path.clone(),
                lease: created.lease,
                exclude: vec![],
                count: 0,
                offset: Some(i * block_size),
            })
            .await
            .with_context(|| format!("AddBlock {} (block {i})", f.path))?
            .into_inner();
        let info = proto::BlockInfo {
            id: b.block_id,
            len: block_size,
            // A stand-in: the master keeps what it is told.
            crc32c: crc32c::crc32c(&b.block_id.to_le_bytes()),
            generation: b.generation,
        };
        let stored_on: Vec<String> = b.targets.into_iter().map(|t| t.name).collect();
        for w in &stored_on {
            fleet.hold(w, info);
        }
        blocks.push(proto::CompletedBlock {
            block: Some(info),
            stored_on,
        });
        done.fetch_add(1, Ordering::Relaxed);
    }
    conn.complete_file(proto::CompleteFileRequest {
        path: f.path.clone(),
        lease: created.lease,
        blocks,
    })
    .await
    .with_context(|| format!("CompleteFile {}", f.path))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_of_a_thousand_blocks_and_a_shorter_last() {
        let p = plan("/ns", 2500);
        assert_eq!(p.len(), 3);
        assert_eq!(p[0].path, "/ns/f000000");
        assert_eq!(
            p.iter().map(|f| f.blocks).collect::<Vec<_>>(),
            [1000, 1000, 500]
        );
        assert!(plan("/ns", 0).is_empty());
        assert_eq!(plan("/ns", 1000).len(), 1);
    }
}
