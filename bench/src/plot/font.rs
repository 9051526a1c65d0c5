//! The TrueType font the labels are drawn with, found at run time.

use super::*;

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

pub(super) const FONT_ENV: &str = "MR_PLOT_FONT";
pub(super) const FONT: &str = "sans-serif";

/// Finds and registers the font once per process; later calls return the
/// first call's outcome.
pub(super) fn ensure_font() -> Result<()> {
    static FONT_READY: OnceLock<Result<(), String>> = OnceLock::new();
    FONT_READY
        .get_or_init(|| register_font().map_err(|e| format!("{e:#}")))
        .clone()
        .map_err(|e| anyhow!(e))
}

pub(super) fn register_font() -> Result<()> {
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
pub(super) fn find_font(env: Option<OsString>, candidates: &[&Path]) -> Result<(PathBuf, Vec<u8>)> {
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
