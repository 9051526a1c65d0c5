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

mod bars;
mod canvas;
mod categories;
mod font;
mod legend;
mod line_chart;
mod style;
#[cfg(test)]
mod tests;

use std::ffi::OsString;
use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{anyhow, bail, ensure, Context, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub use bars::{grouped_bars, stacked_fractions};
pub use font::FONT_CANDIDATES;
pub use line_chart::{lines, lines_from_csv};

use canvas::*;
use categories::*;
use font::*;
use legend::*;
use style::*;

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
