//! The files a map output buffer writes (spills and the final output):
//! buffered, with the bytes and the CRC32C of each partition counted below
//! the buffer.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

pub(super) fn put_record(w: &mut impl Write, k: &[u8], v: &[u8]) -> io::Result<u64> {
    w.write_all(&(k.len() as u32).to_le_bytes())?;
    w.write_all(k)?;
    w.write_all(&(v.len() as u32).to_le_bytes())?;
    w.write_all(v)?;
    Ok(8 + k.len() as u64 + v.len() as u64)
}

/// Counts the bytes written through it, and their CRC32C since the last
/// [`Counting::take_crc`]. It sits under the `BufWriter` ([`Out`]), so the
/// CRC runs over the buffer's large writes rather than once per field of
/// every record.
pub(super) struct Counting<W: Write> {
    inner: W,
    bytes: u64,
    crc: u32,
}

impl<W: Write> Counting<W> {
    fn new(inner: W) -> Self {
        Counting {
            inner,
            bytes: 0,
            crc: 0,
        }
    }

    /// The CRC32C of what was written since the last call.
    fn take_crc(&mut self) -> u32 {
        std::mem::take(&mut self.crc)
    }
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(b)?;
        self.bytes += n as u64;
        self.crc = crc32c::crc32c_append(self.crc, &b[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A spill or output file: buffered, counted and checksummed below the
/// buffer.
pub(super) type Out = BufWriter<Counting<File>>;

/// Creates `path` with `expected` bytes reserved on disk (0: unknown).
/// A file kept from an earlier job's map output is written over when there
/// is one ([`super::recycle`]); [`close_out`] cuts it to what was written.
pub(super) fn create_out(path: &Path, expected: u64) -> io::Result<Out> {
    let f = super::recycle::open_for_output(path)?;
    crate::store::prealloc::reserve(&f, expected);
    Ok(BufWriter::with_capacity(1 << 20, Counting::new(f)))
}

/// Flushes `w` and cuts its file to the bytes written through it.
pub(super) fn close_out(w: &mut Out) -> io::Result<()> {
    w.flush()?;
    let c = w.get_ref();
    super::recycle::truncate_to(&c.inner, c.bytes)
}

/// Ends a partition of `w`: the bytes written so far and the CRC32C of
/// those since the last cut.
pub(super) fn cut(w: &mut Out) -> io::Result<(u64, u32)> {
    w.flush()?;
    let c = w.get_mut();
    Ok((c.bytes, c.take_crc()))
}
