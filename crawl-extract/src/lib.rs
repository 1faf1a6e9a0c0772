#![doc = include_str!("../README.md")]

mod build;
mod charset;
mod hidden;
mod learn;
mod markdown;
mod meta;
mod quotes;
mod score;
mod shelf;
mod tag;
pub mod template;
mod tokenize;
mod tree;
mod twins;

pub use charset::decode_html;

use serde::{Deserialize, Serialize};
use url::Url;

/// What [`extract`] keeps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
#[serde(default)]
pub struct ExtractOptions {
    /// Keep only the main content (drop navigation, footers, sidebars...). Default `true`.
    pub main_content: bool,
    /// Keep text hidden with `hidden`, `aria-hidden="true"` or an inline style that hides
    /// it (`display:none`, `visibility:hidden`, `opacity:0`, `font-size:0`, clipping,
    /// off-screen positioning...) (for sites that hide real content in accordions).
    /// Default `false`: hidden text is how prompt injections ride in. Even then, an element
    /// hidden only by `display`, `visibility` or `opacity` that holds the page's `<h1>` or
    /// `<main>` and at least half of the text a reader sees with it shown (the page's text
    /// outside every such element, plus its own) is kept: a body that a script fades in.
    /// And a panel that a disclosure opens (its id named by the `aria-controls` of a toggle
    /// with `aria-expanded`: an accordion section, a FAQ answer) is kept when hidden by
    /// `hidden`, `aria-hidden`, one of those three or a zero height under `overflow:hidden`:
    /// one click shows it to any reader; so is a hidden tab panel (`role="tabpanel"`) that
    /// holds code, a documentation page's sample in another language. Not hidden text but
    /// not shown either, and kept like
    /// `<noscript>` content: a schema.org `Product`'s JSON-LD `description` (at most
    /// 20,000 bytes) is added to the main content of a page that shows less than half of
    /// it, because shops render it by script; it is the description the page declares.
    pub keep_hidden: bool,
    /// Render images as `![alt](url)`. Default `true`; `false` drops every image.
    pub images: bool,
    /// Also render images from other sites (a different registrable domain than the
    /// page's, such as tracking pixels). Default `false`: only same-site images.
    pub cross_site_images: bool,
    /// Render http(s) links as `[text](url)` (other schemes keep only their text); when
    /// `false` only their text is kept. Default `true`.
    pub links_in_markdown: bool,
}

impl Default for ExtractOptions {
    fn default() -> Self {
        ExtractOptions {
            main_content: true,
            keep_hidden: false,
            images: true,
            cross_site_images: false,
            links_in_markdown: true,
        }
    }
}

/// The result of [`extract`].
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Extracted {
    /// Main-content markdown, without front matter. In main-content mode, a page whose
    /// content comes out with fewer than 10 words (a thread or a shop built by script and
    /// fetched without it) gets its meta description after it, as plain text, when that
    /// says more.
    pub markdown: String,
    /// `<title>`, else `og:title`, else the first `<h1>`; whitespace collapsed.
    pub title: Option<String>,
    /// `<meta name="description">`, else `og:description`.
    pub description: Option<String>,
    /// `<link rel="canonical">`, made absolute.
    pub canonical: Option<Url>,
    /// `<html lang>`, else the `content-language` meta.
    pub language: Option<String>,
    /// Every `<a href>`/`<area href>` of the whole page (navigation included), resolved
    /// against `<base href>` and the page URL, http(s) only, without fragment, in
    /// document order, deduplicated.
    pub links: Vec<Link>,
    /// `<meta name="robots">` directives.
    pub meta_robots: MetaRobots,
    /// Visible text characters (non-whitespace) in the body, before main-content selection.
    pub text_len: usize,
    /// Total bytes of inline `<script>` content.
    pub script_bytes: usize,
    /// Number of `<script src>` elements.
    pub script_count: usize,
}

/// A link found on a page.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Link {
    /// Absolute http(s) URL, fragment removed.
    pub url: Url,
    /// The link's `rel` contains `nofollow`.
    pub nofollow: bool,
}

/// Directives of `<meta name="robots">`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MetaRobots {
    /// `noindex` (or `none`).
    pub noindex: bool,
    /// `nofollow` (or `none`).
    pub nofollow: bool,
}

/// Decodes the bytes of a page fetched from `page_url` ([`decode_html`]: BOM, the
/// `Content-Type` header's charset, `<meta charset>`, else UTF-8) and [`extract`]s them.
pub fn extract_bytes(
    bytes: &[u8],
    content_type: Option<&str>,
    page_url: &Url,
    opts: &ExtractOptions,
) -> Extracted {
    extract(&decode_html(bytes, content_type), page_url, opts)
}

/// The words of a text: its runs of letters and digits.
pub(crate) fn text_words(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
}

/// Extracts markdown, metadata and links from `html`, a page fetched from `page_url`.
///
/// Infallible: hostile input gives a (possibly empty) result, never a panic.
pub fn extract(html: &str, page_url: &Url, opts: &ExtractOptions) -> Extracted {
    extract_with(html, page_url, opts, learn::model())
}

fn extract_with(
    html: &str,
    page_url: &Url,
    opts: &ExtractOptions,
    model: Option<&learn::Model>,
) -> Extracted {
    let mut tree = tree::Tree::parse(html, opts);
    let base = meta::base_url(&tree, page_url);
    let mut page = page_url.clone();
    page.set_fragment(None);
    tree.address = Some(tree::Address {
        page,
        base: base.clone(),
    });
    let selection = opts.main_content.then(|| score::select(&tree));
    let refined = selection
        .as_ref()
        .zip(model)
        .and_then(|(s, m)| learn::refine(&tree, s, m));
    let md = match (&selection, &refined) {
        (Some(_), Some(r)) => markdown::Md::new(&tree, opts, &base, page_url, Some(r)).render(0),
        (Some(s), None) => {
            markdown::Md::new(&tree, opts, &base, page_url, Some(&s.removed)).render(s.root)
        }
        (None, _) => markdown::Md::new(&tree, opts, &base, page_url, None).render(0),
    };
    let md = match (&selection, tree.facts.product_description.as_deref()) {
        (Some(_), Some(d)) => with_product_description(md, d, opts, &base, page_url),
        _ => md,
    };
    let md = match &selection {
        Some(_) => with_description(md, &tree, opts, &base, page_url),
        None => md,
    };
    let mut out = meta::metadata(&tree, &base);
    out.markdown = md;
    out
}

/// Markdown of fewer words than this counts as a page that shows next to nothing.
const THIN_WORDS: usize = 10;

/// The page's markdown with its meta description added when the main content shows next
/// to nothing (fewer than [`THIN_WORDS`] words) and the description says more: a page built
/// by script and fetched without it (a forum thread whose posts a script loads, a shop's
/// app shell) still declares what it is about, and that is more than an empty document
/// tells a knowledge base. The longer of `<meta name="description">` and `og:description`
/// (sites truncate one of them), as plain text after what the markdown holds.
fn with_description(
    md: String,
    tree: &tree::Tree,
    opts: &ExtractOptions,
    base: &Url,
    page_url: &Url,
) -> String {
    let shown = md.split_whitespace().count();
    if shown >= THIN_WORDS {
        return md;
    }
    let f = &tree.facts;
    let Some(description) = [f.description.as_deref(), f.og_description.as_deref()]
        .into_iter()
        .flatten()
        .max_by_key(|d| d.split_whitespace().count())
    else {
        return md;
    };
    let said = description.split_whitespace().count();
    if said < THIN_WORDS || said <= shown {
        return md;
    }
    let text = fragment(
        &format!("<p>{}</p>", escape_html(description)),
        opts,
        base,
        page_url,
    );
    match md.trim_end() {
        "" => format!("{}\n", text.trim()),
        head => format!("{head}\n\n{}\n", text.trim()),
    }
}

/// `text` with the characters HTML gives meaning to written as references.
fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            _ => out.push(c),
        }
    }
    out
}

/// The markdown of an HTML fragment converted whole, as a page of its own.
fn fragment(html: &str, opts: &ExtractOptions, base: &Url, page_url: &Url) -> String {
    let sub_opts = ExtractOptions {
        main_content: false,
        ..opts.clone()
    };
    let sub = tree::Tree::parse(html, &sub_opts);
    markdown::Md::new(&sub, &sub_opts, base, page_url, None).render(0)
}

/// The page's markdown with its schema.org `Product` description added when the page
/// shows too little of it: a shop that renders the description by script still declares
/// it in its structured data, and it is the text a knowledge base needs of a product page.
/// Added only when it reads as text (≥ 15 words, at most 20,000 bytes) and fewer than half
/// of its distinct words are in the markdown already; it goes after the page's first heading when the markdown
/// starts with one, else first. The description may hold HTML; it is converted as a page.
fn with_product_description(
    md: String,
    description: &str,
    opts: &ExtractOptions,
    base: &Url,
    page_url: &Url,
) -> String {
    fn words(s: &str) -> std::collections::HashSet<String> {
        text_words(s).map(str::to_lowercase).collect()
    }
    if description.len() > 20_000 {
        return md;
    }
    let text = fragment(description, opts, base, page_url);
    let text = text.trim();
    if text.split_whitespace().count() < 15 {
        return md;
    }
    let (theirs, ours) = (words(text), words(&md));
    if theirs.iter().filter(|w| ours.contains(*w)).count() * 2 >= theirs.len() {
        return md;
    }
    let split = if md.starts_with('#') {
        md.find('\n').map_or(md.len(), |i| i + 1)
    } else {
        0
    };
    let (head, rest) = md.split_at(split);
    let sep = if head.is_empty() || head.ends_with("\n\n") {
        ""
    } else {
        "\n"
    };
    let tail = if rest.trim().is_empty() { "\n" } else { "\n\n" };
    format!("{head}{sep}{text}{tail}{}", rest.trim_start_matches('\n'))
}

/// Training and evaluation hooks of the learned block scorer, for
/// `examples/extract.rs` and `scripts/train-extract.py`. Not a stable API.
#[doc(hidden)]
pub mod learned {
    use super::{learn, score, tree, ExtractOptions, Extracted};
    use url::Url;

    /// A block model read from a file written by `scripts/train-extract.py`.
    #[derive(Debug)]
    pub struct BlockModel(learn::Model);

    impl BlockModel {
        /// Parses a model file; the error names what is wrong.
        pub fn parse(text: &str) -> Result<BlockModel, String> {
            learn::Model::parse(text).map(BlockModel)
        }
    }

    /// The feature names, in the order of [`block_features`]' vectors.
    pub fn feature_names() -> &'static [&'static str] {
        learn::FEATURES
    }

    /// [`super::extract`] with `model` instead of the committed one (`None`: rules only).
    pub fn extract_with(
        html: &str,
        page_url: &Url,
        opts: &ExtractOptions,
        model: Option<&BlockModel>,
    ) -> Extracted {
        super::extract_with(html, page_url, opts, model.map(|m| &m.0))
    }

    /// Every block of the page: its text (whitespace collapsed) and its features.
    pub fn block_features(html: &str, opts: &ExtractOptions) -> Vec<(String, Vec<f64>)> {
        let tree = tree::Tree::parse(html, opts);
        let sel = score::select(&tree);
        let learn::Layout { blocks, owner, .. } = learn::blocks(&tree, &sel);
        let mut texts = vec![String::new(); tree.nodes.len()];
        for (i, &o) in owner.iter().enumerate() {
            if let (Some(t), true) = (tree.text_of(i as u32), o != tree::NONE) {
                let s = &mut texts[o as usize];
                for w in t.split_whitespace() {
                    if !s.is_empty() {
                        s.push(' ');
                    }
                    s.push_str(w);
                }
            }
        }
        blocks
            .into_iter()
            .map(|b| (std::mem::take(&mut texts[b.node as usize]), b.f.to_vec()))
            .collect()
    }

    /// For every block of [`block_features`], in the same order, where it sits relative to
    /// the rules' root: `0` inside it; else `K|before|BRANCH|OWN` or `K|after|BRANCH|OWN`,
    /// where the lowest common ancestor is `K` levels above the root, `BRANCH`
    /// (`tag.class#id`) is that ancestor's child holding the block and `OWN` its child holding
    /// the root, for the analysis of content left outside.
    pub fn block_relations(html: &str, opts: &ExtractOptions) -> Vec<String> {
        let tree = tree::Tree::parse(html, opts);
        let sel = score::select(&tree);
        let learn::Layout { blocks, .. } = learn::blocks(&tree, &sel);
        let mut up = vec![u32::MAX; tree.nodes.len()];
        let (mut n, mut k) = (sel.root, 0u32);
        while n != tree::NONE {
            up[n as usize] = k;
            k += 1;
            n = tree.nodes[n as usize].parent;
        }
        blocks
            .iter()
            .map(|b| {
                let (mut n, mut child) = (b.node, tree::NONE);
                while n != tree::NONE && up[n as usize] == u32::MAX {
                    child = n;
                    n = tree.nodes[n as usize].parent;
                }
                if n == sel.root || n == tree::NONE || child == tree::NONE {
                    return "0".to_string();
                }
                let side = if b.node < sel.root { "before" } else { "after" };
                let mut mine = sel.root;
                while tree.nodes[mine as usize].parent != n {
                    mine = tree.nodes[mine as usize].parent;
                }
                format!(
                    "{}|{side}|{}|{}",
                    up[n as usize],
                    describe(&tree, child),
                    describe(&tree, mine)
                )
            })
            .collect()
    }

    /// `tag.class#id` of node `n`, for the analysis tables.
    fn describe(tree: &tree::Tree, n: u32) -> String {
        let mut s = tree.tag(n).map_or(String::new(), |t| format!("{t:?}"));
        if let Some(a) = tree.attrs(n) {
            if !a.class.is_empty() {
                s.push('.');
                s.push_str(&a.class.split_whitespace().collect::<Vec<_>>().join("."));
            }
            if !a.id.is_empty() {
                s.push('#');
                s.push_str(&a.id);
            }
        }
        s
    }

    /// For every block of [`block_features`], in the same order, its ancestry up to the
    /// rules' root (or the document root): `tag.class#id` from the block outwards, joined
    /// with ` < `, for the analysis of which blocks are chrome.
    pub fn block_paths(html: &str, opts: &ExtractOptions) -> Vec<String> {
        let tree = tree::Tree::parse(html, opts);
        let sel = score::select(&tree);
        let learn::Layout { blocks, .. } = learn::blocks(&tree, &sel);
        blocks
            .iter()
            .map(|b| {
                let mut parts = Vec::new();
                let mut n = b.node;
                while n != tree::NONE {
                    parts.push(describe(&tree, n));
                    if n == sel.root {
                        break;
                    }
                    n = tree.nodes[n as usize].parent;
                }
                parts.join(" < ")
            })
            .collect()
    }
}

#[cfg(test)]
mod safety;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_docs;
#[cfg(test)]
mod tests_learn;
