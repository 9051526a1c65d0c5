//! The bar charts: bars grouped by workload, and 100% bars split into
//! levels.

use super::*;

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
