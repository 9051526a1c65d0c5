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
    let e = stacked_fractions(&path, "t", "y", &strings(&["a"]), &["x"], &[vec![0.0]]).unwrap_err();
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
