//! The runner: how a job program answers a worker. The worker starts the
//! program once per task with the task in its environment (`MR_TASK`,
//! `MR_JOB_PARAMS`, `MR_TASK_INDEX`) and speaks [`crate::wire`] with it on
//! stdin and stdout; the client starts it once with `MR_TASK=describe` to
//! learn its plan.

use crate::plan::JobPlan;
use crate::wire::{counter_line, write_record, RecordReader};
use crate::{InputFormat, Job, TaskCtx};
use std::io::{self, BufReader, BufWriter, Read, Write};

/// What one run of a job program does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskMode {
    /// Print the job's [`JobPlan`] as JSON, with its name.
    Describe,
    /// Input records in, map output out (a generator reads nothing).
    Map,
    /// Records sorted by key in, the combiner's output out.
    Combine,
    /// Records sorted by key in, the reduce's output out.
    Reduce,
}

impl TaskMode {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskMode::Describe => "describe",
            TaskMode::Map => "map",
            TaskMode::Combine => "combine",
            TaskMode::Reduce => "reduce",
        }
    }

    pub fn parse(s: &str) -> Option<TaskMode> {
        [
            TaskMode::Describe,
            TaskMode::Map,
            TaskMode::Combine,
            TaskMode::Reduce,
        ]
        .into_iter()
        .find(|m| m.as_str() == s)
    }
}

const USAGE: &str = "this is an mr job program: the workers run it, one process per task.
Submit it with
    mr job run program --program PATH --input IN --output OUT [--reducers N] [--param K=V]...
Run by hand, it reads MR_TASK (describe, map, combine or reduce), MR_JOB_PARAMS
(the job's parameters as JSON) and MR_TASK_INDEX, and speaks framed records
(u32 LE length, key, u32 LE length, value) on stdin and stdout.";

/// The `main` of a job program: runs the task the environment names and
/// exits (0 on success; 1 with the error on stderr; 2 when not run as a
/// task).
pub fn run<J: Job>(job: J) -> ! {
    let mode = std::env::var("MR_TASK").ok();
    let Some(mode) = mode.as_deref().and_then(TaskMode::parse) else {
        eprintln!("{USAGE}");
        std::process::exit(2);
    };
    let params = match std::env::var("MR_JOB_PARAMS") {
        Ok(s) => crate::spec::params_from_json(&s),
        Err(_) => Ok(Default::default()),
    };
    let index = std::env::var("MR_TASK_INDEX")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let result = params.map_err(io::Error::other).and_then(|params| {
        let mut ctx = TaskCtx {
            params,
            index,
            counters: Default::default(),
        };
        let stdin = BufReader::with_capacity(1 << 20, io::stdin().lock());
        let stdout = BufWriter::with_capacity(1 << 20, io::stdout().lock());
        run_task(&job, mode, &mut ctx, stdin, stdout)?;
        let mut err = io::stderr().lock();
        for (name, n) in &ctx.counters {
            writeln!(err, "{}", counter_line(name, *n))?;
        }
        Ok(())
    });
    match result {
        Ok(()) => std::process::exit(0),
        // The worker closed the pipe: the task was killed, nothing to say.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => std::process::exit(1),
        Err(e) => {
            eprintln!("{} ({}): {e}", job.name(), mode.as_str());
            std::process::exit(1)
        }
    }
}

/// Runs one task of `job` over framed records from `input`, writing framed
/// records to `output` (the plan as JSON for [`TaskMode::Describe`]). The
/// job's counters are left in `ctx`. This is what [`run`] does with stdin
/// and stdout, callable on buffers in a job's own tests.
pub fn run_task(
    job: &dyn Job,
    mode: TaskMode,
    ctx: &mut TaskCtx,
    input: impl Read,
    mut output: impl Write,
) -> io::Result<()> {
    let mut records = RecordReader::new(input);
    if mode == TaskMode::Describe {
        let plan = JobPlan::of(job, &ctx.params).to_json();
        let mut v: serde_json::Value = serde_json::from_str(&plan).map_err(io::Error::other)?;
        v["name"] = job.name().into();
        writeln!(output, "{v}")?;
        return output.flush();
    }
    let mut emit = Framed {
        out: &mut output,
        err: None,
    };
    match mode {
        TaskMode::Describe => {}
        TaskMode::Map if job.input_format(&ctx.params) == InputFormat::Generated => {
            job.generate(ctx, &mut emit);
        }
        TaskMode::Map => {
            while let Some((k, v)) = records.next_record()? {
                job.map(ctx, k, v, &mut emit);
                if emit.err.is_some() {
                    break;
                }
            }
            job.map_finish(ctx, &mut emit);
        }
        TaskMode::Combine | TaskMode::Reduce => {
            // One key's values gathered at a time: the input is sorted, so
            // a group ends where the key changes.
            let mut key = Vec::new();
            let mut arena = Vec::new();
            let mut ends: Vec<usize> = Vec::new();
            let flush = |ctx: &mut TaskCtx,
                         key: &[u8],
                         arena: &[u8],
                         ends: &[usize],
                         emit: &mut dyn crate::Emit| {
                let mut start = 0;
                let mut vals = ends.iter().map(|&e| {
                    let v = &arena[start..e];
                    start = e;
                    v
                });
                if mode == TaskMode::Reduce {
                    job.reduce(ctx, key, &mut vals, emit);
                } else {
                    job.combine(ctx, key, &mut vals, emit);
                }
            };
            while let Some((k, v)) = records.next_record()? {
                if k != key.as_slice() && !ends.is_empty() {
                    flush(ctx, &key, &arena, &ends, &mut emit);
                    arena.clear();
                    ends.clear();
                }
                if ends.is_empty() {
                    key.clear();
                    key.extend_from_slice(k);
                }
                arena.extend_from_slice(v);
                ends.push(arena.len());
                if emit.err.is_some() {
                    break;
                }
            }
            if !ends.is_empty() {
                flush(ctx, &key, &arena, &ends, &mut emit);
            }
            if mode == TaskMode::Reduce {
                job.reduce_finish(ctx, &mut emit);
            }
        }
    }
    if let Some(e) = emit.err {
        return Err(e);
    }
    output.flush()
}

/// In-memory records: what [`run_records`] takes and gives.
pub type Records = Vec<(Vec<u8>, Vec<u8>)>;

/// [`run_task`] over records in memory rather than framed streams: a job's
/// own tests run its map, combine and reduce with it, no cluster needed.
/// The input of a combine or a reduce must be sorted by key, as the
/// shuffle hands it over; the output comes as the task wrote it.
pub fn run_records(
    job: &dyn Job,
    mode: TaskMode,
    ctx: &mut TaskCtx,
    input: &[(Vec<u8>, Vec<u8>)],
) -> io::Result<Records> {
    let mut framed = Vec::new();
    for (k, v) in input {
        write_record(&mut framed, k, v)?;
    }
    let mut out = Vec::new();
    run_task(job, mode, ctx, &framed[..], &mut out)?;
    let mut r = RecordReader::new(&out[..]);
    let mut records = Vec::new();
    while let Some((k, v)) = r.next_record()? {
        records.push((k.to_vec(), v.to_vec()));
    }
    Ok(records)
}

/// Output records framed onto a stream; the first write error is kept and
/// ends the task.
struct Framed<'a, W> {
    out: &'a mut W,
    err: Option<io::Error>,
}

impl<W: Write> crate::Emit for Framed<'_, W> {
    fn emit(&mut self, key: &[u8], value: &[u8]) {
        if self.err.is_none() {
            if let Err(e) = write_record(self.out, key, value) {
                self.err = Some(e);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Emit;

    struct Count;
    impl Job for Count {
        fn name(&self) -> &'static str {
            "count"
        }
        fn map(&self, ctx: &mut TaskCtx, k: &[u8], _v: &[u8], out: &mut dyn Emit) {
            ctx.count("lines", 1);
            for w in k.split(|c| *c == b' ') {
                out.emit(w, b"1");
            }
        }
        fn reduce(
            &self,
            _ctx: &mut TaskCtx,
            k: &[u8],
            vals: &mut dyn Iterator<Item = &[u8]>,
            out: &mut dyn Emit,
        ) {
            out.emit(k, vals.count().to_string().as_bytes());
        }
    }

    fn frames(recs: &[(&str, &str)]) -> Vec<u8> {
        let mut b = Vec::new();
        for (k, v) in recs {
            write_record(&mut b, k.as_bytes(), v.as_bytes()).unwrap();
        }
        b
    }

    fn records(b: &[u8]) -> Vec<(String, String)> {
        let mut r = RecordReader::new(b);
        let mut out = Vec::new();
        while let Some((k, v)) = r.next_record().unwrap() {
            out.push((
                String::from_utf8_lossy(k).into(),
                String::from_utf8_lossy(v).into(),
            ));
        }
        out
    }

    #[test]
    fn map_then_reduce_over_frames() {
        let mut ctx = TaskCtx::default();
        let mut out = Vec::new();
        let input = frames(&[("a b", ""), ("b", "")]);
        run_task(&Count, TaskMode::Map, &mut ctx, &input[..], &mut out).unwrap();
        assert_eq!(ctx.counters["lines"], 2);
        let mapped = records(&out);
        assert_eq!(mapped.len(), 3);
        let sorted = frames(&[("a", "1"), ("b", "1"), ("b", "1")]);
        let mut out = Vec::new();
        run_task(
            &Count,
            TaskMode::Reduce,
            &mut TaskCtx::default(),
            &sorted[..],
            &mut out,
        )
        .unwrap();
        assert_eq!(
            records(&out),
            vec![("a".into(), "1".into()), ("b".into(), "2".into())]
        );
    }

    #[test]
    fn records_in_memory_run_as_frames_do() {
        let input = vec![(b"a b a".to_vec(), vec![])];
        let mut ctx = TaskCtx::default();
        let mut mapped = run_records(&Count, TaskMode::Map, &mut ctx, &input).unwrap();
        mapped.sort();
        let out = run_records(&Count, TaskMode::Reduce, &mut TaskCtx::default(), &mapped).unwrap();
        assert_eq!(
            out,
            vec![
                (b"a".to_vec(), b"2".to_vec()),
                (b"b".to_vec(), b"1".to_vec())
            ]
        );
        assert_eq!(ctx.counters["lines"], 1);
    }

    #[test]
    fn describe_prints_the_plan_and_a_cut_input_fails() {
        let mut out = Vec::new();
        run_task(
            &Count,
            TaskMode::Describe,
            &mut TaskCtx::default(),
            &[][..],
            &mut out,
        )
        .unwrap();
        let s = String::from_utf8(out).unwrap();
        assert_eq!(JobPlan::from_json(&s).unwrap(), JobPlan::default());
        assert!(s.contains("\"name\":\"count\""));
        let input = frames(&[("a", "")]);
        let r = run_task(
            &Count,
            TaskMode::Map,
            &mut TaskCtx::default(),
            &input[..3],
            Vec::new(),
        );
        assert!(r.is_err());
    }
}
