//! Iterative markdown serializer over the arena tree.

use super::tree::{Kind, Tag, Tree, NONE};
use super::ExtractOptions;
use url::Url;

/// Resolves `href` against `base`; only web and mail links survive.
pub(crate) fn resolve(base: &Url, href: &str) -> Option<Url> {
    let h = href.trim();
    if h.is_empty() {
        return None;
    }
    let u = base.join(h).ok()?;
    matches!(u.scheme(), "http" | "https" | "mailto" | "ftp").then_some(u)
}

/// Whether `img` is on the page's site: the same host, or the same registrable domain
/// (approximated without a public-suffix list: the last two labels, three under a short
/// second-level label such as `co.uk` or `edu.au`).
fn same_site(page: &Url, img: &Url) -> bool {
    fn site(host: &str) -> &str {
        let labels: Vec<&str> = host.rsplit('.').collect();
        let keep = match labels.as_slice() {
            [tld, sld, _, ..] if tld.len() == 2 && sld.len() <= 3 => 3,
            _ => 2,
        };
        if labels.len() <= keep || host.parse::<std::net::IpAddr>().is_ok() {
            return host;
        }
        let cut: usize = labels[..keep].iter().map(|l| l.len() + 1).sum();
        &host[host.len() + 1 - cut..]
    }
    match (page.host_str(), img.host_str()) {
        (Some(p), Some(i)) => p == i || site(p).eq_ignore_ascii_case(site(i)),
        _ => false,
    }
}

/// Escapes text so a markdown renderer shows it as text: a `<` that could open an HTML
/// tag, comment or autolink becomes `\<`, and `](` (an inline link or image) becomes
/// `]\(`. Page text such as `&lt;img onerror=…&gt;` then stays text.
///
/// Emphasis markers are escaped too: every `*` and `` ` ``, and a `_` run that touches a
/// word boundary (`__lt__` would render as bold `lt`; `snake_case` is left alone).
fn escape_inline(w: &str) -> std::borrow::Cow<'_, str> {
    let b = w.as_bytes();
    let risky = b.iter().any(|&c| matches!(c, b'*' | b'`' | b'_' | b'\\'))
        || b.windows(2).any(|p| {
            (p[0] == b'<' && (p[1].is_ascii_alphabetic() || matches!(p[1], b'/' | b'!' | b'?')))
                || p == b"]("
                || (p[0] == b'&' && (p[1].is_ascii_alphanumeric() || p[1] == b'#'))
        });
    if !risky {
        return std::borrow::Cow::Borrowed(w);
    }
    let mut out = String::with_capacity(w.len() + 4);
    let mut prev = '\0';
    for (i, c) in w.char_indices() {
        let next = b.get(i + 1).copied().unwrap_or(b' ');
        if c == '<' && (next.is_ascii_alphabetic() || matches!(next, b'/' | b'!' | b'?')) {
            out.push('\\');
        }
        if c == '(' && prev == ']' {
            out.push('\\');
        }
        // A backslash escapes the punctuation after it, also a marker written next
        // (`1\.`, `\\server`, `<b>a\</b>`): it is escaped itself where it could.
        if matches!(c, '*' | '`')
            || (c == '\\' && b.get(i + 1).is_none_or(u8::is_ascii_punctuation))
            || (c == '_' && underscore_at_boundary(b, i))
            || (c == '&' && is_entity(&b[i..]))
        {
            out.push('\\');
        }
        out.push(c);
        prev = c;
    }
    std::borrow::Cow::Owned(out)
}

/// Whether the emphasis marker of length `m` at `out[p..]` can open: a marker between a
/// word and punctuation (`a**(b)**`, `x**[link](u)**`) is no left-flanking run for
/// CommonMark and would stay two stars in the text.
fn opens(out: &str, p: usize, m: usize) -> bool {
    let punct = |c: char| c.is_ascii_punctuation() || "“”‘’«»—–…¡¿".contains(c);
    if !out.is_char_boundary(p) || !out.is_char_boundary(p + m) {
        return true;
    }
    let before = out[..p].chars().next_back();
    // After the whole run of this marker's character (`***` of nested emphasis is one
    // run); another kind's marker is punctuation like any (`**~~x~~**` after a word
    // opens no bold).
    let mark = out[p..].chars().next();
    let after = out[p + m..].chars().find(|&c| Some(c) != mark);
    !(before.is_some_and(|c| !c.is_whitespace() && !punct(c)) && after.is_some_and(punct))
}

/// Escapes the brackets of a link's text `out[from..]` when they do not pair up
/// (`<a>a_b_c]</a>`, `<a>[ x</a>`): an unpaired `]` would end the text early and the
/// link would not be one. Paired ones (`[1]`) stay as they are; brackets inside code
/// spans and already escaped ones are not brackets.
fn escape_unpaired_brackets(out: &mut String, from: usize) {
    let mut at = Vec::new();
    let mut depth = 0i32;
    let mut paired = true;
    let b = out.as_bytes();
    let mut i = from;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'`' => {
                let run = b[i..].iter().take_while(|&&c| c == b'`').count();
                let mut j = i + run;
                // The span ends at the next run of the same length; none: literal.
                while j < b.len() {
                    let r = b[j..].iter().take_while(|&&c| c == b'`').count();
                    if r == run {
                        break;
                    }
                    j += r.max(1);
                }
                i = if j < b.len() { j + run } else { i + run } - 1;
            }
            c @ (b'[' | b']') => {
                at.push(i);
                depth += if c == b'[' { 1 } else { -1 };
                paired &= depth >= 0;
            }
            _ => {}
        }
        i += 1;
    }
    if paired && depth == 0 {
        return;
    }
    for &i in at.iter().rev() {
        out.insert(i, '\\');
    }
}

/// Whether `b` starts with what CommonMark reads as an entity or a numeric character
/// reference (`&amp;`, `&#94;`, `&#x5E;`): text that spells one stays text.
fn is_entity(b: &[u8]) -> bool {
    let Some(end) = b.iter().take(34).position(|&c| c == b';') else {
        return false;
    };
    match &b[1..end] {
        [b'#', b'x' | b'X', hex @ ..] => {
            (1..=6).contains(&hex.len()) && hex.iter().all(u8::is_ascii_hexdigit)
        }
        [b'#', dec @ ..] => (1..=7).contains(&dec.len()) && dec.iter().all(u8::is_ascii_digit),
        [first, rest @ ..] => {
            first.is_ascii_alphabetic()
                && !rest.is_empty()
                && rest.iter().all(u8::is_ascii_alphanumeric)
        }
        [] => false,
    }
}

/// Whether the `_` run holding byte `i` of `b` starts or ends at a word boundary, where
/// CommonMark may read it as emphasis.
fn underscore_at_boundary(b: &[u8], i: usize) -> bool {
    let start = b[..i].iter().rposition(|&c| c != b'_').map_or(0, |p| p + 1);
    let end = b[i..]
        .iter()
        .position(|&c| c != b'_')
        .map_or(b.len(), |p| i + p);
    let word = |c: Option<&u8>| c.is_some_and(|c| c.is_ascii_alphanumeric() || *c >= 0x80);
    !word(start.checked_sub(1).and_then(|s| b.get(s))) || !word(b.get(end))
}

/// The markers of the items (and quotes) an item's marker `m` was written with, before
/// its own (`- ` of `- - `, `- > ` of `- > - `), if any.
fn outer_markers(m: &str) -> Option<String> {
    let t = m.trim_end();
    let last = t.rfind(' ')?;
    Some(m[..=last].to_string())
}

/// Whether `s` holds markers (list, quote, any number of them) and no text: markers are
/// written with a space after them, and text that would read as one is escaped.
fn only_markers(s: &str) -> bool {
    s.split_ascii_whitespace().all(|m| {
        let number = m
            .strip_suffix(['.', ')'])
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
        matches!(m, ">" | "-" | "*" | "+") || number
    })
}

/// Elements that give markdown structure of their own: lists, items, definitions,
/// quotes, tables and their parts.
fn is_structure(tag: Tag) -> bool {
    matches!(
        tag,
        Tag::Ul
            | Tag::Ol
            | Tag::Menu
            | Tag::Li
            | Tag::Dl
            | Tag::Dt
            | Tag::Dd
            | Tag::Blockquote
            | Tag::Table
            | Tag::Thead
            | Tag::Tbody
            | Tag::Tfoot
            | Tag::Tr
            | Tag::Td
            | Tag::Th
            | Tag::Caption
            | Tag::Hr
    )
}

/// Where the text of a markdown line starts: after its indentation, quote, list and
/// heading markers, however many (`- - `, `> 1. - `).
fn text_start(line: &str) -> usize {
    let mut rest = line;
    loop {
        let r = rest.trim_start_matches([' ', '>']);
        let r = match ["- ", "* ", "+ "].iter().find_map(|m| r.strip_prefix(m)) {
            Some(after) => after,
            None => {
                let d = r.len() - r.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                let after = r
                    .get(d..)
                    .and_then(|x| x.strip_prefix(". ").or(x.strip_prefix(") ")));
                match after {
                    Some(after) if (1..=9).contains(&d) => after,
                    _ => r,
                }
            }
        };
        if r.len() == rest.len() {
            break;
        }
        rest = r;
    }
    let hashes = rest.len() - rest.trim_start_matches('#').len();
    if (1..=6).contains(&hashes) {
        rest = rest[hashes..].strip_prefix(' ').unwrap_or(rest);
    }
    line.len() - rest.trim_start().len()
}

/// How much of `body` is breaks before its text: whitespace and, after a line break,
/// the lines' `prefix` (a quote's `>`, which is no heading or list marker).
fn leading_breaks(body: &str, prefix: &str) -> usize {
    let p = prefix.trim();
    let mut i = 0;
    loop {
        let rest = &body[i..];
        let ws = rest.len() - rest.trim_start().len();
        let broke = rest[..ws].contains('\n');
        i += ws;
        if broke && !p.is_empty() && body[i..].starts_with(p) {
            i += p.len();
        } else if ws == 0 {
            return i;
        }
    }
}

/// [`text_start`] of a line whose text can be made a link: plain text, not an image, a
/// fence, a table row, or text that already holds brackets.
fn linkable_text(line: &str) -> Option<usize> {
    let start = text_start(line);
    let text = &line[start..];
    let plain = !text.is_empty()
        && !text.starts_with("```")
        && !text.starts_with('|')
        && !text.contains(['[', ']']);
    plain.then_some(start)
}

/// Whether the link `a` is a heading permalink: its only text is a pilcrow, a section sign,
/// `#` or a link symbol (Sphinx's `¶`, many generators' `#`); or it, or the element around
/// it, is classed `permalink` and it holds no word, only a symbol or an icon (Doxygen's
/// `<span class="permalink"><a>◆</a></span>` before each member's name, Scaladoc's
/// `<span class="permalink"><a><img alt="Permalink"></a></span>` after each signature).
fn is_permalink(tree: &Tree, a: u32) -> bool {
    let end = subtree_end(tree, a);
    let mut text = String::new();
    for i in a + 1..end {
        if let Some(t) = tree.text_of(i) {
            text.push_str(t.trim());
            if text.len() > 8 {
                return false;
            }
        }
    }
    if matches!(text.as_str(), "¶" | "§" | "#" | "🔗" | "⚓") {
        return true;
    }
    let classed = |n: u32| {
        tree.attrs(n).is_some_and(|at| {
            at.class
                .split_ascii_whitespace()
                .any(|t| t.eq_ignore_ascii_case("permalink"))
        })
    };
    !text.chars().any(char::is_alphanumeric)
        && (classed(a) || classed(tree.nodes[a as usize].parent))
}

/// Whether `href` is `#id` of the element holding the link `a` (its parent): a link to
/// where it stands, a term's own anchor. Not the section around it (Sphinx's
/// `<a href="#module-abc">abc</a>` in a paragraph of `section#module-abc` names the module).
fn links_to_holder(tree: &Tree, a: u32, href: &str) -> bool {
    let p = tree.nodes[a as usize].parent;
    href.strip_prefix('#')
        .is_some_and(|f| !f.is_empty() && p != NONE && tree.attrs(p).is_some_and(|x| &*x.id == f))
}

fn md_url(u: &Url) -> String {
    u.as_str()
        .replace('(', "%28")
        .replace(')', "%29")
        .replace(' ', "%20")
}

/// Serializer state.
pub(crate) struct Md<'t> {
    tree: &'t Tree,
    opts: &'t ExtractOptions,
    base: &'t Url,
    /// The page's own URL (images are kept when on its site; `base` may point elsewhere).
    page: &'t Url,
    /// Nodes removed by main-content selection (`true` = skip).
    removed: Option<&'t [bool]>,
    /// What stood straight in a table, outside its cells, written before it already (as
    /// a browser shows it): skipped where it stands. Sorted.
    fostered: Vec<u32>,
    inline_only: bool,
    /// A table cell's block boundary passed: the next text goes on a line of its own
    /// (`<br>`).
    cell_break: bool,
    /// Structure elements written as text (a list inside a code span of a heading), to
    /// be closed as text too.
    flat: Vec<u32>,
    out: String,
    prefix: String,
    /// Newlines owed before the next content (0, 1 or 2).
    pending_nl: u8,
    pending_space: bool,
    pending_marker: Option<String>,
    /// The last marker written (list or heading), where its line starts in the output and
    /// where the line's markers end: an item or heading that comes out empty takes it
    /// back, and an item owes again the markers of the items it opened (`- ` of `- - `).
    written_marker: Option<(usize, usize, String)>,
    /// Where the prefix of the list item opened last starts, and where it ends.
    item_at: usize,
    item_end: usize,
    /// How much of the prefix the pending blank line carries, when a quote opened after
    /// it was owed: the line is the outer block's, or two quotes in a row read as one.
    gap_prefix: usize,
    at_line_start: bool,
    pre: usize,
    /// Open lists: (ordered, the next item's number, the list's node, whether a block
    /// other than an item came after the last item: the next item then starts a new
    /// paragraph).
    lists: Vec<(bool, u32, u32, bool)>,
    /// Saved state per open element: (prefix length, output length at open).
    saved: Vec<(usize, usize)>,
    /// Markdown URLs of the open links.
    links: Vec<Option<String>>,
    /// Open inline code elements (emphasis inside code is literal).
    code: usize,
    /// Links written inside the open code span: where each `[`, its text's end and its
    /// `)` are (the span is mended when it closes).
    code_links: Vec<(usize, usize, usize)>,
    /// The code listing written as lines being written ([`Tree::is_code_lines`]).
    fragment: Option<u32>,
    /// The code broken by `<br>` being written as a block ([`Tree::is_br_listing`]).
    br_code: Option<u32>,
    /// Open `<pre>`s inside a code block (more of the same block, no fence of their own).
    inner_pre: usize,
    /// Open headings (a link inside one to a fragment of the page is a back-reference).
    heading: usize,
    /// Open emphasis elements: (marker, output position of the written opener). The
    /// opener is written lazily before the first content, so empty elements leave
    /// nothing and spaces stay outside the markers. `None` = not written yet.
    emph: Vec<(Emph, Option<usize>)>,
    /// How many entries of `emph` still owe their opener.
    emph_owed: usize,
    /// The emphasis closed last, while nothing has been written after its marker: where
    /// the output ended, its kind and where its opener is.
    closed: Option<(usize, Emph, usize)>,
    /// Where the text is in the last code span written, `span_text` (a buffer kept for
    /// reuse). A span right after it continues it (`<code>a</code><code>b</code>`), since
    /// two spans with nothing between them would read as one with backticks inside.
    code_span: Option<std::ops::Range<usize>>,
    span_text: String,
    /// Open inline quotations (`<q>`): outer ones get double marks, inner ones single.
    quotes: usize,
    /// A task list item's box (`[x] `), owed right after its marker.
    pending_task: Option<&'static str>,
    /// Where the output ended after the last link opener `[` was written.
    link_open_at: usize,
    /// Where the space written right before the open code span's backtick is (the span
    /// owes it again if it comes out empty).
    code_space_at: Option<usize>,
}

/// Inline emphasis kinds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Emph {
    /// Already inside the same kind, or inside code: renders nothing.
    Off,
    Strong,
    Em,
    /// Struck-out text (`<s>`, `<del>`): a price no longer asked, a rule no longer in
    /// force. GFM's `~~`.
    Strike,
}

/// Whether `out` still ends, at `end`, with the closing marker of `kind` recorded there
/// (what came after it may have been taken back since, and more written).
fn closed_at(out: &str, end: usize, kind: Emph) -> bool {
    let m = kind.marker();
    end == out.len()
        && end >= m.len()
        && out.is_char_boundary(end - m.len())
        && &out[end - m.len()..] == m
}

impl Emph {
    fn marker(self) -> &'static str {
        match self {
            Emph::Off => "",
            Emph::Strong => "**",
            Emph::Em => "*",
            Emph::Strike => "~~",
        }
    }
}

fn code_lang(class: &str, data_lang: &str) -> Option<String> {
    if !data_lang.is_empty() {
        return Some(data_lang.to_string());
    }
    for c in class.split_ascii_whitespace() {
        for p in [
            "language-",
            "lang-",
            "highlight-source-",
            "highlight-",
            "brush:",
        ] {
            if let Some(l) = c.strip_prefix(p) {
                // Sphinx's `highlight-none`/`highlight-default` name no language.
                if !l.is_empty()
                    && !matches!(l, "none" | "default")
                    && l.len() < 24
                    && l.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"+#-_.".contains(&b))
                {
                    return Some(l.to_ascii_lowercase());
                }
            }
        }
    }
    None
}

/// Whether `n` is a code block's language label: a child of the block's wrapper, beside
/// its `<pre>`, whose whole text is the language the wrapper's class names (VitePress's
/// `div.language-bash > span.lang` "bash" over every listing). The fence names the
/// language already; the label would stand as a paragraph of its own.
fn is_code_label(tree: &Tree, n: u32) -> bool {
    let p = tree.nodes[n as usize].parent;
    if p == NONE || !matches!(tree.tag(n), Some(Tag::Span | Tag::Div | Tag::P)) {
        return false;
    }
    let Some(lang) = tree.attrs(p).and_then(|a| code_lang(&a.class, &a.lang)) else {
        return false;
    };
    if !tree.children(p).any(|c| tree.tag(c) == Some(Tag::Pre)) {
        return false;
    }
    let mut text = tree.children(n).map(|c| tree.text_of(c));
    matches!(
        (text.next(), text.next()),
        (Some(Some(t)), None) if t.trim().eq_ignore_ascii_case(&lang)
    )
}

/// Whether `n` is an admonition, a note, tip or warning set apart from the text, by the
/// class documentation generators give it: `admonition` (Sphinx, MkDocs, Material),
/// `theme-admonition` (Docusaurus), `markdown-alert` (GitHub), `custom-block` (VitePress),
/// `callout`. Only the box itself: its title and body carry longer classes.
fn is_admonition(tree: &Tree, n: u32) -> bool {
    tree.attrs(n).is_some_and(|a| {
        a.class.split_ascii_whitespace().any(|t| {
            [
                "admonition",
                "theme-admonition",
                "markdown-alert",
                "custom-block",
                "callout",
            ]
            .iter()
            .any(|c| t.eq_ignore_ascii_case(c))
        })
    })
}

impl<'t> Md<'t> {
    pub(crate) fn new(
        tree: &'t Tree,
        opts: &'t ExtractOptions,
        base: &'t Url,
        page: &'t Url,
        removed: Option<&'t [bool]>,
    ) -> Self {
        Md {
            tree,
            opts,
            base,
            page,
            removed,
            fostered: Vec::new(),
            inline_only: false,
            cell_break: false,
            flat: Vec::new(),
            out: String::new(),
            prefix: String::new(),
            pending_nl: 0,
            pending_space: false,
            pending_marker: None,
            written_marker: None,
            item_at: 0,
            item_end: 0,
            gap_prefix: usize::MAX,
            at_line_start: true,
            pre: 0,
            lists: Vec::new(),
            saved: Vec::new(),
            links: Vec::new(),
            code: 0,
            code_links: Vec::new(),
            fragment: None,
            br_code: None,
            inner_pre: 0,
            heading: 0,
            emph: Vec::new(),
            emph_owed: 0,
            closed: None,
            code_span: None,
            span_text: String::new(),
            link_open_at: usize::MAX,
            code_space_at: None,
            quotes: 0,
            pending_task: None,
        }
    }

    /// Renders the subtree at `root` and returns the markdown.
    pub(crate) fn render(mut self, root: u32) -> String {
        self.run(root);
        let mut s = self.out;
        let t = s.trim_end().len();
        s.truncate(t);
        if !s.is_empty() {
            s.push('\n');
        }
        s
    }

    fn skipped(&self, n: u32) -> bool {
        let node = &self.tree.nodes[n as usize];
        node.hidden
            || self
                .removed
                .is_some_and(|r| r.get(n as usize).copied().unwrap_or(false))
            || matches!(node.kind, Kind::Element { tag: Tag::Td, .. }) && self.is_gutter(n)
            || self.is_fostered(n)
    }

    /// Whether `n` stood in a table outside its cells and was written before it.
    fn is_fostered(&self, n: u32) -> bool {
        !self.fostered.is_empty() && self.fostered.binary_search(&n).is_ok()
    }

    /// Whether cell `n` is a code listing's line numbers: only digits in it, its row the
    /// table's only one, and a cell after it holding a `<pre>` (Pygments' `td.linenos`, Rouge's `td.gutter`, Hugo's
    /// first `td.lntd`). They are not code: the listing is the other cell.
    fn is_gutter(&self, n: u32) -> bool {
        let end = subtree_end(self.tree, n);
        let mut digits = false;
        for i in n + 1..end {
            if let Some(t) = self.tree.text_of(i) {
                if !t
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b.is_ascii_whitespace())
                {
                    return false;
                }
                digits |= t.bytes().any(|b| b.is_ascii_digit());
            }
        }
        if !digits {
            return false;
        }
        // A cell after it holds the listing; and a listing's table is one row, a table of
        // numbered steps many (looked at last: a table of numbers has many such cells).
        let row = self.tree.nodes[n as usize].parent;
        let body = self.tree.nodes[row as usize].parent;
        body != NONE
            && self
                .tree
                .children(row)
                .skip_while(|&c| c != n)
                .skip(1)
                .any(|c| {
                    (c + 1..subtree_end(self.tree, c)).any(|i| self.tree.tag(i) == Some(Tag::Pre))
                })
            && self
                .tree
                .children(body)
                .filter(|&c| self.tree.tag(c) == Some(Tag::Tr))
                .nth(1)
                .is_none()
    }

    fn run(&mut self, root: u32) {
        let mut stack: Vec<(u32, bool)> = vec![(root, false)];
        let mut kids: Vec<u32> = Vec::new();
        while let Some((n, exiting)) = stack.pop() {
            if exiting {
                self.exit(n);
                continue;
            }
            if self.skipped(n) {
                continue;
            }
            if let Some(t) = self.tree.text_of(n) {
                self.text(t);
                continue;
            }
            if self.enter(n) {
                stack.push((n, true));
                kids.clear();
                kids.extend(self.tree.children(n));
                stack.extend(kids.iter().rev().map(|&k| (k, false)));
            }
        }
    }

    fn block(&mut self, nl: u8) {
        // A block inside a heading is more of its title (`<h4><div class="title-anchors">
        // …</div><span>all(Pred, List)</span></h4>`): a space, or the heading would end.
        if self.inline_only {
            // A table cell's paragraphs stay apart, as its lines do (Sphinx's `<td><p>
            // Tutorial<br>start here</p><p>Library Reference…`): owed to the next text.
            self.cell_break = true;
            self.pending_space = true;
        } else if self.heading > 0 && self.pre == 0 {
            self.pending_space |= self.pending_marker.is_none() && !self.out.ends_with(' ');
        } else if self.pre > 0 {
            // Inside code a block starts a line, no blank one.
            if !self.at_code_line_start() {
                self.pending_nl = self.pending_nl.max(1);
            }
        } else if !self.out.is_empty() {
            self.pending_nl = self.pending_nl.max(nl);
        }
    }

    /// Which part of the prefix the pending marker `m` stands in for: a list marker for
    /// its item's indentation, before what the item opened since (`<li><blockquote>`:
    /// `- > quote`); a heading's `#`s for nothing, after the whole prefix.
    fn marker_at(&self, m: &str) -> (usize, usize) {
        if m.starts_with('#') {
            (self.prefix.len(), self.prefix.len())
        } else {
            let end = self.item_end.min(self.prefix.len());
            (end.saturating_sub(m.len()), end)
        }
    }

    /// Writes owed line breaks, prefix and list marker before content.
    /// Starts a quote's lines; the blank line owed before it stays outside it.
    fn open_quote(&mut self) {
        if self.pending_nl > 0 {
            self.gap_prefix = self.gap_prefix.min(self.prefix.len());
        }
        self.prefix.push_str("> ");
    }

    fn flush(&mut self) {
        // A block that opens an item whose marker is already written with nothing after
        // it (`<li><a><i class="icon"></i></a><p>text</p>`: the link wrote the marker,
        // then came out empty) starts on the marker's line. A blank line after a bare
        // marker ends the item: CommonMark reads it as empty and the block as outside the
        // list. The marker is written again, with what the block opened since (a quote's
        // `>`). A nested list's first item goes on the next line (`- ` over `  - x`).
        if self.pending_nl > 0 && self.pre == 0 {
            // `Some(true)`: an item's marker is owed, not a heading's.
            match self.pending_marker.as_ref().map(|m| !m.starts_with('#')) {
                None if self.retake_bare_marker() => {
                    self.pending_nl = 0;
                    self.at_line_start = true;
                }
                Some(true) if self.bare_marker_line().is_some() => self.pending_nl = 1,
                _ => {}
            }
        }
        if self.pending_nl > 0 {
            if self.pre == 0 {
                // Breaks written before content that then came out empty (a link or
                // emphasis with nothing visible) are not written twice.
                self.trim_blank_lines();
            }
            if !self.out.is_empty() {
                // A blank line before a new item is the list's: none of what the item
                // opens (a quote's `>`) is on it.
                let cut = match &self.pending_marker {
                    Some(m) => self.marker_at(m).0,
                    None => self.prefix.len(),
                };
                let blank = &self.prefix[..cut.min(self.gap_prefix)];
                for i in 0..self.pending_nl {
                    self.out.push('\n');
                    if i + 1 < self.pending_nl {
                        self.out.push_str(blank.trim_end());
                        self.out.push('\n');
                        break;
                    }
                }
            }
            self.pending_nl = 0;
            self.at_line_start = true;
            self.pending_space = false;
        }
        self.gap_prefix = usize::MAX;
        // Nothing written yet is a line's start, whatever came out empty before (a link
        // around an icon opening the page, then a list: its first marker was lost).
        if self.out.is_empty() {
            self.at_line_start = true;
        }
        if self.at_line_start {
            if let Some(m) = self.pending_marker.take() {
                let (start, end) = self.marker_at(&m);
                let line = self.out.len();
                self.out.push_str(&self.prefix[..start]);
                self.out.push_str(&m);
                self.out.push_str(&self.prefix[end..]);
                self.written_marker = Some((line, self.out.len(), m));
                if let Some(t) = self.pending_task.take() {
                    self.out.push_str(t);
                }
            } else {
                self.out.push_str(&self.prefix);
            }
        } else {
            // The break owed by a block boundary in a table cell, then its space: none at
            // the cell's start, after a break, or right after a link's `[`.
            let t = self.out.trim_end().len();
            if self.cell_break && t > 0 && !self.out[..t].ends_with("<br>") && !self.just_opened() {
                self.out.truncate(t);
                self.out.push_str("<br>");
            }
            if self.pending_space
                && !self.just_opened()
                && !self.out.ends_with([' ', '\n'])
                && !self.out.is_empty()
            {
                // Never right after a link's `[` or a `<sup>`: their leading space goes
                // before them. Nor after a space (a marker's, or one written before a link
                // that came out empty: `<a>&nbsp;</a>` four times made a code block's
                // indentation at a line's start).
                self.out.push(' ');
            }
        }
        self.pending_space = false;
        self.cell_break = false;
        if self.emph_owed > 0 {
            self.write_emph_openers();
        }
    }

    /// Takes back what an element wrote from `olen` when it is its marker line `written`
    /// (list or heading) and nothing after it: an item or a heading that came out empty.
    /// The breaks written before it are owed again, to whatever comes next; what its
    /// empty content owed (a break inside an empty link) goes with it. Returns the marker.
    fn take_back_bare(
        &mut self,
        olen: usize,
        written: Option<(usize, usize, String)>,
    ) -> Option<String> {
        let (at, end, m) = written?;
        if at < olen {
            // An outer item's (`<li><sup><h3></h3></sup></li>`: the `<sup>` wrote it):
            // it stays for that item to take back.
            self.written_marker = Some((at, end, m));
            return None;
        }
        if end > self.out.len() {
            return None;
        }
        // Emphasis opened after the marker with nothing in it yet (`- *` of `<i><li><a>
        // <br></a></li></i>`) goes too, owed again to what comes next.
        let tail = self.emph_tail(self.out.len()).max(end);
        if !(only_markers(&self.out[olen..at]) && self.out[end..tail].trim().is_empty()) {
            return None;
        }
        self.owe_emph_from(olen);
        self.pending_nl = self.out[olen..at].matches('\n').count().min(2) as u8;
        self.out.truncate(olen);
        self.at_line_start = true;
        Some(m)
    }

    /// Whether the output's last line holds markers (list, quote, heading) and no text,
    /// but for an inline mark just opened (a link's `[` may yet be taken back).
    fn on_bare_marker(&self) -> bool {
        let start = self.out.rfind('\n').map_or(0, |i| i + 1);
        let mut line = &self.out[start..];
        if self.just_opened() {
            line = line
                .trim_end_matches("<sup>")
                .trim_end_matches("<sub>")
                .trim_end_matches(['[', '“', '‘']);
        }
        let line = self.line_before(start + line.len());
        !line.trim().is_empty() && text_start(line) == line.len()
    }

    /// The output's line up to `at`, less the emphasis openers with nothing in them yet
    /// that end there (`- **`): they are not the line's text.
    fn line_before(&self, at: usize) -> &str {
        let start = self.out[..at].rfind('\n').map_or(0, |i| i + 1);
        &self.out[start..self.emph_tail(at).max(start)]
    }

    /// Whether a heading is inside `n`.
    fn holds_heading(&self, n: u32) -> bool {
        (n + 1..subtree_end(self.tree, n)).any(|i| self.tree.tag(i).is_some_and(Tag::is_heading))
    }

    /// Opens inline element `n` with what `write` puts down (a link's `[`, a `<sup>`, a
    /// quotation mark): its leading space goes before it, and what it holds is measured
    /// from after it.
    fn open_inline(&mut self, n: u32, write: impl FnOnce(&mut Self)) {
        self.pending_space |= self.leads_with_space(n);
        self.flush_inline();
        write(self);
        self.at_line_start = false;
        if let Some(s) = self.saved.last_mut() {
            s.1 = self.out.len();
        }
    }

    /// The marks written around a `<q>` (double ones outside, single ones inside), a
    /// `<sup>` or a `<sub>`.
    fn marks(&self, tag: Tag) -> (&'static str, &'static str) {
        match tag {
            Tag::Sup => ("<sup>", "</sup>"),
            Tag::Sub => ("<sub>", "</sub>"),
            _ if self.quotes.is_multiple_of(2) => ("“", "”"),
            _ => ("‘", "’"),
        }
    }

    /// After an inline mark taken back because nothing came inside it: the space written
    /// before it is owed again, once.
    /// Not a marker's space (`- `, `> `, `1. `): the line's text has not begun, and an
    /// item that came out empty is taken back by its marker line.
    fn owe_trailing_space(&mut self) {
        let line = self.out.rfind('\n').map_or(0, |i| i + 1);
        if self.out.ends_with(' ') && !only_markers(&self.out[line..]) {
            self.out.pop();
            self.pending_space = true;
        }
    }

    /// Whether the output ends with a link's `[`, a `<sup>`/`<sub>` or a quotation's
    /// opening mark just written.
    fn just_opened(&self) -> bool {
        (self.link_open_at == self.out.len() && self.out.ends_with('['))
            || self.out.ends_with("<sup>")
            || self.out.ends_with("<sub>")
            || (self.quotes > 0 && self.out.ends_with(['“', '‘']))
    }

    /// Where the line of the marker written last starts, when nothing but emphasis
    /// openers with nothing in them yet (`- **`) follows the marker.
    fn bare_marker_line(&self) -> Option<usize> {
        let &(line, end, _) = self.written_marker.as_ref()?;
        let tail = self.emph_tail(self.out.len());
        (line < end && end <= tail && self.out[end..tail].trim().is_empty()).then_some(line)
    }

    /// Takes back the marker written last when nothing follows it yet ([`Self::
    /// bare_marker_line`]), with the emphasis openers after it, and owes both again: what
    /// comes next (a block, a heading) goes on a line of its own making.
    fn retake_bare_marker(&mut self) -> bool {
        let Some(line) = self.bare_marker_line() else {
            return false;
        };
        let m = self.written_marker.take().map(|w| w.2);
        self.owe_emph_from(line);
        self.out.truncate(line);
        self.pending_marker = m;
        true
    }

    /// Emphasis openers written from `at` on, about to be taken back with the output
    /// there, are owed again to the text that comes next.
    fn owe_emph_from(&mut self, at: usize) {
        for e in self.emph.iter_mut() {
            if e.1.is_some_and(|p| p >= at) {
                e.1 = None;
                if e.0 != Emph::Off {
                    self.emph_owed += 1;
                }
            }
        }
    }

    /// Whether `w`, a `.` or `)` written right after a line's text that is only a number,
    /// would make that line an ordered list's marker (`1` + `.`).
    fn glued_to_number(&self, w: &str) -> bool {
        if !matches!(w, "." | ")") {
            return false;
        }
        let line = &self.out[self.out.rfind('\n').map_or(0, |i| i + 1)..];
        let text = &line[text_start(line)..];
        (1..=9).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_digit())
    }

    /// Where the emphasis openers written last, with nothing after them yet, start when
    /// they end at `end` (`**` of `- **[`): `end` when there are none.
    fn emph_tail(&self, mut end: usize) -> usize {
        for &(kind, at) in self.emph.iter().rev() {
            match at {
                Some(p) if p + kind.marker().len() == end => end = p,
                // Owed, not written yet.
                None => {}
                _ => break,
            }
        }
        end
    }

    /// Whether the first text inside `n` (down its first children) starts with whitespace.
    fn leads_with_space(&self, n: u32) -> bool {
        let mut cur = self.tree.nodes[n as usize].first_child;
        for _ in 0..64 {
            let Some(node) = self.tree.nodes.get(cur as usize).filter(|_| cur != 0) else {
                return false;
            };
            match node.kind {
                Kind::Text { start, end } => {
                    return self
                        .tree
                        .text
                        .get(start as usize..end as usize)
                        .is_some_and(|t| t.starts_with(char::is_whitespace));
                }
                _ if node.hidden => return false,
                _ => cur = node.first_child,
            }
        }
        false
    }

    /// Removes the blank lines (nothing but spaces and quote markers) at the end of the
    /// output and the line break before them, so the next break starts from content. Scans
    /// back over the blank tail only, never over a line of content.
    fn trim_blank_lines(&mut self) {
        let b = self.out.as_bytes();
        let mut end = b.len();
        while end > 0 && matches!(b[end - 1], b' ' | b'>' | b'\n') {
            end -= 1;
        }
        if let Some(nl) = self.out[end..].find('\n') {
            self.out.truncate(end + nl);
            // Elements opened on the trimmed lines start where the output now ends: an
            // item that comes out empty takes back its marker line and the breaks written
            // again before it, not more (inside a quote the lines were `>`).
            let len = self.out.len();
            for s in &mut self.saved {
                s.1 = s.1.min(len);
            }
        }
    }

    /// Writes the openers of emphasis elements that are about to get content.
    fn write_emph_openers(&mut self) {
        for e in self.emph.iter_mut().filter(|e| e.1.is_none()) {
            // `<i>b</i><i>y</i>` is one span (`*by*`), not `*b**y*`, which no reader pairs.
            if let Some((end, kind, opener)) = self.closed.take() {
                if closed_at(&self.out, end, kind) {
                    if kind == e.0 {
                        self.out.truncate(end - kind.marker().len());
                        e.1 = Some(opener);
                        continue;
                    }
                    // `<b>Note:</b><i>x</i>`: `**Note:***x*` is one run of three stars
                    // that no reader splits; the second emphasis is left out. Tildes
                    // beside stars (`**Was:**~~$9~~`) are two runs.
                    if kind != Emph::Strike && e.0 != Emph::Strike {
                        self.closed = Some((end, kind, opener));
                        e.0 = Emph::Off;
                        continue;
                    }
                }
            }
            e.1 = Some(self.out.len());
            self.out.push_str(e.0.marker());
        }
        self.emph_owed = 0;
    }

    fn open_emph(&mut self, kind: Emph) {
        let kind = if self.pre > 0 || self.code > 0 || self.emph.iter().any(|e| e.0 == kind) {
            Emph::Off
        } else {
            kind
        };
        self.emph.push((kind, None));
        if kind != Emph::Off {
            self.emph_owed += 1;
        }
    }

    fn close_emph(&mut self) {
        let Some((kind, pos)) = self.emph.pop() else {
            return;
        };
        let m = kind.marker();
        match pos {
            _ if kind == Emph::Off => {}
            None => self.emph_owed = self.emph_owed.saturating_sub(1),
            Some(p) => {
                let body = self.out.get(p + m.len()..).unwrap_or("");
                if body.trim().is_empty() {
                    // Only an emptied link or the like inside: drop the opener.
                    self.out.truncate(p);
                    self.closed = self.closed.filter(|c| c.0 <= p);
                } else if body.contains('\n') || !opens(&self.out, p, m.len()) {
                    // Spans blocks or lines: markers would not pair up; drop the opener.
                    // So for an opener no reader takes for one (`a**(b)**`).
                    self.out.replace_range(p..p + m.len(), "");
                    // An emphasis closed inside moved back with the text; one that opened
                    // right inside (`a<b><i>(y)</i></b>`) now follows the word too.
                    let back = |x: usize| if x > p { x - m.len() } else { x };
                    self.closed = self.closed.map(|(e, k, o)| (back(e), k, back(o)));
                    if let Some((e, k, o)) = self.closed {
                        let l = k.marker().len();
                        if o == p && closed_at(&self.out, e, k) && !opens(&self.out, o, l) {
                            self.out.replace_range(e - l..e, "");
                            self.out.replace_range(o..o + l, "");
                            self.closed = None;
                        }
                    }
                } else {
                    let t = self.out.trim_end().len();
                    self.out.truncate(t);
                    self.out.push_str(m);
                    self.closed = Some((self.out.len(), kind, p));
                }
            }
        }
    }

    /// Writes a link's `[`; a `!` right before it (`== !<a>isValid</a>()`) is escaped, or
    /// the link would read as an image.
    fn open_bracket(&mut self) {
        if self.out.ends_with('!') && !self.out.ends_with("\\!") {
            let l = self.out.len() - 1;
            self.out.insert(l, '\\');
        }
        self.out.push('[');
    }

    fn raw(&mut self, s: &str) {
        self.flush();
        self.out.push_str(s);
        self.at_line_start = false;
    }

    fn text(&mut self, t: &str) {
        // Between the lines of a listing written as lines: markup's own line breaks.
        if self.fragment.is_some() && t.contains('\n') && t.trim().is_empty() {
            return;
        }
        // Code broken into lines by `<br>`: its source's own line breaks and indentation
        // are the HTML's, collapsed like any text's.
        if self.br_code.is_some() {
            // A block in the code (a line of a block listing) starts a line.
            if self.pending_nl > 0 && !t.trim().is_empty() {
                if !self.at_code_line_start() {
                    let e = self.out.trim_end_matches(' ').len();
                    self.out.truncate(e);
                    self.out.push('\n');
                    self.out.push_str(&self.prefix);
                }
                self.pending_nl = 0;
            }
            // A space where the text has one, never at a line's start nor twice.
            let mut space = t.starts_with(char::is_whitespace);
            for w in t.split_whitespace() {
                if space && !self.at_code_line_start() && !self.out.ends_with(' ') {
                    self.out.push(' ');
                }
                self.out.push_str(w);
                space = true;
            }
            if t.ends_with(char::is_whitespace)
                && !self.at_code_line_start()
                && !self.out.ends_with(' ')
            {
                self.out.push(' ');
            }
            self.at_line_start = false;
            return;
        }
        if self.pre > 0 && !self.inline_only {
            let mut first = true;
            for line in t.split('\n') {
                if !first {
                    self.out.push('\n');
                    self.out.push_str(&self.prefix);
                }
                first = false;
                if self.pending_nl > 0 || self.pending_marker.is_some() {
                    self.flush();
                }
                self.out.push_str(line.trim_end_matches('\r'));
                self.at_line_start = false;
            }
            return;
        }
        if t.starts_with(|c: char| c.is_whitespace()) {
            self.pending_space = true;
        }
        for w in t.split_whitespace() {
            let line_start = self.at_line_start || self.pending_nl > 0;
            // A closing marker after punctuation closes only before a space or punctuation
            // (`**Question?**The` stays unpaired): a word right after it gets a space.
            if let Some((end, kind, _)) = self.closed.filter(|c| closed_at(&self.out, c.0, c.1)) {
                let before = self.out[..end - kind.marker().len()].chars().next_back();
                if w.starts_with(char::is_alphanumeric)
                    && before.is_some_and(|c| !c.is_alphanumeric() && !c.is_whitespace())
                {
                    self.pending_space = true;
                }
            }
            self.flush();
            // In a heading only a run of `#` could be read as syntax (its closing
            // sequence): "# 10. Full Grammar" is not a list.
            if !line_start && self.code == 0 && self.heading == 0 && self.glued_to_number(w) {
                // `<div>1<span>.</span></div>`: the number and its dot are two texts,
                // and the line would read as an ordered list's marker.
                self.out.push('\\');
                self.out.push_str(w);
            } else if line_start && needs_escape(w) && (self.heading == 0 || w.starts_with('#')) {
                // The marker's first character escaped, the rest like any text (a
                // second backtick of "``" would open a code span).
                let d = w.bytes().take_while(u8::is_ascii_digit).count();
                self.out.push_str(&w[..d]);
                self.out.push('\\');
                self.out.push_str(&w[d..=d]);
                let rest = escape_inline(&w[d + 1..]);
                if self.inline_only {
                    self.out.push_str(&rest.replace('|', "\\|"));
                } else {
                    self.out.push_str(&rest);
                }
            } else if self.code > 0 {
                // Inside a code span everything is literal already, but a `|` still ends a
                // table cell (GFM), so in a cell it stays escaped.
                if self.inline_only && w.contains('|') {
                    self.out.push_str(&w.replace('|', "\\|"));
                } else {
                    self.out.push_str(w);
                }
            } else if self.inline_only && w.contains('|') {
                self.out.push_str(&escape_inline(w).replace('|', "\\|"));
            } else {
                self.out.push_str(&escape_inline(w));
            }
            self.at_line_start = false;
            self.pending_space = true;
        }
        if !t.ends_with(|c: char| c.is_whitespace()) {
            self.pending_space = false;
            // A `<` that the next node continues (Qt's `QAtomicPointer&lt;<span>T</span>&gt;`)
            // would open a tag a reader hides.
            if self.code == 0 && t.ends_with('<') && !self.out.ends_with("\\<") {
                if let Some(l) = self
                    .out
                    .len()
                    .checked_sub(1)
                    .filter(|_| self.out.ends_with('<'))
                {
                    self.out.insert(l, '\\');
                }
            }
        }
    }

    fn enter(&mut self, n: u32) -> bool {
        let Kind::Element { tag, .. } = self.tree.nodes[n as usize].kind else {
            return false;
        };
        if self.pre == 0 && is_code_label(self.tree, n) {
            return false;
        }
        let attrs = self.tree.attrs(n);
        self.saved.push((self.prefix.len(), self.out.len()));
        if let Some(l) = self.lists.last_mut() {
            l.3 |= !matches!(tag, Tag::Li | Tag::Ul | Tag::Ol | Tag::Menu)
                && self.tree.nodes[n as usize].parent == l.2;
        }
        // Lists, quotes and tables inside a code span of a heading (`<h3><code><li>`) are
        // more of the span, read as text: an item's or a row's line would end the heading
        // and leave both backticks unpaired. So is a heading (`<h2><pre><h3>`).
        if self.heading > 0
            && self.code > 0
            && self.pre == 0
            && (is_structure(tag) || tag.is_heading())
        {
            self.block(2);
            self.flat.push(n);
            return true;
        }
        match tag {
            Tag::H1 | Tag::H2 | Tag::H3 | Tag::H4 | Tag::H5 | Tag::H6 => {
                self.block(2);
                self.heading += 1;
                if !self.inline_only {
                    let level = usize::from(tag.heading_level().unwrap_or(6));
                    self.pending_nl = self.pending_nl.max(u8::from(!self.out.is_empty()) * 2);
                    // A heading that opens a list item (Javadoc's member details: a list
                    // of sections) makes the item a section: no marker, and what follows
                    // in it is not indented under a marker that was never written (four
                    // spaces of it would read as code).
                    // The markers of items it opened owed with it (`- - `: an empty
                    // item around it, a collapsed comment above a reply) go too, or
                    // their indentation would build up to a code block's four spaces.
                    // So does a marker already written with nothing after it (an item
                    // opening with a link around `&nbsp;`, which came out empty).
                    if self.pending_marker.is_none() {
                        self.retake_bare_marker();
                    }
                    if let Some(m) = self.pending_marker.take() {
                        let (start, end) = self.marker_at(&m);
                        let (at, end) = if self.prefix[start..end].bytes().all(|b| b == b' ') {
                            (start, end)
                        } else {
                            let at = self.item_at.min(self.prefix.len());
                            (at, (at + m.len()).min(self.prefix.len()))
                        };
                        self.prefix.replace_range(at..end, "");
                    }
                    self.pending_marker = Some(format!("{} ", "#".repeat(level)));
                    self.at_line_start = true;
                }
            }
            Tag::Ul | Tag::Ol | Tag::Menu => {
                let first = attrs.and_then(|a| a.number);
                // A list numbered from other than 1 cannot interrupt a paragraph, so a
                // nested one gets a blank line before it too.
                let gap = self.lists.is_empty() || first.is_some_and(|f| f != 1);
                self.block(if gap { 2 } else { 1 });
                self.lists
                    .push((tag == Tag::Ol, first.unwrap_or(1), n, false));
            }
            // A list in a table cell: its items joined with `<br>`, as the cell's other
            // blocks are.
            Tag::Li if self.inline_only => self.block(1),
            Tag::Li => {
                // After a paragraph written straight inside the list (SQLite's release
                // notes: `<ol><p><b>Fixes:</b><li>…`), a blank line: an item numbered
                // other than 1 cannot interrupt a paragraph.
                let gap = self
                    .lists
                    .last_mut()
                    .is_some_and(|l| std::mem::take(&mut l.3));
                self.block(if gap { 2 } else { 1 });
                if !self.inline_only {
                    let marker = match self.lists.last_mut() {
                        Some((true, c, ..)) => {
                            // `<li value>` renumbers the list from that item on.
                            let at = attrs.and_then(|a| a.number).unwrap_or(*c);
                            *c = at.saturating_add(1);
                            format!("{at}. ")
                        }
                        _ => "- ".to_string(),
                    };
                    // An item that opens with a list (a table of contents' `<li><ul>`)
                    // has its marker still owed: both go on the line (`- - a`), with what
                    // the outer item opened in between (`<li><blockquote><ul>`: `- > - a`).
                    let outer = self.pending_marker.take().filter(|m| !m.starts_with('#'));
                    let between = match &outer {
                        Some(_) => self.prefix.get(self.item_end..).unwrap_or_default(),
                        None => "",
                    };
                    let owed = outer.unwrap_or_default() + between + &marker;
                    self.item_at = self.prefix.len();
                    self.prefix.push_str(&" ".repeat(marker.len()));
                    self.item_end = self.prefix.len();
                    self.pending_marker = Some(owed);
                    // A task's box goes after the marker, as text: the item's content
                    // (and so its indentation) starts at the marker's end.
                    self.pending_task =
                        attrs
                            .and_then(|a| a.task)
                            .map(|c| if c { "[x] " } else { "[ ] " });
                    self.pending_nl = self.pending_nl.max(u8::from(!self.out.is_empty()));
                }
            }
            Tag::Blockquote => {
                self.block(2);
                if !self.inline_only {
                    self.open_quote();
                }
            }
            // A note, tip or warning set apart (an admonition): a quote, so where it ends
            // stays visible.
            Tag::Div | Tag::Aside
                if !self.inline_only && self.pre == 0 && is_admonition(self.tree, n) =>
            {
                self.block(2);
                self.open_quote();
            }
            // A `<pre>` inside a `<pre>` (gi-docgen's declarations: `<pre><code><div
            // class="highlight"><pre>`) is more of the same code block.
            Tag::Pre if self.pre > 0 => self.inner_pre += 1,
            Tag::Pre if !self.inline_only && self.heading == 0 => {
                self.block(2);
                let mut lang = attrs.and_then(|a| code_lang(&a.class, &a.lang));
                if lang.is_none() {
                    // <pre><code class="language-x">
                    if let Some(c) = self
                        .tree
                        .children(n)
                        .find(|&c| self.tree.tag(c) == Some(Tag::Code))
                    {
                        lang = self
                            .tree
                            .attrs(c)
                            .and_then(|a| code_lang(&a.class, &a.lang));
                    }
                }
                // <div class="highlight-source-rust"><pre>, or Sphinx's
                // <div class="highlight-python3"><div class="highlight"><pre>.
                // Or through a listing's table beside its line numbers (Pygments'
                // `div.highlight-python > table.highlighttable > … > td.code >
                // div.highlight > pre`).
                let mut p = self.tree.nodes[n as usize].parent;
                for _ in 0..6 {
                    if lang.is_some() || p == NONE {
                        break;
                    }
                    lang = self
                        .tree
                        .attrs(p)
                        .and_then(|a| code_lang(&a.class, &a.lang));
                    p = self.tree.nodes[p as usize].parent;
                }
                self.open_fence(lang.as_deref().unwrap_or_default());
            }
            // Code broken into lines by `<br>` that a block holds alone, or code around
            // blocks (its lines as `<div>`s), outside any other code.
            Tag::Code | Tag::Tt | Tag::Kbd | Tag::Samp
                if !self.inline_only
                    && self.pre == 0
                    && (self.tree.is_br_listing(n)
                        || self.code == 0
                            && self.heading == 0
                            && self.tree.is_block_listing(n)) =>
            {
                self.block(2);
                self.open_fence("");
                self.br_code = Some(n);
            }
            // Doxygen's code listings: a `div.line` per line, no `<pre>`.
            Tag::Div if !self.inline_only && self.pre == 0 && self.tree.is_code_lines(n) => {
                self.block(2);
                self.open_fence("");
                self.fragment = Some(n);
            }
            // A line of a listing starts a line of the code; its number is no code.
            Tag::Div if self.fragment.is_some() => self.code_line(),
            Tag::Span if self.fragment.is_some() && self.tree.has_class(n, "lineno") => {
                self.saved.pop();
                return false;
            }
            // A definition's classifier (numpydoc's `<strong>fun</strong><span
            // class="classifier">callable</span>`): Sphinx's stylesheet writes the colon
            // between them; plain docutils writes it as a `classifier-delimiter`.
            Tag::Span
                if self.pre == 0
                    && self.code == 0
                    && self.tree.has_class(n, "classifier")
                    && !self.out.trim_end().ends_with(':') =>
            {
                self.text(" : ");
            }
            Tag::B | Tag::Strong => self.open_emph(Emph::Strong),
            Tag::I | Tag::Em => self.open_emph(Emph::Em),
            Tag::S | Tag::Del | Tag::Strike => self.open_emph(Emph::Strike),
            // A disclosure's summary (a FAQ's question) stands out from what it opens;
            // one holding a heading (rustdoc's `impl` blocks) is that heading.
            Tag::Summary if !self.holds_heading(n) => {
                self.block(2);
                self.open_emph(Emph::Strong);
            }
            // An inline quotation: the quotation marks a browser draws around it. Raised
            // and lowered text keep their tags (GFM renders them): 2<sup>32</sup> must not
            // read as 232, nor log<sub>2</sub> as log2.
            Tag::Q | Tag::Sup | Tag::Sub if self.pre == 0 && self.code == 0 => {
                let (open, _) = self.marks(tag);
                self.open_inline(n, |m| m.out.push_str(open));
                self.quotes += usize::from(tag == Tag::Q);
            }
            // A one-line `<pre>` in a table cell (a literal block in a reST table) is a
            // code span there: the table stays a table. So is a `<pre>` in a heading, whose
            // one line a fence would break (`### head ```` left a fence open to the end).
            t if self.pre == 0
                && (matches!(t, Tag::Code | Tag::Kbd | Tag::Samp | Tag::Tt)
                    || t == Tag::Pre && (self.inline_only || self.heading > 0)) =>
            {
                if t == Tag::Pre {
                    self.pending_space = true;
                }
                self.code += 1;
                // A code element inside another is part of its span.
                if self.code == 1 {
                    let before = self.out.len();
                    self.flush();
                    self.code_space_at =
                        (self.out.len() == before + 1 && self.out.ends_with(' ')).then_some(before);
                    // Not when an emphasis marker is written after the span: its
                    // position would move.
                    let at = self.out.len().wrapping_sub(self.span_text.len());
                    let adjoining = self.code_span.take().filter(|_| {
                        self.out.ends_with(self.span_text.as_str())
                            && self.closed.is_none_or(|e| e.2 < at)
                            && self.emph.iter().all(|e| e.1.is_none_or(|p| p < at))
                    });
                    if adjoining.is_some() {
                        self.out.truncate(at);
                    }
                    self.out.push('`');
                    self.at_line_start = false;
                    // Record position after the backtick to detect empty code.
                    if let Some(s) = self.saved.last_mut() {
                        s.1 = self.out.len();
                    }
                    if let Some(body) = adjoining {
                        self.out.push_str(&self.span_text[body]);
                    }
                }
            }
            Tag::A if is_permalink(self.tree, n) => {
                self.saved.pop();
                return false;
            }
            Tag::A if self.opts.links_in_markdown => {
                // Inside `<pre>` a link is part of the code: its text only. So is a
                // heading's link to a fragment of the page (docutils' back-reference to
                // the table of contents): the heading is a title, not a link.
                // Nor is a link to the element that holds it (mandoc's `<dt id="after"><a
                // class="permalink" href="#after">after ms</a></dt>`): a term's anchor.
                let href = attrs
                    .and_then(|a| a.href.as_deref())
                    .filter(|h| self.pre == 0 && !(self.heading > 0 && h.starts_with('#')))
                    .filter(|h| !links_to_holder(self.tree, n, h))
                    // A link inside a link (a card's link around a call to action's own):
                    // markdown cannot nest them, and `[[x](u)](u)` reads as brackets around
                    // a link. The outer one holds the text.
                    .filter(|_| !self.links.iter().any(Option::is_some))
                    .and_then(|h| resolve(self.base, h))
                    .filter(|u| matches!(u.scheme(), "http" | "https"));
                self.links.push(href.as_ref().map(md_url));
                if href.is_some() {
                    // `<a> text</a>` after a word: ` [text](url)`, not `[ text](url)`.
                    self.open_inline(n, |m| {
                        m.open_bracket();
                        m.link_open_at = m.out.len();
                    });
                }
            }
            // A formula: its TeX between dollars (GFM's math), a block of its own when
            // the page shows it as one.
            Tag::Math if self.pre == 0 => {
                let tex = math_tex(self.tree, n);
                if !tex.is_empty() {
                    let block = attrs.is_some_and(|a| a.display_block)
                        && !self.inline_only
                        && self.heading == 0;
                    let tex = if self.inline_only {
                        tex.replace('|', "\\|")
                    } else {
                        tex
                    };
                    if block {
                        self.block(2);
                        self.flush();
                        self.out.push_str(&format!("$${tex}$$"));
                        self.block(2);
                    } else {
                        self.flush_inline();
                        self.out.push_str(&format!("${tex}$"));
                    }
                    self.at_line_start = false;
                }
                self.saved.pop();
                return false;
            }
            Tag::Img if self.opts.images => {
                if let Some(a) = attrs {
                    if let Some(u) = a.src.as_deref().and_then(|s| resolve(self.base, s)) {
                        if matches!(u.scheme(), "http" | "https")
                            && (self.opts.cross_site_images || same_site(self.page, &u))
                        {
                            // A backslash is doubled: TeX's `\[ … \]` around a formula's
                            // drawing (Doxygen) ended in one that escaped the alt's `]`.
                            // In a table cell a `|` would end the cell.
                            let mut alt = a
                                .alt
                                .split_whitespace()
                                .collect::<Vec<_>>()
                                .join(" ")
                                .replace(['[', ']'], "")
                                .replace('\\', "\\\\")
                                .replace('<', "\\<");
                            if self.inline_only {
                                alt = alt.replace('|', "\\|");
                            }
                            self.flush_inline();
                            self.out.push_str(&format!("![{alt}]({})", md_url(&u)));
                            self.at_line_start = false;
                        }
                    }
                }
            }
            Tag::Br => {
                if self.br_code.is_some() {
                    let t = self.out.trim_end_matches(' ').len();
                    self.out.truncate(t);
                    self.out.push('\n');
                    self.out.push_str(&self.prefix);
                } else if self.pre > 0 {
                    self.out.push('\n');
                    self.out.push_str(&self.prefix);
                } else if self.heading > 0 || self.code > 0 {
                    // An ATX heading is one line: a break set for the layout (`OUR<br>
                    // SERVICES`) is a space, or the rest would fall out of the heading.
                    // So is a code span (Javadoc's `static <E><br>Type<E>`): a blank
                    // line would end it, and its text would read as markup (`<E>` as a
                    // tag a reader hides).
                    self.pending_space = true;
                } else if self.inline_only {
                    // A table cell's lines (an address, opening hours) stay lines: GFM
                    // keeps `<br>` in a cell. None at the cell's start; trailing ones are
                    // trimmed with the cell.
                    // Nor right after a link's `[` or a `<sup>` (a link around a break
                    // only, `[<br>](url)`, is an empty link).
                    let t = self.out.trim_end().len();
                    if t > 0 && !self.just_opened() {
                        self.out.truncate(t);
                        self.out.push_str("<br>");
                        self.at_line_start = false;
                        self.pending_space = true;
                    }
                } else if !self.on_bare_marker() {
                    self.block(1);
                }
            }
            Tag::Table if !self.inline_only => {
                self.foster(n);
                if self.table(n) {
                    self.saved.pop();
                    return false;
                }
                self.block(2);
            }
            Tag::Td | Tag::Th => {
                if self.inline_only {
                    self.pending_space = true;
                } else {
                    self.block(2);
                }
            }
            t if t.is_block() => self.block(2),
            _ => {}
        }
        true
    }

    /// Before inline content: flush pending breaks/spaces.
    fn flush_inline(&mut self) {
        self.flush();
    }

    fn exit(&mut self, n: u32) {
        let Some(tag) = self.tree.tag(n) else { return };
        let (plen, olen) = self.saved.pop().unwrap_or((0, 0));
        if self.flat.last() == Some(&n) {
            self.flat.pop();
            self.block(2);
            return;
        }
        match tag {
            Tag::Ul | Tag::Ol | Tag::Menu => {
                self.lists.pop();
                self.block(if self.lists.is_empty() { 2 } else { 1 });
            }
            Tag::Q | Tag::Sup | Tag::Sub if self.pre == 0 && self.code == 0 => {
                self.quotes = self.quotes.saturating_sub(usize::from(tag == Tag::Q));
                let (open, close) = self.marks(tag);
                // One that came out empty (a hidden note's marker) leaves no marks.
                if self.out.len() == olen && self.out.ends_with(open) {
                    self.out.truncate(olen - open.len());
                    self.owe_trailing_space();
                } else if tag != Tag::Q
                    && self.out.get(olen..).is_some_and(|b| b.contains('\n'))
                    && self.out.get(olen - open.len()..olen) == Some(open)
                {
                    // Tags around blocks would not pair up (one alone on a line opens raw
                    // HTML), so their text stays plain, like emphasis'. Quotation marks
                    // are text, and may span lines.
                    let at = olen - open.len();
                    self.out.replace_range(at..olen, "");
                    // Right after a bare list marker, the blocks start on its line (a
                    // marker over a blank line is an empty item).
                    let line = self.line_before(at);
                    if !line.trim().is_empty() && text_start(line) == line.len() {
                        let ws = leading_breaks(&self.out[at..], &self.prefix);
                        self.out.replace_range(at..at + ws, "");
                    }
                } else {
                    self.out.push_str(close);
                }
            }
            Tag::Li => {
                let owed = self.pending_marker.take();
                self.pending_task = None;
                let written = self.written_marker.take();
                if self.out.len() == olen {
                    // An item that wrote nothing leaves owed the markers of the items it
                    // was to open (`- ` of `- 1. `: the nested list's first item was empty).
                    self.pending_marker = owed.as_deref().and_then(outer_markers);
                    // The marker written last is then an outer item's (`<li><a><ol><li>
                    // </li></ol></a>`: the link wrote it): it may still be taken back.
                    self.written_marker = written;
                } else if let Some(m) = self.take_back_bare(olen, written) {
                    // An item that came out empty (a share button's icon) leaves no bare
                    // marker, and owes again the markers of the items it opened (`- - `
                    // of an empty first item of a nested list: the outer `- ` goes on the
                    // next line).
                    self.pending_marker = outer_markers(&m);
                }
                self.block(1);
            }
            Tag::Div if self.fragment == Some(n) => {
                self.fragment = None;
                self.close_fence(olen);
            }
            Tag::Div if self.fragment.is_some() => {}
            _ if self.br_code == Some(n) => {
                self.br_code = None;
                self.close_fence(olen);
            }
            Tag::Pre if self.inner_pre > 0 => self.inner_pre -= 1,
            Tag::Pre if !self.inline_only && self.heading == 0 => self.close_fence(olen),
            Tag::B | Tag::Strong | Tag::I | Tag::Em | Tag::S | Tag::Del | Tag::Strike => {
                self.close_emph()
            }
            Tag::Summary if !self.holds_heading(n) => {
                self.close_emph();
                self.block(2);
            }
            t if self.pre == 0
                && (matches!(t, Tag::Code | Tag::Kbd | Tag::Samp | Tag::Tt)
                    || t == Tag::Pre && (self.inline_only || self.heading > 0)) =>
            {
                self.code = self.code.saturating_sub(1);
                if self.code > 0 {
                    // Nested: the outer span closes.
                } else if self.out.get(olen..).is_none_or(str::is_empty) {
                    self.drop_opener(olen, b'`');
                    // `<a>see <code></code></a>`: the space before it is owed again.
                    if self
                        .code_space_at
                        .is_some_and(|at| at + 1 == self.out.len())
                    {
                        self.owe_trailing_space();
                    }
                } else {
                    let t = self.out.trim_end().len();
                    self.out.truncate(t);
                    self.close_code_span(olen);
                }
                // The outer span mends the links written in a nested one (`<code><code>a
                // <a>b</a></code></code>`).
                if self.code == 0 {
                    self.code_links.clear();
                }
            }
            Tag::A if self.opts.links_in_markdown => {
                self.link_open_at = usize::MAX;
                if let Some(Some(u)) = self.links.pop() {
                    match self.out.get(olen..) {
                        // A link around blocks (a card: image, heading, text) cannot be
                        // one markdown link: its text would span lines and break.
                        Some(t) if t.contains('\n') => self.unwrap_block_link(olen, &u),
                        Some(t) if !t.trim().is_empty() => {
                            let t = self.out.trim_end().len();
                            self.out.truncate(t);
                            escape_unpaired_brackets(&mut self.out, olen);
                            let t = self.out.len();
                            self.out.push_str("](");
                            self.out.push_str(&u);
                            self.out.push(')');
                            if self.code > 0 {
                                self.code_links.push((olen - 1, t, self.out.len()));
                            }
                        }
                        // Nothing visible inside: drop the opening bracket.
                        _ => self.drop_opener(olen, b'['),
                    }
                }
            }
            t if t.is_heading() => {
                self.heading = self.heading.saturating_sub(1);
                self.pending_marker = None;
                // A heading whose marker went down before what then came out empty (a
                // link around an icon: `<h3><a><i class="icon"></i></a></h3>`) leaves
                // no bare `###`.
                if !self.inline_only && self.pre == 0 {
                    let written = self.written_marker.take();
                    self.take_back_bare(olen, written);
                    // Nor a space at its end (`<h3>See Also <a name="x"></a></h3>`: the
                    // space before an anchor that wrote nothing).
                    let t = self.out.trim_end_matches(' ').len();
                    let line = &self.out[self.out[..t].rfind('\n').map_or(0, |i| i + 1)..t];
                    if self.heading == 0 && t > olen && !only_markers(line.trim_end_matches('#')) {
                        self.out.truncate(t);
                    }
                }
                self.block(2);
            }
            // A break inside a heading or a code span was written as a space on entry.
            Tag::Br if (self.heading > 0 || self.code > 0) && self.pre == 0 => {}
            // Nor does a break go after a bare list marker (`<li><a><br></a>text`, the
            // marker written for a link that came out empty): the item would start with
            // a blank line, and CommonMark would read it as empty and the text outside.
            Tag::Br if self.pre == 0 && self.on_bare_marker() => {}
            t if t.is_block() => {
                // A quote (or a note set apart as one) that came out empty leaves no `>`.
                if !self.inline_only && self.prefix.get(plen..).is_some_and(|p| p.contains('>')) {
                    self.take_back_empty_quote(olen);
                }
                self.block(2)
            }
            _ => {}
        }
        self.prefix.truncate(plen.min(self.prefix.len()));
    }

    /// Takes back what a quote wrote from `olen` when it is markers only (its `>`, a
    /// marker of the item around it): a quote with nothing in it (an emptied `<q>`, a
    /// link around an icon) is an empty quote to a reader. The breaks written are owed
    /// again; so is an item's marker written inside it.
    fn take_back_empty_quote(&mut self, olen: usize) {
        // Emphasis opened with nothing in it yet (`> **`) is no content either.
        let end = self.emph_tail(self.out.len()).max(olen);
        if self.pre > 0 || olen >= self.out.len() || !only_markers(&self.out[olen..end]) {
            return;
        }
        let marker = match self.written_marker.take() {
            Some((line, _, m)) if line >= olen => Some(m),
            other => {
                self.written_marker = other;
                None
            }
        };
        self.owe_emph_from(olen);
        let breaks = self.out[olen..].matches('\n').count().min(2) as u8;
        self.out.truncate(olen);
        self.pending_nl = self.pending_nl.max(breaks);
        self.at_line_start = self.out.is_empty() || self.out.ends_with('\n');
        if marker.is_some() {
            self.pending_marker = marker;
        }
    }

    /// Ends a link whose content came out as several lines. CommonMark link text cannot
    /// hold a blank line or a heading, so `[` … `](url)` around them shows as literal
    /// brackets. The opener is removed and the link goes on the first line of plain text
    /// inside (a card's title: `## [Title](url)`); with no such line, the content stays
    /// without the link (it is still among the page's links). Content that is one line
    /// once the breaks around it go is linked whole (`[![avatar](src)](url)`).
    fn unwrap_block_link(&mut self, olen: usize, url: &str) {
        let mut body = self.out.split_off(olen);
        if self.out.ends_with('[') {
            self.out.pop();
        }
        body.truncate(body.trim_end().len());
        // Behind a bare list marker the content's first line moves up to the marker; so
        // it does behind an emphasis opened around the link (`- **` of `<li><b><a><div>`),
        // which a space after it would leave as literal stars.
        // A body of blocks keeps the breaks that put its first one on a line of its own
        // (a fence after text: `a ```` would not open one).
        let line = self.line_before(self.out.len());
        let behind_emph = self.emph_tail(self.out.len()) < self.out.len();
        let mut lead = leading_breaks(&body, &self.prefix);
        let one_line = !body[lead..].contains('\n');
        if text_start(line) == line.len() || (behind_emph && one_line) {
            body.drain(..lead);
            lead = 0;
        }
        if one_line {
            // One line once the breaks around it go (an avatar `<img>` in a `<div>`). The
            // link goes inside the line's heading or list marker (`### [Title](url)`).
            let line = &body[lead..];
            let start = text_start(line);
            if start > 0 {
                // A heading or list line keeps the break that puts it on its own line.
                self.out.push_str(&body[..lead]);
            } else if lead > 0 && !self.out.ends_with(char::is_whitespace) {
                // A break it began with stays a space after text.
                self.out.push(' ');
            }
            self.out.push_str(&line[..start]);
            if start < line.len() {
                self.out.push('[');
                let from = self.out.len();
                self.out.push_str(&line[start..]);
                escape_unpaired_brackets(&mut self.out, from);
                self.out.push_str(&format!("]({url})"));
            }
            self.at_line_start = false;
            return;
        }
        let mut at = 0;
        // Not a line of code: link syntax in a fence is literal text.
        let mut fence = false;
        for line in body.split_inclusive('\n') {
            let text = line.trim_end();
            if text[text_start(text)..].starts_with("```") {
                fence = !fence;
            } else if let Some(start) = linkable_text(text).filter(|_| !fence) {
                let (s, e) = (at + start, at + text.len());
                body.insert_str(e, &format!("]({url})"));
                body.insert(s, '[');
                break;
            }
            at += line.len();
        }
        if !body.is_empty() {
            self.out.push_str(&body);
            self.at_line_start = false;
        }
    }

    /// Closes a code span opened by the backtick just before `olen`. Code that holds
    /// backticks itself (``!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~``) is delimited by one more
    /// backtick than its longest run, with a space inside when it starts or ends with one,
    /// as CommonMark reads it; a single backtick would end the span early.
    fn close_code_span(&mut self, olen: usize) {
        // Link syntax inside a code span is literal text (`` `[x](url)` ``). A span that
        // is one link becomes a link around the span (Apache's and Javadoc's
        // `<code><a>name</a></code>`); links inside a longer span keep their text only.
        let links = std::mem::take(&mut self.code_links);
        if let [(open, text_end, close)] = links[..] {
            if open == olen && close == self.out.len() {
                let text = self.out[open + 1..text_end].to_string();
                let target = self.out[text_end..close].to_string();
                self.out.truncate(olen - 1);
                self.open_bracket();
                self.out.push('`');
                let at = self.out.len();
                self.out.push_str(&text);
                self.close_code_span(at);
                self.out.push_str(&target);
                return;
            }
        }
        for &(open, text_end, close) in links.iter().rev() {
            if olen <= open && close <= self.out.len() {
                self.out.replace_range(text_end..close, "");
                self.out.replace_range(open..open + 1, "");
            }
        }
        let body = &self.out[olen..];
        if !body.contains('`') {
            self.out.push('`');
            self.span_text.clear();
            self.span_text.push_str(&self.out[olen - 1..]);
            self.code_span = Some(1..self.out.len() - olen);
            return;
        }
        let run = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
        let delim = "`".repeat(run + 1);
        let pad = if body.starts_with('`') || body.ends_with('`') {
            " "
        } else {
            ""
        };
        let span = format!("{delim}{pad}{body}{pad}{delim}");
        let text = delim.len() + pad.len();
        let text = text..text + body.len();
        self.out.truncate(olen - 1);
        self.out.push_str(&span);
        self.span_text = span;
        self.code_span = Some(text);
    }

    /// Opens a fenced code block (a `<pre>`, or a listing written as lines).
    fn open_fence(&mut self, lang: &str) {
        self.raw(&format!("```{lang}"));
        self.out.push('\n');
        self.out.push_str(&self.prefix);
        self.pre += 1;
    }

    /// Whether nothing is written yet on the current line of a code block.
    fn at_code_line_start(&self) -> bool {
        self.out
            .strip_suffix(self.prefix.as_str())
            .is_some_and(|o| o.ends_with('\n'))
    }

    /// Starts a line of code, unless the last one is still empty.
    fn code_line(&mut self) {
        if !self.at_code_line_start() {
            self.out.push('\n');
            self.out.push_str(&self.prefix);
        }
    }

    /// Closes the fenced code block opened at `olen`.
    fn close_fence(&mut self, olen: usize) {
        self.pre = self.pre.saturating_sub(1);
        self.out.truncate(self.out.trim_end().len());
        // A block of no code (mandoc's `<pre>\n</pre>` for an empty `.nf`/`.fi`) is not
        // written: only its opening fence came out since `olen` (and no list marker).
        if self
            .out
            .get(olen..)
            .map(|o| o.trim_start_matches(|c: char| c.is_whitespace() || c == '>'))
            .is_some_and(|o| o.starts_with("```") && !o.contains('\n'))
        {
            self.out.truncate(olen);
            self.block(2);
            return;
        }
        // Blank lines at the code's end, which inside a quote or a list item are only
        // their prefix (`>`): not code.
        let bare = self.prefix.trim_end();
        while !bare.is_empty() && self.out.len() > olen {
            let Some(rest) = self.out.strip_suffix(bare) else {
                break;
            };
            if !rest.ends_with('\n') {
                break;
            }
            let keep = rest.trim_end().len();
            self.out.truncate(keep);
        }
        let fence = self.widen_fence(olen);
        self.out.push('\n');
        self.out.push_str(&self.prefix);
        self.out.push_str(&"`".repeat(fence));
        self.pending_nl = 0;
        self.block(2);
    }

    /// The length of the fence of the code block written from `olen`: three backticks,
    /// or one more than the longest run that opens a line of the code (a page about
    /// markdown shows fenced code in its code blocks). The opening fence is widened to it.
    fn widen_fence(&mut self, olen: usize) -> usize {
        let Some(open) = self.out.get(olen..).and_then(|o| o.find("```")) else {
            return 3;
        };
        let open = olen + open;
        let body = self.out[open..]
            .find('\n')
            .map_or(self.out.len(), |i| open + i + 1);
        let run = self.out[body..]
            .lines()
            .map(|l| {
                l.trim_start_matches([' ', '>'])
                    .bytes()
                    .take_while(|&b| b == b'`')
                    .count()
            })
            .max()
            .unwrap_or(0);
        if run < 3 {
            return 3;
        }
        self.out.insert_str(open, &"`".repeat(run + 1 - 3));
        run + 1
    }

    /// Removes the opener written just before `olen` when the element stayed empty.
    fn drop_opener(&mut self, olen: usize, opener: u8) {
        if olen > 0 && self.out.len() == olen && self.out.as_bytes().get(olen - 1) == Some(&opener)
        {
            self.out.truncate(olen - 1);
        }
    }

    /// Renders `table` as a GFM table if it looks like data; returns false for layout tables.
    fn table(&mut self, table: u32) -> bool {
        let tree = self.tree;
        let end = subtree_end(tree, table);
        let mut rows: Vec<u32> = Vec::new();
        let mut lists = false;
        // A one-line `<pre>` in a cell, written as a code span.
        let mut spans = false;
        // Rows that hold only a heading (Doxygen's `table.memberdecls`: "Functions",
        // "Macros" over the members of each kind): the table's sections.
        let mut titles: Vec<(u32, u32)> = Vec::new();
        let mut i = table + 1;
        while i < end {
            // What stood outside the cells was written before the table.
            if self.is_fostered(i) {
                i = subtree_end(tree, i);
                continue;
            }
            // A form straight in the table is its layout (a label beside each field): the
            // table is laid out as its text.
            if tree.tag(i) == Some(Tag::Form)
                && is_table_part(tree, tree.nodes[i as usize].parent)
                && holds_text(tree, i)
            {
                return false;
            }
            match tree.tag(i) {
                Some(Tag::Ul | Tag::Ol) => lists = true,
                // An indented list (docutils wraps it in a blockquote) is a list in a cell.
                Some(Tag::Blockquote) if only_a_list(tree, i) => {}
                Some(t) if t.is_heading() => match self.title_row(table, i) {
                    Some(r) => {
                        // The row was pushed when it was reached, just before its heading.
                        if rows.last() == Some(&r) {
                            rows.pop();
                        }
                        titles.push((r, i));
                        i = subtree_end(tree, r);
                        continue;
                    }
                    // A cell's small heading (`<th><h4>`) is the cell's text.
                    None if matches!(t, Tag::H1 | Tag::H2 | Tag::H3) => return false,
                    None => {}
                },
                // A one-line `<pre>` that is all its cell holds is a code span there
                // (nginx's "Default:" row, a reST literal in a table of key codes).
                Some(Tag::Pre) if one_line(tree, i) && sole_in_cell(tree, i) => spans = true,
                Some(Tag::Table | Tag::Pre | Tag::Blockquote) => return false,
                Some(Tag::Tr) if !self.skipped(i) => rows.push(i),
                _ => {}
            }
            i += 1;
        }
        // A table of one row around a code example indents it (Texinfo's `@example` in a
        // `<table>` beside an empty cell): the example stays a code block.
        if spans && rows.len() + titles.len() < 2 {
            return false;
        }
        // Whether a header cell stands outside the title rows (a `<th>`, or a cell that is
        // a heading); looked at only when a title row or a single column asks.
        let headed = |rows: &[u32]| {
            rows.iter().any(|&r| {
                tree.children(r).any(|c| {
                    !self.skipped(c)
                        && match tree.tag(c) {
                            Some(Tag::Th) => true,
                            Some(Tag::Td) => tree
                                .sole_element(c)
                                .is_some_and(|e| tree.tag(e).is_some_and(Tag::is_heading)),
                            _ => false,
                        }
                })
            })
        };
        let th = !titles.is_empty() && headed(&rows);
        // Under a header row the columns are named once for the whole table: a title row
        // stays a row (a recipe's "Vegetables" over its ingredients), as a cell's heading.
        if th {
            if titles
                .iter()
                .any(|&(_, h)| matches!(tree.tag(h), Some(Tag::H1 | Tag::H2 | Tag::H3)))
            {
                return false;
            }
            rows.extend(titles.drain(..).map(|(r, _)| r));
            rows.sort_unstable();
        }
        let cells: Vec<(u32, Vec<u32>)> = rows
            .iter()
            .map(|&r| {
                let c = tree
                    .children(r)
                    .filter(|&c| matches!(tree.tag(c), Some(Tag::Td | Tag::Th)) && !self.skipped(c))
                    .collect();
                (r, c)
            })
            .filter(|(_, c): &(u32, Vec<u32>)| !c.is_empty())
            .collect();
        let cols = cells.iter().map(|(_, c)| c.len()).max().unwrap_or(0);
        // One row of lists is a layout in columns (an index page), not data. One column
        // is a layout too, unless a header cell names it (DocBook's function tables:
        // "Function / Description / Example(s)" over one entry a row).
        // (Title rows put back under a header row leave that row a header.)
        if (cols < 2 && !(cells.len() >= 2 && (th || headed(&rows)))) || (lists && cells.len() < 2)
        {
            return false;
        }
        // Cells laid on the table's grid: a cell spanning columns leaves empty cells after
        // it, one spanning rows leaves an empty cell in its column of the rows below (GFM
        // has no spans; the columns stay aligned).
        let mut text_rows: Vec<(u32, Vec<String>)> = Vec::with_capacity(cells.len());
        // Rows each column is still taken for by a cell above.
        let mut taken: Vec<u16> = Vec::new();
        for (r, row) in &cells {
            let mut t: Vec<String> = Vec::with_capacity(cols);
            let mut cells = row.iter();
            loop {
                while taken.get(t.len()).is_some_and(|&n| n > 0) {
                    taken[t.len()] -= 1;
                    t.push(String::new());
                }
                let Some(&c) = cells.next() else { break };
                let (cs, rs) = tree
                    .attrs(c)
                    .map_or((1, 1), |a| (a.colspan.max(1), a.rowspan.max(1)));
                t.push(self.cell(c));
                for k in 0..cs {
                    if k > 0 {
                        t.push(String::new());
                    }
                    let at = t.len() - 1;
                    if taken.len() <= at {
                        taken.resize(at + 1, 0);
                    }
                    taken[at] = rs - 1;
                }
            }
            // Columns taken from above past this row's last cell.
            for n in taken.iter_mut().skip(t.len()) {
                *n = n.saturating_sub(1);
            }
            text_rows.push((*r, t));
        }
        let cols = text_rows.iter().map(|(_, t)| t.len()).max().unwrap_or(cols);
        for (_, t) in &mut text_rows {
            t.resize(cols, String::new());
        }
        if text_rows
            .iter()
            .all(|(_, r)| r.iter().all(String::is_empty))
        {
            return true;
        }
        // The caption names the table: a line of its own above it (GFM has no caption).
        // One written for screen readers only describes the table the markdown shows.
        let caption = tree
            .children(table)
            .find(|&c| tree.tag(c) == Some(Tag::Caption) && !self.skipped(c))
            .filter(|&c| {
                !["sr-only", "visually-hidden", "screen-reader-text"]
                    .iter()
                    .any(|k| tree.has_class(c, k))
            })
            .map(|c| self.cell(c))
            .filter(|t| !t.is_empty());
        self.block(2);
        self.flush();
        if let Some(c) = caption {
            self.out.push_str(&c);
            self.out.push_str("\n\n");
            self.out.push_str(&self.prefix);
        }
        let mut first = true;
        // Whether anything of the table was written yet.
        let mut written = false;
        let mut next_title = titles.iter().peekable();
        for (r, t) in &text_rows {
            // The titles before this row, each a heading that starts a new table.
            while let Some(&(_, h)) = next_title.next_if(|&&(tr, _)| tr < *r) {
                self.title(h, written);
                first = true;
                written = true;
            }
            written = true;
            if !first {
                self.out.push('\n');
                self.out.push_str(&self.prefix);
            }
            self.out.push_str("| ");
            self.out.push_str(&t.join(" | "));
            self.out.push_str(" |");
            if first {
                self.out.push('\n');
                self.out.push_str(&self.prefix);
                self.out.push('|');
                self.out.push_str(&"---|".repeat(cols));
            }
            first = false;
        }
        for &(_, h) in next_title {
            self.title(h, true);
        }
        self.at_line_start = false;
        self.block(2);
        true
    }

    /// Writes first what stands straight in `table`, its body or a row, outside any cell
    /// (text, a `<div>`, a link), as a browser shows it (HTML's "foster parenting"), and
    /// records it to be skipped where it stands. A table there is not one of them (a
    /// browser ends the outer table at it), nor a form (the table's layout); a nested
    /// table's are its own.
    fn foster(&mut self, table: u32) {
        let tree = self.tree;
        let end = subtree_end(tree, table);
        let mut found = Vec::new();
        let mut i = table + 1;
        while i < end {
            let outside = !matches!(
                tree.tag(i),
                Some(
                    Tag::Tr
                        | Tag::Td
                        | Tag::Th
                        | Tag::Thead
                        | Tag::Tbody
                        | Tag::Tfoot
                        | Tag::Caption
                        | Tag::Colgroup
                        | Tag::Col
                        | Tag::Table
                        | Tag::Form
                )
            ) && is_table_part(tree, tree.nodes[i as usize].parent);
            if outside && !self.skipped(i) && holds_text(tree, i) {
                found.push(i);
            }
            i = if outside || matches!(tree.tag(i), Some(Tag::Table | Tag::Td | Tag::Th)) {
                subtree_end(tree, i)
            } else {
                i + 1
            };
        }
        if found.is_empty() {
            return;
        }
        self.block(2);
        for &f in &found {
            self.run(f);
        }
        self.block(2);
        self.fostered.extend(found);
        self.fostered.sort_unstable();
    }

    /// The row of `table` that holds heading `h` and nothing else, if it is one.
    fn title_row(&self, table: u32, h: u32) -> Option<u32> {
        let tree = self.tree;
        let mut x = h;
        loop {
            let p = tree.nodes[x as usize].parent;
            if p == NONE || p == table {
                return None;
            }
            match tree.tag(p) {
                Some(Tag::Tr) => {
                    let mut cells = tree
                        .children(p)
                        .filter(|&c| matches!(tree.tag(c), Some(Tag::Td | Tag::Th)));
                    let only = cells.next() == Some(x) && cells.next().is_none();
                    return only.then_some(p);
                }
                Some(Tag::Td | Tag::Th | Tag::Div | Tag::Span)
                    if tree.sole_element(p) == Some(x) =>
                {
                    x = p
                }
                _ => return None,
            }
        }
    }

    /// Writes heading `h` of a table's title row as a heading of its own, ending the table
    /// written before it.
    fn title(&mut self, h: u32, after: bool) {
        let level = usize::from(self.tree.tag(h).and_then(Tag::heading_level).unwrap_or(6));
        let text = self.cell(h);
        if text.is_empty() {
            return;
        }
        if after {
            self.out.push_str("\n\n");
            self.out.push_str(&self.prefix);
        }
        self.out.push_str(&"#".repeat(level));
        self.out.push(' ');
        self.out.push_str(&text);
        self.out.push_str("\n\n");
        self.out.push_str(&self.prefix);
    }

    fn cell(&self, c: u32) -> String {
        let mut m = Md::new(self.tree, self.opts, self.base, self.page, self.removed);
        m.inline_only = true;
        m.run(c);
        let mut s = m.out.trim();
        while let Some(t) = s.strip_suffix("<br>") {
            s = t.trim_end();
        }
        s.replace('\n', " ")
    }
}

/// Whether `n` is all the text of the table cell it is in (wrappers aside).
fn sole_in_cell(tree: &Tree, n: u32) -> bool {
    let mut c = n;
    loop {
        let p = tree.nodes[c as usize].parent;
        if p == NONE {
            return false;
        }
        let words = |i: u32| tree.text_of(i).is_some_and(|t| !t.trim().is_empty());
        let others = tree
            .children(p)
            .any(|x| x != c && (words(x) || (x + 1..subtree_end(tree, x)).any(words)));
        if others {
            return false;
        }
        if matches!(tree.tag(p), Some(Tag::Td | Tag::Th)) {
            return true;
        }
        c = p;
    }
}

/// Whether the text in `n` is one line (a `<pre>` that can be a code span).
fn one_line(tree: &Tree, n: u32) -> bool {
    let text: String = (n + 1..subtree_end(tree, n))
        .filter_map(|i| tree.text_of(i))
        .collect();
    !text.trim().contains('\n')
        && !(n + 1..subtree_end(tree, n)).any(|i| tree.tag(i) == Some(Tag::Br))
}

/// Whether `n` holds one list and nothing else, through wrappers of one element
/// (`<blockquote><div><ul>`).
fn only_a_list(tree: &Tree, n: u32) -> bool {
    let mut x = n;
    loop {
        match tree
            .sole_element(x)
            .and_then(|c| tree.tag(c).map(|t| (c, t)))
        {
            Some((_, Tag::Ul | Tag::Ol)) => return true,
            Some((c, Tag::Div)) => x = c,
            _ => return false,
        }
    }
}

/// The TeX of formula `n` (`<math>`): its `alttext`, else its TeX annotation, else its
/// presentation markup written as TeX (`<msup>` as `^`, `<mfrac>` as `\frac`, …).
/// Whitespace collapsed; empty when the formula shows nothing.
pub(crate) fn math_tex(tree: &Tree, n: u32) -> String {
    let alt = tree.attrs(n).map_or("", |a| &a.alt);
    let mut tex = String::new();
    if !alt.trim().is_empty() {
        tex.push_str(alt);
    } else if let Some(a) = (n + 1..subtree_end(tree, n))
        .find(|&i| tree.tag(i) == Some(Tag::Annotation) && !tree.nodes[i as usize].hidden)
    {
        math_text(tree, a, &mut tex);
    } else {
        mathml(tree, n, &mut tex);
    }
    let tex = tex.split_whitespace().collect::<Vec<_>>().join(" ");
    // MediaWiki wraps every formula in `{\displaystyle …}`: only the formula is news.
    match tex
        .strip_prefix("{\\displaystyle")
        .and_then(|t| t.strip_suffix('}'))
    {
        Some(inner) => inner.trim().to_string(),
        None => tex,
    }
}

/// Appends the text under `n`, as it is.
fn math_text(tree: &Tree, n: u32, out: &mut String) {
    for i in n..subtree_end(tree, n) {
        if let Some(t) = tree.text_of(i) {
            out.push_str(t);
        }
    }
}

/// A step of writing a formula: an element still to write, or TeX written around one.
enum MathStep {
    Node(u32),
    Lit(&'static str),
}

/// Whether MathML element `n` writes one character (`<mi>x</mi>`, or an `<mrow>` around
/// one): a script's base or script that needs no braces.
fn one_char(tree: &Tree, mut n: u32) -> bool {
    for _ in 0..64 {
        match tree.tag(n) {
            Some(Tag::Mi | Tag::Mn | Tag::Mo) => {
                let mut t = String::new();
                math_text(tree, n, &mut t);
                return t.trim().chars().count() == 1;
            }
            Some(Tag::Mrow | Tag::Mstyle) => {
                let mut kids = tree.children(n).filter(|&c| tree.tag(c).is_some());
                match (kids.next(), kids.next()) {
                    (Some(c), None) => n = c,
                    _ => return false,
                }
            }
            _ => return false,
        }
    }
    false
}

/// Appends presentation MathML `n` written as TeX (`<msup>` as `^`, `<mfrac>` as
/// `\frac`, `<mtable>` as a matrix, …). Iterative: the tree's depth cap bounds the work
/// stack, not the call stack.
fn mathml(tree: &Tree, n: u32, out: &mut String) {
    use MathStep::{Lit, Node};
    let mut stack = vec![Node(n)];
    let mut seq: Vec<MathStep> = Vec::new();
    while let Some(step) = stack.pop() {
        let n = match step {
            Lit(t) => {
                out.push_str(t);
                continue;
            }
            Node(n) => n,
        };
        if tree.nodes[n as usize].hidden {
            continue;
        }
        let Some(tag) = tree.tag(n) else { continue };
        // The element children: a script's base and scripts, a fraction's parts.
        let parts: Vec<u32> = tree
            .children(n)
            .filter(|&c| tree.tag(c).is_some())
            .collect();
        // Part `i` in braces unless it is one character.
        let part = |i: usize, seq: &mut Vec<MathStep>| {
            let Some(&c) = parts.get(i) else { return };
            if one_char(tree, c) {
                seq.push(Node(c));
            } else {
                seq.extend([Lit("{"), Node(c), Lit("}")]);
            }
        };
        seq.clear();
        match tag {
            Tag::Mi | Tag::Mn | Tag::Mo | Tag::Ms => {
                let mut t = String::new();
                math_text(tree, n, &mut t);
                for c in t.trim().chars() {
                    match c {
                        '{' | '}' | '_' | '%' | '#' | '&' | '$' => {
                            out.push('\\');
                            out.push(c);
                        }
                        '^' => out.push_str("\\hat{}"),
                        '\\' => out.push_str("\\backslash "),
                        c => out.push(c),
                    }
                }
            }
            Tag::Mtext => {
                let mut t = String::new();
                math_text(tree, n, &mut t);
                if !t.trim().is_empty() {
                    out.push_str("\\text{");
                    out.push_str(&t.replace(['{', '}', '\\'], ""));
                    out.push('}');
                }
            }
            Tag::Mspace => out.push(' '),
            Tag::Msup | Tag::Mover => {
                part(0, &mut seq);
                seq.push(Lit("^"));
                part(1, &mut seq);
            }
            Tag::Msub | Tag::Munder => {
                part(0, &mut seq);
                seq.push(Lit("_"));
                part(1, &mut seq);
            }
            Tag::Msubsup | Tag::Munderover => {
                part(0, &mut seq);
                seq.push(Lit("_"));
                part(1, &mut seq);
                seq.push(Lit("^"));
                part(2, &mut seq);
            }
            Tag::Mfrac => {
                seq.push(Lit("\\frac{"));
                seq.extend(parts.first().map(|&c| Node(c)));
                seq.push(Lit("}{"));
                seq.extend(parts.get(1).map(|&c| Node(c)));
                seq.push(Lit("}"));
            }
            Tag::Msqrt => {
                seq.push(Lit("\\sqrt{"));
                seq.extend(parts.iter().map(|&c| Node(c)));
                seq.push(Lit("}"));
            }
            Tag::Mroot => {
                seq.push(Lit("\\sqrt["));
                seq.extend(parts.get(1).map(|&c| Node(c)));
                seq.push(Lit("]{"));
                seq.extend(parts.first().map(|&c| Node(c)));
                seq.push(Lit("}"));
            }
            Tag::Mtable => {
                seq.push(Lit("\\begin{matrix}"));
                for (r, &row) in parts.iter().enumerate() {
                    if r > 0 {
                        seq.push(Lit(" \\\\ "));
                    }
                    let cells = tree.children(row).filter(|&c| tree.tag(c).is_some());
                    for (k, cell) in cells.enumerate() {
                        if k > 0 {
                            seq.push(Lit(" & "));
                        }
                        seq.push(Node(cell));
                    }
                }
                seq.push(Lit("\\end{matrix}"));
            }
            // A formula's first child is what it shows; the rest annotate it.
            Tag::Semantics => seq.extend(parts.first().map(|&c| Node(c))),
            Tag::Annotation | Tag::AnnotationXml | Tag::Mphantom => {}
            _ => seq.extend(parts.iter().map(|&c| Node(c))),
        }
        stack.extend(seq.drain(..).rev());
    }
}

/// Whether `p` is a table, its body or a row: what a cell stands in.
fn is_table_part(tree: &Tree, p: u32) -> bool {
    matches!(
        tree.tag(p),
        Some(Tag::Table | Tag::Thead | Tag::Tbody | Tag::Tfoot | Tag::Tr)
    )
}

/// Whether `n` is text, or holds text, other than white space.
pub(crate) fn holds_text(tree: &Tree, n: u32) -> bool {
    (n..subtree_end(tree, n)).any(|i| tree.text_of(i).is_some_and(|t| !t.trim().is_empty()))
}

/// Whether all the text under `n` lies inside descendants `inside` accepts, and one such
/// descendant exists (a logo `<h1>`'s home link, a hidden wrapper's formulas).
pub(crate) fn text_only_inside(tree: &Tree, n: u32, inside: impl Fn(u32) -> bool) -> bool {
    let end = subtree_end(tree, n);
    let (mut i, mut any) = (n + 1, false);
    while i < end {
        if inside(i) {
            any = true;
            i = subtree_end(tree, i);
            continue;
        }
        if tree.text_of(i).is_some_and(|t| !t.trim().is_empty()) {
            return false;
        }
        i += 1;
    }
    any
}

/// Index one past the last descendant of `n` (nodes are in document order).
pub(crate) fn subtree_end(tree: &Tree, n: u32) -> u32 {
    let mut x = n;
    loop {
        let node = &tree.nodes[x as usize];
        if node.next_sibling != NONE {
            return node.next_sibling;
        }
        if node.parent == NONE {
            return tree.nodes.len() as u32;
        }
        x = node.parent;
    }
}

/// Whether a word at the start of a line would be read as markdown syntax.
fn needs_escape(w: &str) -> bool {
    let b = w.as_bytes();
    match b.first() {
        Some(b'#' | b'>' | b'|' | b'`' | b'~') => true,
        Some(b'-' | b'+' | b'*' | b'=' | b'_') => b.len() == 1 || b.iter().all(|&c| c == b[0]),
        Some(c) if c.is_ascii_digit() => {
            let d = b.iter().take_while(|c| c.is_ascii_digit()).count();
            d == b.len() - 1 && matches!(b[d], b'.' | b')')
        }
        _ => false,
    }
}
