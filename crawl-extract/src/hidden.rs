//! Whether an inline `style` hides an element from a sighted reader: the ways text is
//! kept in a page's markup but off its visible face, which is how prompt injections ride
//! into a knowledge base.
//!
//! Only inline `style` attributes are read (stylesheets are not fetched). Classes such as
//! `sr-only` or `visually-hidden` are deliberately not treated as hidden: their text is
//! written for screen-reader users (link purposes, icon labels) and is part of the page
//! they read; and any class can hide text through a stylesheet, so a class list would give
//! no real protection. The one exception is a class that shows its element only on paper
//! ([`print_only`]): no screen shows that text, and no screen reader reads it.

/// `true` when the declarations in `style` make the element's content invisible:
/// `display:none`, `visibility:hidden|collapse`, `opacity` near 0 (unless animated),
/// `font-size:0`,
/// `color:transparent`, `transform:scale(0)`, a `clip` rectangle or `clip-path` that
/// leaves nothing, positioning or `text-indent` far off-screen, or a box of at most 1px
/// (or 0 height) with `overflow:hidden`.
pub(crate) fn style_hides(style: &str) -> bool {
    let compact: String = style
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    let mut positioned = false;
    let mut transparent = false;
    let mut animated = false;
    let mut off_screen = false;
    let mut overflow_hidden = false;
    let (mut width, mut height) = (None, None);
    for decl in compact.split(';') {
        let Some((prop, value)) = decl.split_once(':') else {
            continue;
        };
        let value = value.trim_end_matches("!important");
        let hides = match prop {
            "display" => value == "none",
            "visibility" => value == "hidden" || value == "collapse",
            "opacity" => {
                transparent |= number(value).is_some_and(|(n, unit)| {
                    let n = if unit == "%" { n / 100.0 } else { n };
                    n <= 0.05
                });
                false
            }
            "transform" | "-webkit-transform" | "transition" | "animation" | "will-change"
                if !value.contains("scale(0)") =>
            {
                animated = true;
                false
            }
            "font-size" => number(value).is_some_and(|(n, _)| n <= 0.0),
            "color" => value == "transparent",
            "transform" => value.contains("scale(0)") || value.contains("scale(0,0)"),
            "clip" => value.strip_prefix("rect(").is_some_and(|r| {
                let nums: Vec<f64> = r
                    .trim_end_matches(')')
                    .split([',', 'p', 'x'])
                    .filter_map(|t| t.parse().ok())
                    .collect();
                nums.iter().all(|n| n.abs() <= 1.0)
            }),
            "clip-path" => {
                value.starts_with("circle(0")
                    || value.starts_with("ellipse(0")
                    || value
                        .strip_prefix("inset(")
                        .and_then(|v| number(v.trim_end_matches(')')))
                        .is_some_and(|(n, unit)| unit == "%" && n >= 50.0)
            }
            "text-indent" => number(value).is_some_and(far_off),
            "position" => {
                positioned = value == "absolute" || value == "fixed";
                false
            }
            "left" | "top" | "right" | "bottom" | "margin-left" | "margin-top" => {
                off_screen |= number(value).is_some_and(far_off);
                false
            }
            "overflow" | "overflow-x" | "overflow-y" => {
                overflow_hidden |= value == "hidden" || value == "clip";
                false
            }
            "width" | "max-width" => {
                width = number(value).map(|(n, _)| n);
                false
            }
            "height" | "max-height" => {
                height = number(value).map(|(n, _)| n);
                false
            }
            _ => false,
        };
        if hides {
            return true;
        }
    }
    let tiny = |d: Option<f64>| d.is_some_and(|n| n <= 1.0);
    // `opacity:0` beside a transform or transition is the first frame of an entrance
    // animation that scripts play on load (Webflow and the like): visible to readers.
    (transparent && !animated)
        || (positioned && off_screen)
        || (overflow_hidden && (height.is_some_and(|h| h <= 0.0) || (tiny(width) && tiny(height))))
}

/// For a `style` that [`style_hides`]: `true` when it hides only by the properties a script
/// flips to show an element (`display:none`, `visibility:hidden`, `opacity:0`): a state,
/// not a way to hide text for good (font-size 0, transparent colour, clipping, off-screen or
/// 1px boxes are).
pub(crate) fn style_toggles(style: &str) -> bool {
    !hides_without(style, &["display", "visibility", "opacity"])
}

/// Whether `style` still hides with the declarations of `props` left out.
fn hides_without(style: &str, props: &[&str]) -> bool {
    let rest: Vec<&str> = style
        .split(';')
        .filter(|d| {
            let prop = d.split(':').next().unwrap_or("").trim();
            !props.iter().any(|p| prop.eq_ignore_ascii_case(p))
        })
        .collect();
    style_hides(&rest.join(";"))
}

/// For a `style` that [`style_hides`]: `true` when it hides only the way an accordion
/// keeps a panel closed: the toggled properties of [`style_toggles`], or a zero
/// `height`/`max-height` under `overflow:hidden` (the state a collapse animation starts
/// from), with no width of a pixel or less (the screen-reader-only box).
pub(crate) fn style_collapses(style: &str) -> bool {
    if style_toggles(style) {
        return true;
    }
    let (mut zero_height, mut overflow_hidden, mut thin) = (false, false, false);
    for d in style.split(';') {
        let (prop, value) = d.split_once(':').unwrap_or((d, ""));
        let value = value.trim().to_ascii_lowercase();
        let size = number(value.trim_end_matches("!important").trim()).map(|(n, _)| n);
        match prop.trim().to_ascii_lowercase().as_str() {
            "height" | "max-height" => zero_height |= size.is_some_and(|n| n <= 0.0),
            "overflow" | "overflow-y" => {
                overflow_hidden |= value.starts_with("hidden") || value.starts_with("clip")
            }
            "width" | "max-width" => thin |= size.is_some_and(|n| n <= 1.0),
            _ => {}
        }
    }
    zero_height
        && overflow_hidden
        && !thin
        && !hides_without(
            style,
            &[
                "display",
                "visibility",
                "opacity",
                "height",
                "max-height",
                "overflow",
                "overflow-y",
            ],
        )
}

/// A length far outside the viewport: -1000px or more to the left/top (-60em, -100%).
fn far_off((n, unit): (f64, &str)) -> bool {
    match unit {
        "em" | "rem" => n <= -60.0,
        "%" | "vw" | "vh" => n <= -100.0,
        _ => n <= -999.0,
    }
}

/// The leading number of a CSS value and its unit (`-9999px` → (-9999, "px")).
fn number(v: &str) -> Option<(f64, &str)> {
    let end = v
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || c == '.' || (i == 0 && (c == '-' || c == '+'))))
        .map_or(v.len(), |(i, _)| i);
    let n: f64 = v[..end].parse().ok()?;
    let unit = v[end..].split([',', ' ', ')']).next().unwrap_or("");
    Some((n, unit))
}

/// `true` when the class list `class` shows its element only when the page is printed:
/// a print-only token (`onlyprint`, sphinx-book-theme's copy of the title and table of
/// contents; `print-only`, `u-only-print`), Bootstrap 3's `visible-print*`, Foundation's
/// `show-for-print`, or Bootstrap 4's `d-none` beside a `d-print-*` with no breakpoint
/// that shows it on a screen (`d-md-block`).
pub(crate) fn print_only(class: &str) -> bool {
    if !class
        .as_bytes()
        .windows(5)
        .any(|w| w.eq_ignore_ascii_case(b"print"))
    {
        return false;
    }
    let (mut none, mut print, mut shown) = (false, false, false);
    for tok in class.split_ascii_whitespace() {
        let t = tok.to_ascii_lowercase();
        let t = t.replace('_', "-");
        if ["onlyprint", "printonly", "only-print", "print-only"]
            .iter()
            .any(|e| t == *e || t.ends_with(&format!("-{e}")))
            || t.starts_with("visible-print")
            || t == "show-for-print"
        {
            return true;
        }
        if t == "d-none" {
            none = true;
        } else if let Some(rest) = t.strip_prefix("d-") {
            let (bp, display) = rest.split_once('-').unwrap_or(("", rest));
            if bp == "print" {
                print |= display != "none";
            } else if matches!(bp, "sm" | "md" | "lg" | "xl" | "xxl") && display != "none" {
                shown = true;
            }
        }
    }
    none && print && !shown
}

#[cfg(test)]
mod tests {
    use super::{print_only, style_collapses, style_hides};

    #[test]
    fn collapsing_styles() {
        for s in [
            "display:none",
            "height:0;overflow:hidden",
            "overflow: hidden; height: 0px; visibility: hidden",
            "max-height: 0; overflow-y: hidden",
        ] {
            assert!(style_hides(s) && style_collapses(s), "{s}");
        }
        for s in [
            "font-size:0",
            "height:0;overflow:hidden;position:absolute;left:-9999px",
            "width:1px;height:1px;overflow:hidden",
            "clip-path: inset(50%)",
        ] {
            assert!(style_hides(s) && !style_collapses(s), "{s}");
        }
    }

    #[test]
    fn print_only_classes() {
        for c in [
            "onlyprint",
            "u-only-print rs_skip",
            "print-only",
            "printonly",
            "visible-print-block header-print page-header",
            "show-for-print",
            "container d-none d-print-block",
        ] {
            assert!(print_only(c), "{c}");
        }
        for c in [
            "d-print-none",
            "noprint",
            "post-view__authors d-lg-none d-print-block",
            "d-none d-md-block d-print-block",
            "print-button",
            "hidden-print",
            "",
        ] {
            assert!(!print_only(c), "{c}");
        }
    }

    #[test]
    fn hiding_styles() {
        for s in [
            "display: none",
            "visibility:hidden",
            "opacity:0",
            "opacity: .0",
            "opacity:0%",
            "font-size:0",
            "font-size: 0px !important",
            "color: transparent",
            "transform: scale(0)",
            "position:absolute; left:-9999px",
            "position: fixed; top: -10000px",
            "position:absolute;left:-100em",
            "text-indent:-9999px",
            "position:absolute;clip:rect(0,0,0,0)",
            "clip: rect(1px, 1px, 1px, 1px)",
            "clip-path: inset(50%)",
            "clip-path:circle(0)",
            "width:1px;height:1px;overflow:hidden",
            "height:0;overflow:hidden",
        ] {
            assert!(style_hides(s), "{s}");
        }
        for s in [
            "",
            "color:red",
            "opacity:0.9",
            "font-size:0.9em",
            "left:-9999px",
            "position:absolute;left:-20px",
            "position:relative;left:10px",
            "clip-path:inset(10%)",
            "overflow:hidden",
            "width:100px;height:100px;overflow:hidden",
            "text-indent:2em",
            "transform:scale(1.05)",
            "opacity:0;transform:translate3d(0,60px,0)",
            "transition:opacity .3s;opacity:0",
        ] {
            assert!(!style_hides(s), "{s}");
        }
    }
}
