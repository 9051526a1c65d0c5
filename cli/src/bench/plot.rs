//! PNG plots of benchmark results drawn in Rust (plotters, bitmap backend), so a bench run needs no Python or gnuplot.
//!
//! Three chart kinds, each written as one 900x540 RGB PNG on a white background:
//! - [`grouped_bars`]: groups (workloads) on the x axis, one coloured bar per
//!   series (scheduler) in each group, with min..max whiskers;
//! - [`stacked_fractions`]: one 100% bar per label, split into levels (the
//!   locality levels get a fixed green-to-red ramp);
//! - [`lines`]: one line with markers per series, optionally on a log2 x axis.
//!
//! The title and the legend sit above the plot, so the legend never hides data.
//! Long category labels are wrapped at `/`, `-`, `_` or spaces, or turned
//! vertical when wrapping is not enough.
//!
//! Text is drawn by the pure-Rust `ab_glyph` renderer from a TrueType font
//! found at run time: `$MR_PLOT_FONT` if set, else the first of
//! [`FONT_CANDIDATES`] that exists (Debian's `fonts-dejavu-core` provides the
//! first one). The PNG is encoded with the `png` crate, so no image codec
//! beyond PNG is linked.

use std::ffi::OsString;
use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{anyhow, bail, ensure, Context, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// One bar: the median of the reps, and their spread for the whisker.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bar {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

/// One bar per group (e.g. one scheduler's bars across workloads).
#[derive(Debug, Clone, PartialEq)]
pub struct BarSeries {
    pub label: String,
    /// `values[i]` belongs to `groups[i]`; `None` = no data.
    pub values: Vec<Option<Bar>>,
}

/// One line of a [`lines`] chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// Where the font is looked for when `$MR_PLOT_FONT` is not set, in order.
pub const FONT_CANDIDATES: &[&str] = &[
    // Debian / Ubuntu: fonts-dejavu-core
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    // Fedora / RHEL: dejavu-sans-fonts
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    // Arch: ttf-dejavu
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    // Alpine (font-dejavu), older Fedora
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    // Liberation, another common sans
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/liberation-sans/LiberationSans-Regular.ttf",
    // macOS
    "/System/Library/Fonts/Supplemental/Arial.ttf",
    "/Library/Fonts/Arial.ttf",
];

const FONT_ENV: &str = "MR_PLOT_FONT";
const FONT: &str = "sans-serif";

const WIDTH: u32 = 900;
const HEIGHT: u32 = 540;

const TITLE_SIZE: f64 = 22.0;
const DESC_SIZE: f64 = 16.0;
const TICK_SIZE: f64 = 14.0;
const LEGEND_SIZE: f64 = 14.0;
const SMALL_SIZE: f64 = 11.0;
/// Height of one line of tick-label text, in pixels.
const TICK_LINE: i32 = 16;

const MARGIN_LEFT: u32 = 12;
const MARGIN_RIGHT: u32 = 24;
const Y_LABEL_AREA: u32 = 76;
/// Longest a vertical category label may get before it is cut with `…`.
const MAX_VERTICAL_LABEL: i32 = 190;

/// Series colours (Tableau 10), in order; reused cyclically.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xed, 0xc9, 0x48),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0xff, 0x9d, 0xa7),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0xba, 0xb0, 0xac),
];

/// The locality levels, best first, and their fixed colours (green to red).
const LOCALITY: [(&str, RGBColor); 5] = [
    ("cache_local", RGBColor(0x1a, 0x98, 0x50)),
    ("node_local", RGBColor(0x91, 0xcf, 0x60)),
    ("cache_rack_local", RGBColor(0xfe, 0xe0, 0x8b)),
    ("rack_local", RGBColor(0xfc, 0x8d, 0x59)),
    ("off_rack", RGBColor(0xd7, 0x30, 0x27)),
];

const GRID: RGBColor = RGBColor(0xe4, 0xe4, 0xe4);
const GREY: RGBColor = RGBColor(0x80, 0x80, 0x80);
const WHISKER: RGBColor = RGBColor(0x22, 0x22, 0x22);

/// Grouped bar chart: groups on the x axis (e.g. workloads), one coloured bar per series (e.g. scheduler) in each group, whiskers from min to max (the spread over reps), legend.
pub fn grouped_bars(
    path: &Path,
    title: &str,
    y_label: &str,
    groups: &[String],
    series: &[BarSeries],
) -> Result<()> {
    let what = format!("bar chart {title:?}");
    ensure!(!groups.is_empty(), "{what}: no data (no groups)");
    ensure!(!series.is_empty(), "{what}: no data (no series)");
    for s in series {
        ensure!(
            s.values.len() == groups.len(),
            "{what}: series {:?} has {} values for {} groups",
            s.label,
            s.values.len(),
            groups.len()
        );
        for b in s.values.iter().flatten() {
            ensure!(
                b.median.is_finite() && b.min.is_finite() && b.max.is_finite(),
                "{what}: series {:?} has a non-finite value {b:?}",
                s.label
            );
        }
    }
    let bars = || series.iter().flat_map(|s| s.values.iter().flatten());
    let Some(top) = bars().map(|b| b.median.max(b.max)).reduce(f64::max) else {
        bail!("{what}: no data (every value is missing)");
    };
    let bottom = bars().map(|b| b.median.min(b.min)).fold(0.0, f64::min);
    let (y0, y1) = y_range(bottom, top).with_context(|| what.clone())?;

    let legend: Vec<LegendItem> = series
        .iter()
        .enumerate()
        .map(|(j, s)| LegendItem {
            label: s.label.clone(),
            swatch: Swatch::Box(palette(j)),
        })
        .collect();

    render(path, &what, |root| {
        let body = header(root, title, &legend)?;
        let n = groups.len();
        let cats = layout_categories(groups, plot_width() as f64 / n as f64)?;
        let mut chart = ChartBuilder::on(&body)
            .margin_left(MARGIN_LEFT)
            .margin_right(MARGIN_RIGHT)
            .margin_top(4)
            .margin_bottom(6)
            .x_label_area_size(cats.area)
            .y_label_area_size(Y_LABEL_AREA)
            .build_cartesian_2d(0f64..n as f64, y0..y1)
            .map_err(draw_err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_labels(8)
            .y_label_formatter(&|v| fmt_tick(*v))
            .y_desc(y_label)
            .label_style((FONT, TICK_SIZE))
            .axis_desc_style((FONT, DESC_SIZE))
            .light_line_style(WHITE)
            .bold_line_style(GRID)
            .draw()
            .map_err(draw_err)?;

        // Bars take 80% of a group, split evenly between the series.
        let k = series.len() as f64;
        let slot = 0.8 / k;
        let span = |i: usize, j: usize| {
            let x0 = i as f64 + 0.1 + j as f64 * slot;
            (x0 + slot * 0.06, x0 + slot * 0.94)
        };
        for (j, s) in series.iter().enumerate() {
            let colour = palette(j);
            for (i, v) in s.values.iter().enumerate() {
                let (a, b) = span(i, j);
                let mid = (a + b) / 2.0;
                let Some(bar) = v else {
                    let (x, y) = chart.backend_coord(&(mid, 0.0));
                    let style = text_style(SMALL_SIZE, GREY)
                        .pos(Pos::new(HPos::Left, VPos::Center))
                        .transform(FontTransform::Rotate270);
                    root.draw(&Text::new("n/a", (x, y - 4), style))
                        .map_err(draw_err)?;
                    continue;
                };
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(a, 0.0), (b, bar.median)],
                        colour.filled(),
                    )))
                    .map_err(draw_err)?;
                if bar.max > bar.min {
                    let cap = (b - a) * 0.18;
                    let style = WHISKER.stroke_width(2);
                    let lines = [
                        [(mid, bar.min), (mid, bar.max)],
                        [(mid - cap, bar.min), (mid + cap, bar.min)],
                        [(mid - cap, bar.max), (mid + cap, bar.max)],
                    ];
                    chart
                        .draw_series(lines.into_iter().map(|l| PathElement::new(l, style)))
                        .map_err(draw_err)?;
                }
            }
        }
        let centres: Vec<i32> = (0..n)
            .map(|i| chart.backend_coord(&(i as f64 + 0.5, y0)).0)
            .collect();
        let axis_y = chart.backend_coord(&(0.0, y0)).1;
        draw_categories(root, &cats, &centres, axis_y)
    })
}

/// Stacked 100% bars: one bar per label (e.g. "wordcount/fifo"), segments = fractions per level (each inner Vec has levels.len() entries summing to ~1), legend with the level names; used for the five locality levels cache_local, node_local, cache_rack_local, rack_local, off_rack (a fixed colour ramp from green = cache_local to red = off_rack).
pub fn stacked_fractions(
    path: &Path,
    title: &str,
    y_label: &str,
    bars: &[String],
    levels: &[&str],
    fractions: &[Vec<f64>],
) -> Result<()> {
    let what = format!("stacked chart {title:?}");
    ensure!(!bars.is_empty(), "{what}: no data (no bars)");
    ensure!(!levels.is_empty(), "{what}: no data (no levels)");
    ensure!(
        fractions.len() == bars.len(),
        "{what}: {} rows of fractions for {} bars",
        fractions.len(),
        bars.len()
    );
    for (label, row) in bars.iter().zip(fractions) {
        ensure!(
            row.len() == levels.len(),
            "{what}: bar {label:?} has {} fractions for {} levels",
            row.len(),
            levels.len()
        );
        ensure!(
            row.iter().all(|f| f.is_finite() && *f >= 0.0),
            "{what}: bar {label:?} has a negative or non-finite fraction {row:?}"
        );
    }
    let top = fractions
        .iter()
        .map(|row| row.iter().sum::<f64>())
        .fold(0.0, f64::max);
    ensure!(top > 0.0, "{what}: no data (every fraction is zero)");
    let y1 = top.max(1.0);
    let colours = level_colours(levels);

    let legend: Vec<LegendItem> = levels
        .iter()
        .zip(&colours)
        .map(|(l, c)| LegendItem {
            label: l.to_string(),
            swatch: Swatch::Box(*c),
        })
        .collect();

    render(path, &what, |root| {
        let body = header(root, title, &legend)?;
        let n = bars.len();
        let cats = layout_categories(bars, plot_width() as f64 / n as f64)?;
        let mut chart = ChartBuilder::on(&body)
            .margin_left(MARGIN_LEFT)
            .margin_right(MARGIN_RIGHT)
            .margin_top(4)
            .margin_bottom(6)
            .x_label_area_size(cats.area)
            .y_label_area_size(Y_LABEL_AREA)
            .build_cartesian_2d(0f64..n as f64, 0f64..y1)
            .map_err(draw_err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_labels(6)
            .y_label_formatter(&|v| format!("{:.0}%", v * 100.0))
            .y_desc(y_label)
            .label_style((FONT, TICK_SIZE))
            .axis_desc_style((FONT, DESC_SIZE))
            .light_line_style(WHITE)
            .bold_line_style(GRID)
            .draw()
            .map_err(draw_err)?;

        // Shares are written inside the segments only when every bar is wide
        // enough for "100%", so that either all bars have them or none.
        let bar_px = chart.backend_coord(&(0.86, 0.0)).0 - chart.backend_coord(&(0.14, 0.0)).0;
        let with_shares = bar_px >= text_size("100%", SMALL_SIZE)?.0 + 6;
        for (i, row) in fractions.iter().enumerate() {
            let (a, b) = (i as f64 + 0.14, i as f64 + 0.86);
            let mut acc = 0.0;
            for (f, colour) in row.iter().zip(&colours) {
                if *f <= 0.0 {
                    continue;
                }
                let (lo, hi) = (acc, acc + f);
                acc = hi;
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(a, lo), (b, hi)],
                        colour.filled(),
                    )))
                    .map_err(draw_err)?;
                let (xa, ya) = chart.backend_coord(&(a, lo));
                let (xb, yb) = chart.backend_coord(&(b, hi));
                if with_shares && ya - yb >= TICK_LINE {
                    let label = format!("{:.0}%", f * 100.0);
                    let ink = if luminance(colour) < 0.5 {
                        WHITE
                    } else {
                        BLACK
                    };
                    let style =
                        text_style(SMALL_SIZE, ink).pos(Pos::new(HPos::Center, VPos::Center));
                    root.draw(&Text::new(label, ((xa + xb) / 2, (ya + yb) / 2), style))
                        .map_err(draw_err)?;
                }
            }
        }
        let centres: Vec<i32> = (0..n)
            .map(|i| chart.backend_coord(&(i as f64 + 0.5, 0.0)).0)
            .collect();
        let axis_y = chart.backend_coord(&(0.0, 0.0)).1;
        draw_categories(root, &cats, &centres, axis_y)
    })
}

/// [`lines`] from a CSV file of `series,x,y` rows; a first row whose x
/// is not a number is a header. Each series keeps the order it first
/// appears in.
pub fn lines_from_csv(
    csv: &Path,
    out: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    x_log2: bool,
) -> Result<()> {
    let text =
        std::fs::read_to_string(csv).with_context(|| format!("cannot read {}", csv.display()))?;
    let mut series: Vec<Series> = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let [label, x, y] = f[..] else {
            bail!(
                "{}:{}: expected series,x,y, got {line:?}",
                csv.display(),
                i + 1
            );
        };
        let (Ok(x), Ok(y)) = (x.parse::<f64>(), y.parse::<f64>()) else {
            if i == 0 {
                continue; // the header
            }
            bail!(
                "{}:{}: x and y must be numbers, got {line:?}",
                csv.display(),
                i + 1
            );
        };
        match series.iter_mut().find(|s| s.label == label) {
            Some(s) => s.points.push((x, y)),
            None => series.push(Series {
                label: label.to_string(),
                points: vec![(x, y)],
            }),
        }
    }
    let fmt = |v: f64| {
        if v.fract() == 0.0 {
            format!("{v:.0}")
        } else {
            format!("{v}")
        }
    };
    lines(out, title, x_label, y_label, &series, x_log2, &fmt)
}

/// Line chart with markers, one line per series (e.g. per scheduler), for sweeps such as cache-locality rate vs cache size; `x_log2` draws the x axis in log2 scale (sizes), with tick labels formatted by `x_fmt`.
pub fn lines(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    x_log2: bool,
    x_fmt: &dyn Fn(f64) -> String,
) -> Result<()> {
    let what = format!("line chart {title:?}");
    ensure!(!series.is_empty(), "{what}: no data (no series)");
    for s in series {
        for &(x, y) in &s.points {
            ensure!(
                x.is_finite() && y.is_finite(),
                "{what}: series {:?} has a non-finite point ({x}, {y})",
                s.label
            );
            ensure!(
                !x_log2 || x > 0.0,
                "{what}: series {:?} has x = {x}, which a log2 axis cannot show",
                s.label
            );
        }
    }
    let tx = |x: f64| if x_log2 { x.log2() } else { x };
    // The points as drawn (x already in log2 when asked), sorted along x.
    let drawn: Vec<Vec<(f64, f64)>> = series
        .iter()
        .map(|s| {
            let mut p: Vec<(f64, f64)> = s.points.iter().map(|&(x, y)| (tx(x), y)).collect();
            p.sort_by(|a, b| a.0.total_cmp(&b.0));
            p
        })
        .collect();
    let all = || drawn.iter().flatten();
    let Some(x_min) = all().map(|p| p.0).reduce(f64::min) else {
        bail!("{what}: no data (every series is empty)");
    };
    let x_max = all().map(|p| p.0).fold(x_min, f64::max);
    let y_max = all().map(|p| p.1).fold(f64::MIN, f64::max);
    let y_min = all().map(|p| p.1).fold(0.0, f64::min);
    let (y0, y1) = y_range(y_min, y_max).with_context(|| what.clone())?;
    let (x0, x1) = if x_log2 {
        // Whole octaves, with a quarter octave of air so edge markers show.
        let (lo, hi) = (x_min.floor(), x_max.ceil().max(x_min.floor() + 1.0));
        (lo - 0.25, hi + 0.25)
    } else if x_max > x_min {
        let pad = (x_max - x_min) * 0.04;
        (x_min - pad, x_max + pad)
    } else {
        (x_min - 1.0, x_max + 1.0)
    };

    // As many x ticks as fit side by side, judged by the widest label.
    let tick_label = |v: f64| -> String {
        if x_log2 {
            let r = v.round();
            if (v - r).abs() < 1e-6 {
                x_fmt(r.exp2())
            } else {
                String::new()
            }
        } else {
            x_fmt(v)
        }
    };
    let mut widest = 0;
    let probes: Vec<f64> = if x_log2 {
        (x0.ceil() as i64..=x1.floor() as i64)
            .map(|v| v as f64)
            .collect()
    } else {
        (0..=8).map(|k| x0 + (x1 - x0) * k as f64 / 8.0).collect()
    };
    for v in probes {
        widest = widest.max(text_size(&tick_label(v), TICK_SIZE)?.0);
    }
    let fit = (plot_width() as i32 / (widest + 18).max(1)).max(2) as usize;
    let x_ticks = if x_log2 {
        fit.min((x1.floor() - x0.ceil()) as usize + 1)
    } else {
        fit.min(10)
    };

    let legend: Vec<LegendItem> = series
        .iter()
        .enumerate()
        .map(|(j, s)| LegendItem {
            label: s.label.clone(),
            swatch: Swatch::Line(palette(j), j),
        })
        .collect();

    render(path, &what, |root| {
        let body = header(root, title, &legend)?;
        let mut chart = ChartBuilder::on(&body)
            .margin_left(MARGIN_LEFT)
            .margin_right(MARGIN_RIGHT)
            .margin_top(4)
            .margin_bottom(6)
            .x_label_area_size(TICK_LINE as u32 + 38)
            .y_label_area_size(Y_LABEL_AREA)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(draw_err)?;
        chart
            .configure_mesh()
            .x_labels(x_ticks)
            .y_labels(8)
            .x_label_formatter(&|v| tick_label(*v))
            .y_label_formatter(&|v| fmt_tick(*v))
            .x_desc(x_label)
            .y_desc(y_label)
            .label_style((FONT, TICK_SIZE))
            .axis_desc_style((FONT, DESC_SIZE))
            .light_line_style(WHITE)
            .bold_line_style(GRID)
            .draw()
            .map_err(draw_err)?;
        for (j, points) in drawn.iter().enumerate() {
            let colour = palette(j);
            chart
                .draw_series(LineSeries::new(
                    points.iter().copied(),
                    colour.stroke_width(2),
                ))
                .map_err(draw_err)?;
            for p in points {
                draw_marker(root, chart.backend_coord(p), j, colour)?;
            }
        }
        Ok(())
    })
}

// ---------------------------------------------------------------------------
// Layout helpers

/// Width in pixels of the plotting area of every chart.
fn plot_width() -> u32 {
    WIDTH - MARGIN_LEFT - MARGIN_RIGHT - Y_LABEL_AREA
}

/// The y axis: from `lo` (at most 0) to a bit above `hi`, never empty.
fn y_range(lo: f64, hi: f64) -> Result<(f64, f64)> {
    let lo = lo.min(0.0);
    let hi = if hi > lo { hi } else { lo + 1.0 };
    let top = hi + (hi - lo) * 0.08;
    ensure!(top.is_finite(), "values too large to plot ({lo} to {hi})");
    Ok((lo, top))
}

/// A y tick: no float noise (0.30000000000000004), no needless decimals.
fn fmt_tick(v: f64) -> String {
    let a = v.abs();
    let s = if a == 0.0 || a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 0.1 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

fn palette(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Each level's colour: the fixed locality colour when the name is one of the
/// locality levels, else a step along the same green-to-red ramp.
fn level_colours(levels: &[&str]) -> Vec<RGBColor> {
    levels
        .iter()
        .enumerate()
        .map(|(i, name)| {
            LOCALITY
                .iter()
                .find(|(l, _)| l == name)
                .map(|(_, c)| *c)
                .unwrap_or_else(|| {
                    let t = if levels.len() > 1 {
                        i as f64 / (levels.len() - 1) as f64
                    } else {
                        0.0
                    };
                    ramp(t)
                })
        })
        .collect()
}

/// A point on the locality ramp, `t` = 0 (green) ..= 1 (red).
fn ramp(t: f64) -> RGBColor {
    let pos = t.clamp(0.0, 1.0) * (LOCALITY.len() - 1) as f64;
    let i = (pos.floor() as usize).min(LOCALITY.len() - 2);
    let f = pos - i as f64;
    let (a, b) = (LOCALITY[i].1, LOCALITY[i + 1].1);
    let mix = |x: u8, y: u8| (x as f64 + (y as f64 - x as f64) * f).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

fn luminance(c: &RGBColor) -> f64 {
    (0.299 * c.0 as f64 + 0.587 * c.1 as f64 + 0.114 * c.2 as f64) / 255.0
}

fn text_style(size: f64, colour: RGBColor) -> TextStyle<'static> {
    TextStyle {
        color: colour.to_backend_color(),
        ..TextStyle::from((FONT, size).into_font())
    }
}

/// Width and height in pixels of `text` at `size`.
fn text_size(text: &str, size: f64) -> Result<(i32, i32)> {
    ensure_font()?;
    let (w, h) = (FONT, size)
        .into_font()
        .box_size(text)
        .map_err(|e| anyhow!("measuring text {text:?}: {e:?}"))?;
    Ok((w as i32, h as i32))
}

fn draw_err(e: impl Display) -> anyhow::Error {
    anyhow!("drawing failed: {e}")
}

// ---------------------------------------------------------------------------
// Title and legend

enum Swatch {
    /// A filled square (bars, segments).
    Box(RGBColor),
    /// A short line with the series' marker (lines).
    Line(RGBColor, usize),
}

struct LegendItem {
    label: String,
    swatch: Swatch,
}

const SWATCH_W: i32 = 26;
const LEGEND_GAP: i32 = 22;
const LEGEND_ROW: i32 = 22;

/// Draws the title and, under it, the legend (centred rows that wrap), and
/// returns the area left for the chart.
fn header<'a>(
    root: &DrawingArea<BitMapBackend<'a>, Shift>,
    title: &str,
    legend: &[LegendItem],
) -> Result<DrawingArea<BitMapBackend<'a>, Shift>> {
    let width = WIDTH as i32 - 40;
    // Lay out the legend items in rows of at most `width` pixels.
    let mut rows: Vec<Vec<(usize, i32)>> = vec![];
    let mut row_w = 0;
    for (i, item) in legend.iter().enumerate() {
        let w = SWATCH_W + 6 + text_size(&item.label, LEGEND_SIZE)?.0;
        match rows.last_mut() {
            Some(row) if row_w + LEGEND_GAP + w <= width => {
                row_w += LEGEND_GAP + w;
                row.push((i, w));
            }
            _ => {
                rows.push(vec![(i, w)]);
                row_w = w;
            }
        }
    }

    let title_top = 10;
    root.draw(&Text::new(
        title.to_string(),
        (WIDTH as i32 / 2, title_top),
        text_style(TITLE_SIZE, BLACK).pos(Pos::new(HPos::Center, VPos::Top)),
    ))
    .map_err(draw_err)?;
    let mut y = title_top + TITLE_SIZE as i32 + 12;
    for row in &rows {
        let total: i32 =
            row.iter().map(|(_, w)| w).sum::<i32>() + LEGEND_GAP * (row.len() as i32 - 1);
        let mut x = (WIDTH as i32 - total) / 2;
        let mid = y + LEGEND_ROW / 2;
        for &(i, w) in row {
            let item = &legend[i];
            match item.swatch {
                Swatch::Box(c) => {
                    root.draw(&Rectangle::new(
                        [(x + 6, mid - 7), (x + 20, mid + 7)],
                        c.filled(),
                    ))
                    .map_err(draw_err)?;
                }
                Swatch::Line(c, shape) => {
                    root.draw(&PathElement::new(
                        vec![(x, mid), (x + SWATCH_W, mid)],
                        c.stroke_width(2),
                    ))
                    .map_err(draw_err)?;
                    draw_marker(root, (x + SWATCH_W / 2, mid), shape, c)?;
                }
            }
            root.draw(&Text::new(
                item.label.clone(),
                (x + SWATCH_W + 6, mid),
                text_style(LEGEND_SIZE, BLACK).pos(Pos::new(HPos::Left, VPos::Center)),
            ))
            .map_err(draw_err)?;
            x += w + LEGEND_GAP;
        }
        y += LEGEND_ROW;
    }
    let (_, body) = root.split_vertically(y + 6);
    Ok(body)
}

/// A series marker at a pixel position: circle, square, triangle, diamond, in turn.
fn draw_marker(
    root: &DrawingArea<BitMapBackend<'_>, Shift>,
    (x, y): (i32, i32),
    shape: usize,
    colour: RGBColor,
) -> Result<()> {
    let style = colour.filled();
    match shape % 4 {
        0 => root.draw(&Circle::new((x, y), 5, style)),
        1 => root.draw(&Rectangle::new([(x - 4, y - 4), (x + 4, y + 4)], style)),
        2 => root.draw(&Polygon::new(
            vec![(x, y - 6), (x + 6, y + 4), (x - 6, y + 4)],
            style,
        )),
        _ => root.draw(&Polygon::new(
            vec![(x, y - 6), (x + 6, y), (x, y + 6), (x - 6, y)],
            style,
        )),
    }
    .map_err(draw_err)
}

// ---------------------------------------------------------------------------
// Category (x axis) labels

/// How the category labels under a bar chart are drawn.
struct Categories {
    /// Each label's lines (one line unless wrapped).
    lines: Vec<Vec<String>>,
    /// Drawn bottom-to-top instead of left-to-right.
    vertical: bool,
    /// Only every `every`-th label is drawn (1 = all), when even vertical
    /// labels would overlap.
    every: usize,
    /// Height in pixels the labels need under the axis.
    area: u32,
}

/// Chooses horizontal, wrapped, or vertical labels for categories `slot`
/// pixels apart.
fn layout_categories(labels: &[String], slot: f64) -> Result<Categories> {
    let room = (slot - 8.0).max(1.0) as i32;
    let widths = labels
        .iter()
        .map(|l| text_size(l, TICK_SIZE).map(|s| s.0))
        .collect::<Result<Vec<_>>>()?;
    if widths.iter().all(|&w| w <= room) {
        return Ok(Categories {
            lines: labels.iter().map(|l| vec![l.clone()]).collect(),
            vertical: false,
            every: 1,
            area: (TICK_LINE + 14) as u32,
        });
    }
    let wrapped = labels
        .iter()
        .map(|l| wrap(l, room))
        .collect::<Result<Vec<_>>>()?;
    if let Some(wrapped) = wrapped.into_iter().collect::<Option<Vec<_>>>() {
        let most = wrapped.iter().map(Vec::len).max().unwrap_or(1);
        if most <= 3 {
            return Ok(Categories {
                lines: wrapped,
                vertical: false,
                every: 1,
                area: (TICK_LINE * most as i32 + 14) as u32,
            });
        }
    }
    let lines = labels
        .iter()
        .map(|l| truncate(l, MAX_VERTICAL_LABEL).map(|t| vec![t]))
        .collect::<Result<Vec<_>>>()?;
    let longest = widths
        .iter()
        .copied()
        .max()
        .unwrap_or(0)
        .min(MAX_VERTICAL_LABEL);
    Ok(Categories {
        lines,
        vertical: true,
        every: (TICK_LINE as f64 / slot).ceil().max(1.0) as usize,
        area: (longest + 16) as u32,
    })
}

/// Splits `label` after `/`, `-`, `_` or spaces into lines of at most `room`
/// pixels; `None` when some piece alone is wider.
fn wrap(label: &str, room: i32) -> Result<Option<Vec<String>>> {
    let mut pieces = vec![];
    let mut start = 0;
    for (i, c) in label.char_indices() {
        if matches!(c, '/' | '-' | '_' | ' ' | ',' | '.') {
            let end = i + c.len_utf8();
            pieces.push(&label[start..end]);
            start = end;
        }
    }
    if start < label.len() {
        pieces.push(&label[start..]);
    }
    let mut lines: Vec<String> = vec![];
    for piece in pieces {
        if let Some(last) = lines.last_mut() {
            let joined = format!("{last}{piece}");
            if text_size(joined.trim_end(), TICK_SIZE)?.0 <= room {
                *last = joined;
                continue;
            }
        }
        if text_size(piece.trim_end(), TICK_SIZE)?.0 > room {
            return Ok(None);
        }
        lines.push(piece.to_string());
    }
    Ok(Some(
        lines
            .into_iter()
            .map(|l| l.trim_end().to_string())
            .collect(),
    ))
}

/// `label` cut with `…` to at most `room` pixels.
fn truncate(label: &str, room: i32) -> Result<String> {
    if text_size(label, TICK_SIZE)?.0 <= room {
        return Ok(label.to_string());
    }
    let chars: Vec<char> = label.chars().collect();
    for keep in (1..chars.len()).rev() {
        let cut: String = chars[..keep].iter().chain(['…'].iter()).collect();
        if text_size(&cut, TICK_SIZE)?.0 <= room {
            return Ok(cut);
        }
    }
    Ok("…".to_string())
}

/// Draws the category labels centred under `centres` (pixel x), starting just
/// below the axis at pixel `axis_y`.
fn draw_categories(
    root: &DrawingArea<BitMapBackend<'_>, Shift>,
    cats: &Categories,
    centres: &[i32],
    axis_y: i32,
) -> Result<()> {
    let top = axis_y + 7;
    for (i, (lines, &x)) in cats.lines.iter().zip(centres).enumerate() {
        if i % cats.every != 0 {
            continue;
        }
        root.draw(&PathElement::new(vec![(x, axis_y), (x, axis_y + 4)], BLACK))
            .map_err(draw_err)?;
        if cats.vertical {
            let style = text_style(TICK_SIZE, BLACK)
                .pos(Pos::new(HPos::Right, VPos::Center))
                .transform(FontTransform::Rotate270);
            root.draw(&Text::new(lines[0].clone(), (x, top), style))
                .map_err(draw_err)?;
        } else {
            for (k, line) in lines.iter().enumerate() {
                let style = text_style(TICK_SIZE, BLACK).pos(Pos::new(HPos::Center, VPos::Top));
                root.draw(&Text::new(
                    line.clone(),
                    (x, top + TICK_LINE * k as i32),
                    style,
                ))
                .map_err(draw_err)?;
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Rendering, PNG output and the font

/// Draws a chart into an RGB buffer with `draw`, then writes it as PNG.
fn render(
    path: &Path,
    what: &str,
    draw: impl FnOnce(&DrawingArea<BitMapBackend<'_>, Shift>) -> Result<()>,
) -> Result<()> {
    ensure_font()?;
    let mut rgb = vec![255u8; (WIDTH * HEIGHT * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        draw(&root).with_context(|| format!("{what}: {}", path.display()))?;
        root.present().map_err(draw_err)?;
    }
    write_png(path, &rgb).with_context(|| format!("{what}: cannot write {}", path.display()))
}

fn write_png(path: &Path, rgb: &[u8]) -> Result<()> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, WIDTH, HEIGHT);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc.write_header()?;
        w.write_image_data(rgb)?;
        w.finish()?;
    }
    std::fs::write(path, out)?;
    Ok(())
}

/// Finds and registers the font once per process; later calls return the
/// first call's outcome.
fn ensure_font() -> Result<()> {
    static FONT_READY: OnceLock<Result<(), String>> = OnceLock::new();
    FONT_READY
        .get_or_init(|| register_font().map_err(|e| format!("{e:#}")))
        .clone()
        .map_err(|e| anyhow!(e))
}

fn register_font() -> Result<()> {
    let candidates: Vec<&Path> = FONT_CANDIDATES.iter().map(Path::new).collect();
    let (path, bytes) = find_font(std::env::var_os(FONT_ENV), &candidates)?;
    // plotters keeps the font for the life of the process; this runs once.
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    for family in [FONT, "serif", "monospace"] {
        plotters::style::register_font(family, FontStyle::Normal, bytes).map_err(|_| {
            anyhow!(
                "{} is not a TrueType/OpenType font (set {FONT_ENV} to another)",
                path.display()
            )
        })?;
    }
    Ok(())
}

/// The font file to use and its bytes: `env` (the value of `$MR_PLOT_FONT`)
/// when set, else the first readable candidate.
fn find_font(env: Option<OsString>, candidates: &[&Path]) -> Result<(PathBuf, Vec<u8>)> {
    if let Some(p) = env.filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        let bytes = std::fs::read(&p)
            .with_context(|| format!("{FONT_ENV}={}: cannot read the font", p.display()))?;
        return Ok((p, bytes));
    }
    for p in candidates {
        if let Ok(bytes) = std::fs::read(p) {
            return Ok((p.to_path_buf(), bytes));
        }
    }
    bail!("no TrueType font found: install fonts-dejavu-core or set {FONT_ENV}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

    fn temp_png(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mr-plot-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(format!("{name}.png"))
    }

    /// Decodes the PNG at `path` and returns (width, height, RGB pixels).
    fn decode(path: &Path) -> (u32, u32, Vec<u8>) {
        let bytes = std::fs::read(path).unwrap();
        assert!(
            bytes.starts_with(PNG_SIGNATURE),
            "not a PNG: {}",
            path.display()
        );
        assert!(
            bytes.len() > 4096,
            "suspiciously small PNG: {} bytes",
            bytes.len()
        );
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!(info.color_type, png::ColorType::Rgb);
        buf.truncate(info.buffer_size());
        (info.width, info.height, buf)
    }

    /// How many pixels of exactly `colour` lie in the middle of the image
    /// (the plot area, away from title and legend).
    fn count(path: &Path, colour: RGBColor) -> usize {
        let (w, h, px) = decode(path);
        assert_eq!((w, h), (WIDTH, HEIGHT));
        let mut n = 0;
        for y in h / 4..h * 3 / 4 {
            for x in w / 8..w * 7 / 8 {
                let i = ((y * w + x) * 3) as usize;
                if px[i..i + 3] == [colour.0, colour.1, colour.2] {
                    n += 1;
                }
            }
        }
        n
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn bar(median: f64) -> Option<Bar> {
        Some(Bar {
            median,
            min: median * 0.9,
            max: median * 1.1,
        })
    }

    #[test]
    fn grouped_bars_writes_a_png_with_bars() {
        let path = temp_png("grouped");
        let groups = strings(&["wordcount", "grep", "sort"]);
        let series = vec![
            BarSeries {
                label: "fifo".into(),
                values: vec![bar(10.0), bar(4.0), bar(20.0)],
            },
            BarSeries {
                label: "lsap".into(),
                values: vec![bar(8.0), None, bar(15.0)],
            },
        ];
        grouped_bars(&path, "job time", "seconds", &groups, &series).unwrap();
        assert!(count(&path, palette(0)) > 1000);
        assert!(count(&path, palette(1)) > 1000);
    }

    #[test]
    fn stacked_fractions_writes_a_png_with_every_level() {
        let path = temp_png("stacked");
        let bars = strings(&["wordcount/fifo", "wordcount/lsap", "grep/fifo"]);
        let levels: Vec<&str> = LOCALITY.iter().map(|(l, _)| *l).collect();
        let fractions = vec![
            vec![0.2, 0.2, 0.2, 0.2, 0.2],
            vec![0.6, 0.3, 0.1, 0.0, 0.0],
            vec![0.0, 0.1, 0.1, 0.3, 0.5],
        ];
        stacked_fractions(
            &path,
            "locality",
            "share of map tasks",
            &bars,
            &levels,
            &fractions,
        )
        .unwrap();
        for (_, colour) in LOCALITY {
            assert!(
                count(&path, colour) > 500,
                "level colour {colour:?} missing"
            );
        }
    }

    #[test]
    fn lines_writes_a_png_on_log2_and_linear_axes() {
        let series = vec![
            Series {
                label: "fifo".into(),
                points: vec![(1024.0, 0.1), (4096.0, 0.3), (16384.0, 0.7)],
            },
            Series {
                label: "clqlmrs".into(),
                points: vec![(1024.0, 0.2), (4096.0, 0.5), (16384.0, 0.9)],
            },
        ];
        for log2 in [true, false] {
            let path = temp_png(&format!("lines-{log2}"));
            lines(
                &path,
                "cache hit rate",
                "cache size",
                "rate",
                &series,
                log2,
                &|x| format!("{x:.0}"),
            )
            .unwrap();
            assert!(count(&path, palette(0)) > 200);
            assert!(count(&path, palette(1)) > 200);
        }
    }

    #[test]
    fn many_long_labels_still_render() {
        let path = temp_png("many");
        let bars: Vec<String> = (0..30)
            .map(|i| format!("a-rather-long-workload-name-{i}/scheduler"))
            .collect();
        let fractions = vec![vec![0.5, 0.5]; bars.len()];
        stacked_fractions(&path, "many", "share", &bars, &["hit", "miss"], &fractions).unwrap();
        decode(&path);
    }

    #[test]
    fn empty_data_is_an_error() {
        let path = temp_png("empty");
        let e = grouped_bars(&path, "t", "y", &[], &[]).unwrap_err();
        assert!(format!("{e:#}").contains("no data"), "{e:#}");
        let series = vec![BarSeries {
            label: "fifo".into(),
            values: vec![None],
        }];
        let e = grouped_bars(&path, "t", "y", &strings(&["a"]), &series).unwrap_err();
        assert!(format!("{e:#}").contains("no data"), "{e:#}");
        let e = stacked_fractions(&path, "t", "y", &[], &["a"], &[]).unwrap_err();
        assert!(format!("{e:#}").contains("no data"), "{e:#}");
        let e =
            stacked_fractions(&path, "t", "y", &strings(&["a"]), &["x"], &[vec![0.0]]).unwrap_err();
        assert!(format!("{e:#}").contains("no data"), "{e:#}");
        let e = lines(&path, "t", "x", "y", &[], false, &|x| x.to_string()).unwrap_err();
        assert!(format!("{e:#}").contains("no data"), "{e:#}");
        let empty = vec![Series {
            label: "fifo".into(),
            points: vec![],
        }];
        let e = lines(&path, "t", "x", "y", &empty, true, &|x| x.to_string()).unwrap_err();
        assert!(format!("{e:#}").contains("no data"), "{e:#}");
        assert!(!path.exists());
    }

    #[test]
    fn bad_input_is_an_error() {
        let path = temp_png("bad");
        let series = vec![BarSeries {
            label: "fifo".into(),
            values: vec![bar(1.0)],
        }];
        let e = grouped_bars(&path, "t", "y", &strings(&["a", "b"]), &series).unwrap_err();
        assert!(format!("{e:#}").contains("1 values for 2 groups"), "{e:#}");
        let e = stacked_fractions(&path, "t", "y", &strings(&["a"]), &["x", "y"], &[vec![1.0]])
            .unwrap_err();
        assert!(
            format!("{e:#}").contains("1 fractions for 2 levels"),
            "{e:#}"
        );
        let zero = vec![Series {
            label: "fifo".into(),
            points: vec![(0.0, 1.0)],
        }];
        let e = lines(&path, "t", "x", "y", &zero, true, &|x| x.to_string()).unwrap_err();
        assert!(format!("{e:#}").contains("log2"), "{e:#}");
        let nan = vec![Series {
            label: "fifo".into(),
            points: vec![(1.0, f64::NAN)],
        }];
        let e = lines(&path, "t", "x", "y", &nan, false, &|x| x.to_string()).unwrap_err();
        assert!(format!("{e:#}").contains("non-finite"), "{e:#}");
    }

    #[test]
    fn unwritable_path_is_an_error() {
        let path = temp_png("no-such-dir")
            .with_extension("")
            .join("x/plot.png");
        let series = vec![BarSeries {
            label: "fifo".into(),
            values: vec![bar(1.0)],
        }];
        let e = grouped_bars(&path, "t", "y", &strings(&["a"]), &series).unwrap_err();
        assert!(format!("{e:#}").contains("cannot write"), "{e:#}");
    }

    #[test]
    fn missing_font_is_a_clear_error() {
        let none = [Path::new("/nonexistent/font.ttf")];
        let e = find_font(None, &none).unwrap_err();
        assert_eq!(
            e.to_string(),
            "no TrueType font found: install fonts-dejavu-core or set MR_PLOT_FONT"
        );
        let e = find_font(Some("/nonexistent/x.ttf".into()), &none).unwrap_err();
        assert!(
            format!("{e:#}").contains("MR_PLOT_FONT=/nonexistent/x.ttf"),
            "{e:#}"
        );
        // An empty variable counts as unset.
        assert!(find_font(Some("".into()), &none).is_err());
    }

    #[test]
    fn ticks_and_colours() {
        assert_eq!(fmt_tick(0.30000000000000004), "0.3");
        assert_eq!(fmt_tick(1500.0), "1500");
        assert_eq!(fmt_tick(12.5), "12.5");
        assert_eq!(fmt_tick(0.0), "0");
        assert_eq!(ramp(0.0), LOCALITY[0].1);
        assert_eq!(ramp(1.0), LOCALITY[4].1);
        let unknown = level_colours(&["a", "b", "c", "d", "e"]);
        let known: Vec<RGBColor> = LOCALITY.iter().map(|(_, c)| *c).collect();
        assert_eq!(unknown, known);
        assert_eq!(level_colours(&["off_rack"]), vec![LOCALITY[4].1]);
    }

    /// Renders one realistic example of each chart (`plot-demo-*.png` in
    /// `MR_PLOT_DEMO_DIR`, else a scratch directory) for a person to look
    /// at, and checks that each is a PNG: `MR_PLOT_DEMO_DIR=/tmp cargo test
    /// -p cli --lib plot::tests::demo`.
    #[test]
    fn demo() {
        let dir = std::env::var_os("MR_PLOT_DEMO_DIR")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| {
                std::env::temp_dir().join(format!("mr-plot-demo-{}", std::process::id()))
            });
        std::fs::create_dir_all(&dir).unwrap();
        let workloads = strings(&["wordcount", "grep", "sort", "terasort", "join", "pagerank"]);
        let scheds = ["fifo", "fair", "delay", "lsap", "clqlmrs", "atlas"];
        let series: Vec<BarSeries> = scheds
            .iter()
            .enumerate()
            .map(|(j, s)| BarSeries {
                label: s.to_string(),
                values: (0..workloads.len())
                    .map(|i| {
                        if i == 4 && j == 2 {
                            return None;
                        }
                        let m = 20.0 + 13.0 * i as f64 - 2.5 * j as f64 + (i * j % 3) as f64;
                        Some(Bar {
                            median: m,
                            min: m * 0.93,
                            max: m * 1.08,
                        })
                    })
                    .collect(),
            })
            .collect();
        grouped_bars(
            &dir.join("plot-demo-bars.png"),
            "Job completion time (median of 5 reps, whiskers min..max)",
            "seconds",
            &workloads,
            &series,
        )
        .unwrap();

        let levels: Vec<&str> = LOCALITY.iter().map(|(l, _)| *l).collect();
        let mut bars = vec![];
        let mut fractions = vec![];
        for w in &workloads {
            for (j, s) in scheds.iter().take(4).enumerate() {
                bars.push(format!("{w}/{s}"));
                let c = 0.15 * j as f64;
                let mut row = vec![c, 0.45 - c / 2.0, 0.1, 0.3 - c / 2.0, 0.15];
                let sum: f64 = row.iter().sum();
                row.iter_mut().for_each(|f| *f /= sum);
                fractions.push(row);
            }
        }
        let few: Vec<usize> = (0..bars.len()).filter(|i| i % 4 < 3 && *i < 12).collect();
        stacked_fractions(
            &dir.join("plot-demo-locality-few.png"),
            "Map task locality (wrapped labels)",
            "share of map tasks",
            &few.iter().map(|&i| bars[i].clone()).collect::<Vec<_>>(),
            &levels,
            &few.iter()
                .map(|&i| fractions[i].clone())
                .collect::<Vec<_>>(),
        )
        .unwrap();
        stacked_fractions(
            &dir.join("plot-demo-locality.png"),
            "Map task locality",
            "share of map tasks",
            &bars,
            &levels,
            &fractions,
        )
        .unwrap();

        let sizes = [64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0, 4096.0];
        let series: Vec<Series> = scheds
            .iter()
            .enumerate()
            .map(|(j, s)| Series {
                label: s.to_string(),
                points: sizes
                    .iter()
                    .enumerate()
                    .map(|(k, &mib)| {
                        let r = (0.1 + 0.12 * k as f64 + 0.04 * j as f64).min(0.97);
                        (mib * 1024.0 * 1024.0, r)
                    })
                    .collect(),
            })
            .collect();
        lines(
            &dir.join("plot-demo-lines.png"),
            "Cache-local map tasks vs cache size",
            "cache size per worker",
            "cache-local rate",
            &series,
            true,
            &|b| {
                let mib = b / (1024.0 * 1024.0);
                if mib >= 1024.0 {
                    format!("{} GiB", mib / 1024.0)
                } else {
                    format!("{mib} MiB")
                }
            },
        )
        .unwrap();
        for name in ["bars", "locality-few", "locality", "lines"] {
            let png = std::fs::read(dir.join(format!("plot-demo-{name}.png"))).unwrap();
            assert!(png.starts_with(b"\x89PNG") && png.len() > 1000, "{name}");
        }
        if std::env::var_os("MR_PLOT_DEMO_DIR").is_none() {
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
}
