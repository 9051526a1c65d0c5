//! The floor's input: every file read into one buffer by two threads, each
//! reading half of the bytes with positioned reads (from the page cache when
//! the files were just written or read, which is what the floor measures).

use super::{FloorError, THREADS};
use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// The input files, back to back in one buffer.
#[derive(Debug)]
pub struct Input {
    pub buf: Vec<u8>,
    /// Where each file's bytes lie in `buf`, in the order given, with the
    /// file's path for error messages.
    pub files: Vec<(PathBuf, Range<usize>)>,
}

/// One file's part of the buffer: its bytes from `file_off` go to `buf_off`.
#[derive(Debug, Clone)]
struct Piece {
    file: usize,
    file_off: u64,
    buf_off: usize,
    len: usize,
}

/// Reads `paths` into one buffer. With `text`, a file whose last byte is not
/// `\n` gets one after it, so that its last word or line ends with the file
/// (as the job's record reader ends it) instead of running into the next
/// file's first one.
pub fn load(paths: &[PathBuf], text: bool) -> Result<Input, FloorError> {
    if paths.is_empty() {
        return Err(FloorError::NoInput);
    }
    let io = |p: &Path| {
        let path = p.to_path_buf();
        move |source| FloorError::Io { path, source }
    };
    let mut files = Vec::with_capacity(paths.len());
    let mut pieces = Vec::with_capacity(paths.len());
    let mut newline_at = Vec::new();
    let mut at = 0usize;
    for (i, p) in paths.iter().enumerate() {
        let f = File::open(p).map_err(io(p))?;
        let meta = f.metadata().map_err(io(p))?;
        if !meta.is_file() {
            return Err(FloorError::NotAFile(p.clone()));
        }
        let len = usize::try_from(meta.len()).map_err(|_| FloorError::TooLarge(p.clone()))?;
        files.push((p.clone(), at..at + len));
        pieces.push(Piece {
            file: i,
            file_off: 0,
            buf_off: at,
            len,
        });
        at += len;
        if text && len > 0 {
            let mut last = [0u8];
            f.read_exact_at(&mut last, meta.len() - 1).map_err(io(p))?;
            if last[0] != b'\n' {
                newline_at.push(at);
                at += 1;
            }
        }
    }
    // Zeroed by the allocator's fresh pages: nothing is written twice.
    let mut buf = vec![0u8; at];
    for &i in &newline_at {
        buf[i] = b'\n';
    }
    let shares = split_pieces(&pieces, at.div_ceil(THREADS).max(1));
    // Hand each thread the disjoint slices of `buf` its pieces cover.
    let mut rest: &mut [u8] = &mut buf;
    let mut consumed = 0usize;
    let mut work: Vec<Vec<(Piece, &mut [u8])>> = Vec::with_capacity(shares.len());
    for share in shares {
        let mut mine = Vec::with_capacity(share.len());
        for p in share {
            let (_, tail) = std::mem::take(&mut rest).split_at_mut(p.buf_off - consumed);
            let (slice, tail) = tail.split_at_mut(p.len);
            rest = tail;
            consumed = p.buf_off + p.len;
            mine.push((p, slice));
        }
        work.push(mine);
    }
    std::thread::scope(|s| {
        let handles: Vec<_> = work
            .into_iter()
            .map(|mine| {
                s.spawn(move || -> Result<(), FloorError> {
                    let mut open: Option<(usize, File)> = None;
                    for (p, slice) in mine {
                        let path = &paths[p.file];
                        if open.as_ref().map(|(i, _)| *i) != Some(p.file) {
                            open = Some((p.file, File::open(path).map_err(io(path))?));
                        }
                        let (_, f) = open.as_ref().expect("opened above");
                        f.read_exact_at(slice, p.file_off).map_err(io(path))?;
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().expect("a reader thread panicked"))
    })?;
    Ok(Input { buf, files })
}

/// Cuts the pieces (in buffer order) into consecutive shares of at most
/// `per` bytes, splitting a piece where a share ends.
fn split_pieces(pieces: &[Piece], per: usize) -> Vec<Vec<Piece>> {
    let mut shares = vec![Vec::new()];
    let mut room = per;
    for p in pieces {
        let mut p = p.clone();
        while p.len > 0 {
            if room == 0 {
                shares.push(Vec::new());
                room = per;
            }
            let take = p.len.min(room);
            shares.last_mut().expect("one share at least").push(Piece {
                len: take,
                ..p.clone()
            });
            p.file_off += take as u64;
            p.buf_off += take;
            p.len -= take;
            room -= take;
        }
    }
    shares
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_land_back_to_back_whatever_the_split() {
        let dir = std::env::temp_dir().join(format!("mr-floor-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let texts: [&[u8]; 4] = [b"alpha beta\n", b"", b"gamma", b"delta\nepsilon\n"];
        let paths: Vec<PathBuf> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let p = dir.join(format!("part-{i}"));
                std::fs::write(&p, t).unwrap();
                p
            })
            .collect();
        let raw = load(&paths, false).unwrap();
        assert_eq!(raw.buf, texts.concat());
        assert_eq!(raw.files.last().unwrap().1.end, texts.concat().len());
        assert_eq!(raw.files[2].1, 11..16);
        // Text: "gamma" ends its file, so it gets a newline of its own.
        let text = load(&paths, true).unwrap();
        assert_eq!(text.buf, b"alpha beta\ngamma\ndelta\nepsilon\n");
        let bytes = |i: &Input| i.files.iter().map(|(_, r)| r.len()).sum::<usize>();
        assert_eq!(
            bytes(&text),
            bytes(&raw),
            "the added newlines are in no file's range"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn shares_cover_every_byte_once() {
        let pieces: Vec<Piece> = [5usize, 0, 7, 3]
            .iter()
            .scan(0, |at, &len| {
                let p = Piece {
                    file: 0,
                    file_off: 0,
                    buf_off: *at,
                    len,
                };
                *at += len;
                Some(p)
            })
            .collect();
        for per in 1..=16 {
            let shares = split_pieces(&pieces, per);
            let mut next = 0;
            for s in &shares {
                assert!(s.iter().map(|p| p.len).sum::<usize>() <= per);
                for p in s {
                    assert_eq!(p.buf_off, next, "per {per}");
                    next += p.len;
                }
            }
            assert_eq!(next, 15);
        }
    }

    #[test]
    fn a_missing_file_is_named() {
        let err = load(&[PathBuf::from("/nonexistent/floor-input")], false).unwrap_err();
        assert!(
            err.to_string().contains("/nonexistent/floor-input"),
            "{err}"
        );
        assert!(matches!(load(&[], false), Err(FloorError::NoInput)));
    }
}
