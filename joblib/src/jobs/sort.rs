//! Sort, as Hadoop's examples `sort`: identity map and reduce, so the
//! framework's partition-sort-merge does all the work and the job measures it.

use super::{Builtin, Emit, InputFormat, Job, JobParams, OutputFormat, Partitioning, TaskCtx};

#[derive(Debug, Default)]
pub struct Sort;

/// `KEY<TAB>VALUE`: the key is everything before the first TAB, so values may
/// hold TABs; a line without one is all key.
pub fn split_tab(line: &[u8]) -> (&[u8], &[u8]) {
    match memchr::memchr(b'\t', line) {
        Some(i) => (&line[..i], &line[i + 1..]),
        None => (line, b""),
    }
}

/// `total_order=true` makes the parts one sorted sequence (sampled ranges);
/// without it, hash partitioning keeps reducers balanced without a sample.
pub fn total_order(p: &JobParams) -> bool {
    p.extra.get("total_order").is_some_and(|v| v == "true")
}

impl Job for Sort {
    fn name(&self) -> &'static str {
        "sort"
    }
    fn input_format(&self, p: &JobParams) -> InputFormat {
        if p.format_lines {
            InputFormat::Lines
        } else {
            InputFormat::KvRecords
        }
    }
    fn output_format(&self, p: &JobParams) -> OutputFormat {
        if p.format_lines {
            OutputFormat::TabLines
        } else {
            OutputFormat::KvRecords
        }
    }
    fn partitioning(&self, p: &JobParams) -> Partitioning {
        if total_order(p) {
            Partitioning::TotalOrder
        } else {
            Partitioning::Hash
        }
    }
    fn map(&self, ctx: &mut TaskCtx, key: &[u8], value: &[u8], out: &mut dyn Emit) {
        ctx.count("input_records", 1);
        if ctx.params.format_lines {
            let (k, v) = split_tab(key);
            out.emit(k, v);
        } else {
            out.emit(key, value);
        }
    }
}

impl Builtin for Sort {
    fn validator(&self) -> Option<&'static str> {
        Some("sortvalidate")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_at_the_first_tab() {
        assert_eq!(split_tab(b"k\tv\tw"), (&b"k"[..], &b"v\tw"[..]));
        assert_eq!(split_tab(b"novalue"), (&b"novalue"[..], &b""[..]));
        assert_eq!(split_tab(b"\tv"), (&b""[..], &b"v"[..]));
    }

    #[test]
    fn formats_follow_params() {
        let mut p = JobParams::default();
        assert_eq!(Sort.input_format(&p), InputFormat::KvRecords);
        assert_eq!(Sort.output_format(&p), OutputFormat::KvRecords);
        assert_eq!(Sort.partitioning(&p), Partitioning::Hash);
        p.format_lines = true;
        p.extra.insert("total_order".into(), "true".into());
        assert_eq!(Sort.input_format(&p), InputFormat::Lines);
        assert_eq!(Sort.output_format(&p), OutputFormat::TabLines);
        assert_eq!(Sort.partitioning(&p), Partitioning::TotalOrder);
        let mut ctx = TaskCtx {
            params: p,
            ..Default::default()
        };
        let mut got = vec![];
        Sort.map(&mut ctx, b"a\tb", b"", &mut |k: &[u8], v: &[u8]| {
            got.push((k.to_vec(), v.to_vec()))
        });
        assert_eq!(got, vec![(b"a".to_vec(), b"b".to_vec())]);
        assert_eq!(ctx.counters["input_records"], 1);
    }
}
