//! The PNG backend: plotters' bitmap backend with its text drawn again. plotters 0.3.7 draws each
//! glyph of an ab_glyph font at the pen position without the glyph's left side bearing (and at a
//! whole pixel), so the gaps between letters follow each letter's bearings instead of the font's
//! spacing: "con text win dow". [`PngBackend`] hands every shape to the bitmap backend unchanged
//! and lays text out itself: each glyph outlined at its exact (fractional) pen position, advances
//! and kerning from the font, in the same box and at the same baseline as plotters puts it, so
//! anchors and sizes (and [`DrawingBackend::estimate_text_size`]) stay what the charts measure.

use std::sync::OnceLock;

use ab_glyph::{Font, FontRef, ScaleFont, point};
use plotters::prelude::*;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind};

/// The embedded font, parsed once.
fn font() -> Option<&'static FontRef<'static>> {
    static FONT: OnceLock<Option<FontRef<'static>>> = OnceLock::new();
    FONT.get_or_init(|| FontRef::try_from_slice(super::FONT_BYTES).ok()).as_ref()
}

/// A bitmap backend whose text keeps the font's glyph advance.
pub struct PngBackend<'a> {
    inner: BitMapBackend<'a>,
}

impl<'a> PngBackend<'a> {
    /// A backend drawing into `buffer`, RGB rows of `size`.
    pub fn with_buffer(buffer: &'a mut [u8], size: (u32, u32)) -> PngBackend<'a> {
        PngBackend { inner: BitMapBackend::with_buffer(buffer, size) }
    }
}

/// Each pixel of `text` at `size` pixels from the pen at x 0 on the baseline at y `size / 2` (where
/// plotters puts it), with its coverage, in drawing order.
pub fn glyph_pixels(text: &str, size: f64, mut pixel: impl FnMut(i32, i32, f32)) {
    let Some(font) = font() else { return };
    let scaled = font.as_scaled(size as f32);
    let baseline = (size / 2.0) as f32;
    let mut caret = 0f32;
    let mut previous = None;
    for c in text.chars() {
        let id = scaled.glyph_id(c);
        if let Some(p) = previous {
            caret += scaled.kern(p, id);
        }
        let glyph = id.with_scale_and_position(scaled.scale(), point(caret, baseline));
        if let Some(outlined) = font.outline_glyph(glyph) {
            let bounds = outlined.px_bounds();
            let (x0, y0) = (bounds.min.x as i32, bounds.min.y as i32);
            outlined.draw(|x, y, coverage| pixel(x0 + x as i32, y0 + y as i32, coverage));
        }
        caret += scaled.h_advance(id);
        previous = Some(id);
    }
}

impl DrawingBackend for PngBackend<'_> {
    type ErrorType = <BitMapBackend<'static> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        (iw, ih): (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.blit_bitmap(pos, (iw, ih), src)
    }

    /// Text placed as plotters' own `draw_text` places it (the same layout box, anchor and
    /// rotation), each glyph drawn by [`glyph_pixels`].
    fn draw_text<TStyle: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let ((min_x, min_y), (max_x, max_y)) =
            style.layout_box(text).map_err(|e| DrawingErrorKind::FontError(Box::new(e)))?;
        let (width, height) = (max_x - min_x, max_y - min_y);
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -width,
            HPos::Center => -width / 2,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -height / 2,
            VPos::Bottom => -height,
        };
        let transform = style.transform();
        let (w, h) = self.get_size();
        let mut result = Ok(());
        glyph_pixels(text, style.size(), |x, y, coverage| {
            if result.is_err() {
                return;
            }
            let (x, y) = transform.transform(x + dx - min_x, y + dy - min_y);
            let (x, y) = (pos.0 + x, pos.1 + y);
            if x >= 0 && x < w as i32 && y >= 0 && y < h as i32 {
                let alpha = color.alpha * f64::from(coverage.clamp(0.0, 1.0));
                result = self.inner.draw_pixel((x, y), BackendColor { alpha, rgb: color.rgb });
            }
        });
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::{Chart, DrawResult, FONT};
    use plotters::coord::Shift;

    /// One label, drawn at 20 px.
    struct Label(&'static str);

    impl Chart for Label {
        fn title(&self) -> &str {
            self.0
        }

        fn size(&self) -> (u32, u32) {
            (400, 48)
        }

        fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
        where
            DB::ErrorType: 'static,
        {
            root.draw(&Text::new(self.0, (ORIGIN, 14), (FONT, LABEL).into_font()))?;
            Ok(())
        }
    }

    /// The label's size and where it starts.
    const LABEL: f64 = 20.0;
    const ORIGIN: i32 = 10;

    /// Which columns of an RGB image `width` pixels wide hold ink (a channel under 128).
    fn inked(pixels: &[u8], width: usize) -> Vec<bool> {
        let mut columns = vec![false; width];
        for (i, px) in pixels.chunks(3).enumerate() {
            if px.iter().any(|c| *c < 128) {
                columns[i % width] = true;
            }
        }
        columns
    }

    /// The first and last inked column.
    fn ink_span(columns: &[bool]) -> (usize, usize) {
        let first = columns.iter().position(|c| *c).expect("some ink");
        (first, columns.iter().rposition(|c| *c).unwrap())
    }

    fn decoded(png: &[u8]) -> Vec<u8> {
        let mut reader = ::png::Decoder::new(std::io::Cursor::new(png)).read_info().unwrap();
        let mut buffer = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buffer).unwrap();
        buffer.truncate(info.buffer_size());
        buffer
    }

    /// The font's advance for `text` at `size`: the sum of its glyphs' advances and kerning.
    fn advance(text: &str, size: f64) -> f32 {
        let scaled = font().unwrap().as_scaled(size as f32);
        let ids: Vec<_> = text.chars().map(|c| scaled.glyph_id(c)).collect();
        ids.iter().map(|id| scaled.h_advance(*id)).sum::<f32>()
            + ids.windows(2).map(|w| scaled.kern(w[0], w[1])).sum::<f32>()
    }

    /// Where the font puts the ink of each letter of `text` drawn from x `origin`: its left and
    /// right edge in pixels.
    fn ink_edges(text: &str, size: f64, origin: f32) -> Vec<(f32, f32)> {
        let font = font().unwrap();
        let scaled = font.as_scaled(size as f32);
        let mut caret = origin;
        let mut previous = None;
        let mut edges = Vec::new();
        for c in text.chars() {
            let id = scaled.glyph_id(c);
            if let Some(p) = previous {
                caret += scaled.kern(p, id);
            }
            if let Some(o) = font.outline(id) {
                let k = scaled.h_scale_factor();
                edges.push((caret + o.bounds.min.x * k, caret + o.bounds.max.x * k));
            }
            caret += scaled.h_advance(id);
            previous = Some(id);
        }
        edges
    }

    /// Whether each letter's ink is where the font puts it: the middle column of every space of
    /// at least 2 px the font leaves between two letters is blank, and the middle column of every
    /// letter is inked. A glyph drawn without its side bearing moves by one or two pixels, into
    /// the space beside it.
    fn letters_in_place(columns: &[bool], text: &str, size: f64, origin: f32) -> Result<(), String> {
        let edges = ink_edges(text, size, origin);
        for (i, (left, right)) in edges.iter().enumerate() {
            let middle = ((left + right) / 2.0) as usize;
            if !columns[middle] {
                return Err(format!("letter {i} of {text:?}: no ink at column {middle}"));
            }
            if let Some((next, _)) = edges.get(i + 1).filter(|(next, _)| next - right >= 2.0) {
                let space = ((right + next) / 2.0) as usize;
                if columns[space] {
                    return Err(format!(
                        "{text:?}: ink at column {space}, between letters {i} and {}",
                        i + 1
                    ));
                }
            }
        }
        Ok(())
    }

    #[test]
    fn a_rendered_label_is_as_wide_as_the_fonts_advance_with_no_gap_inside_a_word() {
        // Each letter where the font puts it ([`letters_in_place`]), and the ink as wide as the
        // font's advance less the first letter's left and the last one's right bearing (about a
        // pixel each): within 3 px of it.
        for word in ["contextwindow", "tokens", "SUMMARY_THRESHOLD", "get_reservation_details"] {
            let png = crate::chart::png(&Label(word)).unwrap();
            let columns = inked(&decoded(&png), 400);
            let (first, last) = ink_span(&columns);
            let ink = (last - first + 1) as f32;
            let advance = advance(word, LABEL);
            assert!((ink - advance).abs() <= 3.0, "{word}: ink {ink} px, advance {advance:.1} px");
            letters_in_place(&columns, word, LABEL, ORIGIN as f32).unwrap();
        }
    }

    #[test]
    fn plotters_own_bitmap_text_fails_the_placement_check() {
        // The check above can fail: plotters' bitmap backend drops each glyph's side bearing.
        let label = Label("contextwindow");
        let (w, h) = label.size();
        let mut pixels = vec![255u8; (w * h * 3) as usize];
        {
            crate::chart::fonts().unwrap();
            let root = BitMapBackend::with_buffer(&mut pixels, (w, h)).into_drawing_area();
            label.draw(&root).unwrap();
            root.present().unwrap();
        }
        let columns = inked(&pixels, w as usize);
        assert!(letters_in_place(&columns, "contextwindow", LABEL, ORIGIN as f32).is_err());
    }
}
