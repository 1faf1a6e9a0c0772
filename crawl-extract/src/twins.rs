//! Responsive twins: the same block written twice, once for wide screens and once for
//! narrow ones, each hidden at the other's breakpoints by a class (Bootstrap's `d-none
//! d-md-block` beside `d-md-none`, Tailwind's `hidden md:block` beside `md:hidden`,
//! Squarespace's `hidden-down-md` beside `hidden-up-md`, Elementor's `elementor-hidden-*`,
//! Framer's `ssr-variant`s).
//! A reader sees one of them; the markdown carried both, so a product's description or a
//! page's menu came out twice. The stylesheet is not read, so which copy a given screen
//! shows is unknown: the first in document order is kept. Also here: the copies of slides
//! that carousel libraries add so a carousel can loop ([`carousel_clone`]).

use std::borrow::Cow;
use std::collections::HashSet;

use super::markdown::subtree_end;
use super::tree::{Kind, Tree};

/// Text (bytes, whitespace collapsed) a block needs to be taken for a twin.
const TWIN_MIN: usize = 20;

/// Screen sizes the frameworks name in their breakpoint classes.
const BREAKPOINTS: &[&str] = &["xs", "sm", "md", "lg", "xl", "xxl", "2xl"];
/// Display values a breakpoint class can show an element with.
const DISPLAYS: &[&str] = &[
    "block",
    "flex",
    "grid",
    "inline",
    "inline-block",
    "inline-flex",
    "table",
    "contents",
];
/// Device words of hand-named visibility classes (`mobile-only`, `hide-desktop`).
const DEVICES: &[&str] = &["mobile", "desktop", "tablet", "phone"];
/// Words that make a device word a visibility switch rather than a component's name
/// (`mobile-menu` names a menu; `mobile-only` says where it shows).
const SWITCHES: &[&str] = &[
    "only", "hide", "hidden", "show", "visible", "for", "on", "display",
];

/// Substrings one of which every class [`responsive`] accepts holds.
const RESPONSIVE_MARKS: &[&str] = &[
    "hid",
    "visible",
    "d-",
    ":",
    "show-for",
    "mobile",
    "desktop",
    "tablet",
    "phone",
    "ssr-variant",
];

/// Whether `class` shows its element at some screen sizes and hides it at others.
pub(crate) fn responsive(class: &str) -> bool {
    // Every class below holds one of these marks (the frameworks write them in lower
    // case): one pass over the attribute rules out nearly every element before any token
    // is cut. Every mark starts with one of the letters matched.
    let b = class.as_bytes();
    let marked = (0..b.len()).any(|i| {
        let rest = &b[i..];
        match b[i] {
            b':' => true,
            b'd' | b'h' | b'm' | b'p' | b's' | b't' | b'v' => RESPONSIVE_MARKS
                .iter()
                .any(|m| rest.starts_with(m.as_bytes())),
            _ => false,
        }
    });
    if !marked {
        return false;
    }
    let (mut none, mut shown) = (false, false);
    for tok in class.split_ascii_whitespace() {
        // Most class names are lower-case already: copy only those that are not.
        let t: Cow<str> = if tok.bytes().any(|b| b.is_ascii_uppercase() || b == b'_') {
            Cow::Owned(tok.to_ascii_lowercase().replace('_', "-"))
        } else {
            Cow::Borrowed(tok)
        };
        let t = &*t;
        // Bootstrap 4 and 5: `d-md-none` hides from a size up; `d-none` with a
        // `d-lg-block` shows only from one.
        if t == "d-none" {
            none = true;
            continue;
        }
        if let Some((bp, display)) = t.strip_prefix("d-").and_then(|r| r.split_once('-')) {
            if BREAKPOINTS.contains(&bp) {
                if display == "none" {
                    return true;
                }
                shown |= DISPLAYS.contains(&display);
            }
            continue;
        }
        // Tailwind: `md:hidden`, or `hidden` with `md:block`.
        if t == "hidden" {
            none = true;
            continue;
        }
        if let Some((bp, display)) = t.split_once(':') {
            let bp = bp.strip_prefix("max-").unwrap_or(bp);
            if BREAKPOINTS.contains(&bp) {
                if display == "hidden" {
                    return true;
                }
                shown |= DISPLAYS.contains(&display);
            }
            continue;
        }
        // Bootstrap 3 (`hidden-xs`, `visible-md-block`), Squarespace (`hidden-up-md`).
        for prefix in ["hidden-", "visible-", "hidden-up-", "hidden-down-"] {
            if let Some(rest) = t.strip_prefix(prefix) {
                let bp = rest.split('-').next().unwrap_or("");
                if BREAKPOINTS.contains(&bp) {
                    return true;
                }
            }
        }
        // Framer renders one `ssr-variant` of a block per breakpoint.
        if t == "ssr-variant" {
            return true;
        }
        // Elementor (`elementor-hidden-mobile`), Bulma (`is-hidden-touch`), Foundation
        // (`show-for-small-only`, `hide-for-large`; not `show-for-sr`, a screen reader's).
        if t.starts_with("elementor-hidden-")
            || t.starts_with("is-hidden-")
            || ["show-for-", "hide-for-"].iter().any(|p| {
                t.strip_prefix(p).is_some_and(|r| {
                    ["small", "medium", "large", "xlarge"]
                        .iter()
                        .any(|s| r.starts_with(s))
                })
            })
        {
            return true;
        }
        // Named by hand: a device and a switch (`mobile-only`, `hide-on-desktop`).
        let (mut device, mut switch) = (false, false);
        for w in t.split('-') {
            device |= DEVICES.contains(&w);
            switch |= SWITCHES.contains(&w);
        }
        if device && switch {
            return true;
        }
    }
    none && shown
}

/// Class names carousel libraries give the copies of slides they add so the carousel can
/// loop (Slick, Swiper, Splide, Glide, Tiny Slider, bxSlider).
const CLONE_CLASSES: &[&str] = &[
    "slick-cloned",
    "swiper-slide-duplicate",
    "splide__slide--clone",
    "glide__slide--clone",
    "tns-slide-cloned",
    "bx-clone",
];

/// Whether `class` marks a copy of a carousel slide that its library inserted (Owl
/// Carousel's is `cloned` on an `owl-item`): the slide it copies is in the page already.
pub(crate) fn carousel_clone(class: &str) -> bool {
    if !(class.contains("clone") || class.contains("duplicate")) {
        return false;
    }
    let mut owl = (false, false);
    for tok in class.split_ascii_whitespace() {
        if CLONE_CLASSES.iter().any(|c| tok.eq_ignore_ascii_case(c)) {
            return true;
        }
        owl.0 |= tok.eq_ignore_ascii_case("owl-item");
        owl.1 |= tok.eq_ignore_ascii_case("cloned");
    }
    owl.0 && owl.1
}

/// Marks as hidden every responsive block whose text an earlier responsive block outside
/// it already holds, word for word. Returns whether any was.
pub(crate) fn hide_twins(tree: &mut Tree) -> bool {
    let len = tree.nodes.len() as u32;
    // Texts are compared by a 64-bit hash of their words and their length: a false match
    // needs two different blocks of equal length to collide.
    let mut seen: HashSet<(u64, usize)> = HashSet::new();
    let mut twins = Vec::new();
    let mut n = 1;
    while n < len {
        let node = &tree.nodes[n as usize];
        let responsive_block = !node.hidden
            && matches!(node.kind, Kind::Element { .. })
            && tree.attrs(n).is_some_and(|a| responsive(&a.class));
        if !responsive_block {
            n += 1;
            continue;
        }
        // Only the outermost responsive block of a branch is compared (so each node's
        // text is read once): the blocks inside it go or stay with it.
        let end = subtree_end(tree, n);
        let key = text_key(tree, n, end);
        if key.1 >= TWIN_MIN && !seen.insert(key) {
            twins.push(n);
        }
        n = end;
    }
    for &t in &twins {
        tree.nodes[t as usize].hidden = true;
    }
    !twins.is_empty()
}

/// FNV-1a hash and length of the text of nodes `n + 1 .. end`, its words joined by single
/// spaces (whitespace collapsed, as a reader sees it).
pub(crate) fn text_key(tree: &Tree, n: u32, end: u32) -> (u64, usize) {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0100_0000_01b3;
    let (mut h, mut len) = (OFFSET, 0usize);
    for i in n + 1..end {
        if let Some(t) = tree.text_of(i) {
            for w in t.split_whitespace() {
                let space: &[u8] = if len > 0 { b" " } else { b"" };
                for &b in space.iter().chain(w.as_bytes()) {
                    h = (h ^ u64::from(b)).wrapping_mul(PRIME);
                }
                len += space.len() + w.len();
            }
        }
    }
    (h, len)
}

#[cfg(test)]
mod tests {
    use super::{carousel_clone, responsive};

    #[test]
    fn carousel_clones() {
        for c in [
            "slick-slide slick-cloned",
            "swiper-slide swiper-slide-duplicate",
            "owl-item cloned",
            "splide__slide splide__slide--clone",
        ] {
            assert!(carousel_clone(c), "{c}");
        }
        for c in [
            "slick-slide",
            "owl-item active",
            "cloned",
            "swiper-slide-active",
            "",
        ] {
            assert!(!carousel_clone(c), "{c}");
        }
    }

    #[test]
    fn breakpoint_visibility_classes() {
        for c in [
            "d-none d-md-block",
            "col-12 d-lg-none",
            "hidden md:block",
            "lg:hidden",
            "max-md:hidden",
            "hidden-xs",
            "visible-md-block",
            "product-description hidden-up-md",
            "elementor-element elementor-hidden-mobile",
            "is-hidden-touch",
            "show-for-small-only",
            "hide-for-large",
            "nav mobile-only",
            "hide-on-desktop",
            "header-display-mobile",
            "ssr-variant hidden-12t0irv",
        ] {
            assert!(responsive(c), "{c}");
        }
        for c in [
            "d-none",
            "hidden",
            "md:flex",
            "d-md-flex",
            "col-md-6",
            "mobile-menu",
            "desktop",
            "field--label-hidden",
            "overflow-hidden",
            "show-for-sr",
            "visible",
            "",
        ] {
            assert!(!responsive(c), "{c}");
        }
    }
}
