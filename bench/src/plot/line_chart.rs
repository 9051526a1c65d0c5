//! The line charts, from points or from a CSV file.

use super::*;

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
    check_points(&what, series, x_log2)?;
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
    let (x0, x1) = x_range(x_min, x_max, x_log2);
    let tick_label = |v: f64| x_tick_label(v, x_log2, x_fmt);
    let x_ticks = x_ticks(x0, x1, x_log2, &tick_label)?;

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

/// Every point finite, and positive along a log2 x axis.
fn check_points(what: &str, series: &[Series], x_log2: bool) -> Result<()> {
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
    Ok(())
}

/// The x axis's span around the drawn points (in log2 when asked).
fn x_range(x_min: f64, x_max: f64, x_log2: bool) -> (f64, f64) {
    if x_log2 {
        // Whole octaves, with a quarter octave of air so edge markers show.
        let (lo, hi) = (x_min.floor(), x_max.ceil().max(x_min.floor() + 1.0));
        (lo - 0.25, hi + 0.25)
    } else if x_max > x_min {
        let pad = (x_max - x_min) * 0.04;
        (x_min - pad, x_max + pad)
    } else {
        (x_min - 1.0, x_max + 1.0)
    }
}

/// An x tick's label; on a log2 axis whole octaves only.
fn x_tick_label(v: f64, x_log2: bool, x_fmt: &dyn Fn(f64) -> String) -> String {
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
}

/// As many x ticks as fit side by side, judged by the widest label.
fn x_ticks(x0: f64, x1: f64, x_log2: bool, tick_label: &dyn Fn(f64) -> String) -> Result<usize> {
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
    Ok(if x_log2 {
        fit.min((x1.floor() - x0.ceil()) as usize + 1)
    } else {
        fit.min(10)
    })
}
