//! A chart drawn into an RGB buffer and written as PNG.

use super::*;

/// Draws a chart into an RGB buffer with `draw`, then writes it as PNG.
pub(super) fn render(
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

pub(super) fn write_png(path: &Path, rgb: &[u8]) -> Result<()> {
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
