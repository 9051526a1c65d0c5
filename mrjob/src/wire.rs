//! The task protocol between a worker and a job program: records framed as
//! `u32 LE key length, key, u32 LE value length, value`, the same layout
//! as the runtime's map outputs, so neither side parses text. The worker
//! writes the task's input records to the program's stdin and closes it;
//! the program writes its output records to stdout. Counters travel on
//! stderr as Hadoop Streaming's `reporter:counter:GROUP,NAME,AMOUNT` lines
//! (see [`parse_counter`]); any other stderr line is the task's log.

use std::io::{self, Read, Write};

/// The longest key or value a frame may carry: a corrupt or hostile
/// length is an error, not an allocation of up to 4 GiB.
pub const MAX_FIELD: usize = 256 << 20;

/// Writes one framed record.
pub fn write_record(w: &mut impl Write, key: &[u8], value: &[u8]) -> io::Result<()> {
    for f in [key, value] {
        if f.len() > MAX_FIELD {
            return Err(too_long(f.len()));
        }
    }
    w.write_all(&(key.len() as u32).to_le_bytes())?;
    w.write_all(key)?;
    w.write_all(&(value.len() as u32).to_le_bytes())?;
    w.write_all(value)
}

fn too_long(n: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("a record field of {n} bytes: the task protocol carries at most {MAX_FIELD}"),
    )
}

/// Reads framed records from a stream, reusing its buffers.
pub struct RecordReader<R> {
    r: R,
    key: Vec<u8>,
    value: Vec<u8>,
}

impl<R: Read> RecordReader<R> {
    pub fn new(r: R) -> Self {
        RecordReader {
            r,
            key: Vec::new(),
            value: Vec::new(),
        }
    }

    /// The next record, or `None` at a clean end (between records); a
    /// stream that ends inside a record is an error.
    pub fn next_record(&mut self) -> io::Result<Option<(&[u8], &[u8])>> {
        let mut len = [0u8; 4];
        let mut got = 0;
        while got < 4 {
            match self.r.read(&mut len[got..]) {
                Ok(0) if got == 0 => return Ok(None),
                Ok(0) => return Err(cut()),
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        read_field(&mut self.r, u32::from_le_bytes(len) as usize, &mut self.key)?;
        self.r.read_exact(&mut len).map_err(eof_is_cut)?;
        read_field(
            &mut self.r,
            u32::from_le_bytes(len) as usize,
            &mut self.value,
        )?;
        Ok(Some((&self.key, &self.value)))
    }
}

fn read_field(r: &mut impl Read, n: usize, buf: &mut Vec<u8>) -> io::Result<()> {
    if n > MAX_FIELD {
        return Err(too_long(n));
    }
    buf.clear();
    buf.resize(n, 0);
    r.read_exact(buf).map_err(eof_is_cut)
}

fn cut() -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "the record stream ends inside a record",
    )
}

fn eof_is_cut(e: io::Error) -> io::Error {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        cut()
    } else {
        e
    }
}

/// A Hadoop Streaming counter line, `reporter:counter:GROUP,NAME,AMOUNT`:
/// the counter's name (`GROUP.NAME`, or `NAME` alone when the group is
/// empty) and the amount, which may be negative (added wrapping, as
/// checksum counters are). `None` for any other line.
pub fn parse_counter(line: &str) -> Option<(String, u64)> {
    let rest = line.trim_end().strip_prefix("reporter:counter:")?;
    let mut it = rest.rsplitn(2, ',');
    let amount = it.next()?.trim();
    let (group, name) = it.next()?.split_once(',')?;
    let n = amount
        .parse::<u64>()
        .ok()
        .or_else(|| amount.parse::<i64>().ok().map(|n| n as u64))?;
    if name.is_empty() {
        return None;
    }
    let counter = if group.is_empty() {
        name.to_string()
    } else {
        format!("{group}.{name}")
    };
    Some((counter, n))
}

/// The counter line [`parse_counter`] reads back.
pub fn counter_line(name: &str, n: u64) -> String {
    format!("reporter:counter:,{name},{n}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_a_cut_is_an_error() {
        let mut buf = Vec::new();
        write_record(&mut buf, b"k", b"").unwrap();
        write_record(&mut buf, b"", b"value\n\t").unwrap();
        let mut r = RecordReader::new(&buf[..]);
        assert_eq!(r.next_record().unwrap(), Some((&b"k"[..], &b""[..])));
        assert_eq!(
            r.next_record().unwrap(),
            Some((&b""[..], &b"value\n\t"[..]))
        );
        assert_eq!(r.next_record().unwrap(), None);
        for cut_at in 1..buf.len() {
            // Only the boundary between the two records is a clean end.
            let mut r = RecordReader::new(&buf[..cut_at]);
            let first = r.next_record().map(|o| o.is_some());
            let cut = first.is_err() || r.next_record().is_err();
            assert_eq!(cut, cut_at != 9, "cut at {cut_at}");
        }
        let huge = (MAX_FIELD as u32 + 1).to_le_bytes();
        assert!(RecordReader::new(&huge[..]).next_record().is_err());
    }

    #[test]
    fn counter_lines() {
        assert_eq!(
            parse_counter("reporter:counter:wc,words,12\n"),
            Some(("wc.words".into(), 12))
        );
        assert_eq!(
            parse_counter(&counter_line("records", 7)),
            Some(("records".into(), 7))
        );
        assert_eq!(
            parse_counter("reporter:counter:g,n,-1"),
            Some(("g.n".into(), u64::MAX))
        );
        assert_eq!(parse_counter("reporter:counter:g,n,x"), None);
        assert_eq!(parse_counter("reporter:counter:g,,1"), None);
        assert_eq!(parse_counter("reporter:status:busy"), None);
        assert_eq!(parse_counter("a,b,1"), None);
    }
}
