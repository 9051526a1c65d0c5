//! Scales, ticks, colours and text sizes every chart shares.

use super::*;

/// Width in pixels of the plotting area of every chart.
pub(super) fn plot_width() -> u32 {
    WIDTH - MARGIN_LEFT - MARGIN_RIGHT - Y_LABEL_AREA
}

/// The y axis: from `lo` (at most 0) to a bit above `hi`, never empty.
pub(super) fn y_range(lo: f64, hi: f64) -> Result<(f64, f64)> {
    let lo = lo.min(0.0);
    let hi = if hi > lo { hi } else { lo + 1.0 };
    let top = hi + (hi - lo) * 0.08;
    ensure!(top.is_finite(), "values too large to plot ({lo} to {hi})");
    Ok((lo, top))
}

/// A y tick: no float noise (0.30000000000000004), no needless decimals.
pub(super) fn fmt_tick(v: f64) -> String {
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

pub(super) fn palette(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Each level's colour: the fixed locality colour when the name is one of the
/// locality levels, else a step along the same green-to-red ramp.
pub(super) fn level_colours(levels: &[&str]) -> Vec<RGBColor> {
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
pub(super) fn ramp(t: f64) -> RGBColor {
    let pos = t.clamp(0.0, 1.0) * (LOCALITY.len() - 1) as f64;
    let i = (pos.floor() as usize).min(LOCALITY.len() - 2);
    let f = pos - i as f64;
    let (a, b) = (LOCALITY[i].1, LOCALITY[i + 1].1);
    let mix = |x: u8, y: u8| (x as f64 + (y as f64 - x as f64) * f).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

pub(super) fn luminance(c: &RGBColor) -> f64 {
    (0.299 * c.0 as f64 + 0.587 * c.1 as f64 + 0.114 * c.2 as f64) / 255.0
}

pub(super) fn text_style(size: f64, colour: RGBColor) -> TextStyle<'static> {
    TextStyle {
        color: colour.to_backend_color(),
        ..TextStyle::from((FONT, size).into_font())
    }
}

/// Width and height in pixels of `text` at `size`.
pub(super) fn text_size(text: &str, size: f64) -> Result<(i32, i32)> {
    ensure_font()?;
    let (w, h) = (FONT, size)
        .into_font()
        .box_size(text)
        .map_err(|e| anyhow!("measuring text {text:?}: {e:?}"))?;
    Ok((w as i32, h as i32))
}

pub(super) fn draw_err(e: impl Display) -> anyhow::Error {
    anyhow!("drawing failed: {e}")
}
