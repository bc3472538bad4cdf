//! How the importers size content the provider bills but the log does not hold as text
//! ([`Item::Unseen`](crate::model::Item::Unseen)): the providers' published rules for images, and
//! the dimensions of an image read from the first bytes of its base64 data.
//!
//! - **Anthropic** (Claude's vision guide, <https://docs.anthropic.com/en/docs/build-with-claude/vision>):
//!   an image costs about `width · height / 750` tokens; one whose long edge is over 1568 px is
//!   scaled down (aspect ratio kept) until it is not, and no image costs more than about 1600
//!   tokens ([`ANTHROPIC_IMAGE_CAP`]).
//! - **OpenAI** ([`openai`]): per model family, 512-px tiles (a base plus tokens per tile) or 32-px
//!   patches (times a multiplier), from OpenAI's vision guide.
//!
//! Where the log does not give the dimensions (a URL, a truncated or unknown encoding) a
//! documented default stands in: [`ANTHROPIC_IMAGE_DEFAULT`], [`openai::DEFAULT_SIZE`]
//! (docs/unseen-context.md). Pure: no I/O.

use base64::Engine as _;

use crate::model::Tokens;

pub mod openai;

/// The most an image costs on Anthropic's API, tokens (vision guide: "about 1,600").
pub const ANTHROPIC_IMAGE_CAP: Tokens = 1600;

/// What an image of unknown size is counted as on Anthropic's API: the cap, which a screenshot
/// (the usual image in an agent's log) reaches.
pub const ANTHROPIC_IMAGE_DEFAULT: Tokens = ANTHROPIC_IMAGE_CAP;

/// Tokens of a `width × height` image on Anthropic's API.
pub fn anthropic_image_tokens(width: u32, height: u32) -> Tokens {
    let (w, h) = scaled_to(f64::from(width), f64::from(height), 1568.0, f64::max);
    ((w * h / 750.0).ceil() as Tokens).min(ANTHROPIC_IMAGE_CAP)
}

/// `(w, h)` scaled down, aspect ratio kept, so that `edge(w, h)` is at most `limit`.
fn scaled_to(w: f64, h: f64, limit: f64, edge: fn(f64, f64) -> f64) -> (f64, f64) {
    let e = edge(w, h);
    if e <= limit || e <= 0.0 { (w, h) } else { (w * limit / e, h * limit / e) }
}

/// Bytes decoded from the start of base64 data: enough for any header [`image_dimensions`]
/// reads, without decoding a large image whole.
const HEADER_BYTES: usize = 64 * 1024;

/// Width and height of the image whose base64 data is `data` (PNG, GIF, JPEG or WebP), or `None`
/// when the data is not base64 or its header is not one of those.
pub fn base64_image_dimensions(data: &str) -> Option<(u32, u32)> {
    let data = data.trim();
    let chars = (HEADER_BYTES / 3 * 4).min(data.len() / 4 * 4);
    let prefix = data.get(..chars)?;
    let bytes = base64::engine::general_purpose::STANDARD.decode(prefix).ok()?;
    image_dimensions(&bytes)
}

/// Width and height from the header of a PNG, GIF, JPEG or WebP file.
pub fn image_dimensions(b: &[u8]) -> Option<(u32, u32)> {
    let be16 = |i: usize| Some(u32::from(u16::from_be_bytes([*b.get(i)?, *b.get(i + 1)?])));
    let le16 = |i: usize| Some(u32::from(u16::from_le_bytes([*b.get(i)?, *b.get(i + 1)?])));
    let be32 = |i: usize| Some(u32::from_be_bytes(b.get(i..i + 4)?.try_into().ok()?));
    if b.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Some((be32(16)?, be32(20)?));
    }
    if b.starts_with(b"GIF8") {
        return Some((le16(6)?, le16(8)?));
    }
    if b.starts_with(b"RIFF") && b.get(8..12) == Some(b"WEBP") {
        return webp_dimensions(b);
    }
    if b.starts_with(&[0xff, 0xd8]) {
        // JPEG: walk the segments to the first start-of-frame (SOF0-SOF15 but DHT, JPG, DAC).
        let mut i = 2;
        while i + 4 <= b.len() {
            if b[i] != 0xff {
                return None;
            }
            let marker = b[i + 1];
            if marker == 0xff {
                i += 1;
                continue;
            }
            let is_frame = (0xc0..=0xcf).contains(&marker) && ![0xc4, 0xc8, 0xcc].contains(&marker);
            if is_frame {
                return Some((be16(i + 7)?, be16(i + 5)?));
            }
            i += 2 + usize::try_from(be16(i + 2)?).ok()?;
        }
    }
    None
}

/// Width and height of a WebP image (lossy `VP8 `, lossless `VP8L` or extended `VP8X`).
fn webp_dimensions(b: &[u8]) -> Option<(u32, u32)> {
    let le24 = |i: usize| Some(u32::from_le_bytes([*b.get(i)?, *b.get(i + 1)?, *b.get(i + 2)?, 0]));
    match b.get(12..16)? {
        b"VP8X" => Some((le24(24)? + 1, le24(27)? + 1)),
        b"VP8 " => {
            let w = u32::from(u16::from_le_bytes([*b.get(26)?, *b.get(27)?])) & 0x3fff;
            let h = u32::from(u16::from_le_bytes([*b.get(28)?, *b.get(29)?])) & 0x3fff;
            Some((w, h))
        }
        b"VP8L" => {
            let bits = u32::from_le_bytes(b.get(21..25)?.try_into().ok()?);
            Some(((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anthropic_images_cost_area_over_750_scaled_to_1568_and_capped() {
        // The vision guide's table: 200×200 ≈ 54, 1000×1000 ≈ 1334, 1092×1092 ≈ 1590.
        assert_eq!(anthropic_image_tokens(200, 200), 54);
        assert_eq!(anthropic_image_tokens(1000, 1000), 1334);
        assert_eq!(anthropic_image_tokens(1092, 1092), 1590);
        // 2000×1000 is scaled to 1568×784 (1640 tokens), then capped.
        assert_eq!(anthropic_image_tokens(2000, 1000), ANTHROPIC_IMAGE_CAP);
        assert_eq!(anthropic_image_tokens(0, 0), 0);
    }

    #[test]
    fn dimensions_are_read_from_png_gif_jpeg_and_webp_headers() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        png.extend_from_slice(&2000u32.to_be_bytes());
        png.extend_from_slice(&1008u32.to_be_bytes());
        assert_eq!(image_dimensions(&png), Some((2000, 1008)));
        assert_eq!(image_dimensions(b"GIF89a\x20\x03\x58\x02"), Some((800, 600)));
        // SOI, an APP0 segment of 4 bytes, then SOF0: length, precision, height 480, width 640.
        let jpeg = [0xff, 0xd8, 0xff, 0xe0, 0, 4, 0, 0, 0xff, 0xc0, 0, 17, 8, 0x01, 0xe0, 0x02, 0x80];
        assert_eq!(image_dimensions(&jpeg), Some((640, 480)));
        let mut webp = b"RIFF\0\0\0\0WEBPVP8X\x0a\0\0\0\0\0\0\0".to_vec();
        webp.extend_from_slice(&[0x1f, 0x03, 0, 0x57, 0x02, 0]); // 800 - 1, 600 - 1
        assert_eq!(image_dimensions(&webp), Some((800, 600)));
        assert_eq!(image_dimensions(b"not an image"), None);
        assert_eq!(image_dimensions(&png[..20]), None, "a cut header is no size");
    }

    #[test]
    fn base64_data_is_decoded_only_as_far_as_the_header() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        png.extend_from_slice(&640u32.to_be_bytes());
        png.extend_from_slice(&480u32.to_be_bytes());
        png.extend(std::iter::repeat_n(0u8, 200_000));
        let data = base64::engine::general_purpose::STANDARD.encode(&png);
        assert_eq!(base64_image_dimensions(&data), Some((640, 480)));
        assert_eq!(base64_image_dimensions("%%%not base64%%%"), None);
        assert_eq!(base64_image_dimensions(""), None);
    }
}
