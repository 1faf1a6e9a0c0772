//! `auto` render mode: does a page fetched over plain HTTP need a browser?
//!
//! A cheap byte scan of the raw HTML (no DOM) plus two numbers the extractor already computed.
//! It errs on the side of not rendering: a page with real text is left alone even when it
//! carries a framework's marker.

/// Visible text below which a page counts as "little text".
const LITTLE_TEXT: usize = 200;
/// A framework marker only triggers a render when the page has less text than this.
const MARKER_TEXT: usize = 500;
/// Inline script bytes that count as "big script" next to little text.
const BIG_SCRIPT: usize = 1_000;

/// App-root ids of common single-page-app shells.
const APP_ROOT_IDS: &[&str] = &["root", "app", "__next", "__nuxt", "___gatsby", "svelte"];

/// Phrases of a `<noscript>` that asks for JavaScript (lowercase).
const ENABLE_JS_PHRASES: &[&str] = &[
    "enable javascript",
    "javascript enabled",
    "javascript is required",
    "javascript is disabled",
    "requires javascript",
    "turn on javascript",
    "need javascript",
    "without javascript",
];

/// Markers of client-rendered frameworks (lowercase).
const FRAMEWORK_MARKERS: &[&str] = &[
    "<app-root",
    "ng-version=",
    "data-reactroot",
    "__next_data__",
    "window.__nuxt__",
    "data-server-rendered",
    "ember-application",
    "data-v-app",
    "__sveltekit",
    "id=\"___gatsby\"",
];

/// Why a page probably needs JavaScript to show its content, or `None` when plain HTTP is
/// enough.
///
/// `text_len` is the visible text length and `script_bytes` the inline script size the
/// extractor measured. Reasons are stable codes stored in the document's `render_reason`:
/// `"empty_app_root"`, `"noscript_enable_js"`, `"framework_marker"`,
/// `"little_text_big_script"`.
pub fn needs_render(html: &str, text_len: usize, script_bytes: usize) -> Option<&'static str> {
    let lower = html.to_ascii_lowercase();
    if has_empty_app_root(&lower) {
        return Some("empty_app_root");
    }
    if noscript_asks_for_js(&lower) {
        return Some("noscript_enable_js");
    }
    if text_len < MARKER_TEXT && FRAMEWORK_MARKERS.iter().any(|m| lower.contains(m)) {
        return Some("framework_marker");
    }
    if text_len < LITTLE_TEXT && script_bytes >= BIG_SCRIPT && script_bytes > text_len * 5 {
        return Some("little_text_big_script");
    }
    None
}

/// `<div id="root"></div>` and friends: an app root with nothing but whitespace inside.
fn has_empty_app_root(lower: &str) -> bool {
    for id in APP_ROOT_IDS {
        for attr in [
            format!("id=\"{id}\""),
            format!("id='{id}'"),
            format!("id={id}>"),
            format!("id={id} "),
        ] {
            let mut from = 0;
            while let Some(pos) = lower[from..].find(&attr) {
                let at = from + pos;
                from = at + attr.len();
                if in_tag(lower, at) && element_is_empty(lower, at) {
                    return true;
                }
            }
        }
    }
    // Angular's shell: <app-root></app-root>.
    lower
        .find("<app-root")
        .is_some_and(|at| element_is_empty(lower, at))
}

/// Whether byte `at` sits inside a start tag (a `<` before it with no `>` in between).
fn in_tag(lower: &str, at: usize) -> bool {
    let before = &lower[..at];
    match (before.rfind('<'), before.rfind('>')) {
        (Some(lt), Some(gt)) => lt > gt,
        (Some(_), None) => true,
        _ => false,
    }
}

/// Whether the element whose start tag contains byte `at` has only whitespace before its next
/// tag, and that tag closes it.
fn element_is_empty(lower: &str, at: usize) -> bool {
    let Some(gt) = lower[at..].find('>') else {
        return false;
    };
    let rest = &lower[at + gt + 1..];
    let Some(lt) = rest.find('<') else {
        return false;
    };
    rest[..lt].trim().is_empty() && rest[lt..].starts_with("</")
}

/// A `<noscript>` whose text asks the reader to enable JavaScript.
fn noscript_asks_for_js(lower: &str) -> bool {
    let mut from = 0;
    while let Some(pos) = lower[from..].find("<noscript") {
        let start = from + pos;
        let end = lower[start..]
            .find("</noscript")
            .map_or(lower.len(), |e| start + e);
        let body = &lower[start..end];
        if ENABLE_JS_PHRASES.iter().any(|p| body.contains(p)) {
            return true;
        }
        from = end.max(start + 1);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rough text length: characters outside tags, scripts and styles.
    fn text_len(html: &str) -> usize {
        let lower = html.to_ascii_lowercase();
        let bytes = lower.as_bytes();
        let mut n = 0;
        let mut in_tag = false;
        let mut skip_until: Option<&[u8]> = None;
        let mut i = 0;
        while i < bytes.len() {
            let rest = &bytes[i..];
            if let Some(end) = skip_until {
                if rest.starts_with(end) {
                    skip_until = None;
                } else {
                    i += 1;
                    continue;
                }
            }
            if rest.starts_with(b"<script") {
                skip_until = Some(b"</script");
            } else if rest.starts_with(b"<style") {
                skip_until = Some(b"</style");
            }
            match bytes[i] {
                b'<' => in_tag = true,
                b'>' => in_tag = false,
                c if !in_tag && !c.is_ascii_whitespace() => n += 1,
                _ => {}
            }
            i += 1;
        }
        n
    }

    /// Rough inline script bytes.
    fn script_bytes(html: &str) -> usize {
        let lower = html.to_ascii_lowercase();
        let mut n = 0;
        let mut from = 0;
        while let Some(s) = lower[from..].find("<script") {
            let start = from + s;
            let Some(gt) = lower[start..].find('>') else {
                break;
            };
            let body = start + gt + 1;
            let end = lower[body..]
                .find("</script")
                .map_or(lower.len(), |e| body + e);
            n += end - body + 1;
            from = end;
        }
        n
    }

    fn check(html: &str) -> Option<&'static str> {
        needs_render(html, text_len(html), script_bytes(html))
    }

    const BUNDLE: &str = "<script>var a=1;</script>";

    #[test]
    fn empty_react_root_triggers() {
        let html = format!(
            "<html><head><title>App</title></head><body><div id=\"root\"></div>{BUNDLE}\
             <script src=\"/static/js/main.js\"></script></body></html>"
        );
        assert_eq!(check(&html), Some("empty_app_root"));
    }

    #[test]
    fn empty_app_roots_of_other_frameworks_trigger() {
        for html in [
            "<body><div id='app'>\n  </div></body>",
            "<body><div id=\"__next\"></div></body>",
            "<body><div class=x id=app></div></body>",
            "<body><app-root></app-root></body>",
        ] {
            assert_eq!(check(html), Some("empty_app_root"), "{html}");
        }
    }

    #[test]
    fn filled_app_root_does_not_trigger() {
        let text = "Installation guide. ".repeat(40);
        let html =
            format!("<body><div id=\"root\"><main><p>{text}</p></main></div>{BUNDLE}</body>");
        assert_eq!(check(&html), None);
    }

    #[test]
    fn noscript_asking_for_javascript_triggers() {
        let html = "<body><noscript>You need to enable JavaScript to run this app.</noscript>\
                    <div id=\"main\">Loading…</div></body>";
        assert_eq!(check(html), Some("noscript_enable_js"));
    }

    #[test]
    fn tracking_pixel_noscript_does_not_trigger() {
        let text = "A paragraph of real documentation text. ".repeat(20);
        let html = format!(
            "<body><noscript><img src=\"https://t.example/p.gif\"></noscript><p>{text}</p></body>"
        );
        assert_eq!(check(&html), None);
    }

    #[test]
    fn framework_marker_with_little_text_triggers() {
        let html =
            "<html ng-version=\"17.0.0\"><body><nav>Home</nav><my-app></my-app></body></html>";
        assert_eq!(check(html), Some("framework_marker"));
    }

    #[test]
    fn server_rendered_next_page_with_text_does_not_trigger() {
        let text = "Server-rendered article text that is long enough. ".repeat(20);
        let html = format!(
            "<body><div id=\"__next\"><article>{text}</article></div>\
             <script id=\"__NEXT_DATA__\" type=\"application/json\">{{}}</script></body>"
        );
        assert_eq!(check(&html), None);
    }

    #[test]
    fn little_text_big_script_triggers() {
        let script = format!("<script>{}</script>", "render();".repeat(300));
        let html = format!("<body><div id=\"content\">Loading</div>{script}</body>");
        assert_eq!(check(&html), Some("little_text_big_script"));
    }

    #[test]
    fn docs_page_with_a_little_script_does_not_trigger() {
        let text = "The configure command writes a config file. ".repeat(30);
        let html = format!(
            "<!doctype html><html><head><title>Docs</title>\
             <script>window.dataLayer=window.dataLayer||[];function gtag(){{dataLayer.push(arguments)}}</script>\
             </head><body><nav><a href=\"/\">Home</a></nav><main><h1>Configure</h1><p>{text}</p>\
             <pre><code>kb-crawl configure</code></pre></main>\
             <noscript>Search needs JavaScript.</noscript></body></html>"
        );
        assert_eq!(check(&html), None);
    }

    #[test]
    fn id_text_outside_tags_is_ignored() {
        let text = "Write id=\"root\"> in your page. ".repeat(20);
        let html = format!("<body><p>{text}</p></body>");
        assert_eq!(check(&html), None);
    }
}
