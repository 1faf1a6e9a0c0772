//! Compact arena DOM built in one tokenizer pass.
//!
//! Nodes are stored in document order (a parent always has a smaller index than
//! its children), so bottom-up passes are a reverse walk over the vector and
//! top-down passes a forward walk: nothing here recurses. Depth is capped at
//! [`MAX_DEPTH`]; deeper elements are flattened into their ancestor.

pub(crate) use super::tag::Tag;

/// Deepest element nesting kept in the tree.
pub(crate) const MAX_DEPTH: usize = 256;
/// Sentinel for "no node".
pub(crate) const NONE: u32 = u32::MAX;

/// Attributes kept on elements.
#[derive(Debug, Clone, Default)]
pub(crate) struct Attrs {
    pub(crate) id: Box<str>,
    pub(crate) class: Box<str>,
    pub(crate) href: Option<Box<str>>,
    pub(crate) src: Option<Box<str>>,
    pub(crate) alt: Box<str>,
    pub(crate) role: Box<str>,
    /// `data-lang`/`data-language`, for code blocks.
    pub(crate) lang: Box<str>,
    /// `itemprop="articleBody"`: the author marked the article's text (schema.org).
    pub(crate) article_body: bool,
    /// `data-nosnippet`: the site keeps the block out of search engines' snippets.
    pub(crate) nosnippet: bool,
    /// A table cell's `colspan` and `rowspan` (0 when absent: one).
    pub(crate) colspan: u16,
    pub(crate) rowspan: u16,
    /// An ordered list's `start` or a list item's `value`: the number it is written with.
    pub(crate) number: Option<u32>,
    /// A formula shown as a block of its own (MathML `display="block"`).
    pub(crate) display_block: bool,
    /// A list item that opens with a checkbox (a task list): whether it is checked.
    pub(crate) task: Option<bool>,
}

/// Node payload.
#[derive(Debug, Clone)]
pub(crate) enum Kind {
    /// An element; attributes index into [`Tree::attrs`] (`NONE` when it has none we keep).
    Element { tag: Tag, attrs: u32 },
    /// Decoded text, as a byte range of [`Tree::text`].
    Text { start: u32, end: u32 },
}

/// One node of the arena.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub(crate) kind: Kind,
    pub(crate) parent: u32,
    pub(crate) first_child: u32,
    pub(crate) last_child: u32,
    pub(crate) next_sibling: u32,
    /// Not rendered (dropped element or hidden text).
    pub(crate) hidden: bool,
}

/// Facts gathered from the head and from the whole document while parsing.
#[derive(Debug, Default)]
pub(crate) struct PageFacts {
    pub(crate) title: Option<String>,
    pub(crate) og_title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) og_description: Option<String>,
    /// `og:type`: `article` pages treat comment sections as chrome.
    pub(crate) og_type: Option<String>,
    pub(crate) canonical: Option<String>,
    pub(crate) base_href: Option<String>,
    pub(crate) html_lang: Option<String>,
    pub(crate) content_language: Option<String>,
    pub(crate) robots: Option<String>,
    /// `(href, rel contains nofollow)` for every `<a href>`/`<area href>`, in order.
    pub(crate) links: Vec<(String, bool)>,
    pub(crate) script_bytes: usize,
    pub(crate) script_count: usize,
    /// The page declares itself a discussion in schema.org terms (a
    /// `DiscussionForumPosting` or `QAPage`, in JSON-LD or microdata): its replies are
    /// content.
    pub(crate) discussion: bool,
    /// The page's structured data names a schema.org `Product`.
    pub(crate) product: bool,
    /// The longest `description` of a schema.org `Product` in the page's JSON-LD.
    pub(crate) product_description: Option<String>,
    /// The page holds a formula (`<math>`).
    pub(crate) math: bool,
    /// Forms that hold a control a reader fills or presses (an `<input>` other than a
    /// hidden one, a `<textarea>`, `<select>` or `<button>`), in document order.
    pub(crate) control_forms: Vec<u32>,
}

/// The parsed document.
#[derive(Debug, Default)]
pub(crate) struct Tree {
    pub(crate) nodes: Vec<Node>,
    pub(crate) attrs: Vec<Attrs>,
    pub(crate) text: String,
    pub(crate) facts: PageFacts,
    /// The first element carrying each `id`, indexed the first time one is looked for.
    ids: std::sync::OnceLock<std::collections::HashMap<Box<str>, u32>>,
    /// Where the page was fetched from and what its relative links resolve against, when
    /// known: a link to the page's own address with a fragment (`Options.html#in` on
    /// `…/Options.html`) goes to a place on the page, as `#in` does.
    pub(crate) address: Option<Address>,
}

/// A page's own address (without its fragment) and the base its links resolve against.
#[derive(Debug)]
pub(crate) struct Address {
    pub(crate) page: url::Url,
    pub(crate) base: url::Url,
}

impl Tree {
    /// Whether `href` goes to this page: a fragment, or the page's own address with or
    /// without one (a title linking to its own page).
    pub(crate) fn on_page(&self, href: &str) -> bool {
        href.starts_with('#') || self.names_page(href)
    }

    /// Whether `href`, resolved against the page's base, is the page's own address
    /// (its fragment aside); `false` when the address is not known.
    fn names_page(&self, href: &str) -> bool {
        self.address.as_ref().is_some_and(|a| {
            a.base.join(href.trim()).is_ok_and(|mut to| {
                to.set_fragment(None);
                to == a.page
            })
        })
    }

    /// The fragment of `href` when it goes to a place on this page: `#in` → `in`, a bare
    /// `#` → empty, and a link to the page's own address with a fragment; `None` for a
    /// link elsewhere.
    pub(crate) fn fragment<'a>(&self, href: &'a str) -> Option<&'a str> {
        if let Some(f) = href.strip_prefix('#') {
            return Some(f);
        }
        let (_, f) = href.split_once('#')?;
        self.names_page(href).then_some(f)
    }

    /// The first element whose `id` is `id`: where a `#fragment` link lands.
    pub(crate) fn element_with_id(&self, id: &str) -> Option<u32> {
        self.ids
            .get_or_init(|| {
                let mut ids = std::collections::HashMap::new();
                for (i, node) in self.nodes.iter().enumerate() {
                    if let Kind::Element { attrs, .. } = node.kind {
                        if let Some(a) = self.attrs.get(attrs as usize).filter(|a| !a.id.is_empty())
                        {
                            ids.entry(a.id.clone()).or_insert(i as u32);
                        }
                    }
                }
                ids
            })
            .get(id)
            .copied()
    }
    pub(crate) fn tag(&self, n: u32) -> Option<Tag> {
        match self.nodes.get(n as usize)?.kind {
            Kind::Element { tag, .. } => Some(tag),
            Kind::Text { .. } => None,
        }
    }
    pub(crate) fn attrs(&self, n: u32) -> Option<&Attrs> {
        match self.nodes.get(n as usize)?.kind {
            Kind::Element { attrs, .. } if attrs != NONE => self.attrs.get(attrs as usize),
            _ => None,
        }
    }
    pub(crate) fn text_of(&self, n: u32) -> Option<&str> {
        match self.nodes.get(n as usize)?.kind {
            Kind::Text { start, end } => self.text.get(start as usize..end as usize),
            Kind::Element { .. } => None,
        }
    }
    /// Children of `n`, in order.
    pub(crate) fn children(&self, n: u32) -> Children<'_> {
        Children {
            tree: self,
            next: self.nodes.get(n as usize).map_or(NONE, |x| x.first_child),
        }
    }

    /// Whether `n` is the page's main landmark: `<main>` or `role="main"`.
    pub(crate) fn is_main(&self, n: u32) -> bool {
        self.tag(n) == Some(Tag::Main)
            || self
                .attrs(n)
                .is_some_and(|a| a.role.eq_ignore_ascii_case("main"))
    }

    /// Whether `n` names the page's main content: its landmark ([`Tree::is_main`]) or,
    /// on pages without one, `id="main"`, the skip link's target (pydoctor's `div#main`).
    /// Where the content is chosen only: a block hidden inside it is not shown for that.
    pub(crate) fn names_main(&self, n: u32) -> bool {
        self.is_main(n)
            || self
                .attrs(n)
                .is_some_and(|a| a.id.eq_ignore_ascii_case("main"))
    }

    /// Whether `n` has the class token `class`.
    pub(crate) fn has_class(&self, n: u32, class: &str) -> bool {
        self.attrs(n).is_some_and(|a| {
            a.class
                .split_ascii_whitespace()
                .any(|t| t.eq_ignore_ascii_case(class))
        })
    }

    /// Whether `n` is a code listing written as lines: Doxygen's
    /// `<div class="fragment"><div class="line">…</div>…</div>` (no `<pre>`).
    pub(crate) fn is_code_lines(&self, n: u32) -> bool {
        self.tag(n) == Some(Tag::Div)
            && self.has_class(n, "fragment")
            && self
                .children(n)
                .find(|&c| self.tag(c).is_some())
                .is_some_and(|c| self.tag(c) == Some(Tag::Div) && self.has_class(c, "line"))
    }

    /// Whether `c` is code (`<code>`, `<tt>`, `<kbd>`, `<samp>`) broken into lines by
    /// `<br>` that a block holds alone: a paragraph, a quote, a term or an item (Apache's
    /// manual writes its examples and its expressions' forms so, SQLite its sessions in a
    /// quoted `<tt>`): a code block without a `<pre>`. Not a `div`'s: Javadoc's summary
    /// cells break a long signature so, and it stays a span (the break a space).
    pub(crate) fn is_br_listing(&self, c: u32) -> bool {
        let p = self.nodes[c as usize].parent;
        matches!(
            self.tag(c),
            Some(Tag::Code | Tag::Tt | Tag::Kbd | Tag::Samp)
        ) && self.children(c).any(|x| self.tag(x) == Some(Tag::Br))
            && matches!(
                self.tag(p),
                Some(Tag::P | Tag::Blockquote | Tag::Dt | Tag::Dd | Tag::Li)
            )
            && self.sole_element(p) == Some(c)
    }

    /// Whether `c` is code (`<code>`, `<tt>`, `<kbd>`, `<samp>`) around blocks: lines as
    /// `<div>`s or `<p>`s (`<code><div>let x = 1;</div><div>…</div></code>`), or a list,
    /// a quote, a heading anywhere in it. A code span cannot hold them (its backticks
    /// would not pair across lines, and the code's text, not escaped, would read as
    /// markdown): a code block.
    pub(crate) fn is_block_listing(&self, c: u32) -> bool {
        matches!(
            self.tag(c),
            Some(Tag::Code | Tag::Tt | Tag::Kbd | Tag::Samp)
        ) && (c + 1..super::markdown::subtree_end(self, c))
            .any(|x| self.tag(x).is_some_and(|t| t.is_block() && t != Tag::Br))
    }

    /// `n`'s only element child, when `n` holds nothing else but whitespace (a wrapper).
    pub(crate) fn sole_element(&self, n: u32) -> Option<u32> {
        let mut only = None;
        for c in self.children(n) {
            match self.nodes[c as usize].kind {
                Kind::Text { .. } if self.text_of(c).is_some_and(|t| t.trim().is_empty()) => {}
                Kind::Element { .. } if only.is_none() => only = Some(c),
                _ => return None,
            }
        }
        only
    }
}

/// Iterator over the children of a node.
#[derive(Debug)]
pub(crate) struct Children<'t> {
    tree: &'t Tree,
    next: u32,
}

impl Iterator for Children<'_> {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        if self.next == NONE {
            return None;
        }
        let n = self.next;
        self.next = self
            .tree
            .nodes
            .get(n as usize)
            .map_or(NONE, |x| x.next_sibling);
        Some(n)
    }
}
