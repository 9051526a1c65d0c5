//! The floor's output: one file, each thread writing its part of it at the
//! part's offset through its own 8 MiB buffer, then one fsync, so that the
//! floor pays for durable output as a job does before it succeeds.

use super::FloorError;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

const CHUNK: usize = 8 << 20;

/// Writes `parts` back to back into `path` (created or truncated), one
/// thread per part; `len(e)` must be the number of bytes `emit(e, ..)`
/// appends. Returns the bytes written, after the fsync.
pub fn write_parts<E, L, W>(
    path: &Path,
    parts: &[Vec<E>],
    len: L,
    emit: W,
) -> Result<u64, FloorError>
where
    E: Sync,
    L: Fn(&E) -> usize + Sync,
    W: Fn(&E, &mut Vec<u8>) + Sync,
{
    let io = |source| FloorError::Io {
        path: path.to_path_buf(),
        source,
    };
    let f = File::create(path).map_err(io)?;
    let mut offsets = Vec::with_capacity(parts.len());
    let mut total = 0u64;
    for p in parts {
        offsets.push(total);
        total += p.iter().map(&len).sum::<usize>() as u64;
    }
    std::thread::scope(|s| {
        let handles: Vec<_> = parts
            .iter()
            .zip(offsets)
            .map(|(part, mut at)| {
                let (f, emit) = (&f, &emit);
                s.spawn(move || -> std::io::Result<()> {
                    let mut buf = Vec::with_capacity(CHUNK + (64 << 10));
                    for e in part {
                        emit(e, &mut buf);
                        if buf.len() >= CHUNK {
                            f.write_all_at(&buf, at)?;
                            at += buf.len() as u64;
                            buf.clear();
                        }
                    }
                    f.write_all_at(&buf, at)
                })
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().expect("a writer thread panicked"))
    })
    .map_err(io)?;
    f.sync_all().map_err(io)?;
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_follow_each_other() {
        let dir = std::env::temp_dir().join(format!("mr-floor-write-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("out");
        let big: Vec<u8> = (0..CHUNK / 1000 + 7).map(|i| i as u8).collect();
        let parts = vec![big.clone(), vec![], vec![1, 2, 3]];
        // 1000 bytes per entry: the first part crosses a chunk boundary.
        let n = write_parts(&out, &parts, |_| 1000, |e, b| b.resize(b.len() + 1000, *e)).unwrap();
        let got = std::fs::read(&out).unwrap();
        assert_eq!(n, got.len() as u64);
        let want: Vec<u8> = parts.concat().iter().flat_map(|&e| [e; 1000]).collect();
        assert_eq!(got, want);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_unwritable_output_is_named() {
        let err = write_parts(
            Path::new("/nonexistent/out"),
            &[vec![1u8]],
            |_| 1,
            |_, _| {},
        )
        .unwrap_err();
        assert!(err.to_string().contains("/nonexistent/out"), "{err}");
    }
}
