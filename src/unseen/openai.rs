//! OpenAI's rules for the tokens of an image input, per model family, from OpenAI's "Images and
//! vision" guide, section "Calculating costs"
//! (<https://platform.openai.com/docs/guides/images-vision#calculating-costs>), and the image
//! parts of the OpenAI formats (`image_url`, `input_image`) read into what the rules need.
//!
//! - **Tiles** (gpt-5 and gpt-5-chat-latest 70 + 140; gpt-4o, gpt-4.1, gpt-4.5 85 + 170;
//!   gpt-4o-mini 2833 + 5667; o1, o1-pro, o3 75 + 150; computer-use-preview 65 + 129): at
//!   `detail: "low"` an image costs the base; otherwise it is fitted within 2048 × 2048, scaled
//!   down so its short side is at most 768 px, and costs the base plus the tile tokens per 512-px
//!   tile of the result.
//! - **Patches** (gpt-5-mini and gpt-4.1-mini × 1.62, gpt-5-nano and gpt-4.1-nano × 2.46,
//!   o4-mini × 1.72): the 32-px patches that cover the image, scaled down (whole patches) to at
//!   most 1536, times the model's multiplier, rounded to the nearest token (the guide does not
//!   say how it rounds). The guide ties `detail` to the tile rule only, so it changes nothing here.
//!
//! `detail: "auto"` or no detail counts as high. A model the guide does not name is sized by the
//! gpt-4o rule; an image whose size the log does not hold (a URL, a file id, data whose header is
//! not PNG, GIF, JPEG or WebP) as a [`DEFAULT_SIZE`] image by its model's rule. Pure: no I/O.

use serde_json::Value;

use super::{base64_image_dimensions, scaled_to};
use crate::model::{Item, Tokens, UnseenKind};

/// What an image of unknown size is counted as: a 1024 × 1024 image (765 tokens on gpt-4o at
/// high detail: scaled to 768 × 768, four tiles).
pub const DEFAULT_SIZE: (u32, u32) = (1024, 1024);

/// How a model family turns an image into tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rule {
    /// A base cost plus a cost per 512-px tile.
    Tiles {
        /// Tokens of every image (all of a low-detail one).
        base: Tokens,
        /// Tokens per tile.
        tile: Tokens,
    },
    /// The 32-px patches covering the image (at most 1536), times a multiplier.
    Patches {
        /// Tokens per patch.
        multiplier: f64,
    },
}

/// The detail an image is sent at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Detail {
    /// `"low"`: a 512 × 512 rendition, the base cost on tile models.
    Low,
    /// `"high"`, `"auto"` or none given.
    #[default]
    High,
}

/// An image as an OpenAI log gives it: its size when the data holds it, and its detail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OpenAiImage {
    /// Width and height read from the image's header, when the log holds its data.
    pub size: Option<(u32, u32)>,
    /// The detail it is sent at.
    pub detail: Detail,
}

impl OpenAiImage {
    /// The image of a content part: Chat's `{"type": "image_url", "image_url": {"url", "detail"}}`
    /// (or `image_url` a string), the Responses API's and Codex's `{"type": "input_image",
    /// "image_url", "detail"}`. Only a `data:` URL of base64 data gives a size.
    pub fn of_part(part: &Value) -> OpenAiImage {
        let field = part.get("image_url");
        let url = field.and_then(|u| u.as_str().or_else(|| u.get("url")?.as_str()));
        let detail = part.get("detail").or_else(|| field?.get("detail")).and_then(Value::as_str);
        OpenAiImage {
            size: url.and_then(data_url_dimensions),
            detail: if detail == Some("low") { Detail::Low } else { Detail::High },
        }
    }

    /// Its tokens when sent to `model` (`None`: unknown).
    pub fn tokens(&self, model: Option<&str>) -> Tokens {
        rule_for(model).tokens(self.size.unwrap_or(DEFAULT_SIZE), self.detail)
    }
}

/// Width and height of the image in a `data:<type>;base64,<data>` URL.
fn data_url_dimensions(url: &str) -> Option<(u32, u32)> {
    let (header, data) = url.strip_prefix("data:")?.split_once(',')?;
    header.ends_with(";base64").then(|| base64_image_dimensions(data))?
}

/// The rule of the model named `model` (a provider prefix such as `openai/` is ignored; case is
/// not significant). Names are matched by family: `gpt-5.2-codex` is gpt-5's, `gpt-5.1-codex-mini`
/// gpt-5-mini's, `codex-mini-latest` o4-mini's (it is a fine-tune of o4-mini).
pub fn rule_for(model: Option<&str>) -> Rule {
    const GPT_4O: Rule = Rule::Tiles { base: 85, tile: 170 };
    let Some(model) = model else { return GPT_4O };
    let name = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
    let family = |prefix: &str| {
        name.strip_prefix(prefix).is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '.']))
    };
    let patches = |multiplier| Rule::Patches { multiplier };
    if family("gpt-5") || family("gpt-4.1") {
        if name.contains("-nano") {
            return patches(2.46);
        }
        if name.contains("-mini") {
            return patches(1.62);
        }
        return if family("gpt-5") { Rule::Tiles { base: 70, tile: 140 } } else { GPT_4O };
    }
    if family("o4-mini") || family("codex-mini") {
        return patches(1.72);
    }
    if family("gpt-4o-mini") {
        return Rule::Tiles { base: 2833, tile: 5667 };
    }
    if family("o1") || family("o3") {
        return Rule::Tiles { base: 75, tile: 150 };
    }
    if family("computer-use-preview") {
        return Rule::Tiles { base: 65, tile: 129 };
    }
    GPT_4O
}

impl Rule {
    /// Tokens of a `width × height` image sent at `detail`.
    pub fn tokens(self, (width, height): (u32, u32), detail: Detail) -> Tokens {
        match self {
            Rule::Tiles { base, .. } if detail == Detail::Low => base,
            Rule::Tiles { base, tile } => base + tile * tiles(width, height),
            Rule::Patches { multiplier } => (patches(width, height) as f64 * multiplier).round() as Tokens,
        }
    }
}

/// The 512-px tiles of an image fitted within 2048 × 2048, then scaled down to a short side of
/// at most 768 px.
fn tiles(width: u32, height: u32) -> Tokens {
    let (w, h) = scaled_to(f64::from(width), f64::from(height), 2048.0, f64::max);
    let (w, h) = scaled_to(w, h, 768.0, f64::min);
    let tiles = |side: f64| (side / 512.0).ceil().max(1.0) as Tokens;
    tiles(w) * tiles(h)
}

/// The most patches an image is given.
const MAX_PATCHES: f64 = 1536.0;

/// The 32-px patches that cover an image, after scaling it down to fit whole patches within
/// [`MAX_PATCHES`] (the guide's steps A to C).
fn patches(width: u32, height: u32) -> Tokens {
    let (w, h) = (f64::from(width), f64::from(height));
    // A ratio scaled to whole patches lands on integers up to rounding: never round that up.
    let cover = |side: f64| (side / 32.0 - 1e-9).ceil().max(0.0);
    let raw = cover(w) * cover(h);
    if raw <= MAX_PATCHES {
        return raw as Tokens;
    }
    let r = (32.0 * 32.0 * MAX_PATCHES / (w * h)).sqrt();
    // A side keeps at least one patch (the guide's floor makes a very thin image's scale 0).
    let whole = |side: f64| (side * r / 32.0).floor().max(1.0) / (side * r / 32.0);
    let r = r * whole(w).min(whole(h));
    (cover(w * r) * cover(h * r)).min(MAX_PATCHES) as Tokens
}

/// Sizes the OpenAI image items of `items`: each [`Item::Unseen`] of kind image, in order, holds
/// the images of one entry of `images`, sent with the first request after it that names its
/// model (the call that first sends them), else with `fallback`.
pub fn size_images(items: &mut [Item], images: &[Vec<OpenAiImage>], fallback: Option<&str>) {
    let mut left = images.len();
    let mut model: Option<String> = None;
    for item in items.iter_mut().rev() {
        match item {
            Item::Request(r) if r.model.is_some() => model.clone_from(&r.model),
            Item::Unseen { kind: UnseenKind::Image, tokens } if left > 0 => {
                left -= 1;
                let model = model.as_deref().or(fallback);
                *tokens = images[left].iter().map(|image| image.tokens(model)).sum();
            }
            _ => {}
        }
    }
    debug_assert_eq!(left, 0, "one image item per list of images");
}

#[cfg(test)]
mod tests;
