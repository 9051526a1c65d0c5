//! The job API: what a map and a reduce see, and how records are cut and
//! written. Nothing here does I/O, so the same job runs in a worker's task,
//! in a program's runner, in `mr local` and in unit tests.

use std::collections::BTreeMap;

/// Where a job's `map` or `reduce` sends its output records.
pub trait Emit {
    fn emit(&mut self, key: &[u8], value: &[u8]);
}

impl<F: FnMut(&[u8], &[u8])> Emit for F {
    fn emit(&mut self, key: &[u8], value: &[u8]) {
        self(key, value)
    }
}

/// How a map's input block is cut into records (the worker cuts them; a program sees the records).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputFormat {
    /// Text lines ending in `\n` (the last may lack it). Record: key = the
    /// line without its `\n`, value = empty. A line that straddles a block
    /// boundary belongs to the map of the block where it starts.
    Lines,
    /// Fixed-length records (TeraSort: 100 bytes, the first 10 the key). A
    /// record belongs to the map of the block where it starts.
    Fixed { len: usize, key_len: usize },
    /// `u32 LE key length, key, u32 LE value length, value`. Files in this
    /// format are written with record-aligned blocks (like the sync markers of
    /// Hadoop's SequenceFile, alignment is what lets a map start mid-file), so
    /// a block holds whole records only; anything else is a clear error.
    KvRecords,
    /// No input: a generator's maps make their share from the task index.
    Generated,
}

/// How output records become bytes in the output parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// `key<TAB>value<LF>` (WordCount, sort `--format lines`).
    TabLines,
    /// `key<LF>`: the key alone is the line (RandomTextWriter).
    KeyLines,
    /// `key<TAB>value<LF>`, or `key<LF>` when the value is empty: Hadoop
    /// Streaming's lines written back as they came (a line without a tab
    /// is a key with an empty value).
    Lines,
    /// `u32 LE klen, key, u32 LE vlen, value` (sort, RandomWriter).
    KvRecords,
    /// key then value, concatenated (TeraSort, TeraGen: 10 + 90 bytes).
    Raw,
}

/// How map output is split among reducers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Partitioning {
    /// CRC32C of the key, modulo the reducers: stable across processes.
    Hash,
    /// Ranges between sampled split points: the parts in order are sorted.
    TotalOrder,
}

/// Parameters of one job run, from the command line via the job spec.
#[derive(Debug, Clone, Default)]
pub struct JobParams {
    /// Generators: total bytes to produce, and the seed.
    pub size: u64,
    pub seed: u64,
    /// Number of maps (generators) or reducers.
    pub maps: u32,
    pub reducers: u32,
    /// Sort: `lines` reads and writes `KEY<TAB>VALUE` lines.
    pub format_lines: bool,
    /// Everything else, `key=value`.
    pub extra: BTreeMap<String, String>,
}

/// What a task knows about itself while it runs.
#[derive(Debug, Clone, Default)]
pub struct TaskCtx {
    pub params: JobParams,
    /// The map's index (its input block's position, or the generator's share).
    pub index: u32,
    /// Job-defined counters, summed over tasks into the job's counters
    /// (TeraSort counts input records and their checksum here).
    pub counters: BTreeMap<String, u64>,
}

impl TaskCtx {
    /// Wrapping, because checksum counters are sums of CRCs; and allocation
    /// free once the counter exists, because maps count per record.
    pub fn count(&mut self, name: &str, n: u64) {
        match self.counters.get_mut(name) {
            Some(c) => *c = c.wrapping_add(n),
            None => {
                self.counters.insert(name.to_string(), n);
            }
        }
    }
}

/// One MapReduce program. Only `map` is required; the defaults make an
/// identity reducer with hash partitioning over text lines.
pub trait Job: Send + Sync {
    fn name(&self) -> &'static str;
    fn input_format(&self, _p: &JobParams) -> InputFormat {
        InputFormat::Lines
    }
    fn output_format(&self, _p: &JobParams) -> OutputFormat {
        OutputFormat::TabLines
    }
    fn partitioning(&self, _p: &JobParams) -> Partitioning {
        Partitioning::Hash
    }
    /// True if `combine` may run on map output before the shuffle.
    fn has_combiner(&self) -> bool {
        false
    }
    /// Map-only jobs (the generators) write their map output as the parts.
    fn map_only(&self) -> bool {
        false
    }
    fn map(&self, ctx: &mut TaskCtx, key: &[u8], value: &[u8], out: &mut dyn Emit);
    /// True when the map cannot tell one line of a `Lines` input from the
    /// next (it splits on whitespace, `\n` included, as WordCount does):
    /// the executor may then pass runs of whole lines, joined by their
    /// `\n`s, many lines to a `map` call, which spares a call per line.
    fn maps_runs_of_lines(&self) -> bool {
        false
    }
    /// Called once after the last `map` of a task, so that a map can emit
    /// what it gathered over its whole block (the validators emit one
    /// summary per block here). Executors must call it before closing the
    /// map's output.
    fn map_finish(&self, _ctx: &mut TaskCtx, _out: &mut dyn Emit) {}
    /// Generators: produce this map's share (`ctx.index` of `ctx.params.maps`).
    fn generate(&self, _ctx: &mut TaskCtx, _out: &mut dyn Emit) {}
    /// Called once per key with all its values, keys in sorted order.
    fn reduce(
        &self,
        _ctx: &mut TaskCtx,
        key: &[u8],
        values: &mut dyn Iterator<Item = &[u8]>,
        out: &mut dyn Emit,
    ) {
        for v in values {
            out.emit(key, v);
        }
    }
    fn combine(
        &self,
        ctx: &mut TaskCtx,
        key: &[u8],
        values: &mut dyn Iterator<Item = &[u8]>,
        out: &mut dyn Emit,
    ) {
        self.reduce(ctx, key, values, out)
    }
    /// Called once after the last `reduce` of a task (validators report here).
    fn reduce_finish(&self, _ctx: &mut TaskCtx, _out: &mut dyn Emit) {}
}
