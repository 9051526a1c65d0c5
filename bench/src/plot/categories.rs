//! Category (x axis) labels: wrapped, truncated or turned vertical to fit.

use super::*;

/// How the category labels under a bar chart are drawn.
pub(super) struct Categories {
    /// Each label's lines (one line unless wrapped).
    pub(super) lines: Vec<Vec<String>>,
    /// Drawn bottom-to-top instead of left-to-right.
    pub(super) vertical: bool,
    /// Only every `every`-th label is drawn (1 = all), when even vertical
    /// labels would overlap.
    pub(super) every: usize,
    /// Height in pixels the labels need under the axis.
    pub(super) area: u32,
}

/// Chooses horizontal, wrapped, or vertical labels for categories `slot`
/// pixels apart.
pub(super) fn layout_categories(labels: &[String], slot: f64) -> Result<Categories> {
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
pub(super) fn wrap(label: &str, room: i32) -> Result<Option<Vec<String>>> {
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
pub(super) fn truncate(label: &str, room: i32) -> Result<String> {
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
pub(super) fn draw_categories(
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
