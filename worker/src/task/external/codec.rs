//! Records to and from a child: Hadoop Streaming's text lines, or the
//! framed records of `mrjob::wire` for a job program.

use std::io::{self, BufRead, Read, Write};

/// The longest output line (or frame field) read from a child: a runaway
/// line is an error rather than all of the worker's memory.
pub const MAX_LINE: usize = mrjob::wire::MAX_FIELD;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `key<TAB>value<LF>`; a record with an empty value is `key<LF>`, and
    /// a line without a tab is a key with an empty value.
    Lines,
    /// `u32 LE length, key, u32 LE length, value`.
    Frames,
}

/// Writes one record to a child's stdin.
pub fn write(p: Protocol, w: &mut impl Write, key: &[u8], value: &[u8]) -> io::Result<()> {
    match p {
        Protocol::Frames => mrjob::wire::write_record(w, key, value),
        Protocol::Lines => {
            w.write_all(key)?;
            if !value.is_empty() {
                w.write_all(b"\t")?;
                w.write_all(value)?;
            }
            w.write_all(b"\n")
        }
    }
}

/// Where a child's output records go; an error stops the child.
pub type OnRecord<'a> = dyn FnMut(&[u8], &[u8]) -> io::Result<()> + 'a;

/// Reads a child's output records from `r`, calling `f` on each until the
/// child closes its stdout; returns how many.
pub fn read_all(p: Protocol, r: impl BufRead, f: &mut OnRecord<'_>) -> io::Result<u64> {
    let mut n = 0;
    match p {
        Protocol::Frames => {
            let mut frames = mrjob::wire::RecordReader::new(r);
            while let Some((k, v)) = frames.next_record()? {
                f(k, v)?;
                n += 1;
            }
        }
        Protocol::Lines => {
            let mut r = r;
            let mut line = Vec::new();
            loop {
                line.clear();
                let got = Read::take(&mut r, MAX_LINE as u64 + 1).read_until(b'\n', &mut line)?;
                if got == 0 {
                    break;
                }
                if line.last() == Some(&b'\n') {
                    line.pop();
                } else if line.len() > MAX_LINE {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("an output line longer than {MAX_LINE} bytes"),
                    ));
                }
                let (k, v) = split_tab(&line);
                f(k, v)?;
                n += 1;
            }
        }
    }
    Ok(n)
}

/// `key<TAB>value` → (key, value); no tab: the whole line is the key.
pub fn split_tab(line: &[u8]) -> (&[u8], &[u8]) {
    match memchr::memchr(b'\t', line) {
        Some(i) => (&line[..i], &line[i + 1..]),
        None => (line, &[]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(p: Protocol, recs: &[(&[u8], &[u8])]) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut buf = Vec::new();
        for (k, v) in recs {
            write(p, &mut buf, k, v).unwrap();
        }
        let mut got = Vec::new();
        let n = read_all(p, &buf[..], &mut |k, v| {
            got.push((k.to_vec(), v.to_vec()));
            Ok(())
        })
        .unwrap();
        assert_eq!(n as usize, got.len());
        got
    }

    #[test]
    fn lines_split_at_the_first_tab_and_frames_carry_anything() {
        let recs: &[(&[u8], &[u8])] = &[(b"a", b"1"), (b"b", b""), (b"c", b"x\ty")];
        let got = round_trip(Protocol::Lines, recs);
        assert_eq!(got[0], (b"a".to_vec(), b"1".to_vec()));
        assert_eq!(got[1], (b"b".to_vec(), vec![]));
        assert_eq!(got[2], (b"c".to_vec(), b"x\ty".to_vec()));
        let odd: &[(&[u8], &[u8])] = &[(b"k\n\t", b"\0\n"), (b"", b"")];
        let got = round_trip(Protocol::Frames, odd);
        assert_eq!(got[0], (b"k\n\t".to_vec(), b"\0\n".to_vec()));
        assert_eq!(got.len(), 2);
        // The last line may lack its newline.
        let mut n = 0;
        read_all(Protocol::Lines, &b"x\ny"[..], &mut |_, _| {
            n += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(n, 2);
    }

    #[test]
    fn a_long_line_is_one_record() {
        let mut line = vec![b'x'; 8 << 20];
        line.extend_from_slice(b"\tv\nshort\n");
        let mut got = Vec::new();
        read_all(Protocol::Lines, &line[..], &mut |k, v| {
            got.push((k.len(), v.to_vec()));
            Ok(())
        })
        .unwrap();
        assert_eq!(got, vec![(8 << 20, b"v".to_vec()), (5, vec![])]);
    }
}
