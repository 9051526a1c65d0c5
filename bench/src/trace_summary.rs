//! `summary.md` of a trace replay: the figures of [`super::trace_figures`]
//! as tables, with the facts a reader needs to judge them first (what ran,
//! on what, by which commit, at which load per resource, whether the load
//! was sustained) and the lab's own repeatability last, as the ceiling any
//! model of the cluster is measured against. It computes no figure of its
//! own: whatever it prints is in `report.json`.

use super::bootstrap::{Interval, RESAMPLES};
use super::load::SUSTAINED_SPAN;
use super::over_runs::{TInterval, MIN_RUNS_FOR_CLAIM};
use super::report::utc;
use super::sizeclass::SizeClass;
use super::trace_figures::{Figures, LoadFigures, Range, SEED};
use super::trace_report::ReportMeta;
use std::fmt::Write as _;

fn t(i: &Option<TInterval>) -> String {
    i.map_or("-".into(), |i| format!("[{:.3}, {:.3}]", i.lo, i.hi))
}

fn rows(i: &Option<Interval>) -> String {
    i.map_or("-".into(), |i| format!("[{:.3}, {:.3}]", i.lo, i.hi))
}

/// A p-value as a reader compares it with 0.05.
fn p_value(p: f64) -> String {
    if p.is_nan() {
        "-".into()
    } else if p < 0.001 {
        "<0.001".into()
    } else {
        format!("{p:.3}")
    }
}

fn pct(r: &Range) -> String {
    format!(
        "{:.0} % ({:.0}-{:.0})",
        100.0 * r.mean,
        100.0 * r.min,
        100.0 * r.max
    )
}

/// The markdown summary.
pub fn summary(meta: &ReportMeta, f: &Figures, failures: &[String]) -> String {
    let mut s = String::from("# Trace replay\n\n");
    write_setup(&mut s, meta, f);
    for l in &f.loads {
        write_load(&mut s, meta, f, l);
    }
    if !failures.is_empty() {
        s += "\n## Failed runs (not counted)\n\n";
        for x in failures {
            let _ = writeln!(s, "- {x}");
        }
    }
    s
}

/// The head: what was replayed, on what, by which commit, and how it is
/// read. The `cluster and shaping`, `scaling` and `trace` lines are read
/// back by `mr sim heldout` (`heldout::parse_summary`).
fn write_setup(s: &mut String, meta: &ReportMeta, f: &Figures) {
    let (date, time) = utc(meta.date_ms);
    let sc = &meta.scale;
    let _ = writeln!(s, "- command: `{}`", meta.command);
    let _ = writeln!(s, "- date: {date} {time} UTC; commit {}", f.runs_commit);
    let _ = writeln!(
        s,
        "- report computed by commit {}{}",
        f.report_commit,
        if f.report_commit == f.runs_commit {
            " (the runs' own)"
        } else {
            " (a newer binary than the runs': both commits are named)"
        }
    );
    let _ = writeln!(
        s,
        "- cluster and shaping: {}; {} map and {} reduce slots",
        meta.cluster, meta.map_slots, meta.reduce_slots
    );
    let _ = writeln!(
        s,
        "- trace: {} rows {}..{} ({} jobs, arrivals over {:.0} s of the trace), traced cluster {} nodes",
        meta.trace,
        meta.from,
        meta.from + meta.rows,
        meta.rows,
        meta.span_s,
        meta.traced_nodes
    );
    let _ = writeln!(
        s,
        "- scaling: bytes x{:.5} (default: our workers over the traced nodes), blocks of {}, at most {} maps and {} reduces a job, ratios capped at {}; a pool of {} blocks, drawn per row with seed {}; shuffles x{} (--shuffle-scale)",
        sc.bytes,
        common::units::format_size(sc.block),
        sc.max_maps,
        sc.max_reduces,
        super::trace::MAX_RATIO,
        meta.pool_blocks,
        meta.seed,
        sc.shuffle
    );
    let longest = f.loads.first().map_or(0.0, |l| l.longest_alone_s);
    let _ = writeln!(
        s,
        "- solo pass ({}): each job alone on the idle cluster; the longest took {longest:.2} s",
        meta.solo_policy
    );
    if let Some(c) = &f.size_classes {
        let n = |k: SizeClass| f.class_jobs.get(&k).copied().unwrap_or(0);
        let _ = writeln!(
            s,
            "- size classes (terciles of the slice's times alone): small up to {:.3} s ({} jobs), medium up to {:.3} s ({}), big above ({})",
            c.small_max_s,
            n(SizeClass::Small),
            c.medium_max_s,
            n(SizeClass::Medium),
            n(SizeClass::Big)
        );
    }
    for l in &f.loads {
        let _ = writeln!(
            s,
            "- load {}: compression x{:.2}, arrivals over {:.1} s; offered {:.2} on the map slots, {:.2} on the reduce slots (bottleneck: {}); {}",
            l.load,
            l.compression,
            l.arrivals_span_s,
            l.offered.map,
            l.offered.reduce,
            l.bottleneck,
            if l.sustained { "sustained" } else { "NOT sustained" }
        );
    }
    let _ = writeln!(
        s,
        "- runs: {} per load and policy, the policies of a repetition run in turn{}",
        meta.reps,
        if meta.rotated {
            ", each repetition starting one policy further along"
        } else {
            ", in the same order every repetition"
        }
    );
    let _ = writeln!(
        s,
        "- comparisons, named before the runs{}: {}",
        if meta.compare.is_empty() {
            format!(" (each policy against the baseline, {})", meta.baseline)
        } else {
            format!(" (--compare {})", meta.compare.join(" --compare "))
        },
        if f.comparisons.is_empty() {
            "none".to_string()
        } else {
            f.comparisons.join(", ")
        }
    );
    let _ = writeln!(
        s,
        "- intervals: 95 %, Student t over the per-run values (runs − 1 degrees of freedom; a claim needs at least {MIN_RUNS_FOR_CLAIM} runs); beside it a bootstrap over trace rows (a drawn row brings its every run), {RESAMPLES} resamples, seed {SEED}; each load's comparisons Holm-corrected together at 5 %"
    );
    *s += "\nOffered load, per resource: the jobs' map task-seconds alone over the map slot-seconds, and their reduce task-seconds over the reduce slot-seconds, in the span of the arrivals; the load of a table is the bottleneck's. Sustained: the arrivals span at least ";
    let _ = write!(s, "{SUSTAINED_SPAN}");
    *s += " times the longest job alone (otherwise a run is a burst and a drain). Slot use: busy slot-seconds over available slot-seconds from the first submit to the last commit, per run (mean over runs, and the range). Slowdown: job time under load over the same job's time alone. Paired difference: per run, the mean over the same trace rows of policy minus comparator. Definitions: docs/bench/comparing-policies.md.\n";
}

fn write_load(s: &mut String, meta: &ReportMeta, f: &Figures, l: &LoadFigures) {
    let _ = writeln!(
        s,
        "\n## Load {} (offered {:.2}, the {} slots; map {:.2}, reduce {:.2})\n",
        l.load, l.offered_bottleneck, l.bottleneck, l.offered.map, l.offered.reduce
    );
    if !l.sustained {
        let _ = writeln!(
            s,
            "**Warning: not a sustained load.** The arrivals span {:.1} s, {:.1} times the longest job alone ({:.2} s); a sustained load needs {SUSTAINED_SPAN}. Every run of this load is one burst and a drain: its figures describe the drain, not a cluster at this load. Replay more rows (`--jobs`) or compress less.\n",
            l.arrivals_span_s,
            l.arrivals_span_s / l.longest_alone_s.max(f64::MIN_POSITIVE),
            l.longest_alone_s
        );
    }
    if l.policies.iter().any(|p| p.runs < MIN_RUNS_FOR_CLAIM) {
        let _ = writeln!(
            s,
            "Too few runs for a claim: a claim needs at least {MIN_RUNS_FOR_CLAIM} runs of each policy (`--reps`); the intervals below are shown, the verdicts withheld.\n"
        );
    }
    s.push_str("| policy | runs | jobs | mean job time, s | [95 % t over runs] | [95 % over rows] | p99, s (mean over runs) | mean slowdown [95 % t] | map slot use | reduce slot use | makespan, s |\n|---|---:|---:|---:|---|---|---:|---|---|---|---:|\n");
    for p in &l.policies {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.3} | {} | {} | {:.3} | {:.2} {} | {} | {} | {:.1} |",
            p.policy,
            p.runs,
            p.jobs,
            p.mean_job_s,
            t(&p.mean_job_s_t),
            rows(&p.mean_job_s_rows),
            p.p99_job_s,
            p.slowdown,
            t(&p.slowdown_t),
            pct(&p.map_slot_use),
            pct(&p.reduce_slot_use),
            p.makespan_s.mean
        );
    }
    write_classes(s, f, l);
    write_comparisons(s, meta, l);
    let r = &l.repeatability;
    let show = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.2}"));
    let _ = writeln!(
        s,
        "\nThe ceiling (the lab's own repeatability): split-half Spearman of the policies' mean job times, {} over all policies and {} over the policies other than the best ({}), the mean over {} {}splits of {} runs into halves. No model can be asked to rank the policies better than the lab ranks them against itself.",
        show(r.all),
        show(r.without_best),
        if r.best.is_empty() { "-" } else { &r.best },
        r.splits,
        if r.sampled { "sampled " } else { "" },
        r.runs
    );
}

fn write_classes(s: &mut String, f: &Figures, l: &LoadFigures) {
    if f.size_classes.is_none() {
        return;
    }
    s.push_str("\nMean slowdown by size class (time alone; boundaries above), over runs [95 % t]\n\n| policy | small | medium | big | all |\n|---|---|---|---|---|\n");
    for p in &l.policies {
        let cell = |k: SizeClass| {
            p.slowdown_by_class
                .get(&k)
                .map_or("-".into(), |c| format!("{:.2} {}", c.mean, t(&c.t)))
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {:.2} {} |",
            p.policy,
            cell(SizeClass::Small),
            cell(SizeClass::Medium),
            cell(SizeClass::Big),
            p.slowdown,
            t(&p.slowdown_t)
        );
    }
}

fn write_comparisons(s: &mut String, meta: &ReportMeta, l: &LoadFigures) {
    if l.comparisons.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "\nComparisons named before the runs ({}): per run, the mean over the same trace rows of policy minus comparator job time; t over runs, raw p-value, Holm's over this load's {} comparisons; beside it the same for each run's p99\n",
        if meta.compare.is_empty() {
            format!("against {}", meta.baseline)
        } else {
            meta.compare.join(", ")
        },
        l.comparisons.len()
    );
    s.push_str("| policy | comparator | runs | pairs | minus comparator, s | [95 % t over runs] | [95 % over rows] | p | Holm p | verdict | p99 minus comparator's, s [95 % t] |\n|---|---|---:|---:|---:|---|---|---:|---:|---|---|\n");
    for c in &l.comparisons {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            c.policy,
            c.comparator,
            c.runs,
            c.pairs,
            c.diff_s_t.map_or("-".into(), |d| format!("{:.3}", d.mean)),
            t(&c.diff_s_t),
            rows(&c.diff_s_rows),
            p_value(c.p),
            p_value(c.p_holm),
            c.verdict,
            c.p99_diff_s_t
                .map_or("-".into(), |d| format!("{:.3} {}", d.mean, t(&Some(d))))
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Scale;
    use crate::trace_figures::compute;
    use crate::trace_report::{JobRow, RunRow, SoloRow};

    fn meta(compare: &[&str], reps: u32) -> ReportMeta {
        ReportMeta {
            command: "mr bench trace".into(),
            date_ms: 0,
            commit: "abc (clean tree)".into(),
            cluster: "workers=6".into(),
            map_slots: 12,
            reduce_slots: 6,
            trace: "t.tsv".into(),
            from: 0,
            rows: 9,
            traced_nodes: 600,
            scale: Scale::new(6, 600, 1 << 20, 8, 4),
            pool_blocks: 32,
            compressions: vec![(Some(0.15), 10.0)],
            task_s: 45.0,
            span_s: 400.0,
            reps,
            baseline: "fifo".into(),
            policies: vec!["fifo".into(), "delay".into(), "lsap".into()],
            solo_policy: "fifo".into(),
            seed: 1,
            compare: compare.iter().map(|s| s.to_string()).collect(),
            rotated: true,
        }
    }

    /// Nine rows, row k alone 1 + k s (1 map and 4 reduce task-seconds
    /// each); fifo takes 2 + k s (+0.01 s a run), delay 1 s less on every
    /// job, lsap 0.5 s more in even runs and less in odd ones.
    fn data(reps: u32, compression: f64) -> (Vec<SoloRow>, Vec<JobRow>, Vec<RunRow>) {
        let solo = (0..9)
            .map(|k| SoloRow {
                row: k,
                alone_s: 1.0 + k as f64,
                map_task_s: 1.0,
                reduce_task_s: 4.0,
                ..Default::default()
            })
            .collect();
        let (mut jobs, mut runs) = (vec![], vec![]);
        for rep in 1..=reps {
            for (p, d) in [
                ("fifo", 0.0),
                ("delay", -1.0),
                ("lsap", if rep % 2 == 0 { 0.5 } else { -0.5 }),
            ] {
                for k in 0..9 {
                    jobs.push(JobRow {
                        load: "0.15".into(),
                        policy: p.into(),
                        rep,
                        row: k,
                        exec_time_s: 2.0 + k as f64 + 0.01 * rep as f64 + d,
                        alone_s: 1.0 + k as f64,
                        ..Default::default()
                    });
                }
                runs.push(RunRow {
                    load: "0.15".into(),
                    compression,
                    offered: 0.15,
                    policy: p.into(),
                    rep,
                    jobs: 9,
                    makespan_s: 20.0,
                    map_slot_use: 0.4,
                    reduce_slot_use: 0.1,
                });
            }
        }
        (solo, jobs, runs)
    }

    #[test]
    fn named_comparisons_with_ten_runs_make_claims_by_the_definitions() {
        let m = meta(&["delay:all"], 10);
        let (solo, jobs, runs) = data(10, 10.0);
        let f = compute(&m, &solo, &jobs, &runs, "def (clean tree)".into());
        let l = &f.loads[0];
        // Arrivals over 40 s: maps 9 / (12 × 40), reduces 36 / (6 × 40).
        assert!((l.offered.map - 0.01875).abs() < 1e-12 && (l.offered.reduce - 0.15).abs() < 1e-12);
        assert_eq!((l.bottleneck.as_str(), l.sustained), ("reduce", true));
        let c: Vec<(&str, &str, &str)> = l
            .comparisons
            .iter()
            .map(|c| (c.policy.as_str(), c.comparator.as_str(), c.verdict.as_str()))
            .collect();
        assert_eq!(c, [("delay", "fifo", "lower"), ("delay", "lsap", "lower")]);
        assert_eq!(l.comparisons[0].diff_s_t.unwrap().mean, -1.0);
        let s = summary(&m, &f, &[]);
        for want in [
            "commit abc (clean tree)",
            "report computed by commit def (clean tree) (a newer binary",
            "## Load 0.15 (offered 0.15, the reduce slots; map 0.02, reduce 0.15)",
            "small up to 3.000 s (3 jobs), medium up to 6.000 s (3), big above (3)",
            "| delay | fifo | 10 | 90 | -1.000 | [-1.000, -1.000] |",
            "| 40 % (40-40) | 10 % (10-10) |",
            "over the policies other than the best (delay)",
        ] {
            assert!(s.contains(want), "{want}\n{s}");
        }
        assert!(!s.contains("Warning") && !s.contains("Too few runs"), "{s}");
        // The same figures in report.json's form, with stable names.
        let v = serde_json::to_value(&f).unwrap();
        assert_eq!(v["loads"][0]["comparisons"][0]["verdict"], "lower");
        assert_eq!(v["loads"][0]["offered"]["reduce"], 0.15);
        assert_eq!(v["size_classes"]["small_max_s"], 3.0);
        assert_eq!(
            (v["min_runs_for_claim"].as_u64(), v["seed"].as_u64()),
            (Some(10), Some(26))
        );
        assert!(v["loads"][0]["policies"][0]["slowdown_by_class"]["big"]["mean"].is_number());
    }

    #[test]
    fn few_runs_a_burst_and_the_default_comparator_are_said() {
        let m = meta(&[], 5);
        // Compression 20: arrivals over 20 s, under 3 × the longest (9 s).
        let (solo, jobs, runs) = data(5, 20.0);
        let f = compute(&m, &solo, &jobs, &runs, "abc (clean tree)".into());
        let s = summary(&m, &f, &[]);
        for want in [
            "(the runs' own)",
            "**Warning: not a sustained load.**",
            "Too few runs for a claim",
            "(each policy against the baseline, fifo): delay:fifo, lsap:fifo",
            "| lsap | fifo | 5 | 45 |",
        ] {
            assert!(s.contains(want), "{want}\n{s}");
        }
        let l = &f.loads[0];
        assert!(l
            .comparisons
            .iter()
            .all(|c| c.verdict == "too few runs for a claim"));
        assert!(!l.sustained);
    }
}
