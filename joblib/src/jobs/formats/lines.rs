//! Text lines as Hadoop's `LineRecordReader` cuts them (the ownership rule
//! is the module's above), one line a record or, for maps that split on
//! whitespace, runs of whole lines.

use super::{FormatError, InputFormat, SplitStats};
use bytes::Bytes;

/// Lines are found with `memchr` (whole words at a time): a byte-by-byte
/// search was a tenth of a text Sort's map.
fn find_nl(b: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', b)
}

/// Where the first line this map owns starts in `block` (at file offset
/// `offset`): past the first `\n` unless the block starts the file; `None`
/// for an empty block or one that lies inside a line started earlier.
fn first_owned(block: &[u8], offset: u64) -> Option<usize> {
    if block.is_empty() {
        return None;
    }
    match offset {
        0 => Some(0),
        _ => find_nl(block).map(|i| i + 1),
    }
}

pub(super) fn read_lines(
    block: &[u8],
    offset: u64,
    next: &mut dyn FnMut() -> Option<Bytes>,
    f: &mut dyn FnMut(&[u8], &[u8]),
) -> SplitStats {
    let mut st = SplitStats::default();
    let Some(mut pos) = first_owned(block, offset) else {
        return st;
    };
    while pos < block.len() {
        match find_nl(&block[pos..]) {
            Some(i) => {
                f(&block[pos..pos + i], b"");
                st.records += 1;
                pos += i + 1;
            }
            None => {
                // Straddles the end: finish it from the following blocks.
                let mut line = block[pos..].to_vec();
                read_tail_line(&mut line, next, &mut st);
                f(&line, b"");
                st.records += 1;
                return st;
            }
        }
    }
    // The block ends with `\n`: the line starting exactly at the block's end
    // (if the file goes on) is ours.
    let mut line = Vec::new();
    if read_tail_line(&mut line, next, &mut st) {
        f(&line, b"");
        st.records += 1;
    }
    st
}

/// The most bytes of whole lines [`read_line_runs`] passes in one call: a
/// map that holds what it read until a call ends (WordCount's counts,
/// flushed between calls when full) stays bounded by its vocabulary, not
/// by the block. Small enough that the map finds the run in the CPU's
/// cache after the lines were counted in it: with 1 MiB runs WordCount's
/// map took 5 % more CPU (1.25 against 1.19 user s for 20 maps of a 63 MB
/// block; 1.14 without counting).
pub const RUN_BYTES: usize = 1 << 16;

/// As [`read_split`], but a `Lines` input is passed as runs of whole lines,
/// up to [`RUN_BYTES`] a call, each run's lines joined by their `\n`s (the
/// last without its own); the records counted are still lines. For maps
/// that cannot tell one line from the next ([`Job::maps_runs_of_lines`]),
/// which WordCount's is: a call per line cost it a lock, a lookup and a
/// partial scan of the line's last 64 bytes, a tenth of its map.
///
/// [`Job::maps_runs_of_lines`]: mrjob::Job::maps_runs_of_lines
/// [`read_split`]: super::read_split
pub fn read_split_runs(
    format: InputFormat,
    block: &[u8],
    offset: u64,
    next: &mut dyn FnMut() -> Option<Bytes>,
    f: &mut dyn FnMut(&[u8], &[u8]),
) -> Result<SplitStats, FormatError> {
    match format {
        InputFormat::Lines => Ok(read_line_runs(block, offset, next, f)),
        _ => super::read_split(format, block, offset, next, f),
    }
}

/// The lines [`read_lines`] reads, by the same ownership rule, in runs.
fn read_line_runs(
    block: &[u8],
    offset: u64,
    next: &mut dyn FnMut() -> Option<Bytes>,
    f: &mut dyn FnMut(&[u8], &[u8]),
) -> SplitStats {
    let mut st = SplitStats::default();
    let Some(first) = first_owned(block, offset) else {
        return st;
    };
    let mut rest = &block[first..];
    // Each run ends before the last `\n` within RUN_BYTES, or before the
    // first one past it when a single line is longer.
    while let Some(end) =
        memchr::memrchr(b'\n', &rest[..rest.len().min(RUN_BYTES)]).or_else(|| find_nl(rest))
    {
        let run = &rest[..end];
        f(run, b"");
        st.records += memchr::memchr_iter(b'\n', run).count() as u64 + 1;
        rest = &rest[end + 1..];
    }
    // What is left has no `\n`: a line straddling the end, or nothing when
    // the block ends with `\n` (then the line starting at the block's end,
    // if the file goes on, is ours), as in `read_lines`.
    let mut line = rest.to_vec();
    if read_tail_line(&mut line, next, &mut st) || !rest.is_empty() {
        f(&line, b"");
        st.records += 1;
    }
    st
}

/// Appends to `line` the following blocks' bytes up to the first `\n` (or the
/// end of the file). Returns false if the file ended before any byte.
fn read_tail_line(
    line: &mut Vec<u8>,
    next: &mut dyn FnMut() -> Option<Bytes>,
    st: &mut SplitStats,
) -> bool {
    let mut any = false;
    while let Some(b) = next() {
        if b.is_empty() {
            continue;
        }
        any = true;
        match find_nl(&b) {
            Some(i) => {
                line.extend_from_slice(&b[..i]);
                st.bytes_read_past_end += i as u64 + 1;
                return true;
            }
            None => {
                line.extend_from_slice(&b);
                st.bytes_read_past_end += b.len() as u64;
            }
        }
    }
    any
}
