//! The job the model workers run, and its oracle: a word count over text
//! whose blocks end at line ends (the client writes them block by block), so
//! each map reads exactly one block. Maps partition words by CRC32C; each
//! reduce writes `word\tcount` lines in word order after a header naming its
//! attempt, so the checks can tell which attempt's part was committed.

use bytes::Bytes;
use std::collections::BTreeMap;

/// The job name the master accepts (it validates names against the real
/// registry); the model workers compute it themselves.
pub const JOB: &str = "wordcount";

pub fn partition(word: &str, reducers: u32) -> u32 {
    crc32c::crc32c(word.as_bytes()) % reducers.max(1)
}

/// Word counts of one block, split by partition, as `word count` lines.
pub fn map(block: &[u8], reducers: u32) -> Vec<Bytes> {
    let mut parts: Vec<BTreeMap<String, u64>> = vec![BTreeMap::new(); reducers.max(1) as usize];
    for w in String::from_utf8_lossy(block).split_whitespace() {
        *parts[partition(w, reducers) as usize]
            .entry(w.to_string())
            .or_default() += 1;
    }
    parts
        .into_iter()
        .map(|p| {
            let mut s = String::new();
            for (w, n) in p {
                s.push_str(&format!("{w} {n}\n"));
            }
            Bytes::from(s)
        })
        .collect()
}

/// Sums the `word count` lines of every map's partition.
pub fn reduce(inputs: &[Bytes]) -> Result<BTreeMap<String, u64>, String> {
    let mut sum = BTreeMap::new();
    for b in inputs {
        for line in String::from_utf8_lossy(b).lines() {
            let (w, n) = line
                .split_once(' ')
                .ok_or_else(|| format!("bad map output line {line:?}"))?;
            let n: u64 = n.parse().map_err(|_| format!("bad count in {line:?}"))?;
            *sum.entry(w.to_string()).or_default() += n;
        }
    }
    Ok(sum)
}

pub fn header(job: u64, index: u32, attempt: u32) -> String {
    format!("#job {job} part {index} attempt {attempt}\n")
}

/// Splits a committed part into (attempt, body).
pub fn parse_part(b: &[u8]) -> Option<(u32, String)> {
    let s = String::from_utf8_lossy(b);
    let (head, body) = s.split_once('\n')?;
    let attempt = head.rsplit(' ').next()?.parse().ok()?;
    Some((attempt, body.to_string()))
}

pub fn render(counts: &BTreeMap<String, u64>) -> String {
    counts.iter().map(|(w, n)| format!("{w}\t{n}\n")).collect()
}

/// What each reduce must write, from the job's input files.
pub fn expected(inputs: &[&Bytes], reducers: u32) -> Vec<String> {
    let mut parts: Vec<BTreeMap<String, u64>> = vec![BTreeMap::new(); reducers as usize];
    for b in inputs {
        for w in String::from_utf8_lossy(b).split_whitespace() {
            *parts[partition(w, reducers) as usize]
                .entry(w.to_string())
                .or_default() += 1;
        }
    }
    parts.iter().map(render).collect()
}

/// A text file of `blocks` blocks, each a few lines of words from a small
/// vocabulary (so that counts add up across maps) ending in a newline.
pub fn gen_file(rng: &mut fastrand::Rng, blocks: usize) -> Vec<Bytes> {
    (0..blocks)
        .map(|_| {
            let mut s = String::new();
            for _ in 0..rng.usize(1..6) {
                let words: Vec<String> = (0..rng.usize(1..12))
                    .map(|_| format!("w{}", rng.u32(0..40)))
                    .collect();
                s.push_str(&words.join(" "));
                s.push('\n');
            }
            Bytes::from(s)
        })
        .collect()
}
