//! The title and the legend above a chart, and the series' markers.

use super::*;

pub(super) enum Swatch {
    /// A filled square (bars, segments).
    Box(RGBColor),
    /// A short line with the series' marker (lines).
    Line(RGBColor, usize),
}

pub(super) struct LegendItem {
    pub(super) label: String,
    pub(super) swatch: Swatch,
}

pub(super) const SWATCH_W: i32 = 26;
pub(super) const LEGEND_GAP: i32 = 22;
pub(super) const LEGEND_ROW: i32 = 22;

/// Draws the title and, under it, the legend (centred rows that wrap), and
/// returns the area left for the chart.
pub(super) fn header<'a>(
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
pub(super) fn draw_marker(
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
