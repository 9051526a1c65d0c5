//! The record readers across block boundaries: a file cut into blocks at
//! fuzzed boundaries, each block read by its own "map" as
//! `joblib::jobs::formats::read_split` does it, must yield every record
//! of the file exactly once: text lines (Hadoop's LineRecordReader rule),
//! 100-byte TeraSort records (a partial last record is an error, never a
//! short record), and length-prefixed key/value records (canonical: what
//! decodes re-encodes to the same bytes). Lines read in runs
//! (`read_split_runs`, for maps that split on whitespace) must be the same
//! lines joined by `\n`, and count as many records.
#![no_main]

use bytes::Bytes;
use joblib::jobs::formats::{kv_encode, read_split, read_split_runs, FormatError};
use joblib::jobs::InputFormat;
use libfuzzer_sys::fuzz_target;

/// Cuts `file` into blocks whose lengths cycle through `cuts` (each ≥ 1).
fn blocks(file: &[u8], cuts: &[u8]) -> Vec<(u64, Bytes)> {
    let mut v = Vec::new();
    let mut off = 0;
    let mut i = 0;
    while off < file.len() {
        let n = (cuts.get(i % cuts.len().max(1)).copied().unwrap_or(255) as usize + 1)
            .min(file.len() - off);
        v.push((off as u64, Bytes::copy_from_slice(&file[off..off + n])));
        off += n;
        i += 1;
    }
    v
}

/// Every block read as its map reads it; the records in file order, and
/// the errors.
fn read_all(format: InputFormat, bs: &[(u64, Bytes)]) -> (Vec<Vec<u8>>, Vec<FormatError>) {
    let mut recs = Vec::new();
    let mut errs = Vec::new();
    for (i, (off, b)) in bs.iter().enumerate() {
        let mut rest = bs[i + 1..].iter().map(|(_, b)| b.clone());
        let mut next = || rest.next();
        let r = read_split(format, b, *off, &mut next, &mut |k, v| {
            let mut r = k.to_vec();
            r.extend_from_slice(v);
            recs.push(r);
        });
        if let Err(e) = r {
            errs.push(e);
        }
    }
    (recs, errs)
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let ncuts = (data[1] % 8) as usize + 1;
    if data.len() < 2 + ncuts {
        return;
    }
    let cuts = &data[2..2 + ncuts];
    let file = &data[2 + ncuts..];
    match data[0] % 3 {
        0 => {
            let bs = blocks(file, cuts);
            let (recs, errs) = read_all(InputFormat::Lines, &bs);
            assert!(errs.is_empty());
            let mut want: Vec<Vec<u8>> = file.split(|&c| c == b'\n').map(|l| l.to_vec()).collect();
            // A trailing newline does not make an empty last line; an
            // empty file has no lines.
            if file.is_empty() || file.ends_with(b"\n") {
                want.pop();
            }
            assert_eq!(recs, want, "lines read across blocks {cuts:?}");
            // In runs: the same lines, joined, as many records.
            let (mut text, mut records) = (Vec::new(), 0);
            for (i, (off, b)) in bs.iter().enumerate() {
                let mut rest = bs[i + 1..].iter().map(|(_, b)| b.clone());
                let mut next = || rest.next();
                let st = read_split_runs(InputFormat::Lines, b, *off, &mut next, &mut |k, _| {
                    text.extend_from_slice(k);
                    text.push(b'\n');
                })
                .expect("lines never fail");
                records += st.records as usize;
            }
            assert_eq!(records, want.len(), "lines counted in runs {cuts:?}");
            let joined: Vec<u8> = want.iter().flat_map(|l| l.iter().chain(b"\n")).copied().collect();
            assert_eq!(text, joined, "runs read across blocks {cuts:?}");
        }
        1 => {
            // TeraSort: 100-byte records, 10-byte keys. Small cuts make
            // records straddle one or more block boundaries.
            let bs = blocks(file, cuts);
            let (recs, errs) = read_all(
                InputFormat::Fixed {
                    len: 100,
                    key_len: 10,
                },
                &bs,
            );
            let want: Vec<Vec<u8>> = file.chunks_exact(100).map(|c| c.to_vec()).collect();
            assert_eq!(recs, want);
            let partial = file.len() % 100;
            if partial == 0 {
                assert!(errs.is_empty(), "{errs:?}");
            } else {
                assert_eq!(
                    errs,
                    vec![FormatError::PartialRecord {
                        bytes: partial as u64,
                        len: 100
                    }]
                );
            }
        }
        _ => {
            // Length-prefixed records, one block (KvRecords files are
            // written record-aligned).
            let mut again = Vec::new();
            let mut nothing = || None;
            let r = read_split(
                InputFormat::KvRecords,
                file,
                0,
                &mut nothing,
                &mut |k, v| kv_encode(k, v, &mut again),
            );
            match r {
                Ok(st) => {
                    assert_eq!(again, file, "decoded records re-encode to the input");
                    assert!(st.records as usize <= file.len() / 8);
                }
                Err(FormatError::Straddle { offset, .. }) => {
                    assert!(offset as usize <= file.len());
                    assert_eq!(&file[..again.len()], &again[..]);
                }
                Err(e) => panic!("unexpected error {e}"),
            }
        }
    }
});
