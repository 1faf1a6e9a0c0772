//! Main-content selection: site chrome removal and content-container choice.
//!
//! All passes are linear walks over the node vector (children always follow
//! their parent), so nothing recurses.

use super::text_words;
use super::tree::{Attrs, Kind, Tag, Tree, NONE};
use std::collections::HashMap;

/// Result of main-content selection.
#[derive(Debug)]
pub(crate) struct Selection {
    /// Root of the main content.
    pub(crate) root: u32,
    /// Nodes to skip when rendering.
    pub(crate) removed: Vec<bool>,
}

/// Share of its parent's content a child needs for selection to descend into it.
const DESCEND_SHARE: f64 = 0.72;
/// Share of the page's text above which a block with a chrome class (`has-sidebar`,
/// `feedback-list`) is taken for the page wrapper rather than chrome: only a block holding
/// most of the page is.
const CLASS_CHROME_MAX: f64 = 0.5;
/// Share of the page's prose such a block needs to be the wrapper when at least
/// [`WRAPPER_PROSE_OUTSIDE`] bytes of prose lie outside it.
const CLASS_WRAPPER_PROSE_MIN: f64 = 0.1;
const WRAPPER_PROSE_OUTSIDE: u32 = 200;
/// Text outside links (bytes) before a comment section that makes it chrome: a post.
const COMMENTS_AFTER_TEXT: u32 = 1000;
/// Text (bytes) a comment section needs for that: a thread, not an item's "Comments: 3".
const COMMENTS_MIN: u32 = 200;
/// Text outside links (bytes) before a comment section titled by its count ("7 comments:")
/// that makes it chrome: a short post's.
const COUNTED_COMMENTS_AFTER_TEXT: u32 = 200;
/// Weight of link text in the content measure.
const LINK_WEIGHT: f64 = 0.3;
/// Share of kept text in paragraphs above which a page counts as prose (an article).
const PROSE_PAGE: f64 = 0.5;
/// Share of a block's content in its one code listing above which the descent does not
/// enter it.
const LISTING_SHARE: f64 = 0.5;
/// Minimum text (non-space bytes) of a repeated listing item that is kept although link-dense.
const ITEM_MIN: u32 = 40;
/// Share of a listing item's text in links (its title links to the thing listed).
const ITEM_LINK_SHARE: f64 = 0.2;
/// Listing-item text outside the best child that stops the descent (bytes, share).
const ITEMS_LEFT_MIN: f64 = 200.0;
const ITEMS_LEFT_SHARE: f64 = 0.4;
/// Content (weighted bytes) under which a choice outside a `<main>` holding an `<h1>` is
/// scraps, and the landmark is taken instead.
const SCRAPS_MAX: f64 = 500.0;
/// Share of the page's content its `<main>` landmark needs to be where selection starts.
const MAIN_MIN_SHARE: f64 = 0.2;
/// Sibling merge: minimum text of a like sibling, its maximum share of link text, and
/// the share of the chosen child's content the like siblings need together.
const SIBLING_MIN: u32 = 100;
const SIBLING_LINK_SHARE: f64 = 0.5;
const SIBLING_SHARE: f64 = 0.15;
/// Content an `itemprop="articleBody"` element needs to be taken as the main content.
const ARTICLE_BODY_MIN: f64 = 200.0;
/// Paragraph text an `<article>` needs to guard the blocks holding it from chrome removal.
const ARTICLE_PROSE_MIN: u32 = 200;
/// Own text and `<br>` children a `<div>` needs for its text to count as paragraphs.
const BR_DIV_TEXT: u32 = 400;
const BR_DIV_BREAKS: u8 = 2;
/// Minimum paragraph text for the prose-based descent.
const PROSE_MIN: f64 = 300.0;
/// ... or, in the child that holds the page's `<h1>` as well, this much (a short article).
const SHORT_ARTICLE_PROSE: f64 = 100.0;
/// Share of a block's text in links that makes it a column of links beside the content.
const LINK_COLUMN_SHARE: f64 = 0.8;
/// Share of its parent's paragraph text a child needs for the prose-based descent.
const PROSE_SHARE: f64 = 0.7;
/// A sibling before the chosen content with this much text (bytes)...
const LEAD_MIN: u32 = 100;
/// ...at least this share of it paragraph text...
const LEAD_PROSE_SHARE: f64 = 0.5;
/// ...and at most this share link text is its lead (standfirst, question, introduction).
const LEAD_LINK_SHARE: f64 = 0.2;

/// Words (of class/id tokens split at `-`, `_` and camelCase) that mark site chrome.
const CHROME_WORDS: &[&str] = &[
    "nav",
    "navbar",
    "navigation",
    "topnav",
    "subnav",
    "menu",
    "menus",
    "submenu",
    "megamenu",
    "menubar",
    "footer",
    "sidebar",
    "breadcrumb",
    "breadcrumbs",
    "share",
    "sharing",
    "sharebar",
    "social",
    "related",
    "newsletter",
    "subscribe",
    "subscription",
    "advert",
    "advertisement",
    "ad",
    "ads",
    "adslot",
    "sponsor",
    "sponsored",
    "popup",
    "modal",
    "masthead",
    "promo",
    "recommended",
    "recommendations",
    "trending",
    "toolbar",
    "signup",
    "login",
    "outbrain",
    "taboola",
    "comments",
    "disqus",
    "respond",
    "pagination",
    "pager",
    "tagcloud",
    "offcanvas",
    "drawer",
    "overlay",
    "lightbox",
    "feedback",
    "signature",
    "userextras",
    "usertitle",
];
/// Chrome words that name other content than the page's (a shelf), not a place on it.
const OTHER_CONTENT_WORDS: &[&str] = &[
    "related",
    "promo",
    "recommended",
    "recommendations",
    "trending",
    "outbrain",
    "taboola",
    "sponsored",
];
/// Words that mark cookie/consent banners: chrome even when they hold most of the
/// prose of a page whose real content is short (only `<main>`/`<article>`/`<h1>` guard).
const CONSENT_WORDS: &[&str] = &[
    "cookie",
    "cookies",
    "consent",
    "gdpr",
    "onetrust",
    "cookiebot",
];
/// Words that mark a comment section: chrome on an article, content on a forum.
/// (`comment` too: WordPress's `comment-list`, `comment-respond`; on forums the
/// discussion check keeps them.)
/// Blogs list the posts that link back (`trackbacks`, `pingbacks`) with the comments.
const COMMENT_WORDS: &[&str] = &[
    "comments",
    "comment",
    "commentlist",
    "respond",
    "disqus",
    "trackback",
    "trackbacks",
    "pingback",
    "pingbacks",
];
/// Words that name a discussion thread.
const FORUM_WORDS: &[&str] = &["discussion", "thread", "forum"];
/// Whole class/id tokens that mark site chrome.
const EXACT_CHROME: &[&str] = &[
    "header",
    "site-header",
    "global-header",
    "top-bar",
    "topbar",
    "sr-only",
    "visually-hidden",
    "screen-reader-text",
    "comment-form",
    "author-bio",
    "share-buttons",
    // What a site keeps out of search engines' index: Yahoo's `robots-nocontent`.
    "robots-nocontent",
];
const CHROME_ROLES: &[&str] = &[
    "navigation",
    "banner",
    "contentinfo",
    "complementary",
    "search",
    "menu",
    "menubar",
    "toolbar",
    "dialog",
    "alertdialog",
    "alert",
];
const CONTENT_WORDS: &[&str] = &[
    "article", "content", "post", "entry", "main", "story", "body", "text", "blog",
];

fn class_tokens(s: &str) -> impl Iterator<Item = String> + '_ {
    s.split_ascii_whitespace().map(str::to_ascii_lowercase)
}

/// Words of a class token, split at non-alphanumerics and camelCase humps (no allocation).
fn words(tok: &str) -> impl Iterator<Item = &str> + '_ {
    let b = tok.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < b.len() && !b[i].is_ascii_alphanumeric() {
            i += 1;
        }
        if i >= b.len() {
            return None;
        }
        let start = i;
        i += 1;
        while i < b.len()
            && b[i].is_ascii_alphanumeric()
            && (!b[i].is_ascii_uppercase() || b[i - 1].is_ascii_uppercase())
        {
            i += 1;
        }
        tok.get(start..i)
    })
}

/// Classifies one class/id token: 4 = consent banner, 3 = comment section, 1 = chrome,
/// 0 = neither.
fn token_hint(tok: &str) -> u8 {
    if EXACT_CHROME.iter().any(|e| tok.eq_ignore_ascii_case(e)) {
        return 1;
    }
    let tok = without_module_hash(tok);
    let mut hint = 0;
    // `skip` marks chrome only beside `link`/`nav` (a skip-links bar), never in a skip
    // link's target (`wp--skip-link--target`, `skip-to-products`) or a utility class
    // (`decoration-skip-ink-none`).
    let (mut skip, mut skip_bar) = (false, false);
    // The previous word was `user`: `user-extras`, XenForo's `message-userExtras` (the
    // poster's join date, message count and reaction score under the avatar).
    let mut after_user = false;
    // A chrome word after `no`, `hide` or `without` names what the block goes without:
    // Wired's story grid `hide-read-more-ad`, `page-no-sidebar`, `no-promo`. Chrome
    // words before it still count (`share-bar--hide-share--mobile`).
    let mut negated = false;
    let mut buf = [0u8; 24];
    for w in words(tok) {
        // `user-title`, XenForo's `message-userTitle`: the poster's rank ("Senior Member",
        // "Well-known member") under the name.
        if after_user && (w.eq_ignore_ascii_case("extras") || w.eq_ignore_ascii_case("title")) {
            hint = 1;
        }
        after_user = w.eq_ignore_ascii_case("user");
        if w.eq_ignore_ascii_case("skip") {
            skip = true;
        } else if ["link", "links", "nav", "navigation"]
            .iter()
            .any(|l| w.eq_ignore_ascii_case(l))
        {
            skip_bar = true;
        } else if w.eq_ignore_ascii_case("target") {
            skip_bar = false;
            skip = false;
        }
        if w.len() > buf.len() || w.len() < 2 {
            continue;
        }
        let lw = &mut buf[..w.len()];
        lw.copy_from_slice(w.as_bytes());
        lw.make_ascii_lowercase();
        let Ok(lw) = std::str::from_utf8(lw) else {
            continue;
        };
        if COMMENT_WORDS.contains(&lw) || comment_compound(lw) {
            return 3;
        }
        if CONSENT_WORDS.contains(&lw) {
            return 4;
        }
        if matches!(lw, "no" | "hide" | "without") {
            negated = true;
        } else if !negated
            && (CHROME_WORDS.contains(&lw) || nav_compound(lw) || footer_compound(lw))
        {
            hint = 1;
        }
    }
    if skip && skip_bar {
        hint = hint.max(1);
    }
    hint
}

/// A CSS-module class without its hash (`AccordionTextItem_item__adF2E`,
/// `mdx-table_root__adKqa`): five characters after `__` with a capital or a digit are
/// base64 noise, not words, and must not spell `ad`.
fn without_module_hash(tok: &str) -> &str {
    match tok.rfind("__") {
        Some(p)
            if tok.len() - p - 2 == 5
                && tok[p + 2..]
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
                && tok[p + 2..]
                    .bytes()
                    .any(|b| b.is_ascii_uppercase() || b.is_ascii_digit()) =>
        {
            &tok[..p]
        }
        _ => tok,
    }
}

/// `nav` fused with a chrome part: DocBook's `navheader`/`navfooter` (its Prev / Up /
/// Home / Next tables), `navbox`, `navlinks`.
fn nav_compound(w: &str) -> bool {
    w.strip_prefix("nav").is_some_and(|r| {
        matches!(
            r,
            "header" | "footer" | "bar" | "box" | "links" | "block" | "list" | "menu"
        )
    })
}

/// A comment section's part named in one word (Movable Type's `commentbody`,
/// `commentsblock`, `commenttext`, `commentwrap`); not `commentary`, which is prose.
pub(crate) fn comment_compound(w: &str) -> bool {
    w.strip_prefix("comments")
        .or_else(|| w.strip_prefix("comment"))
        .is_some_and(|r| {
            matches!(
                r,
                "body"
                    | "text"
                    | "block"
                    | "wrap"
                    | "wrapper"
                    | "list"
                    | "listing"
                    | "section"
                    | "container"
                    | "content"
                    | "thread"
                    | "post"
                    | "metadata"
            )
        })
}

/// A footer named in one word with what it is (`subfooter`, `sitefooter`,
/// `globalfooter`, `footers`); `menu` and `sidebar` compounds are not chrome this way
/// (`contextmenu` marks a news site's article paragraphs).
fn footer_compound(w: &str) -> bool {
    let w = w.strip_suffix('s').unwrap_or(w);
    w.strip_suffix("footer")
        .is_some_and(|p| p.is_empty() || (2..=8).contains(&p.len()))
}

/// Outermost comment-marked blocks, under distinct parents, that make a page's
/// comments documentation comments.
const DOC_COMMENTS_MIN: usize = 3;

/// Whether the page's comment-marked blocks (`hints` 3) are documentation comments: at
/// least [`DOC_COMMENTS_MIN`] of them, none inside another, hold prose and stand in
/// different parents (one per documented member). One pass over the nodes, only on pages
/// with such blocks.
fn doc_comments(tree: &Tree, hints: &[u8], prose: &[u32]) -> bool {
    if !hints.contains(&3) {
        return false;
    }
    let len = tree.nodes.len();
    let mut inside = vec![false; len];
    let (mut count, mut last_parent) = (0, NONE);
    for i in 1..len {
        let p = tree.nodes[i].parent;
        inside[i] = inside[p as usize] || hints[i] == 3;
        if hints[i] == 3 && !inside[p as usize] && prose[i] > 0 && p != last_parent {
            count += 1;
            last_parent = p;
        }
    }
    count >= DOC_COMMENTS_MIN
}

/// The tokens of an element's class list and id.
fn class_and_id(a: &Attrs) -> impl Iterator<Item = &str> {
    a.class
        .split_ascii_whitespace()
        .chain(a.id.split_ascii_whitespace())
}

/// Whether a class/id token names a discussion (`Discussion`, `thread-view`): its first
/// word does (`category-open-thread` is a subject, not the page's structure).
fn is_forum_token(tok: &str) -> bool {
    words(tok)
        .next()
        .is_some_and(|w| FORUM_WORDS.iter().any(|f| w.eq_ignore_ascii_case(f)))
}

/// Ancestors looked at for the `<section>` a header or footer belongs to.
const SECTION_SCAN: usize = 32;

/// Whether a `<section>` holds `n` (within [`SECTION_SCAN`] ancestors).
fn in_section(tree: &Tree, n: u32) -> bool {
    within(tree, n, SECTION_SCAN, |t| t == Tag::Section)
}

/// Chrome by markup alone: 2 = by tag/role (strong), 1 = by class/id, 3 = comment
/// section, 4 = consent banner, 0 = none.
pub(crate) fn chrome_hint(tree: &Tree, n: u32, in_article: bool) -> u8 {
    let Some(tag) = tree.tag(n) else { return 0 };
    match tag {
        // Sphinx 5 and later write footnotes as `<aside class="footnote" role="note">`
        // in a `<aside class="footnote-list">`: the text's notes, not a sidebar.
        Tag::Aside if is_footnote(tree, n) => {}
        // docutils' sidebar directive (`<aside class="sidebar">`: the "Hello World!" of
        // Python's asyncio page) set in the text, as DocBook's below.
        Tag::Aside if named_sidebar(tree, n) && set_in_text(tree, n) => return 0,
        // docutils' topic directive (`<aside class="topic">`: the "Abstract" that opens
        // each of Python's HOWTOs, however short) is a box of the text's own prose, as its
        // sidebar is; its table of contents is a `<nav class="contents">`.
        Tag::Aside if tree.has_class(n, "topic") && prose_box(tree, n, 1) => return 0,
        Tag::Nav | Tag::Aside => return 2,
        // A `<header>` is the page's banner only when no sectioning element holds it
        // (HTML's scoping): inside a `<section>`, opening with its title, it heads that
        // section (JSDoc's `section > header` with a class's name and description).
        Tag::Header
            if !in_article && (!in_section(tree, n) || opening_level(tree, n).is_none()) =>
        {
            return 2
        }
        Tag::Footer if !in_article => return 2,
        // A form without a control to fill or press wraps text (Reddit's comments, each
        // in a `form.usertext`); its class decides, as a `<div>`'s would.
        Tag::Form if tree.facts.control_forms.binary_search(&n).is_err() => {}
        Tag::Form | Tag::Fieldset | Tag::Label | Tag::Option => return 1,
        _ => {}
    }
    let Some(a) = tree.attrs(n) else { return 0 };
    // Class and role hints apply to blocks: `<a class="header">` is a heading anchor. And
    // to a heading that names a poster's rank (XenForo's `<h5 class="userTitle">`).
    let rank = || tag.is_heading() && a.class.split_ascii_whitespace().any(user_title);
    if !(is_block_box(tag) || rank()) {
        return 0;
    }
    match attr_hint(tree, n, tag, a, in_article) {
        // What a heading holds is its title (Apache's `<h2><span id="CookieName">`), and
        // a row of `<th>` cells is its table's header row (`<tr class="header">`); looked
        // at only for the few elements a hint marks.
        // Nor is anything inside a code listing chrome: Haddock's source pages give each
        // definition an id of its name (`<span id="notComment">` in a `<pre>`). Nor a
        // block holding a formula: MathJax 3 marks each of its own with a context menu's
        // class (`CtxtMenu_Attached_0`), and no menu holds one.
        h if h != 0
            && (in_heading(tree, n)
                || (tag == Tag::Tr && header_row(tree, n))
                || in_listing(tree, n)
                || holds_math(tree, n)) =>
        {
            0
        }
        // A box named a sidebar set in a text's flow (DocBook's `div.sidebar`: a "TIP" or
        // "GOING FURTHER" in a manual's section; docutils' sidebar directive) is the text's:
        // a page's sidebar stands beside the text, not among its paragraphs.
        // So are its parts named after it (docutils' `p.sidebar-title`).
        1..=3 if named_sidebar(tree, n) && set_in_text(tree, n) || in_set_sidebar(tree, n, a) => 0,
        h => h,
    }
}

/// Whether `n`'s class has the word `sidebar` (DocBook's and docutils' boxes are named so).
fn named_sidebar(tree: &Tree, n: u32) -> bool {
    tree.has_class(n, "sidebar")
}

/// Whether `n`'s class has the word `para` (Publican's DocBook writes paragraphs as
/// `<div class="para">`).
fn named_para(tree: &Tree, n: u32) -> bool {
    tree.has_class(n, "para")
}

/// Whether `n`, of a class named after a sidebar (`sidebar-title`), lies in a sidebar
/// [`set_in_text`] (within [`HEADING_SCAN`] ancestors).
fn in_set_sidebar(tree: &Tree, n: u32, a: &Attrs) -> bool {
    let part = |t: &str| {
        t.get(..7)
            .is_some_and(|h| h.eq_ignore_ascii_case("sidebar"))
            && matches!(t.as_bytes().get(7), Some(b'-' | b'_'))
    };
    if !a.class.split_ascii_whitespace().any(part) {
        return false;
    }
    let mut p = tree.nodes[n as usize].parent;
    for _ in 0..HEADING_SCAN {
        if p == NONE || p == 0 {
            return false;
        }
        if named_sidebar(tree, p) {
            return set_in_text(tree, p);
        }
        p = tree.nodes[p as usize].parent;
    }
    false
}

/// Whether block `n` is set in a text: its parent holds two paragraphs or more (a `<p>`,
/// a `<pre>`, or a `<div>` written as one: text of its own, no block inside unless it is
/// named a paragraph, Publican's `div.para`), or one with `n` right after it or after the
/// section's title; and `n` holds prose of its own, at least [`SET_IN_TEXT_MIN`] of text,
/// less than half of it in links. Subtrees (and parents) of more than [`SET_IN_TEXT_SCAN`]
/// nodes (children) are not looked at.
fn set_in_text(tree: &Tree, n: u32) -> bool {
    if !prose_box(tree, n, SET_IN_TEXT_MIN) {
        return false;
    }
    let paragraph = |c: u32| match tree.tag(c) {
        Some(Tag::P | Tag::Pre) => true,
        Some(Tag::Div) => {
            let (mut own, named) = (0, named_para(tree, c));
            for k in tree.children(c) {
                match tree.tag(k) {
                    Some(t) if t.is_block() && !named => return false,
                    Some(_) => {}
                    None => own += tree.text_of(k).map_or(0, text_weight),
                }
            }
            own >= PARAGRAPH_DIV_MIN
        }
        _ => false,
    };
    // Two paragraphs in the parent, or one and the box right after a paragraph or its
    // section's title (a section or an item of one paragraph with its box). Siblings
    // without text (an index term's anchor) and other boxes are passed over.
    let p = tree.nodes[n as usize].parent;
    let (mut paragraphs, mut last, mut after) = (0, false, false);
    for c in tree.children(p).take(SET_IN_TEXT_SCAN as usize) {
        if c == n {
            after = last;
            continue;
        }
        if tree.nodes[c as usize].hidden
            || tree.tag(c).is_none()
            || named_sidebar(tree, c)
            || !super::markdown::holds_text(tree, c)
        {
            continue;
        }
        let is_paragraph = paragraph(c);
        last = is_paragraph || heading_wrapper(tree, c) || tree.tag(c).is_some_and(Tag::is_heading);
        paragraphs += usize::from(is_paragraph);
    }
    paragraphs >= 2 || paragraphs == 1 && after
}

/// Whether block `n` holds prose of its own: at least `min` of text (bytes but spaces),
/// less than half of it in links. A subtree of more than [`SET_IN_TEXT_SCAN`] nodes is not
/// looked at.
fn prose_box(tree: &Tree, n: u32, min: u32) -> bool {
    let end = super::markdown::subtree_end(tree, n);
    if end - n > SET_IN_TEXT_SCAN {
        return false;
    }
    let (mut text, mut link) = (0u32, 0u32);
    for i in n + 1..end {
        if let Some(t) = tree.text_of(i) {
            let w = text_weight(t);
            text += w;
            let mut a = tree.nodes[i as usize].parent;
            while a != n && a != NONE {
                if tree.tag(a) == Some(Tag::A) {
                    link += w;
                    break;
                }
                a = tree.nodes[a as usize].parent;
            }
        }
    }
    text >= min && link * 2 < text
}

/// Text (bytes but spaces) a box set in the text holds at least.
const SET_IN_TEXT_MIN: u32 = 100;
/// Nodes of a box looked at for [`set_in_text`].
const SET_IN_TEXT_SCAN: u32 = 2000;
/// Own text (bytes but spaces) of a `<div>` written as a paragraph.
const PARAGRAPH_DIV_MIN: u32 = 60;

/// Whether block `n` holds a formula (looked for only on pages that have one).
fn holds_math(tree: &Tree, n: u32) -> bool {
    tree.facts.math
        && (n + 1..super::markdown::subtree_end(tree, n)).any(|i| tree.tag(i) == Some(Tag::Math))
}

/// [`chrome_hint`] by a block's role, class and id.
fn attr_hint(tree: &Tree, n: u32, tag: Tag, a: &Attrs, in_article: bool) -> u8 {
    // A dialog outside the page's `<main>`/`<article>` (terms, sign-up, cart, size guide)
    // is chrome however much prose it holds, like a consent banner.
    if !in_article && is_dialog(a) {
        return 4;
    }
    if CHROME_ROLES.iter().any(|r| a.role.eq_ignore_ascii_case(r)) {
        return 2;
    }
    if a.nosnippet {
        return 1;
    }
    for tok in a.class.split_ascii_whitespace() {
        match token_hint(tok) {
            0 => {}
            // Highlighted code marks its comments `<span class="hljs-comment">`.
            3 if tag == Tag::Span => {}
            // A signature that opens its section is an API's (Javadoc's
            // `member-signature` under the member's heading); a post's signature follows
            // the post, a block. Inline parts named after a signature are a type
            // signature's (TypeDoc's `span.tsd-signature-type`, `-symbol`, `-keyword`).
            _ if is_signature(tok) && (tag == Tag::Span || declaration(tree, n)) => {}
            // A class built from the box's title (docutils' admonitions:
            // `admonition-you-can-t-share-pickles-between-versions` over "You can't share
            // pickles between versions") names its subject, as such an id does.
            _ if class_from_title(tree, n, tok) => {}
            // A block classed `header` inside the page's `<main>`/`<article>` that opens
            // with a heading heads the document, as a `<header>` element there does
            // (Javadoc's `div.header` with the page's `<h1>`).
            _ if in_article
                && tok.eq_ignore_ascii_case("header")
                && first_heading(tree, n, ID_HEADING_SCAN).is_some() => {}
            h => return h,
        }
    }
    // Documentation generators build ids from heading text (Sphinx's
    // `<section id="comments">` for a section titled "Comments"): such an id names the
    // section's subject, not its role.
    for tok in a.id.split_ascii_whitespace() {
        match token_hint(tok) {
            0 => {}
            _ if id_from_heading(tree, n, tok) => {}
            _ if extends_ancestor_id(tree, n, tok) => {}
            _ if one_of_a_series(tree, n, tok) => {}
            h => return h,
        }
    }
    0
}

/// Ancestors looked at for the id a section's id extends.
const ID_ANCESTOR_SCAN: usize = 32;

/// Whether `n`, a section under its own heading, has an id `tok` that extends the id of an
/// ancestor that carries the same hint word (PostgreSQL's DocBook ids:
/// `LOGICAL-REPLICATION-SUBSCRIPTION-SLOT` for a section of
/// `LOGICAL-REPLICATION-SUBSCRIPTION`): the word names the document's subject, which the
/// enclosing section already bears, not the block's role. A word only the suffix has
/// (`post-12-comments` in `post-12`) still counts, and so does a block without a heading
/// (`comments-wrapper` in `comments`).
fn extends_ancestor_id(tree: &Tree, n: u32, tok: &str) -> bool {
    if first_heading(tree, n, ID_HEADING_SCAN).is_none() {
        return false;
    }
    let mut p = tree.nodes[n as usize].parent;
    for _ in 0..ID_ANCESTOR_SCAN {
        if p == NONE || p == 0 {
            return false;
        }
        let extends = |id: &str| {
            tok.len() > id.len() + 1
                && token_hint(id) != 0
                && (tok.as_bytes()[..id.len()].eq_ignore_ascii_case(id.as_bytes())
                    && matches!(tok.as_bytes()[id.len()], b'-' | b'_' | b'.' | b':')
                    || holds_id(tok, id))
        };
        if tree
            .attrs(p)
            .is_some_and(|a| a.id.split_ascii_whitespace().any(extends))
        {
            return true;
        }
        p = tree.nodes[p as usize].parent;
    }
    false
}

/// Whether `tok` holds `id` between separators, with no chrome word outside it (RDoc's
/// `public-instance-Recommended+gemspec+attributes-method-details` inside the section
/// `Recommended+gemspec+attributes`: the methods of a section whose title has one).
fn holds_id(tok: &str, id: &str) -> bool {
    let (t, i) = (tok.as_bytes(), id.as_bytes());
    let sep = |b: u8| matches!(b, b'-' | b'_' | b'.' | b':' | b'+');
    (1..t.len().saturating_sub(i.len())).any(|at| {
        let end = at + i.len();
        sep(t[at - 1])
            && t.get(end).is_none_or(|&b| sep(b))
            && t[at..end].eq_ignore_ascii_case(i)
            && tok.get(..at).is_some_and(|pre| token_hint(pre) == 0)
            && tok.get(end..).is_some_and(|post| token_hint(post) == 0)
    })
}

/// Siblings looked at for [`one_of_a_series`].
const SERIES_SCAN: usize = 256;

/// Whether `n`, a section under its own heading, has an id `tok` of a series its like
/// siblings share: their ids open with the same word as its own (PostgreSQL's
/// `SQL-FOR-UPDATE-SHARE` among `SQL-WITH`, `SQL-FROM`, ... for the sections of one
/// statement's page, all `div.refsect2`) and name no chrome. The word read as chrome then
/// names the section's subject in the series' scheme, not the block's role. Siblings count
/// when they have the same tag and class list.
fn one_of_a_series(tree: &Tree, n: u32, tok: &str) -> bool {
    let Some(sep) = tok.find(['-', '_', '.', ':']) else {
        return false;
    };
    let prefix = &tok[..=sep];
    if sep == 0 || token_hint(&tok[..sep]) != 0 {
        return false;
    }
    if first_heading(tree, n, ID_HEADING_SCAN).is_none() {
        return false;
    }
    let parent = tree.nodes[n as usize].parent;
    if parent == NONE {
        return false;
    }
    let tag = tree.tag(n);
    // Bounded: a page of thousands of such siblings must not cost their number squared.
    tree.children(parent).take(SERIES_SCAN).any(|s| {
        s != n
            && tree.tag(s) == tag
            && same_class_list(tree, s, n)
            && tree.attrs(s).is_some_and(|a| {
                a.id.split_ascii_whitespace().any(|id| {
                    id.len() > prefix.len()
                        && id.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
                        && token_hint(id) == 0
                })
            })
    })
}

/// Whether class token `tok` names a poster's rank: `usertitle`, `userTitle`,
/// `message-userTitle`, `user-title`.
fn user_title(tok: &str) -> bool {
    let mut after_user = false;
    for w in words(tok) {
        if w.eq_ignore_ascii_case("usertitle") || after_user && w.eq_ignore_ascii_case("title") {
            return true;
        }
        after_user = w.eq_ignore_ascii_case("user");
    }
    false
}

/// Whether one of the words of class token `tok` is one of `any`.
fn has_word(tok: &str, any: &[&str]) -> bool {
    words(tok).any(|w| any.iter().any(|a| w.eq_ignore_ascii_case(a)))
}

/// Whether a class token names a signature (`post-signature`, `member-signature`).
fn is_signature(tok: &str) -> bool {
    has_word(tok, &["signature", "signatures"])
}

/// Whether a signature block `n` stands where a declaration does: opening its section,
/// right after a heading however wrapped (TypeDoc's `div.tsd-page-title > h1` then
/// `div.tsd-signature` on a type's page), or before the sections it heads (TypeDoc's
/// interface declaration, then `section > h4` "Type Parameters"). A post's signature ends
/// the post: nothing but chrome follows it, and prose comes before it.
fn declaration(tree: &Tree, n: u32) -> bool {
    if opens_section(tree, n) {
        return true;
    }
    if let Previous::Element(_, h) = previous(tree, n) {
        if last_text(tree, h).is_some_and(|t| in_heading(tree, t)) {
            return true;
        }
    }
    heading_follows(tree, n) == Some(true)
}

/// Whether `n` comes first in its parent, or right after a heading or a rule.
fn opens_section(tree: &Tree, n: u32) -> bool {
    match previous(tree, n) {
        Previous::None => true,
        Previous::Element(t, _) => t.is_heading() || t == Tag::Hr,
        Previous::Text => false,
    }
}

/// Whether `n` is classed a signature and comes right after a heading: the declaration
/// of the member the heading names (Javadoc's `div.member-signature`). A post's
/// signature follows the post.
fn heading_signature(tree: &Tree, n: u32) -> bool {
    after_heading(tree, n)
        && tree
            .attrs(n)
            .is_some_and(|a| a.class.split_ascii_whitespace().any(is_signature))
}

/// What comes before a node among its siblings, blank text aside.
enum Previous {
    None,
    Element(Tag, u32),
    Text,
}

/// The sibling before `n`: the node before it in document order is that sibling, inside
/// it, or the parent, so climb to the sibling (bounded by the depth), stepping over blank
/// text.
fn previous(tree: &Tree, n: u32) -> Previous {
    let p = tree.nodes[n as usize].parent;
    let mut i = n.saturating_sub(1);
    loop {
        if i == p || i == 0 {
            return Previous::None;
        }
        let up = tree.nodes[i as usize].parent;
        if up != p {
            i = up;
            continue;
        }
        match tree.tag(i) {
            Some(t) => return Previous::Element(t, i),
            None if tree.text_of(i).is_some_and(|t| !t.trim().is_empty()) => return Previous::Text,
            None => i -= 1,
        }
    }
}

/// Whether `n` holds footnotes: role `note`, or [`names_notes`].
fn is_footnote(tree: &Tree, n: u32) -> bool {
    tree.attrs(n)
        .is_some_and(|a| a.role.eq_ignore_ascii_case("note") || names_notes(a))
}

/// Whether attributes `a` name a text's notes: role `doc-endnotes` or `doc-footnote`, or a
/// class word `footnote(s)` (mdBook's `ol.footnote-definition`, Pandoc's
/// `section.footnotes`, texi2any's `div.footnote`).
fn names_notes(a: &Attrs) -> bool {
    ["doc-endnotes", "doc-footnote"]
        .iter()
        .any(|r| a.role.eq_ignore_ascii_case(r))
        || a.class
            .split_ascii_whitespace()
            .any(|t| has_word(t, &["footnote", "footnotes"]))
}

/// A modal's role: `dialog` or `alertdialog`.
fn is_dialog(a: &Attrs) -> bool {
    ["dialog", "alertdialog"]
        .iter()
        .any(|r| a.role.eq_ignore_ascii_case(r))
}

/// Nodes looked at for the heading an id may be built from.
const ID_HEADING_SCAN: u32 = 12;
/// Nodes of a block looked at for the heading its id is built from: past a navigation
/// bar that opens each section (texi2any's `table.header`, about 70 nodes).
const ID_TITLE_SCAN: u32 = 96;

/// Ancestors looked at for a heading around an element.
const HEADING_SCAN: usize = 4;

/// Whether `n` lies in a table cell (within a few ancestors) beside a cell of text of its
/// own: the name column of a row that describes what the link names (Qt's class tables:
/// `<td><p><a>QJsonArray</a></p></td><td><p>Encapsulates a JSON array</p></td>`). A menu
/// laid out in a table has links in every cell.
fn in_described_row(tree: &Tree, n: u32, text: &[u32], link: &[u32], removed: &[bool]) -> bool {
    let mut td = n;
    for _ in 0..4 {
        if matches!(tree.tag(td), Some(Tag::Td | Tag::Th)) {
            break;
        }
        td = tree.nodes[td as usize].parent;
        if td == NONE || td == 0 {
            return false;
        }
    }
    if !matches!(tree.tag(td), Some(Tag::Td | Tag::Th)) {
        return false;
    }
    let tr = tree.nodes[td as usize].parent;
    // A row that describes has a few columns; a row of thousands of cells is no such row,
    // and is not scanned whole for each of them.
    tree.children(tr).take(ROW_CELLS_MAX).any(|c| {
        let i = c as usize;
        c != td
            && !removed[i]
            && matches!(tree.tag(c), Some(Tag::Td | Tag::Th))
            && text[i].saturating_sub(link[i]) >= DESCRIBED_MIN
    })
}

/// Text outside links (bytes) a cell needs to describe the link beside it.
const DESCRIBED_MIN: u32 = 10;
/// Children of a row looked at for a describing cell.
const ROW_CELLS_MAX: usize = 16;

/// Ancestors looked at for a `<pre>` around a hinted element (bounded: a page of nested
/// hinted blocks must not cost its depth squared).
const LISTING_SCAN: usize = 32;

/// Whether paragraph `p` opens with words of its own before its first link ("See also:
/// <a>…</a>, <a>…</a>"): a sentence that names pages, not a menu.
fn opens_with_words(tree: &Tree, p: u32) -> bool {
    let len = tree.nodes.len() as u32;
    let mut words = 0;
    for i in p + 1..len.min(p + 1 + ID_HEADING_SCAN) {
        if !is_descendant(tree, i, p) || tree.tag(i) == Some(Tag::A) {
            break;
        }
        if let Some(t) = tree.text_of(i) {
            words += t
                .split_whitespace()
                .filter(|w| w.chars().any(char::is_alphabetic))
                .count();
        }
    }
    words >= 2
}

/// Whether paragraph `p` is links separated by commas, semicolons or line breaks and
/// nothing else (an end stop and [`manual_page`] names aside): a list written as a
/// sentence, or one link a line
/// (asciidoc's "SEE ALSO" of a manual page: `<p><a>git-status(1)</a>⏎<a>git-rm(1)</a>`).
/// Links only spaces apart are a menu's.
fn links_and_separators(tree: &Tree, p: u32, in_link: &[bool]) -> bool {
    link_items(tree, p, in_link).is_some_and(|(_, apart)| apart)
}

/// When paragraph `p` holds, outside its links, nothing but separators (commas,
/// semicolons, line breaks), end stops and [`manual_page`] names: how many links (`<a>`)
/// it holds, and whether a separator stands in it. A paragraph of more than
/// [`LINK_SENTENCE_SCAN`] nodes is not looked at.
fn link_items(tree: &Tree, p: u32, in_link: &[bool]) -> Option<(usize, bool)> {
    let end = super::markdown::subtree_end(tree, p);
    if end - p > LINK_SENTENCE_SCAN {
        return None;
    }
    let (mut links, mut commas) = (0, false);
    // A line break counts between two links only: the source's line ends around the
    // paragraph's one link (`<p><code><a>attributes</a></code>⏎</p>`) separate nothing.
    let mut line_break = false;
    for i in p + 1..end {
        if tree.tag(i) == Some(Tag::A) {
            commas |= line_break && links > 0;
            line_break = false;
            links += 1;
        }
        let Some(t) = tree.text_of(i).filter(|_| !in_link[i as usize]) else {
            line_break |= tree.tag(i) == Some(Tag::Br);
            continue;
        };
        if t.trim().is_empty() {
            line_break |= t.contains('\n');
            continue;
        }
        commas |= t.contains([',', ';', '\n']);
        // Brackets around a link are not words (`&lt;<a href="mailto:…">…</a>&gt;`).
        let item = |w: &str| {
            w.chars()
                .all(|c| matches!(c, '.' | '<' | '>' | '(' | ')' | '[' | ']'))
                || manual_page(w)
        };
        if !t
            .split(|c: char| c == ',' || c == ';' || c.is_whitespace())
            .all(item)
        {
            return None;
        }
    }
    Some((links, commas))
}

/// Whether `w` names a manual page, `name(section)` (`diff(1)`, `git-config(1)`,
/// `printf(3p)`), perhaps with an end stop: an item of a "SEE ALSO" list with no page to
/// link to.
pub(crate) fn manual_page(w: &str) -> bool {
    let Some((name, section)) = w
        .trim_end_matches('.')
        .strip_suffix(')')
        .and_then(|w| w.split_once('('))
    else {
        return false;
    };
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '+' | ':'))
        && section.len() <= 4
        && section.starts_with(|c: char| c.is_ascii_digit())
        && section.chars().all(|c| c.is_ascii_alphanumeric())
}

/// Whether paragraph `p` is a sentence built around its links: words of its own before
/// the first link and after it, and a full stop at its end ("See <a>package-lock.json</a>
/// and <a>npm shrinkwrap</a>."). A menu has no end stop, a byline none either. A paragraph
/// of more than [`LINK_SENTENCE_SCAN`] nodes is not looked at.
fn linked_sentence(tree: &Tree, p: u32, in_link: &[bool]) -> bool {
    let end = super::markdown::subtree_end(tree, p);
    if end - p > LINK_SENTENCE_SCAN {
        return false;
    }
    let (mut before, mut after, mut linked, mut last) = (false, false, false, ' ');
    for i in p + 1..end {
        let Some(t) = tree.text_of(i) else {
            continue;
        };
        if let Some(c) = t.trim_end().chars().last() {
            last = c;
        }
        if in_link[i as usize] {
            linked = true;
            continue;
        }
        let word = t
            .split_whitespace()
            .any(|w| w.chars().any(char::is_alphabetic));
        if linked {
            after |= word;
        } else {
            before |= word;
        }
    }
    before && after && last == '.'
}

/// Whether paragraph `p` is one link that shows its own address (markdown's autolink,
/// `<https://www.npmjs.com/>`), maybe after a mark (DocBook's `→ <a>https://…</a>`): the
/// address is what the paragraph says, not a menu entry, which names its page.
fn bare_address(tree: &Tree, p: u32) -> bool {
    let mut only = None;
    for c in tree.children(p) {
        match tree.tag(c) {
            None if !tree
                .text_of(c)
                .is_some_and(|t| t.chars().any(char::is_alphanumeric)) => {}
            Some(Tag::A) if only.is_none() => only = Some(c),
            _ => return false,
        }
    }
    let Some(a) = only else {
        return false;
    };
    let Some(href) = tree.attrs(a).and_then(|x| x.href.as_deref()) else {
        return false;
    };
    let mut text = tree.children(a).map(|c| tree.text_of(c));
    let Some(Some(t)) = text.next().filter(|_| text.next().is_none()) else {
        return false;
    };
    let t = t.trim();
    (t.starts_with("https://") || t.starts_with("http://"))
        && t.trim_end_matches('/') == href.trim().trim_end_matches('/')
}

/// Most nodes of a paragraph read as a list of links written as a sentence.
const LINK_SENTENCE_SCAN: u32 = 400;

/// Whether `n` lies in a `<pre>` (within [`LISTING_SCAN`] ancestors).
fn in_listing(tree: &Tree, n: u32) -> bool {
    within(tree, n, LISTING_SCAN, |t| t == Tag::Pre)
}

/// Whether one of the first `scan` ancestors of `n` (the document's root aside) is an
/// element whose tag `is` accepts.
fn within(tree: &Tree, n: u32, scan: usize, is: impl Fn(Tag) -> bool) -> bool {
    let mut p = tree.nodes[n as usize].parent;
    for _ in 0..scan {
        if p == NONE || p == 0 {
            return false;
        }
        if tree.tag(p).is_some_and(&is) {
            return true;
        }
        p = tree.nodes[p as usize].parent;
    }
    false
}

/// Whether `n` lies in a heading (within [`HEADING_SCAN`] ancestors).
fn in_heading(tree: &Tree, n: u32) -> bool {
    within(tree, n, HEADING_SCAN, Tag::is_heading)
}

/// Whether the row `tr` holds cells and all of them are `<th>`.
fn header_row(tree: &Tree, tr: u32) -> bool {
    let mut cells = tree
        .children(tr)
        .filter(|&c| matches!(tree.tag(c), Some(Tag::Td | Tag::Th)))
        .peekable();
    cells.peek().is_some() && cells.all(|c| tree.tag(c) == Some(Tag::Th))
}

/// Marks as removed the disclosures (`<details>`) whose body went, all of it: the
/// `<summary>` left alone is the label of a toggle that opens nothing (TypeDoc's "Index"
/// over its list of the page's own anchors, a "Menu" over its links).
fn emptied_disclosures(tree: &Tree, raw: &[u32], removed: &mut [bool]) {
    for i in (1..tree.nodes.len()).rev() {
        if removed[i] || raw[i] == 0 || tree.tag(i as u32) != Some(Tag::Details) {
            continue;
        }
        let mut gone = false;
        for c in tree.children(i as u32) {
            let k = c as usize;
            if raw[k] == 0 || tree.nodes[k].hidden || tree.tag(c) == Some(Tag::Summary) {
                continue;
            }
            if !all_removed(tree, c, raw, removed) {
                gone = false;
                break;
            }
            gone = true;
        }
        removed[i] |= gone;
    }
}

/// What a heading over a table of contents says.
const TOC_LABELS: [&str; 6] = [
    "contents",
    "table of contents",
    "toc",
    "on this page",
    "in this article",
    "in this section",
];

/// Text (non-space bytes) above which a heading is no [`TOC_LABELS`] label.
const TOC_LABEL_MAX: u32 = 48;

/// Marks as removed the headings that name a table of contents ([`TOC_LABELS`]) whose
/// contents went, all of them, up to the next heading: a README's "## Table of Contents"
/// over its list of the page's anchors, which is dropped as a menu, left a title over
/// nothing. The heading's wrapper (a `div` of the heading and its permalink) goes with it.
/// Whatever its words, so does a heading (not the page's `<h1>`) whose section was
/// nothing but lists of the page's anchors ([`page_anchors`]) that went: Apache's
/// "Directives" over `ul#toc`. Not when the next heading is under it: it heads those
/// sections too (a manual's "Appendix C" over its local menu, then "C.1 Preliminaries").
fn emptied_toc_headings(tree: &Tree, raw: &[u32], removed: &mut [bool]) {
    // The labels this pass removed: the headings are read from the last, so a label's
    // next sibling may be one that went ("Topics" over its list, then "Directives").
    let mut labels = vec![false; tree.nodes.len()];
    for i in (1..tree.nodes.len()).rev() {
        let h = i as u32;
        // A label is short: the longest, a permalink's mark beside it, is some twenty
        // bytes; longer headings are not read.
        if removed[i]
            || raw[i] == 0
            || raw[i] > TOC_LABEL_MAX
            || !tree.tag(h).is_some_and(Tag::is_heading)
        {
            continue;
        }
        let label = heading_text(tree, h, 40);
        let words: Vec<String> = text_words(&label).map(str::to_lowercase).collect();
        let labelled = TOC_LABELS.contains(&words.join(" ").as_str());
        let p = tree.nodes[i].parent;
        let x = if permalinked_heading(tree, p) || heading_wrapper(tree, p) {
            p
        } else {
            h
        };
        let level = tree.tag(h).and_then(Tag::heading_level).unwrap_or(6);
        let (mut went, mut anchors) = (false, true);
        let mut s = tree.nodes[x as usize].next_sibling;
        while s != NONE {
            if raw[s as usize] > 0 {
                if all_removed(tree, s, raw, removed) {
                    // What went: a list of the page's anchors, or a label over one.
                    went = true;
                    anchors &= labels[s as usize] || page_anchors(tree, s);
                } else if heading_like(tree, s) || starts_with_heading(tree, s) {
                    let next = tree
                        .tag(s)
                        .and_then(Tag::heading_level)
                        .or_else(|| opening_level(tree, s))
                        .unwrap_or(level);
                    anchors &= next <= level;
                    break;
                } else {
                    went = false;
                    break;
                }
            }
            s = tree.nodes[s as usize].next_sibling;
        }
        if went && (labelled || anchors && tree.tag(h) != Some(Tag::H1)) {
            removed[x as usize] = true;
            labels[x as usize] = true;
        }
    }
}

/// Whether `n` holds two links or more, each to a named anchor of the page (`#action`,
/// or `Options.html#in` on the page `Options.html`: TypeDoc's index of members): a table
/// of contents. A bare `#` is a script's button, not a place.
fn page_anchors(tree: &Tree, n: u32) -> bool {
    page_fragments(tree, n, true)
        .is_some_and(|f| f.len() >= 2 && f.iter().all(|(_, f)| !f.is_empty()))
}

/// Whether every text under `n` lies in a removed block.
fn all_removed(tree: &Tree, n: u32, raw: &[u32], removed: &[bool]) -> bool {
    if removed[n as usize] {
        return true;
    }
    if tree.tag(n).is_none() {
        return raw[n as usize] == 0;
    }
    tree.children(n)
        .all(|c| raw[c as usize] == 0 || all_removed(tree, c, raw, removed))
}

/// The text of `h`'s descendants, a space before each text node, until it reaches `max`
/// bytes.
fn heading_text(tree: &Tree, h: u32, max: usize) -> String {
    let end = super::markdown::subtree_end(tree, h);
    let mut text = String::new();
    for t in (h + 1..end).filter_map(|i| tree.text_of(i)) {
        if text.len() >= max {
            break;
        }
        text.push(' ');
        text.push_str(t);
    }
    text
}

/// Whether the heading that opens `n` counts comments: a number (or "no", "one") and then
/// a word for them ("7 comments:", "No comments:", "6 thoughts on …", "2 responses to …").
fn counted_comments(tree: &Tree, n: u32) -> bool {
    let Some(h) = first_heading(tree, n, ID_HEADING_SCAN) else {
        return false;
    };
    let text = heading_text(tree, h, 80);
    let mut words = text_words(&text);
    let one_of = |w: &str, any: &[&str]| any.iter().any(|a| w.eq_ignore_ascii_case(a));
    words
        .next()
        .is_some_and(|w| w.bytes().all(|b| b.is_ascii_digit()) || one_of(w, &["no", "one"]))
        && words.next().is_some_and(|w| {
            one_of(
                w,
                &[
                    "comment",
                    "comments",
                    "response",
                    "responses",
                    "reply",
                    "replies",
                    "thoughts",
                ],
            )
        })
}

/// The first heading among the first `scan` descendants of `n`.
fn first_heading(tree: &Tree, n: u32, scan: u32) -> Option<u32> {
    let len = tree.nodes.len() as u32;
    (n + 1..len.min(n + 1 + scan))
        .take_while(|&i| is_descendant(tree, i, n))
        .find(|&i| tree.tag(i).is_some_and(Tag::is_heading))
}

/// Whether `id` spells the text of the first heading near the start of `n` (its words,
/// case and separators aside; a trailing number is allowed, as in `comments-1`).
fn id_from_heading(tree: &Tree, n: u32, id: &str) -> bool {
    // The heading near its start, or else the element's own text (Apache's
    // `<span id="CookieName">CookieName</span>`).
    let h = first_heading(tree, n, ID_TITLE_SCAN).unwrap_or(n);
    let text = heading_text(tree, h, 200);
    // A section number before the title ("2.3. Python-related paths") is not in the id.
    let numeral = |w: &&str| w.bytes().all(|b| b.is_ascii_digit());
    let heading: Vec<&str> = text_words(&text).skip_while(numeral).collect();
    // A signature's parameters are not its name (Javadoc's
    // `overlay(java.lang.String,java.lang.String,int,int)` under the heading "overlay").
    let name = id.split('(').next().unwrap_or(id);
    let ids: Vec<&str> = name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    // The id's words are the title's, then at most a number.
    let spells = |ids: &[&str]| {
        !heading.is_empty()
            && ids.len() >= heading.len()
            && heading
                .iter()
                .zip(ids)
                .all(|(w, x)| x.eq_ignore_ascii_case(w))
            && match &ids[heading.len()..] {
                [] => true,
                [n] => n.bytes().all(|b| b.is_ascii_digit()),
                _ => false,
            }
    };
    // Or a generator's prefix comes first: a letter or two (Django's
    // `s-related-objects`), or GitHub's `user-content-`.
    let prefix = match ids.as_slice() {
        [u, c, ..] if u.eq_ignore_ascii_case("user") && c.eq_ignore_ascii_case("content") => 2,
        [p, ..] if p.len() <= 2 && p.bytes().all(|b| b.is_ascii_alphabetic()) => 1,
        _ => 0,
    };
    spells(&ids) || (prefix > 0 && spells(&ids[prefix..]))
}

/// Whether link `a` is a name in code and nothing else (`<a href><code>encode64</code></a>`):
/// in a paragraph, a cross-reference to what the text is about (RDoc's, Sphinx's,
/// Javadoc's links to a method), not a way around the site. Its text weighs as prose.
fn code_reference(tree: &Tree, a: u32) -> bool {
    let mut code = false;
    for c in tree.children(a) {
        match tree.tag(c) {
            Some(Tag::Code) if !code => code = true,
            None if tree.text_of(c).is_some_and(|t| t.trim().is_empty()) => {}
            _ => return false,
        }
    }
    code
}

/// Words a class token built from a title spells, after its first (the kind of box).
const CLASS_TITLE_WORDS: usize = 3;

/// Whether class token `tok` is a word naming a kind of box (no chrome word), then the
/// opening words of `n`'s text, at least [`CLASS_TITLE_WORDS`] of them, and `n` holds
/// prose (docutils writes an admonition's title into its class:
/// `admonition-you-can-t-share-pickles-between-versions`). A sharing box titled "Share
/// this post" holds no prose.
fn class_from_title(tree: &Tree, n: u32, tok: &str) -> bool {
    let mut toks = tok
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty());
    if toks.next().is_none_or(|kind| token_hint(kind) != 0) {
        return false;
    }
    let rest: Vec<&str> = toks.collect();
    if rest.len() < CLASS_TITLE_WORDS || !prose_box(tree, n, SET_IN_TEXT_MIN) {
        return false;
    }
    let text = heading_text(tree, n, 200);
    let mut words = text_words(&text);
    rest.iter()
        .all(|r| words.next().is_some_and(|w| w.eq_ignore_ascii_case(r)))
}

/// Whether `i` lies in the subtree of `a`.
fn is_descendant(tree: &Tree, mut i: u32, a: u32) -> bool {
    while i != NONE && i > a {
        i = tree.nodes[i as usize].parent;
    }
    i == a
}

pub(crate) fn content_hint(tree: &Tree, n: u32) -> bool {
    match tree.tag(n) {
        Some(Tag::Main | Tag::Article) => return true,
        Some(_) => {}
        None => return false,
    }
    tree.attrs(n).is_some_and(|a| {
        a.role.eq_ignore_ascii_case("main")
            || class_tokens(&a.class)
                .chain(class_tokens(&a.id))
                .any(|t| CONTENT_WORDS.iter().any(|w| t.contains(w)))
    })
}

fn text_weight(s: &str) -> u32 {
    s.bytes().filter(|b| !b.is_ascii_whitespace()).count() as u32
}

/// Chooses the main content of `tree`.
pub(crate) fn select(tree: &Tree) -> Selection {
    let (mut s, discussion) = select_blocks(tree);
    // A reply's quote of an earlier post: its words are kept where they were written.
    super::quotes::drop_repeated(tree, s.root, &mut s.removed, discussion);
    s
}

/// The main content and the blocks removed inside it, by the rules of this module, and
/// whether the page is a discussion.
fn select_blocks(tree: &Tree) -> (Selection, bool) {
    let len = tree.nodes.len();
    let mut removed = vec![false; len];
    // Text written straight into a `<div>` with line breaks (no `<p>`): readability's
    // "div to p". Only long runs broken by several `<br>`s count as paragraphs.
    let brdiv = br_divs(tree);
    // Pass 1 (top-down): inherited "inside article/main" flag and raw text totals.
    let mut in_article = vec![false; len];
    let mut in_p = vec![false; len];
    let mut in_link = vec![false; len];
    // The page's titles: its `<h1>`s but a site's name linking home (hidden ones were
    // pruned, or are childless and marked), and but one inside a link: a card's headline
    // or a section's name linking to it (`<a href="/blogs/worldviews"><h1>WorldViews</h1>
    // </a>` over a blog post's own `<h1>`).
    let mut title = vec![false; len];
    // The page's first title, in document order.
    let mut first_title = usize::MAX;
    let mut page_h1s = 0u32;
    for i in 1..len {
        let p = tree.nodes[i].parent as usize;
        in_article[i] =
            in_article[p] || matches!(tree.tag(p as u32), Some(Tag::Article | Tag::Main));
        in_link[i] = in_link[p] || tree.tag(p as u32) == Some(Tag::A);
        title[i] =
            tree.tag(i as u32) == Some(Tag::H1) && !in_link[i] && !is_logo_h1(tree, i as u32);
        if title[i] && !tree.nodes[i].hidden {
            page_h1s += 1;
            first_title = first_title.min(i);
        }
        // Prose is paragraph text outside links: a paragraph inside a link is a teaser.
        in_p[i] = (in_p[p]
            || matches!(
                tree.tag(p as u32),
                Some(Tag::P | Tag::Pre | Tag::Blockquote)
            )
            || brdiv[p])
            && !in_link[i];
    }
    let hints: Vec<u8> = (0..len)
        .map(|i| chrome_hint(tree, i as u32, in_article[i]))
        .collect();
    // Text inside paragraphs: prose, the best single sign of main content.
    let mut prose = vec![0u32; len];
    let mut raw = vec![0u32; len];
    // Subtree holds the page's <main>, an <article> with prose or the <h1>: never chrome
    // (`landmark[i] || h1s[i] > 0`).
    let mut has_main = vec![false; len];
    // `<h1>`s and `<main>` in each subtree: a dialog is guarded only by the page's `<main>`
    // or by every `<h1>` of the page (a terms modal titles its own table of contents).
    let mut h1s = vec![0u32; len];
    // Subtree holds the page's `<main>` or an `<article>` with prose.
    let mut landmark = vec![false; len];
    let mut mains = vec![false; len];
    // A block holding the `<h1>` is named a discussion or thread: a forum page, whose
    // replies are content even when marked as comments (Vanilla on og:type=article).
    // Or the page says so in its structured data (schema.org `DiscussionForumPosting`,
    // `QAPage`).
    let mut forum_page = tree.facts.discussion;
    for i in (1..len).rev() {
        let node = &tree.nodes[i];
        if node.hidden {
            continue;
        }
        if let Kind::Text { .. } = node.kind {
            raw[i] = text_weight(tree.text_of(i as u32).unwrap_or(""));
            if in_p[i] {
                prose[i] = raw[i];
            }
        }
        match tree.tag(i as u32) {
            Some(Tag::H1) if title[i] => h1s[i] += 1,
            Some(Tag::Main) => {
                mains[i] = true;
                landmark[i] = true;
            }
            // Teaser cards marked `<article>` (a sidebar's story list) are not the article.
            Some(Tag::Article) => landmark[i] |= prose[i] >= ARTICLE_PROSE_MIN,
            _ => {}
        }
        has_main[i] = landmark[i] || h1s[i] > 0;
        // Consent banners go first, so their prose never makes the page look like an
        // article nor the real content look small beside them.
        let guarded = if tree.attrs(i as u32).is_some_and(is_dialog) {
            mains[i] || (h1s[i] > 0 && h1s[i] == page_h1s)
        } else {
            has_main[i]
        };
        if hints[i] == 4 && !guarded {
            removed[i] = true;
            continue;
        }
        let p = node.parent as usize;
        h1s[p] += h1s[i];
        mains[p] |= mains[i];
        raw[p] = raw[p].saturating_add(raw[i]);
        prose[p] = prose[p].saturating_add(prose[i]);
        landmark[p] |= landmark[i];
        if h1s[i] > 0 && !forum_page {
            forum_page = tree
                .attrs(i as u32)
                .is_some_and(|a| class_and_id(a).any(is_forum_token));
        }
    }
    let total = raw[0].max(1);
    let article_page = tree
        .facts
        .og_type
        .as_deref()
        .is_some_and(|t| t.to_ascii_lowercase().contains("article"));
    let total_prose = prose[0].max(1);
    let product_page = tree
        .facts
        .og_type
        .as_deref()
        .is_some_and(|t| t.to_ascii_lowercase().contains("product"))
        || tree.facts.product;
    // Blocks marked as comments that recur section after section, each holding prose and
    // none inside another, are an API reference's documentation comments (Scaladoc's
    // `div.comment.cmt` under each member's signature, TypeDoc's `div.tsd-comment`), not
    // a comment thread, which comes once, after the text. Not on an article or a forum.
    let doc_comments = !article_page && !forum_page && doc_comments(tree, &hints, &prose);
    // Pass 2: chrome, guarded so a page-wide wrapper is never taken for chrome.
    let mut in_comments = vec![false; len];
    // Inside a block removed so far (nodes are in document order, parents first).
    let mut dead = vec![false; len];
    // Text outside links and removed blocks before the current node (document order).
    let mut text_before = 0u32;
    for i in 1..len {
        let p = tree.nodes[i].parent as usize;
        dead[i] = dead[p] || removed[i];
        if matches!(tree.nodes[i].kind, Kind::Text { .. }) {
            if !dead[i] && !in_link[i] {
                text_before = text_before.saturating_add(raw[i]);
            }
            continue;
        }
        let hint = hints[i];
        let share = raw[i] as f64 / total as f64;
        let prose_share = prose[i] as f64 / total_prose as f64;
        let outside = prose[0].saturating_sub(prose[i]);
        // A block holding most of the page's prose wraps the content: more than half of
        // it with next to none outside (a thin page), or two thirds. A sidebar or footer
        // of widget excerpts can hold half the prose of a short post beside it.
        let wrapper = (prose_share > 0.5
            && prose[0] > 200
            && (outside < WRAPPER_PROSE_OUTSIDE || prose[i] >= 2 * outside))
            // Landmarks inside <main>/<article> that hold prose are part of the content,
            // and so is the page's title; on a page of many `<h1>`s (a widget's, a
            // modal's, each sidebar box's), a block needs most of them.
            || landmark[i]
            || h1s[i] > 0 && (page_h1s <= 2 || 2 * h1s[i] > page_h1s)
            || (hint == 2 && in_article[i] && prose[i] >= 150);
        // Comments go when the page has prose of its own outside them, on an article:
        // `og:type`, inside `<article>`, outweighed by the prose outside, or outside the
        // block holding the page's `<h1>` (the replies under a post, however many).
        // The outermost comment section decides for the ones nested in it.
        in_comments[i] = in_comments[p] || hint == 3;
        // Or when a post's worth of text comes before them (a post written in `<div>`s,
        // not paragraphs, followed by a longer thread of comments); a short post's when the
        // section is titled by its count, as blogs title the comments under a post
        // (Blogger's "7 comments:", WordPress's "6 thoughts on …", "One Comment").
        let comments = hint == 3
            && !forum_page
            && !doc_comments
            && !in_comments[p]
            && (outside >= 200
                && (article_page
                    || in_article[i]
                    || outside >= prose[i]
                    || (h1s[0] > 0 && h1s[i] == 0))
                || !has_main[i]
                    && (text_before >= COMMENTS_AFTER_TEXT && raw[i] >= COMMENTS_MIN
                        || text_before >= COUNTED_COMMENTS_AFTER_TEXT
                            && counted_comments(tree, i as u32)));
        // A chrome-classed block holding most of the page's text is taken for the page
        // wrapper (`has-sidebar`), unless the page's prose lies outside it: a blog's
        // sidebar of widgets can outweigh a short post, but a wrapper holds the post.
        let class_wrapper = share >= CLASS_CHROME_MAX
            && !(prose_share < CLASS_WRAPPER_PROSE_MIN && outside >= WRAPPER_PROSE_OUTSIDE);
        // A block named as other content (`promo_holder`, `related-stories`) after the
        // page's title, which it does not hold, with a post's worth of prose outside it:
        // a shelf, however much it holds (a slideshow of ten stories under an article), as
        // comments after the text are. A layout word (`with-sidebar`) names no content.
        let shelf = hint == 1
            && h1s[i] == 0
            && !landmark[i]
            && first_title < i
            && outside >= COMMENTS_AFTER_TEXT
            && tree
                .attrs(i as u32)
                .is_some_and(|a| class_and_id(a).any(|t| has_word(t, OTHER_CONTENT_WORDS)));
        if comments || shelf || !wrapper && (hint == 2 || (hint == 1 && !class_wrapper)) {
            removed[i] = true;
            dead[i] = true;
        }
    }
    // Shelves ("You may also like", "Related posts", share bars) by their heading.
    super::shelf::remove_shelves(tree, &raw, &prose, &has_main, &mut removed);
    // Pass 3 (bottom-up): content and link text excluding chrome.
    let mut text = vec![0u32; len];
    let mut link = vec![0u32; len];
    let mut anchors = vec![0u32; len];
    // Link text inside headings: a title's own links (a section's title linking to
    // itself) do not make its title block a menu.
    let mut hlink = vec![0u32; len];
    let mut htext = vec![0u32; len];
    // Whether a kept header cell (`<th>`) is inside: a table with a header row is data.
    let mut headed = vec![false; len];
    // Paragraph text outside removed blocks.
    let mut ptext = vec![0u32; len];
    for i in (1..len).rev() {
        let node = &tree.nodes[i];
        if node.hidden || removed[i] {
            continue;
        }
        if let Kind::Text { .. } = node.kind {
            text[i] = raw[i];
            if in_p[i] {
                ptext[i] = raw[i];
            }
        }
        if tree.tag(i as u32) == Some(Tag::A)
            && !heading_backref(tree, i as u32)
            && !(in_p[i] && code_reference(tree, i as u32))
        {
            link[i] = text[i];
            anchors[i] = u32::from(text[i] > 0);
        }
        // A heading with words of its own between its links is a title, not a menu
        // entry: an API signature (rustdoc's `<h4>type <a>Error</a> = <a>Infallible</a>
        // </h4>`) in a wrapper beside its permalink and source links. Its links weigh
        // nothing in the link density of the blocks around it. A heading that is one
        // link (a teaser's) still counts as links.
        if link[i] > 0 && text[i] > link[i] && tree.tag(i as u32).is_some_and(Tag::is_heading) {
            link[i] = 0;
        }
        if tree.tag(i as u32).is_some_and(Tag::is_heading) {
            hlink[i] = link[i];
            htext[i] = text[i];
        }
        let p = node.parent as usize;
        hlink[p] = hlink[p].saturating_add(hlink[i]);
        htext[p] = htext[p].saturating_add(htext[i]);
        headed[p] |= headed[i] || tree.tag(i as u32) == Some(Tag::Th);
        text[p] = text[p].saturating_add(text[i]);
        ptext[p] = ptext[p].saturating_add(ptext[i]);
        link[p] = link[p].saturating_add(link[i]);
        anchors[p] = anchors[p].saturating_add(anchors[i]);
    }
    // Link-dense blocks (menus that escaped the hints) are dropped. On pages that are
    // not mostly prose (listings, shops) only blocks of short links are: long link
    // texts there are the items listed.
    // How many siblings share each (parent, tag, class): repeated items of a listing.
    let prose_page = ptext[0] as f64 > PROSE_PAGE * text[0] as f64;
    let sig = if prose_page {
        HashMap::new()
    } else {
        sibling_signatures(tree)
    };
    let mut protected = vec![false; len];
    // Lists introduced by a paragraph ("The following classes support ...:") are part of
    // the text, however link-dense: a menu is not introduced by prose.
    let mut in_prose_list = vec![false; len];
    let prose_lists = lists_after_prose(tree, &removed, &ptext, &link, &text);
    // Inside a list that was weighed and kept: its sublists are part of it (an index's
    // "operator, [1]" under "!="), the outer list decides for them.
    let mut in_kept_list = vec![false; len];
    // A table with a header row, and what it holds, is data however link-dense (pathlib's
    // `os.path.abspath()` | `Path.absolute()`); a menu laid out in a table has no header.
    let mut in_data_table = vec![false; len];
    // Inside a code listing written as lines (Doxygen's `div.fragment`): code, however
    // link-dense its lines (`<a>SDL_SCANCODE_UNKNOWN</a> = 0,`).
    let mut in_code = vec![false; len];
    // Inside a heading: its title, whatever links it is made of (Erlang's data types,
    // `<h4><div><a name="type-key">key()</a> = <a>term()</a></div></h4>`).
    let mut in_heading = vec![false; len];
    // Inside a list under its own heading, kept however link-dense (R51 through wrappers).
    let mut in_section_list = vec![false; len];
    let mut in_sole_link = vec![false; len];
    // Inside a "See also" admonition (Sphinx's `div.admonition.seealso`, in every theme):
    // the text's own cross-references under their title, however link-dense ("See also"
    // over one link, `<p><a>Example Google Style Python Docstrings</a></p>`). Not any
    // admonition: a site's recommendation boxes hold rows of download buttons.
    let mut in_see_also = vec![false; len];
    // Inside the text's footnotes (mdBook's `ol.footnote-definition`, Pandoc's
    // `section.footnotes`, `role="doc-endnotes"`): each note is its source, often a link
    // and nothing else, and the text points to it.
    let mut in_notes = vec![false; len];
    for i in 1..len {
        if removed[i] {
            continue;
        }
        let p = tree.nodes[i].parent as usize;
        in_heading[i] = in_heading[p] || tree.tag(p as u32).is_some_and(Tag::is_heading);
        // R51 through wrappers: a block that only wraps a list right after a heading
        // (gi-docgen's `<h4>Ancestors</h4><div class="docblock"><ul>`), or a heading and
        // such a list alone (`div.toggle-wrapper`, a Sphinx toctree under its caption): the
        // list is that section's text. Looked at only for link-dense blocks.
        in_section_list[i] = in_section_list[p]
            || !article_page
                && matches!(tree.tag(i as u32), Some(Tag::Div | Tag::Section))
                && link[i] as f64 > 0.8 * text[i] as f64
                && (list_wrapper(tree, i as u32, &in_link) && after_heading(tree, i as u32)
                    || titled_list(tree, i as u32, &in_link))
                && !local_toc(tree, i as u32);
        // A section's whole body that is one link (git's "SEE ALSO" over `div.sectionbody
        // > div.paragraph > p > a`, R's over `<p><code><a>attributes</a></code></p>`,
        // a README's "License" over its one link): what the section refers to, with the
        // wrappers it is written in. On an article only under a permalinked heading
        // ([`after_title`]): its other titled single links are its site's ("Read next").
        // So is one link a sentence introduces ("Crash is available at the following
        // URL:" over reST's indented `<blockquote><div><p><a>https://…</a>`).
        in_sole_link[i] = in_sole_link[p]
            || matches!(
                tree.tag(i as u32),
                Some(Tag::Div | Tag::Section | Tag::P | Tag::Blockquote)
            ) && link[i] as f64 > 0.8 * text[i] as f64
                && one_link_paragraph(tree, i as u32, &in_link)
                && (after_title(tree, i as u32, article_page) && closes_section(tree, i as u32)
                    || after_colon(tree, i as u32));
        let is_list = matches!(tree.tag(i as u32), Some(Tag::Ul | Tag::Ol | Tag::Dl));
        in_data_table[i] = in_data_table[p]
            || headed[i] && sole_table(tree, i as u32).is_some_and(|t| headed[t as usize]);
        in_prose_list[i] = in_prose_list[p] || prose_lists[i];
        in_code[i] = in_code[p] || tree.is_code_lines(i as u32);
        in_notes[i] = in_notes[p] || tree.attrs(i as u32).is_some_and(names_notes);
        in_see_also[i] = in_see_also[p]
            || tree.attrs(i as u32).is_some_and(|a| {
                let mut toks = a.class.split_ascii_whitespace();
                toks.clone().any(|t| t == "admonition") && toks.any(|t| t == "seealso")
            });
        // An item links to what it lists; repeated blocks of a text are not items, nor
        // are paragraphs (a row of download buttons is not a listing).
        protected[i] = protected[p]
            || (!prose_page
                && text[i] >= ITEM_MIN
                && link[i] as f64 >= ITEM_LINK_SHARE * text[i] as f64
                && tree.tag(i as u32) != Some(Tag::P)
                && repeated(tree, &sig, i as u32));
        if matches!(
            tree.tag(i as u32),
            Some(
                Tag::Ul
                    | Tag::Ol
                    | Tag::Div
                    | Tag::Section
                    | Tag::Table
                    | Tag::Dl
                    | Tag::Menu
                    | Tag::P
            )
        ) && text[i] > 0
            && (prose_page || anchors[i] > 0 && link[i] / anchors[i] < 30)
            // Link-dense and short: the counts first, before the exceptions below that
            // read the element's subtree.
            && link[i] as f64 / text[i] as f64 > 0.8
            && text[i] - link[i] < 40
            && (text[i] as f64) < 0.25 * text[0] as f64
            && !protected[i]
            && !in_prose_list[i]
            && !(is_list && in_kept_list[p])
            // Nor the paragraph an item of such a list is written in (Sphinx's and
            // Python-Markdown's loose lists: `<li><p><a>Templating</a></p></li>`): the
            // item's text, which the list was weighed with.
            && !(tree.tag(i as u32) == Some(Tag::P)
                && tree.tag(p as u32) == Some(Tag::Li)
                && in_kept_list[p])
            && !in_data_table[i]
            && !in_code[i]
            && !in_see_also[i]
            && !in_notes[i]
            && !in_heading[i]
            // Nor an API's signature under its member's heading (Javadoc's
            // `<h3>getTimeZone</h3><div class="member-signature"><a>TimeZone</a>
            // <a>getTimeZone</a>()`): the declaration, whatever types it links to.
            && !heading_signature(tree, i as u32)
            // Nor what only wraps a heading: its title, however link-dense (DocBook's
            // `div.titlepage > div > div > h3 > a.link`, a section's title linking to
            // itself); not on an article, whose headings of one link are its site's
            // teasers ("Latest insights", a news list's headlines).
            && (article_page || !heading_wrapper(tree, i as u32))
            // Nor, on any page, a heading beside its own permalink (Starlight's
            // `div.sl-heading-wrapper > h2 + a[href="#id"]`): a section of the document,
            // however its title links away; a teaser's headline has no anchor of its own.
            && !permalinked_heading(tree, i as u32)
            // A list under its own heading is that section's text (Apache's "See also"
            // under each directive, a reference's list of types); not on an article,
            // whose headed link lists are its site's ("On this day", "Read next").
            && !(is_list && !article_page && section_list(tree, i as u32))
            // The same for a list of links written as a sentence under its own heading
            // (R's help pages: "See Also", then `<code><a>glm</a></code>, <code><a>aov
            // </a></code>.`): links and commas, no words (a post's "<a>date</a>", a
            // "Sign in or join" line are not lists).
            && !(!article_page
                && tree.tag(i as u32) == Some(Tag::P)
                && anchors[i] >= 2
                && links_and_separators(tree, i as u32, &in_link)
                && listed_after_heading(tree, i as u32, &in_link))
            && !in_section_list[i]
            // A paragraph of one link and words of its own is a sentence ("Reference:
            // <a>…</a>", "Use <a>g_mutex_init()</a>", "a <a>GArray</a>"), not a menu; not
            // on an article, whose "Related: <a>…</a>" lines are its site's.
            && !(!article_page
                && tree.tag(i as u32) == Some(Tag::P)
                && anchors[i] <= 1
                && text[i] > link[i])
            // Nor is one that opens with words of its own before its links ("See also:
            // <a>…</a>, <a>…</a>": SQLite's and Python's cross-references).
            && !(!article_page
                && tree.tag(i as u32) == Some(Tag::P)
                && opens_with_words(tree, i as u32))
            // Nor one whose links its own words join into a sentence ("See <a>a</a> and
            // <a>b</a>.": a cross-reference of one word before its links).
            && !(!article_page
                && tree.tag(i as u32) == Some(Tag::P)
                && linked_sentence(tree, i as u32, &in_link))
            // Nor one that is a bare address (an autolink on a line of its own).
            && !(!article_page
                && matches!(tree.tag(i as u32), Some(Tag::P | Tag::Div))
                && bare_address(tree, i as u32))
            && !in_described_row(tree, i as u32, &text, &link, &removed)
            && !in_sole_link[i]
            // Nor a paragraph that is all of a definition's description: the value of its
            // term (Scaladoc's "See also" over `<dd><span><p><a>ProcessBuilder</a></p>`).
            && !(tree.tag(i as u32) == Some(Tag::P) && sole_in_description(tree, i as u32))
        {
            removed[i] = true;
        }
        in_kept_list[i] = in_kept_list[p] || is_list && !removed[i] && text[i] > 0;
    }
    emptied_disclosures(tree, &raw, &mut removed);
    emptied_toc_headings(tree, &raw, &mut removed);
    // Recompute totals after link-dense removal.
    let mut good = vec![0f64; len];
    let mut kept_p = vec![0f64; len];
    // What of `good` is code (`<pre>`), and how many code blocks: a listing alone is no
    // page's text.
    let mut code = vec![0f64; len];
    let mut listings = vec![0u32; len];
    // Text of repeated listing items (product cards, posts, story lists).
    let mut items = vec![0f64; len];
    // Holds a kept `<h1>`.
    let mut kept_h1 = vec![false; len];
    for i in (1..len).rev() {
        let node = &tree.nodes[i];
        if node.hidden || removed[i] {
            continue;
        }
        let p = node.parent as usize;
        kept_h1[i] |= title[i] && raw[i] > 0;
        kept_h1[p] |= kept_h1[i];
        if let Kind::Text { .. } = node.kind {
            good[i] = raw[i] as f64;
            if in_p[i] {
                kept_p[i] = raw[i] as f64;
            }
            if protected[i] {
                items[i] = raw[i] as f64;
            }
        }
        let p = node.parent as usize;
        kept_p[p] += kept_p[i];
        items[p] += items[i];
        let w = if tree.tag(i as u32) == Some(Tag::A) {
            LINK_WEIGHT
        } else {
            1.0
        };
        good[p] += good[i] * w;
        if tree.tag(i as u32) == Some(Tag::Pre) {
            // A `<pre>` inside a `<pre>` is the same listing.
            code[i] = good[i];
            listings[i] = 1;
        }
        code[p] += code[i] * w;
        listings[p] += listings[i];
    }
    let lead = Lead {
        text: &text,
        link: &link,
        hlink: &hlink,
        htext: &htext,
        ptext: &ptext,
        items: &items,
        hints: &hints,
    };
    // Descend while one child holds most of the content, starting from the page's
    // first `<main>` landmark when it holds a fair part of the content: the author put
    // the content there (teasers of other stories sit outside it).
    let mut cur = main_landmark(tree, &removed)
        .filter(|&m| good[m as usize] >= MAIN_MIN_SHARE * good[0])
        .unwrap_or(0);
    // The author marked the article's text (schema.org `itemprop="articleBody"`): when
    // it holds a fair amount of text, and is not one of many (teasers of a listing),
    // it is the content, whatever the text totals around it say.
    // Not on a discussion: the opening post's body is marked so, and the replies are
    // content too.
    if let Some(b) = article_body(tree, &removed, &good).filter(|_| !tree.facts.discussion) {
        return (Selection { root: b, removed }, forum_page);
    }
    // The page's title stood alone beside the content on the way down, in a block of the
    // content's very kind: it is attached as the title of a non-article page is.
    let mut title_panel = false;
    loop {
        // A table with a header row is data: the unit, not a layout to enter (its rows
        // would come out as paragraphs).
        if tree.tag(cur) == Some(Tag::Table) && headed[cur as usize] {
            break;
        }
        let mut by_share = true;
        let mut best = NONE;
        let mut best_v = 0.0;
        for c in tree.children(cur) {
            if removed[c as usize] || !tree.tag(c).is_some_and(is_container) {
                continue;
            }
            let v = good[c as usize] * if content_hint(tree, c) { 1.15 } else { 1.0 };
            if v > best_v {
                best_v = v;
                best = c;
            }
        }
        if best == NONE
            || good[best as usize] < DESCEND_SHARE * good[cur as usize]
            || good[best as usize] < 1.0
        {
            by_share = false;
            // Or: one child holds nearly all the prose (an article beside link lists).
            let by_prose = tree
                .children(cur)
                .filter(|&c| !removed[c as usize] && tree.tag(c).is_some_and(is_container))
                .max_by(|&a, &b| kept_p[a as usize].total_cmp(&kept_p[b as usize]));
            // The child is the one with text of its own among columns of links (a blog's
            // post between its link sidebars): however short, and whatever the links weigh.
            let among_links = by_prose.is_some_and(|c| {
                tree.children(cur).all(|o| {
                    o == c
                        || removed[o as usize]
                        || f64::from(link[o as usize])
                            >= LINK_COLUMN_SHARE * f64::from(text[o as usize])
                })
            });
            match by_prose {
                // A short article counts too when its child also holds the page's title:
                // a title and all the prose of a page together are its article, however
                // short, beside a story list as long as it.
                Some(c)
                    if (kept_p[cur as usize] >= PROSE_MIN
                        || kept_p[c as usize] >= SHORT_ARTICLE_PROSE
                            && (kept_h1[c as usize] || among_links))
                        && kept_p[c as usize] >= PROSE_SHARE * kept_p[cur as usize]
                        && (good[c as usize] >= 0.4 * good[cur as usize]
                            || matches!(tree.tag(c), Some(Tag::Main | Tag::Article))
                                && good[c as usize] >= 0.2 * good[cur as usize]
                            || among_links) =>
                {
                    best = c
                }
                _ => break,
            }
        }
        // The page's one title lies outside the child the prose chose, on a page that is
        // neither an article nor a product (a home or landing page: a hero with the `<h1>`,
        // then sections of cards, one of them written in paragraphs): the page is its
        // sections, so stay. An article's or a product's title stands apart from its body.
        if !by_share
            && !product_page
            && !article_page
            && page_h1s == 1
            && kept_h1[cur as usize]
            && !kept_h1[best as usize]
        {
            break;
        }
        // A code listing is not a page's text by itself: entering the block that holds one
        // listing and little else drops the words that name and explain it (RDoc's
        // method details: the name, a sentence, then the source, which outweighs them).
        // A post of many listings and paragraphs is entered as usual, and so is a block
        // holding the page's title, unless the prose beside it would go (pdoc's module
        // page: the title over the module's whole source, then a section of prose for
        // each function).
        if listings[best as usize] == 1
            && (!kept_h1[best as usize]
                || kept_p[cur as usize] - kept_p[best as usize] >= PROSE_MIN)
            && code[best as usize] >= LISTING_SHARE * good[best as usize]
            && good[cur as usize] > good[best as usize]
        {
            break;
        }
        // A listing's items outside the chosen child (a product grid beside an SEO
        // text): they are the content too, so stay here, unless the child holds the
        // page's `<h1>`/`<article>` or nearly all its prose (an article beside teaser
        // lists).
        let items_left = items[cur as usize] - items[best as usize];
        if by_share
            && !has_main[best as usize]
            && items_left >= ITEMS_LEFT_MIN
            && items_left >= ITEMS_LEFT_SHARE * items[cur as usize]
        {
            break;
        }
        // A page built from like sections (same tag as the child the prose chose and its
        // first class token, a class token shared with it or one ending alike; text
        // rather than links): the sections belong together, so stay here. When the child
        // holds most of the content by itself, only siblings of its very class list count
        // (pydoc's `table.section`s, a thread's `div.windowbg` posts, a story's
        // `div.story-body-supplemental` parts), not a layout's shared `clearfix` or
        // `row-fluid-wrapper`. Not on product pages, whose description is the content
        // and whose like sections beside it are shipping, returns and specification
        // widgets.
        if !product_page && merge_siblings(tree, cur, best, &removed, &text, &link, &good, by_share)
        {
            break;
        }
        // The page's title alone in a block of its own, of the very kind of the chosen
        // child (Starlight's two `div.content-panel`s: the `<h1>`, then the body): noted,
        // so that the title is attached to the content below. A headline's block that
        // holds a byline or a standfirst too is an article's, which stands apart from its
        // body.
        let panel = kept_h1[cur as usize]
            && tree.children(cur).any(|s| {
                s != best
                    && !removed[s as usize]
                    && kept_h1[s as usize]
                    && tree.tag(s) == tree.tag(best)
                    && same_class_list(tree, s, best)
                    && title_only(tree, s, &text)
            });
        // When the chosen child has `<h1>`s of its own (a README whose sections are `#`),
        // the title is not the page's one: the two panels are the page, so stay.
        if panel && kept_h1[best as usize] {
            break;
        }
        title_panel |= panel;
        // The page's title sits here beside the chosen child, itself a titled section or
        // a table (a documentation page: the `<h1>`, its introduction, then sections or
        // the table the title names): stay, or the title, the introduction and the other
        // sections go, and a table entered is no longer rendered as one.
        if kept_h1[cur as usize]
            && !kept_h1[best as usize]
            && h1_child(
                tree,
                cur,
                &kept_h1,
                &text,
                !article_page && tree.names_main(cur),
            )
            && (starts_with_heading(tree, best) || starts_with_list(tree, best))
        {
            break;
        }
        // The same for a title of any level: the chosen child opens with a heading that a
        // heading before it here outranks (Node's API pages: the module's `<h2>`, its
        // introduction, then `<section>`s under `<h3>`s, one holding most of the text).
        // The child is a subsection of the document here: stay.
        // Or the title opens a preamble before it (Apache's `div#preamble`: the module's
        // `<h1>`, its summary table and introduction, then `div.section`s under `<h2>`s).
        if subsection_of(tree, cur, best, &removed) || preamble_of(tree, cur, best, &removed, &lead)
        {
            break;
        }
        // A section that opens with its own heading and holds, beside the chosen child,
        // another section of prose under a heading of the same rank (a recipe's
        // "Instructions" over its steps, then "Tips" in a block of their own): the
        // sections belong together, so stay, or the title and the sections beside go.
        if titled_sections(tree, cur, best, &removed, &kept_p, &lead) {
            break;
        }
        // On a page whose title is no heading (Doxygen's `div.title`), a child right after a
        // heading is that section's body ("Detailed Description" over `div.textblock`), not
        // the page: the summary tables and member sections beside it are the document too.
        if !kept_h1[0] && !article_page && !product_page && after_heading(tree, best) {
            break;
        }
        // A titled document of flat sections (rustdoc: `<h2>Implementations</h2><div>…</div>
        // <h2>Trait Implementations</h2><div>…</div>` under the item's `<h1>`): the chosen
        // child is one section's body, the heading before it its title, and other titled
        // sections sit beside it: stay, or the title, the declaration and the other sections go.
        if kept_h1[cur as usize] && titles_flat_sections(tree, cur, best, &removed, &text) {
            break;
        }
        // A data table (a header row) under a caption, with prose beside it (DocBook's
        // `div.table > p.title + div.table-contents > table` between a page's title,
        // introduction and notes): the table is part of the text, not the page.
        // The same for a definition list that holds most of a titled section (DocBook's
        // `div.variablelist` under the section's `div.titlepage`, with its introduction and
        // notes around it).
        if kept_p[cur as usize] - kept_p[best as usize] >= TABLE_PROSE_MIN
            && (holds_data_table(tree, best, &headed, &good)
                || holds_definitions(tree, best, &good)
                    && tree.children(cur).take_while(|&c| c != best).any(|c| {
                        !removed[c as usize] && (heading_like(tree, c) || heading_wrapper(tree, c))
                    }))
        {
            break;
        }
        // Titled documents side by side (Sphinx gives each module of a page its own
        // `<section>` under an `<h1>`: `curses`, then `curses.textpad`): stay, or all but
        // the largest go.
        let titled = |n: u32| first_element(tree, n).is_some_and(|f| tree.tag(f) == Some(Tag::H1));
        if titled(best)
            && tree
                .children(cur)
                .any(|c| c != best && !removed[c as usize] && kept_p[c as usize] > 0.0 && titled(c))
        {
            break;
        }
        // The same for sections of any level, three or more of them (DocBook's
        // `div.refsect1`s, each under an `<h2>`: Description, Parameters, Examples,
        // Compatibility): a section holding most of the text is one of the document's.
        let level = |n: u32| opening_level(tree, n);
        if let Some(l) = level(best) {
            // Or two of them when the other is plain text, not links (gi-docgen's
            // `div.declaration` and `div.description`, each under an `<h4>`); a news
            // page's titled sidebar of headlines beside its story is links.
            let (mut like, mut plain) = (0, 0);
            for c in tree.children(cur) {
                let i = c as usize;
                if c != best && !removed[i] && kept_p[i] > 0.0 && level(c) == Some(l) {
                    like += 1;
                    plain +=
                        usize::from(f64::from(link[i]) <= LEAD_LINK_SHARE * f64::from(text[i]));
                }
            }
            if like >= 2 || plain >= 1 {
                break;
            }
        }
        cur = best;
    }
    // Scraps chosen outside a titled landmark: when `<main>` holds an `<h1>` but little
    // else (an empty chapter, an index of links removed as a menu), the descent from the
    // page finds a help overlay or a footer. The landmark is the page.
    if let Some(m) = main_landmark(tree, &removed) {
        // A `<template>` in it is a placeholder a script fills from outside (React's
        // streamed segments): what lies outside is then the landmark's own content.
        let end = super::markdown::subtree_end(tree, m);
        if kept_h1[m as usize]
            && !is_descendant(tree, cur, m)
            && good[cur as usize] < SCRAPS_MAX
            && !(m + 1..end).any(|i| tree.tag(i) == Some(Tag::Template))
        {
            cur = m;
        }
    }
    // On a page without an `<h1>`, its title is its first heading of the highest level
    // (BoostBook's and DocBook's `<h2>` in `div.titlepage`, Scribble's `<h3>`) (R54).
    let top = if page_h1s == 0 && !article_page {
        top_heading(tree, &removed, &text)
    } else {
        None
    };
    let mut kept_top = Vec::new();
    if let Some(t) = top {
        kept_top = vec![false; len];
        let mut x = t;
        while x != NONE {
            kept_top[x as usize] = true;
            x = tree.nodes[x as usize].parent;
        }
    }
    // The page's one title and its introduction, however far above the chosen content
    // they sit (a landing or category page's header section; not an article's, whose
    // headline and byline stand apart from its body on purpose).
    let (kept_t, ttag) = match top {
        Some(t) => (&kept_top[..], tree.tag(t).unwrap_or(Tag::H1)),
        None => (&kept_h1[..], Tag::H1),
    };
    // A page whose `<h1>`s all say the same has one title (a top bar's copy of it above
    // the content's own: Erlang/OTP's reference pages).
    let one_title = page_h1s == 1 || (2..=3).contains(&page_h1s) && same_titles(tree, &title);
    let titled = (one_title || top.is_some()) && (!article_page || title_panel);
    // A lead beside the content in the block that holds the title too (a reference page's
    // description between its `<h1>` and its exports): the title decides what is kept
    // there, or widening to the lead would drop the title and the sections around it.
    let parent = tree.nodes[cur as usize].parent;
    if titled && cur != 0 && parent != NONE && kept_t[parent as usize] && !kept_t[cur as usize] {
        if let Some(r) = with_title(tree, cur, &mut removed, kept_t, ttag, &lead, forum_page) {
            return (Selection { root: r, removed }, forum_page);
        }
    }
    let root = with_lead(tree, cur, &mut removed, &lead, !article_page);
    if titled && !kept_t[root as usize] {
        if let Some(r) = with_title(tree, root, &mut removed, kept_t, ttag, &lead, forum_page) {
            return (Selection { root: r, removed }, forum_page);
        }
    }
    // The text's footnotes beside it (texi2any's `div.footnote` after `div.top`); not on
    // an article, whose reference list stands apart from its body as its headline does.
    let root = if article_page {
        root
    } else {
        with_notes(tree, root, &mut removed, &lead)
    };
    (Selection { root, removed }, forum_page)
}

/// Per-node totals that tell a lead (standfirst, introduction, header) from the rest.
struct Lead<'a> {
    text: &'a [u32],
    link: &'a [u32],
    hlink: &'a [u32],
    htext: &'a [u32],
    ptext: &'a [u32],
    items: &'a [f64],
    /// Each node's [`chrome_hint`], read where it stands (inside `<main>` or not).
    hints: &'a [u8],
}

impl Lead<'_> {
    /// Whether block `c` reads as a lead: prose with few links, not a grid of cards.
    fn is(&self, c: u32, removed: &[bool]) -> bool {
        let i = c as usize;
        let t = self.text[i];
        !removed[i]
            && t >= LEAD_MIN
            && f64::from(self.ptext[i]) >= LEAD_PROSE_SHARE * f64::from(t)
            && self.few_links(i)
    }

    /// Whether block `i` has few links and is no grid of cards (prices, teasers): a
    /// listing, not a lead.
    fn few_links(&self, i: usize) -> bool {
        let t = f64::from(self.text[i]);
        f64::from(self.link[i]) <= LEAD_LINK_SHARE * t && self.items[i] < 0.5 * t
    }

    /// Whether block `c` is written text: a heading, or a paragraph, quote, code block,
    /// list or table with few links (not a layout `<div>`, a menu or a card grid).
    fn written(&self, tree: &Tree, c: u32) -> bool {
        match tree.tag(c) {
            Some(t) if t.is_heading() => t != Tag::H1,
            Some(
                Tag::P | Tag::Blockquote | Tag::Pre | Tag::Ul | Tag::Ol | Tag::Dl | Tag::Table,
            ) => self.few_links(c as usize),
            _ => false,
        }
    }
}

/// The chosen content `root` widened to the lowest ancestor holding the page's `<h1>` when
/// the block holding it comes before `root` and reads as a lead (prose, few links, not a
/// grid): that block and the path down to `root` are kept, every other branch on the way
/// is removed. `None` when the title block is no lead (a header of menus, a hero of cards).
fn with_title(
    tree: &Tree,
    cur: u32,
    removed: &mut [bool],
    kept_h1: &[bool],
    ttag: Tag,
    lead: &Lead,
    forum_page: bool,
) -> Option<u32> {
    // The lowest ancestor holding the page's title, and its child on the way to `cur`.
    let mut path = cur;
    let mut a = tree.nodes[cur as usize].parent;
    while a != NONE && !kept_h1[a as usize] {
        path = a;
        a = tree.nodes[a as usize].parent;
    }
    if a == NONE {
        return None;
    }
    let head = tree
        .children(a)
        .take_while(|&c| c != path)
        .find(|&c| kept_h1[c as usize])?;
    // A lead, or the title standing alone (R53): a short block, not links, whose `<h1>`
    // no chrome class marks on the way (gi-docgen's `<header><h3>Method</h3><h1>…</h1>
    // </header>` before the page's one `<section>`; not mdBook's `h1.menu-title` in
    // `div#menu-bar`). Not on a discussion: a thread's title stands apart from its posts,
    // as an article's does from its body.
    // A title of a lesser level is a heading block, its text mostly the heading's (not a
    // titled sidebar of headlines).
    let alone = !forum_page
        && title_block(lead, removed, head)
        && (ttag == Tag::H1 || heading_block(lead, head))
        && clean_title(tree, head, ttag, lead.hints);
    // Or a reference page's preamble: it opens with the `<h1>`, holds prose, is not
    // mostly links, and the content is one of its sections (opens with a lesser heading).
    let preamble = !forum_page
        && ttag == Tag::H1
        && opening_level(tree, head) == Some(1)
        && opening_level(tree, path).is_some_and(|l| l > 1)
        && !removed[head as usize]
        && f64::from(lead.ptext[head as usize]) >= SECTION_PROSE_MIN
        && 2 * lead.link[head as usize] <= lead.text[head as usize];
    if !(alone || preamble || lead.is(head, removed)) {
        return None;
    }
    // Keep the title block and the path down to `cur`; remove every other branch.
    let path_level = opening_level(tree, path);
    let mut x = cur;
    while x != a {
        let p = tree.nodes[x as usize].parent;
        // Headings between the title and the path title the content too (Erlang's
        // `<h1>ssh_sftpd</h1><h3>Options</h3><div>`), and a lead there introduces it
        // (RDoc's `section.description` between the class's `<h1>` and its methods).
        // So do the titles of the sections the path enters (DocBook's nested
        // `div.section > div.titlepage`), and a declaration in code between the title and
        // the content (rustdoc's `<pre>` of an item) (R54).
        let (mut after_head, mut after_path) = (p != a, false);
        let notes = notes_after(tree, x, removed, lead);
        for c in tree.children(p) {
            after_head |= p == a && c == head;
            after_path |= c == x;
            let titled = tree.tag(c).is_some_and(Tag::is_heading) || starts_with_heading(tree, c);
            // A section between the title and the content, under a heading no lesser than
            // the content's own and not a menu, is one of the document's: a reference
            // page's "Data Types" of signatures before its "Exports".
            let section = p == a
                && !removed[c as usize]
                && opening_level(tree, c)
                    .is_some_and(|l| l > 1 && path_level.is_none_or(|pl| l <= pl))
                && 2 * lead.link[c as usize].saturating_sub(lead.hlink[c as usize])
                    <= lead.text[c as usize];
            // So is a block that opens with a paragraph and is not mostly links: the
            // description a reference page gives under its title, with its example and
            // its cross-references (Scaladoc's `div#comment` with its "Source" and "See
            // also" links and its supertypes under it).
            let described = p == a
                && !removed[c as usize]
                && first_element(tree, c).is_some_and(|f| tree.tag(f) == Some(Tag::P))
                && f64::from(lead.ptext[c as usize]) >= SECTION_PROSE_MIN
                && 2 * lead.link[c as usize] <= lead.text[c as usize];
            let sub_title = after_head
                && !after_path
                && (titled && title_block(lead, removed, c) && (p == a || heading_block(lead, c))
                    || section
                    || described
                    || p == a && lead.is(c, removed)
                    || tree.tag(c) == Some(Tag::Pre) && !removed[c as usize]);
            let kept = c == x || p == a && c == head || sub_title || notes.contains(&c);
            if !kept {
                removed[c as usize] = true;
            }
        }
        x = p;
    }
    Some(a)
}

/// Whether most of `c`'s text is in its headings: a section's title block.
fn heading_block(lead: &Lead, c: u32) -> bool {
    let i = c as usize;
    lead.text[i] <= 2 * lead.htext[i]
}

/// The first heading of the highest level on the page, outside removed and hidden blocks
/// and holding text: the title of a page without an `<h1>`.
fn top_heading(tree: &Tree, removed: &[bool], text: &[u32]) -> Option<u32> {
    let len = tree.nodes.len() as u32;
    let mut best: Option<(u8, u32)> = None;
    let mut i = 1;
    while i < len {
        if removed[i as usize] || tree.nodes[i as usize].hidden {
            i = super::markdown::subtree_end(tree, i);
            continue;
        }
        if let Some(l) = tree.tag(i).and_then(Tag::heading_level) {
            if text[i as usize] > 0 && !is_logo_h1(tree, i) && best.is_none_or(|(b, _)| l < b) {
                best = Some((l, i));
            }
            i = super::markdown::subtree_end(tree, i);
            continue;
        }
        i += 1;
    }
    best.map(|(_, h)| h)
}

/// Most text (non-space bytes) of a title standing alone before the chosen content.
const TITLE_BLOCK_MAX: u32 = 200;

/// Whether `c` is short, holds text and is not mostly links: a title block.
fn title_block(lead: &Lead, removed: &[bool], c: u32) -> bool {
    let i = c as usize;
    let t = lead.text[i];
    !removed[i]
        && t > 0
        && t <= TITLE_BLOCK_MAX
        && 2 * lead.link[i].saturating_sub(lead.hlink[i]) <= t
}

/// Whether no element from `head` down to an `<h1>` in it has a chrome hint (a
/// `<header>` aside: the title's own wrapper).
fn clean_title(tree: &Tree, head: u32, ttag: Tag, hints: &[u8]) -> bool {
    let end = super::markdown::subtree_end(tree, head);
    (head..end).filter(|&h| tree.tag(h) == Some(ttag)).all(|h| {
        let mut x = h;
        loop {
            if tree.tag(x) != Some(Tag::Header) && hints[x as usize] != 0 {
                return false;
            }
            if x == head {
                return true;
            }
            x = tree.nodes[x as usize].parent;
        }
    })
}

/// The chosen content `cur` widened to its parent when a sibling before it is prose (a
/// standfirst, an article's introduction, the question above its answers, a reference
/// page's header), not a grid of listing items: those siblings are kept with `cur`, the
/// parent's other children are removed. Returns the new root (`cur` when nothing before it is prose).
fn with_lead(tree: &Tree, cur: u32, removed: &mut [bool], lead: &Lead, notes: bool) -> u32 {
    let parent = match tree.nodes.get(cur as usize) {
        Some(n) if cur != 0 && n.parent != NONE => n.parent,
        _ => return cur,
    };
    let mut keep: Vec<u32> = tree
        .children(parent)
        .take_while(|&c| c != cur)
        .filter(|&c| lead.is(c, removed))
        .collect();
    if keep.is_empty() {
        return cur;
    }
    // Not on an article: the text written right before `cur`, block after block, is the
    // document's introduction when a lead is part of it, its headings and short
    // paragraphs too (a module's docstring before its members: a sentence, a paragraph,
    // `<h3>`s over more of them, examples in blockquotes).
    if notes {
        let before: Vec<u32> = tree.children(parent).take_while(|&c| c != cur).collect();
        let run: Vec<u32> = before
            .iter()
            .rev()
            .copied()
            .filter(|&c| !removed[c as usize] && tree.tag(c).is_some())
            .take_while(|&c| lead.written(tree, c))
            .collect();
        if run.iter().any(|c| keep.contains(c)) {
            keep.extend(run);
        }
    }
    let notes = if notes {
        notes_after(tree, cur, removed, lead)
    } else {
        Vec::new()
    };
    for c in tree.children(parent) {
        if c != cur && !keep.contains(&c) && !notes.contains(&c) {
            removed[c as usize] = true;
        }
    }
    parent
}

/// The chosen content `cur` widened to its parent when a sibling after it holds the
/// text's footnotes or the rest of its sections (`notes_after`): those are kept with
/// `cur`, the parent's other children are removed. Returns the new root (`cur` when no notes follow it).
fn with_notes(tree: &Tree, cur: u32, removed: &mut [bool], lead: &Lead) -> u32 {
    let parent = match tree.nodes.get(cur as usize) {
        Some(n) if cur != 0 && n.parent != NONE => n.parent,
        _ => return cur,
    };
    let notes = notes_after(tree, cur, removed, lead);
    if notes.is_empty() {
        return cur;
    }
    for c in tree.children(parent) {
        if c != cur && !notes.contains(&c) {
            removed[c as usize] = true;
        }
    }
    parent
}

/// Siblings after `x` that hold its footnotes, and the blocks right after it that
/// continue it ([`continuations`]). Footnotes: a block classed `footnote(s)` (texi2any's
/// `div.footnote` beside `div.top`, Pandoc's `section.footnotes`) or with role
/// `doc-endnotes` or `doc-footnote` ([`names_notes`]), not removed, text rather than links, holding an element whose id a
/// `#fragment` link in `x` points to (the note's number in the text).
fn notes_after(tree: &Tree, x: u32, removed: &[bool], lead: &Lead) -> Vec<u32> {
    let Some(p) = tree
        .nodes
        .get(x as usize)
        .map(|n| n.parent)
        .filter(|&p| p != NONE)
    else {
        return Vec::new();
    };
    let mut notes: Vec<u32> = tree
        .children(p)
        .skip_while(|&c| c != x)
        .skip(1)
        .filter(|&c| {
            let i = c as usize;
            !removed[i]
                && lead.text[i] > 0
                && 2 * lead.link[i] <= lead.text[i]
                && tree.attrs(c).is_some_and(names_notes)
        })
        .take(NOTES_MAX)
        .collect();
    let mut more = continuations(tree, x, removed, lead);
    // What the text's last sentence introduces ("JSON support in Qt consists of these
    // classes:"), written after its block (QDoc's group table after `div.descr` and a
    // "See also" line): the blocks after it up to the first list or table.
    if ends_with_colon(tree, x) {
        let after: Vec<u32> = tree
            .children(p)
            .skip_while(|&c| c != x)
            .skip(1)
            .filter(|&c| tree.tag(c).is_some())
            .take(INTRODUCED_MAX)
            .take_while(|&c| !removed[c as usize])
            .collect();
        if let Some(k) = after.iter().position(|&c| starts_with_list(tree, c)) {
            for &c in &after[..=k] {
                if !more.contains(&c) {
                    more.push(c);
                }
            }
        }
    }
    if notes.is_empty() {
        return more;
    }
    // The fragments the text links to.
    let end = super::markdown::subtree_end(tree, x);
    let targets: std::collections::HashSet<&str> = (x + 1..end)
        .filter(|&i| tree.tag(i) == Some(Tag::A))
        .filter_map(|i| tree.attrs(i)?.href.as_deref()?.strip_prefix('#'))
        .filter(|t| !t.is_empty())
        .collect();
    notes.retain(|&n| {
        let end = super::markdown::subtree_end(tree, n).min(n + NOTES_SCAN);
        (n..end).any(|i| tree.attrs(i).is_some_and(|a| targets.contains(&*a.id)))
    });
    for m in more {
        if !notes.contains(&m) {
            notes.push(m);
        }
    }
    notes
}

/// Most blocks looked at after the content for the list or table its last sentence
/// introduces ([`notes_after`]).
const INTRODUCED_MAX: usize = 3;
/// Most blocks kept after the content as its continuation ([`continuations`]).
const CONTINUED_MAX: usize = 8;
/// Most note blocks kept after the content, and nodes of each looked at for the ids the
/// text links to.
const NOTES_MAX: usize = 4;
const NOTES_SCAN: u32 = 4000;

/// Whether `best`, a child of `cur`, follows a heading (h2–h6) and `cur` has at least two
/// other heading children with text: `best` is the body of one of `cur`'s flat sections.
fn titles_flat_sections(tree: &Tree, cur: u32, best: u32, removed: &[bool], text: &[u32]) -> bool {
    let titled = |c: u32| {
        !removed[c as usize]
            && text[c as usize] > 0
            && tree.tag(c).is_some_and(|t| t.is_heading() && t != Tag::H1)
    };
    let mut prev = NONE;
    let mut own_title = NONE;
    let mut others = 0;
    for c in tree.children(cur) {
        if tree.tag(c).is_none() {
            continue;
        }
        if c == best {
            own_title = prev;
        } else if titled(c) {
            others += 1;
        }
        prev = c;
    }
    own_title != NONE && titled(own_title) && others >= 2
}

/// Paragraph text (bytes) beside a chosen data table that keeps the descent out of it.
const TABLE_PROSE_MIN: f64 = 100.0;

/// Whether most of `n`'s content is one table with a header row (a captioned table).
fn holds_data_table(tree: &Tree, n: u32, headed: &[bool], good: &[f64]) -> bool {
    holds_mostly(tree, n, good, |i| {
        tree.tag(i) == Some(Tag::Table) && headed[i as usize]
    })
}

/// Whether an element of `n`'s subtree (`n` too) that `is` accepts holds at least 70 %
/// of `n`'s content.
fn holds_mostly(tree: &Tree, n: u32, good: &[f64], is: impl Fn(u32) -> bool) -> bool {
    let end = super::markdown::subtree_end(tree, n);
    (n..end).any(|i| is(i) && good[i as usize] >= 0.7 * good[n as usize])
}

/// Whether most of `n`'s content is one definition list (DocBook's `div.variablelist`:
/// a reference's terms and what each means, between the section's introduction and its
/// notes).
fn holds_definitions(tree: &Tree, n: u32, good: &[f64]) -> bool {
    holds_mostly(tree, n, good, |i| tree.tag(i) == Some(Tag::Dl))
}

/// Whether `n` is an `<h1>` that names the site, not the page: all its text (or its logo
/// image) inside a link to the site's home page (`<h1><a href="/">Gear Patrol</a></h1>`
/// atop every page of a blog, the post's title an `<h2>` below).
pub(crate) fn is_logo_h1(tree: &Tree, n: u32) -> bool {
    if tree.tag(n) != Some(Tag::H1) {
        return false;
    }
    super::markdown::text_only_inside(tree, n, |i| {
        tree.tag(i) == Some(Tag::A)
            && tree
                .attrs(i)
                .and_then(|a| a.href.as_deref())
                .is_some_and(is_home_href)
    })
}

/// Whether a link goes to a site's home page: `/`, `https://host/`, `index.html`, a
/// documentation page's way up to its root (`../../index.html`); not a page of it nor a
/// query (`/?p=123` is a WordPress post).
pub(crate) fn is_home_href(href: &str) -> bool {
    let h = href.trim();
    let path = match h.find("://") {
        Some(p) => h[p + 3..].find('/').map_or("", |s| &h[p + 3 + s..]),
        None => h
            .strip_prefix("//")
            .map_or(h, |r| r.find('/').map_or("", |s| &r[s..])),
    };
    let mut path = path.trim_start_matches("./");
    // A documentation page's way up to its root (`../../../index.html`).
    while let Some(rest) = path.strip_prefix("../") {
        path = rest.trim_start_matches("./");
    }
    let path = path.strip_prefix('/').unwrap_or(path);
    path.is_empty()
        || path
            .strip_prefix("index.")
            .is_some_and(|ext| ext.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// Whether a kept `<h1>` is one of the children of `cur`, or, with `blocks`, stands in a
/// short block of its own there, a title block (Javadoc's `div.header`: the package's
/// name over the class's `<h1>`); not deep in a header of menus.
fn h1_child(tree: &Tree, cur: u32, kept_h1: &[bool], text: &[u32], blocks: bool) -> bool {
    tree.children(cur).any(|c| {
        kept_h1[c as usize]
            && (tree.tag(c) == Some(Tag::H1) || blocks && text[c as usize] <= TITLE_BLOCK_MAX)
    })
}

/// Whether `best` is a subsection of the document `cur` holds: a heading among `cur`'s
/// children before `best` outranks the heading `best` opens with.
fn subsection_of(tree: &Tree, cur: u32, best: u32, removed: &[bool]) -> bool {
    let Some(inner) = opening_level(tree, best) else {
        return false;
    };
    tree.children(cur)
        .take_while(|&c| c != best)
        .filter(|&c| !removed[c as usize])
        .find_map(|c| tree.tag(c).and_then(Tag::heading_level))
        .is_some_and(|l| l < inner)
}

/// Prose (bytes in paragraphs) a section beside the chosen child needs for
/// [`titled_sections`].
const SECTION_PROSE_MIN: f64 = 100.0;

/// Whether `cur` opens with its own heading (`<h2>`–`<h6>`) and, beside `best`, holds
/// another block that opens with a heading of the same level and is prose rather than
/// links: `cur` is a run of sections, not a wrapper around `best`.
fn titled_sections(
    tree: &Tree,
    cur: u32,
    best: u32,
    removed: &[bool],
    kept_p: &[f64],
    lead: &Lead,
) -> bool {
    let Some(own) = opening_level(tree, cur).filter(|&l| l > 1) else {
        return false;
    };
    tree.children(cur).any(|c| {
        c != best
            && !removed[c as usize]
            && kept_p[c as usize] >= SECTION_PROSE_MIN
            && f64::from(lead.link[c as usize])
                <= LEAD_LINK_SHARE * f64::from(lead.text[c as usize])
            && opening_level(tree, c) == Some(own)
    })
}

/// The blocks right after `x`, one after another (at most [`CONTINUED_MAX`]), that
/// continue the document `x` holds: each is prose (at least [`SECTION_PROSE_MIN`] bytes
/// in paragraphs, few links), not chrome, and its first heading, not a link, has a rank
/// (`<h2>`–`<h6>`) among the headings inside `x`, or any such rank when `x` holds the
/// page's `<h1>` (its sections, whatever their level). A layout that splits the text into
/// blocks side by side or one under another (the list, then the closing section) leaves
/// the rest of the document there. Blocks of links without prose between them are passed
/// over, not kept: a reference page's box of quick links between its preamble and its
/// sections (Apache httpd's `div#quickview`).
fn continuations(tree: &Tree, x: u32, removed: &[bool], lead: &Lead) -> Vec<u32> {
    // The headings in `n` (not in removed blocks), in order.
    let headings = |n: u32| {
        let end = super::markdown::subtree_end(tree, n);
        let mut i = n + 1;
        std::iter::from_fn(move || {
            while i < end {
                let x = i;
                if removed[x as usize] {
                    i = super::markdown::subtree_end(tree, x);
                    continue;
                }
                i += 1;
                if let Some(l) = tree.tag(x).and_then(Tag::heading_level) {
                    return Some((x, l));
                }
            }
            None
        })
    };
    let p = tree.nodes.get(x as usize).map_or(NONE, |n| n.parent);
    // The ranks `x`'s own headings use, as bits: read once, and only when a block after
    // it gets that far.
    let mut ranks: Option<u8> = None;
    let mut more = Vec::new();
    // The level of the heading `x` opens with: blocks beside it that open with a heading
    // of that level are its sibling sections, prose or not (a reference's "Data Types"
    // beside its "Description"), and such a heading standing alone is kept with the block
    // after it, its body (not when no body follows: Scaladoc's empty "Inherited from"
    // groups).
    let own = opening_level(tree, x).filter(|&l| l > 1);
    let mut title: Option<u32> = None;
    let after = tree.children(p).skip_while(|&c| c != x).skip(1);
    for c in after.filter(|&c| !removed[c as usize] && tree.tag(c).is_some()) {
        let i = c as usize;
        if lead.text[i] == 0 || lead.ptext[i] == 0 && 2 * lead.link[i] > lead.text[i] {
            continue;
        }
        if more.len() >= CONTINUED_MAX || chrome_hint(tree, c, false) != 0 {
            break;
        }
        let text = 2 * lead.link[i] <= lead.text[i];
        let sibling = own.is_some()
            && opening_level(tree, c) == own
            && headings(c)
                .next()
                .is_some_and(|(h, _)| lead.link[h as usize] < lead.text[h as usize]);
        // Titles standing alone: headings of that one level and nothing else (a block of
        // lesser headings under its title, a section of signatures, is a body).
        if sibling && heading_block(lead, c) && headings(c).all(|(_, l)| Some(l) == own) {
            title = Some(c);
            continue;
        }
        if let Some(t) = title.take().filter(|_| text) {
            more.extend([t, c]);
            continue;
        }
        if sibling && text {
            more.push(c);
            continue;
        }
        if f64::from(lead.ptext[i]) < SECTION_PROSE_MIN
            || f64::from(lead.link[i]) > LEAD_LINK_SHARE * f64::from(lead.text[i])
        {
            break;
        }
        let Some((h, l)) = headings(c).next() else {
            break;
        };
        if l < 2 || lead.link[h as usize] >= lead.text[h as usize] {
            break;
        }
        let ranks = *ranks.get_or_insert_with(|| headings(x).fold(0, |m, (_, r)| m | 1 << r));
        if ranks & (1 << l | 1 << 1) == 0 {
            break;
        }
        more.push(c);
    }
    more
}

/// Whether the page's `<h1>`s (`title`, hidden ones aside) all hold the same text.
fn same_titles(tree: &Tree, title: &[bool]) -> bool {
    let mut keys = (0..title.len() as u32)
        .filter(|&i| title[i as usize] && !tree.nodes[i as usize].hidden)
        .map(|i| super::twins::text_key(tree, i, super::markdown::subtree_end(tree, i)));
    let first = keys.next();
    first.is_some_and(|k| k.1 > 0 && keys.all(|o| o == k))
}

/// Whether a sibling before `best` opens with the page's `<h1>` and reads as a lead (a
/// reference page's preamble: the title, a summary), while `best` opens with a lesser
/// heading: `best` is one section of the document `cur` holds.
fn preamble_of(tree: &Tree, cur: u32, best: u32, removed: &[bool], lead: &Lead) -> bool {
    let opens = |n: u32| first_element(tree, n).and_then(|f| tree.tag(f));
    if !opens(best).is_some_and(|t| t.is_heading() && t != Tag::H1) {
        return false;
    }
    tree.children(cur)
        .take_while(|&c| c != best)
        .filter(|&c| !removed[c as usize] && tree.tag(c).is_some())
        .find_map(|c| opens(c).filter(|t| t.is_heading()).map(|t| (c, t)))
        .is_some_and(|(c, t)| {
            t == Tag::H1 && tree.tag(c) != Some(Tag::Header) && lead.is(c, removed)
        })
}

/// Whether list (or paragraph) `n` is the text of a section: right after its heading,
/// and not a table of contents.
fn section_list(tree: &Tree, n: u32) -> bool {
    after_heading(tree, n) && !local_toc(tree, n)
}

/// Whether paragraph `n` is a [`section_list`], or follows one or more paragraphs that are
/// lists written as sentences ([`link_items`]) right after a heading: pod2html's SEE ALSO,
/// `<p><a>Net::Cmd</a>, <a>IO::Socket::SSL</a>;</p><p><a>ftp(1)</a>, <a>ftpd(8)</a>;</p>`,
/// a paragraph per kind of reference.
fn listed_after_heading(tree: &Tree, n: u32, in_link: &[bool]) -> bool {
    let mut c = n;
    for _ in 0..LINKS_PARAGRAPHS_MAX {
        match previous(tree, c) {
            Previous::Element(_, h) if heading_like(tree, h) => return !local_toc(tree, n),
            Previous::Element(Tag::P, q) if matches!(link_items(tree, q, in_link), Some((k, true)) if k >= 1) => {
                c = q
            }
            _ => return false,
        }
    }
    false
}

/// The first two element children of `n` and how many there are; `None` when text
/// stands directly in it.
fn elements(tree: &Tree, n: u32) -> Option<([u32; 2], usize)> {
    let mut first = [NONE; 2];
    let mut count = 0;
    for c in tree.children(n) {
        if tree.tag(c).is_some() {
            if count < 2 {
                first[count] = c;
            }
            count += 1;
        } else if tree.text_of(c).is_some_and(|t| !t.trim().is_empty()) {
            return None;
        }
    }
    Some((first, count))
}

/// Whether `n` is a list, or wraps one and nothing else (up to [`LIST_WRAP_DEPTH`]). A
/// paragraph (or a `<span>`: DocBook's `span.simplelist`) of two links or more that
/// [`links_and_separators`] reads as a list is one too: asciidoc's "SEE ALSO" section
/// body, `div.sectionbody > div.paragraph > p`; so is
/// a wrapper of two or more paragraphs of one link each ([`one_link_paragraph`]).
fn list_wrapper(tree: &Tree, mut n: u32, in_link: &[bool]) -> bool {
    for _ in 0..LIST_WRAP_DEPTH {
        match tree.tag(n) {
            Some(Tag::Ul | Tag::Ol | Tag::Dl) => return true,
            Some(Tag::P | Tag::Span) => {
                return matches!(link_items(tree, n, in_link), Some((k, true)) if k >= 2);
            }
            _ => {}
        }
        match elements(tree, n) {
            Some(([c, _], 1)) => n = c,
            // One link a paragraph, each in its wrapper (asciidoc's SEE ALSO written as
            // `div.paragraph > p > a` blocks).
            Some((_, k)) if (2..=LINKS_PARAGRAPHS_MAX).contains(&k) => {
                return tree
                    .children(n)
                    .filter(|&c| tree.tag(c).is_some())
                    .all(|c| one_link_paragraph(tree, c, in_link));
            }
            _ => return false,
        }
    }
    false
}

/// Paragraphs of one link a wrapper holds at most to be read as a list.
const LINKS_PARAGRAPHS_MAX: usize = 64;

/// Whether `n` is a paragraph (or wraps one and nothing else, up to [`LIST_WRAP_DEPTH`])
/// that is one link, with no separator ([`link_items`]).
fn one_link_paragraph(tree: &Tree, mut n: u32, in_link: &[bool]) -> bool {
    for _ in 0..LIST_WRAP_DEPTH {
        if tree.tag(n) == Some(Tag::P) {
            return link_items(tree, n, in_link) == Some((1, false));
        }
        match elements(tree, n) {
            Some(([c, _], 1)) => n = c,
            _ => return false,
        }
    }
    false
}

/// Whether `n` is, through wrappers that hold it alone (up to [`LIST_WRAP_DEPTH`]), all
/// of a `<dd>`'s content.
fn sole_in_description(tree: &Tree, mut n: u32) -> bool {
    for _ in 0..LIST_WRAP_DEPTH {
        let p = tree.nodes[n as usize].parent;
        if p == NONE || !matches!(elements(tree, p), Some(([c, _], 1)) if c == n) {
            return false;
        }
        if tree.tag(p) == Some(Tag::Dd) {
            return true;
        }
        n = p;
    }
    false
}

/// Wrappers looked through for the list they hold.
const LIST_WRAP_DEPTH: usize = 4;

/// Whether `n` is a `div` that wraps a heading and nothing else (up to
/// [`LIST_WRAP_DEPTH`] of them): the heading's title block. Or a disclosure's
/// `<summary>` that does (TypeDoc's `summary > h5` "Index" over its panel).
fn heading_wrapper(tree: &Tree, mut n: u32) -> bool {
    if !matches!(tree.tag(n), Some(Tag::Div | Tag::Summary)) {
        return false;
    }
    for _ in 0..LIST_WRAP_DEPTH {
        match elements(tree, n) {
            Some(([c, _], 1)) => match tree.tag(c) {
                Some(t) if t.is_heading() => return true,
                Some(Tag::Div) => n = c,
                _ => return false,
            },
            _ => return false,
        }
    }
    false
}

/// Whether `n` is a `div` holding a heading and, beside it, only links to the heading's
/// own id (its permalinks).
fn permalinked_heading(tree: &Tree, n: u32) -> bool {
    if tree.tag(n) != Some(Tag::Div) {
        return false;
    }
    let Some(h) = tree
        .children(n)
        .find(|&c| tree.tag(c).is_some_and(Tag::is_heading))
    else {
        return false;
    };
    let Some(id) = tree.attrs(h).map(|a| &a.id[..]).filter(|id| !id.is_empty()) else {
        return false;
    };
    let permalink = |a: u32| {
        tree.attrs(a)
            .and_then(|x| x.href.as_deref())
            .and_then(|r| r.strip_prefix('#'))
            .is_some_and(|f| f == id)
    };
    let mut anchors = 0;
    for c in tree.children(n) {
        match tree.tag(c) {
            _ if c == h => {}
            Some(Tag::A) if permalink(c) => anchors += 1,
            Some(_) => return false,
            None if tree.text_of(c).is_some_and(|t| !t.trim().is_empty()) => return false,
            None => {}
        }
    }
    anchors > 0
}

/// Whether `n` is a heading: a heading element, or one that says it is by its ARIA role
/// (Sphinx's toctree caption, `<p class="caption" role="heading">`).
fn heading_like(tree: &Tree, n: u32) -> bool {
    tree.tag(n).is_some_and(Tag::is_heading)
        || tree
            .attrs(n)
            .is_some_and(|a| a.role.eq_ignore_ascii_case("heading"))
}

/// Whether `n` is a titled list: a heading, then a list ([`list_wrapper`]), nothing else.
fn titled_list(tree: &Tree, n: u32, in_link: &[bool]) -> bool {
    match elements(tree, n) {
        Some(([h, l], 2)) => heading_like(tree, h) && list_wrapper(tree, l, in_link),
        _ => false,
    }
}

/// Nodes of a list looked at for its links' targets.
const TOC_SCAN: u32 = 400;

/// Whether the links of list `n` all go to places on the page itself (`#fragment`): a
/// table of contents, which repeats the headings. A table of contents lists its places
/// in the page's order (but for a slip: a README's "Table of Contents" back to its title
/// once in a hundred entries); links that go back and forth, a step in
/// [`CROSS_REFERENCE_BACK`] going back or more, are cross-references (Apache's "See also"
/// under a directive, `#undefine` then `#ifdefine`).
fn local_toc(tree: &Tree, n: u32) -> bool {
    let Some(fragments) = page_fragments(tree, n, false) else {
        return false;
    };
    let (mut last, mut steps, mut back) = (NONE, 0u32, 0u32);
    for &(i, fragment) in &fragments {
        if let Some(t) = tree.element_with_id(fragment).filter(|&t| t != i) {
            if last != NONE {
                steps += 1;
                back += u32::from(t < last);
            }
            last = t;
        }
    }
    let cross_references = back > 0 && back * CROSS_REFERENCE_BACK >= steps;
    !fragments.is_empty() && !cross_references
}

/// The links under `n` (within [`TOC_SCAN`] nodes), each with the fragment of the page it
/// goes to (`#action` → `action`, a bare `#` → empty), when they all go to the page
/// itself; `None` when one goes elsewhere. With `named`, a link that names the page's own
/// address goes to the page too (`Options.html#in` on the page `Options.html` → `in`:
/// [`Tree::fragment`]). Only a label over what already went reads those: a generator
/// that writes its table of contents with bare fragments may write its cross-references
/// with the page's name (Node's `url.html#class-urlsearchparams`, a property's type, in
/// a list of one), so a list is not dropped for them.
fn page_fragments(tree: &Tree, n: u32, named: bool) -> Option<Vec<(u32, &str)>> {
    let end = (tree.nodes.len() as u32).min(n + 1 + TOC_SCAN);
    let mut fragments = Vec::new();
    for i in (n + 1..end).take_while(|&i| is_descendant(tree, i, n)) {
        if let Some(h) = tree
            .attrs(i)
            .filter(|_| tree.tag(i) == Some(Tag::A))
            .and_then(|a| a.href.as_deref())
        {
            let f = if named {
                tree.fragment(h)
            } else {
                h.strip_prefix('#')
            };
            fragments.push((i, f?));
        }
    }
    Some(fragments)
}

/// One step in this many going back to a place before the last one makes a list of the
/// page's anchors cross-references rather than a table of contents ([`local_toc`]).
const CROSS_REFERENCE_BACK: u32 = 4;

/// Whether the element before `n` among its siblings is a heading.
fn after_heading(tree: &Tree, n: u32) -> bool {
    matches!(previous(tree, n), Previous::Element(_, h) if heading_like(tree, h))
}

/// Whether the sibling before `n` is a heading, or a heading's title block: the heading
/// alone in its wrapper, or beside its own permalinks (Starlight's
/// `div.sl-heading-wrapper > h2 + a[href="#id"]`).
/// On an article only the last: a document's section, where a teaser's headline has no
/// anchor of its own.
fn after_title(tree: &Tree, n: u32, article: bool) -> bool {
    match previous(tree, n) {
        Previous::Element(_, h) => {
            permalinked_heading(tree, h)
                || !article && (heading_like(tree, h) || heading_wrapper(tree, h))
        }
        _ => false,
    }
}

/// Whether the sibling before `n` is a paragraph ending with a colon: `n` is what it
/// introduces.
fn after_colon(tree: &Tree, n: u32) -> bool {
    matches!(previous(tree, n), Previous::Element(Tag::P, q) if ends_with_colon(tree, q))
}

/// Whether nothing but a heading (or a block opening with one) follows `n` among its
/// siblings: `n` is the last block of its section.
fn closes_section(tree: &Tree, n: u32) -> bool {
    heading_follows(tree, n).unwrap_or(true)
}

/// Whether what follows `n` among its siblings, blank text aside, is a heading or opens
/// with one; `None` when nothing does.
fn heading_follows(tree: &Tree, n: u32) -> Option<bool> {
    let mut s = tree.nodes[n as usize].next_sibling;
    while s != NONE {
        match tree.tag(s) {
            Some(_) => return Some(heading_like(tree, s) || starts_with_heading(tree, s)),
            None if tree.text_of(s).is_some_and(|t| !t.trim().is_empty()) => return Some(false),
            None => {}
        }
        s = tree.nodes[s as usize].next_sibling;
    }
    None
}

/// Whether the last text inside `n` ends with a colon.
fn ends_with_colon(tree: &Tree, n: u32) -> bool {
    last_text(tree, n)
        .and_then(|t| tree.text_of(t))
        .is_some_and(|t| t.trim_end().ends_with(':'))
}

/// The last text node inside `n` that is not blank.
fn last_text(tree: &Tree, n: u32) -> Option<u32> {
    (n + 1..super::markdown::subtree_end(tree, n))
        .rev()
        .find(|&i| tree.text_of(i).is_some_and(|t| !t.trim().is_empty()))
}

/// Whether `n` opens with a heading: a section of a document, not an article's body.
fn starts_with_heading(tree: &Tree, n: u32) -> bool {
    first_element(tree, n).is_some_and(|i| tree.tag(i).is_some_and(Tag::is_heading))
}

/// Whether `n` is, or opens with, a table, a list or a code block: the index, table of
/// contents or listing a title names (Sphinx's `div.toctree-wrapper > ul` under a
/// chapter's `<h1>`, a grammar's `div.highlight > pre`).
fn starts_with_list(tree: &Tree, n: u32) -> bool {
    let list = |i: u32| {
        matches!(
            tree.tag(i),
            Some(Tag::Table | Tag::Ul | Tag::Ol | Tag::Dl | Tag::Pre)
        )
    };
    list(n) || first_element(tree, n).is_some_and(list)
}

/// The level of the heading `n` opens with ([`first_element`]), if it opens with one.
fn opening_level(tree: &Tree, n: u32) -> Option<u8> {
    first_element(tree, n)
        .and_then(|f| tree.tag(f))
        .and_then(Tag::heading_level)
}

/// The first descendant of `n` that is text or an element other than a span, link, div,
/// header or section (a `<header>` wraps the title it opens with: RDoc's
/// `<header><h3>Attributes`; and a `<section>` the section it opens with: RDoc's
/// `section.documentation-section > section.constants-list > header > h3`).
fn first_element(tree: &Tree, n: u32) -> Option<u32> {
    let len = tree.nodes.len() as u32;
    (n + 1..len.min(n + 1 + ID_HEADING_SCAN))
        .take_while(|&i| is_descendant(tree, i, n))
        .find(|&i| {
            tree.tag(i).is_some_and(|t| {
                !matches!(
                    t,
                    Tag::Span | Tag::A | Tag::Div | Tag::Header | Tag::Section
                )
            }) || tree.text_of(i).is_some_and(|t| !t.trim().is_empty())
        })
}

/// The first `<main>`/`role=main` element (or `id="main"`: [`Tree::names_main`]) that is
/// not inside a removed block. (Pages that
/// load the next story below repeat the landmark; the first is the page's own.)
fn main_landmark(tree: &Tree, removed: &[bool]) -> Option<u32> {
    let first = (1..tree.nodes.len()).find(|&i| tree.names_main(i as u32))?;
    let mut a = first;
    while a != 0 {
        if removed[a] || tree.nodes[a].hidden {
            return None;
        }
        a = tree.nodes[a].parent as usize;
    }
    Some(first as u32)
}

/// The first outermost `itemprop="articleBody"` element outside removed blocks, when it
/// holds at least [`ARTICLE_BODY_MIN`] of content and at least half of the content of
/// all such elements (a listing marks each teaser).
fn article_body(tree: &Tree, removed: &[bool], good: &[f64]) -> Option<u32> {
    let is_body = |i: usize| tree.attrs(i as u32).is_some_and(|a| a.article_body);
    let visible = |mut a: usize| {
        while a != 0 {
            if removed[a] || tree.nodes[a].hidden {
                return false;
            }
            a = tree.nodes[a].parent as usize;
        }
        true
    };
    let mut first = None;
    let mut sum = 0.0;
    let mut i = 1;
    while i < tree.nodes.len() {
        if is_body(i) && visible(i) {
            first.get_or_insert(i);
            sum += good[i];
            // Skip the subtree: nested bodies are part of this one.
            let mut n = i;
            loop {
                let next = tree.nodes[n].next_sibling;
                if next != NONE {
                    i = next as usize;
                    break;
                }
                n = tree.nodes[n].parent as usize;
                if n == 0 {
                    i = tree.nodes.len();
                    break;
                }
            }
            continue;
        }
        i += 1;
    }
    let b = first?;
    (good[b] >= ARTICLE_BODY_MIN && good[b] >= 0.5 * sum).then_some(b as u32)
}

/// Paragraph text (outside links) the paragraph before a list needs to introduce it.
const LIST_INTRO_MIN: u32 = 40;

/// Lists (`ul`, `ol`, `dl`) and tables whose previous element sibling is a kept paragraph
/// of prose ("the following modules are deprecated:" above a grid of module links).
fn lists_after_prose(
    tree: &Tree,
    removed: &[bool],
    ptext: &[u32],
    link: &[u32],
    text: &[u32],
) -> Vec<bool> {
    let len = tree.nodes.len();
    let mut out = vec![false; len];
    // The last element child seen of each parent, in document order.
    let mut last_el = vec![NONE; len];
    for (i, o) in out.iter_mut().enumerate().skip(1) {
        let Some(tag) = tree.tag(i as u32) else {
            continue;
        };
        let p = tree.nodes[i].parent as usize;
        let prev = last_el[p];
        last_el[p] = i as u32;
        if prev == NONE || tree.tag(prev) != Some(Tag::P) || removed[prev as usize] {
            continue;
        }
        let list = |t: Option<Tag>| matches!(t, Some(Tag::Ul | Tag::Ol | Tag::Dl));
        // The list itself, a grid (a one-cell table is a box: a call to action, a table of
        // contents), or a wrapper opening with a list (Sphinx's `div.toctree-wrapper`).
        let is_list = list(Some(tag))
            || tag == Tag::Table && is_grid(tree, i as u32)
            || tag == Tag::Div && first_element(tree, i as u32).is_some_and(|f| list(tree.tag(f)));
        if !is_list {
            continue;
        }
        let q = prev as usize;
        let own = text[q].saturating_sub(link[q]);
        // A paragraph of prose, or a short one that announces what follows ("Legacy API:").
        // A list classed a table of contents (`toc`) of the page's own places is a menu of
        // the sections that follow (texi2any's `ul.section-toc`), unless the paragraph
        // announces it.
        *o = ptext[q] >= LIST_INTRO_MIN && own >= LIST_INTRO_MIN && !classed_toc(tree, i as u32)
            || own > 0 && ends_with_colon(tree, prev)
            || own > 0 && is_list && continued_after(tree, i as u32);
    }
    out
}

/// Whether the element after `n` (its next sibling but blank text) is a paragraph whose
/// text opens with a lower-case letter: the sentence that led into `n` goes on after it
/// ("Licensed under either of" a list of two licences "at your option.").
fn continued_after(tree: &Tree, n: u32) -> bool {
    let mut s = tree.nodes[n as usize].next_sibling;
    while s != NONE && tree.text_of(s).is_some_and(|t| t.trim().is_empty()) {
        s = tree.nodes[s as usize].next_sibling;
    }
    if s == NONE || tree.tag(s) != Some(Tag::P) {
        return false;
    }
    let end = super::markdown::subtree_end(tree, s);
    (s + 1..end)
        .filter_map(|i| {
            tree.text_of(i)
                .map(str::trim_start)
                .filter(|t| !t.is_empty())
        })
        .next()
        .and_then(|t| t.chars().next())
        .is_some_and(char::is_lowercase)
}

/// Whether `n` has the class word `toc` and its links all go to places on the page.
fn classed_toc(tree: &Tree, n: u32) -> bool {
    tree.attrs(n).is_some_and(|a| {
        a.class
            .split_ascii_whitespace()
            .any(|t| has_word(t, &["toc"]))
    }) && local_toc(tree, n)
}

/// Whether the link `a` is a heading's link to the page itself (docutils' back-reference
/// to the table of contents, a permalink, pydoctor's title naming its own page): part of
/// a title, not a menu.
fn heading_backref(tree: &Tree, a: u32) -> bool {
    let mut p = tree.nodes[a as usize].parent;
    for _ in 0..3 {
        match tree.tag(p) {
            Some(t) if t.is_heading() => {
                return tree
                    .attrs(a)
                    .and_then(|x| x.href.as_deref())
                    .is_some_and(|h| tree.on_page(h))
            }
            Some(_) => p = tree.nodes[p as usize].parent,
            None => return false,
        }
    }
    false
}

/// `n` if it is a table, or the table `n` wraps and nothing else, through `div`s of one
/// element (mdBook's `div.table-wrapper`, scrolling boxes).
fn sole_table(tree: &Tree, n: u32) -> Option<u32> {
    let mut x = n;
    loop {
        match tree.tag(x)? {
            Tag::Table => return Some(x),
            Tag::Div => {}
            _ => return None,
        }
        x = tree.sole_element(x)?;
    }
}

/// Whether `table` has at least two rows of at least two cells.
fn is_grid(tree: &Tree, table: u32) -> bool {
    let end = super::markdown::subtree_end(tree, table);
    let cells = |r: u32| {
        tree.children(r)
            .filter(|&c| matches!(tree.tag(c), Some(Tag::Td | Tag::Th)))
            .count()
    };
    // Two rows of two cells or more; or one row of columns that each hold more than one
    // entry (Sphinx's index: "Meta information:" over two columns of links).
    let rows: Vec<u32> = (table + 1..end)
        .filter(|&i| tree.tag(i) == Some(Tag::Tr) && cells(i) >= 2)
        .take(2)
        .collect();
    match rows[..] {
        [_, _] => true,
        [r] => tree.children(r).all(|c| {
            !matches!(tree.tag(c), Some(Tag::Td | Tag::Th))
                || tree.children(c).filter(|&e| tree.tag(e).is_some()).count() >= 2
        }),
        _ => false,
    }
}

/// Divs written as paragraphs: their own text (their text children) is long and broken
/// by line breaks, at least [`BR_DIV_TEXT`] bytes and [`BR_DIV_BREAKS`] `<br>` children; or
/// they are named so ([`named_para`]) and hold text and no block.
fn br_divs(tree: &Tree) -> Vec<bool> {
    let len = tree.nodes.len();
    // (own text, `<br>` children, a block child) of each div.
    let mut own = vec![(0u32, 0u8, false); len];
    for i in 1..len {
        let p = tree.nodes[i].parent as usize;
        if tree.tag(p as u32) != Some(Tag::Div) {
            continue;
        }
        match tree.nodes[i].kind {
            Kind::Text { .. } => {
                own[p].0 = own[p]
                    .0
                    .saturating_add(text_weight(tree.text_of(i as u32).unwrap_or("")));
            }
            Kind::Element { tag: Tag::Br, .. } => own[p].1 = own[p].1.saturating_add(1),
            Kind::Element { tag, .. } => own[p].2 |= tag.is_block(),
        }
    }
    own.iter()
        .enumerate()
        .map(|(i, &(t, b, block))| {
            t >= BR_DIV_TEXT && b >= BR_DIV_BREAKS || t > 0 && !block && named_para(tree, i as u32)
        })
        .collect()
}

/// Whether the siblings of `best` (children of `cur`) of its kind hold enough text of
/// their own to be kept with it; with `strict`, only siblings whose class list is the
/// same as its own are of its kind.
#[allow(clippy::too_many_arguments)]
fn merge_siblings(
    tree: &Tree,
    cur: u32,
    best: u32,
    removed: &[bool],
    text: &[u32],
    link: &[u32],
    good: &[f64],
    strict: bool,
) -> bool {
    let kind = item_class(tree, best);
    if kind.is_empty() {
        return false;
    }
    let tag = tree.tag(best);
    let like: f64 = tree
        .children(cur)
        .filter(|&s| {
            let i = s as usize;
            s != best
                && !removed[i]
                && tree.tag(s) == tag
                && text[i] >= SIBLING_MIN
                && f64::from(link[i]) < SIBLING_LINK_SHARE * f64::from(text[i])
                && if strict {
                    same_class_list(tree, s, best)
                } else {
                    item_class(tree, s) == kind
                        || shares_class(tree, s, best)
                        || same_kind_words(item_class(tree, s), kind)
                }
        })
        .map(|s| good[s as usize])
        .sum();
    like >= SIBLING_SHARE * good[best as usize]
}

/// Whether all the text of `n` is its first `<h1>`'s (a title block, no byline or lead).
fn title_only(tree: &Tree, n: u32, text: &[u32]) -> bool {
    let end = super::markdown::subtree_end(tree, n);
    (n + 1..end)
        .find(|&i| tree.tag(i) == Some(Tag::H1))
        .is_some_and(|h| text[h as usize] == text[n as usize])
}

/// Whether `a` and `b` have the same class list, and one.
fn same_class_list(tree: &Tree, a: u32, b: u32) -> bool {
    let class = |n: u32| tree.attrs(n).map(|x| x.class.trim()).unwrap_or("");
    !class(a).is_empty() && class(a) == class(b)
}

/// Whether two class tokens of three words or more end in the same two
/// (`header-section-wrapper`, `value-props-section-wrapper`): sections of one page
/// builder, named by what they hold and then by what they are.
fn same_kind_words(a: &str, b: &str) -> bool {
    fn last_two(t: &str) -> Option<[&str; 2]> {
        let w: Vec<&str> = words(t).collect();
        (w.len() >= 3).then(|| [w[w.len() - 2], w[w.len() - 1]])
    }
    match (last_two(a), last_two(b)) {
        (Some(x), Some(y)) => x
            .iter()
            .zip(y.iter())
            .all(|(p, q)| p.eq_ignore_ascii_case(q)),
        _ => false,
    }
}

/// Class tokens of an element compared with another's.
const CLASS_TOKENS_MAX: usize = 16;

/// Whether two elements share a class token: a page builder's sections name their kind
/// first and what they all are after it (`about-3 content-section`, `contact-5
/// content-section`).
fn shares_class(tree: &Tree, a: u32, b: u32) -> bool {
    let (Some(x), Some(y)) = (tree.attrs(a), tree.attrs(b)) else {
        return false;
    };
    // The first few tokens name what an element is; a class list of thousands (hostile
    // or generated) must not make this quadratic.
    x.class
        .split_ascii_whitespace()
        .take(CLASS_TOKENS_MAX)
        .any(|t| {
            y.class
                .split_ascii_whitespace()
                .take(CLASS_TOKENS_MAX)
                .any(|u| u == t)
        })
}

/// Elements main-content selection may descend into.
fn is_container(t: Tag) -> bool {
    matches!(
        t,
        Tag::Div
            | Tag::Section
            | Tag::Article
            | Tag::Main
            | Tag::Other
            | Tag::Td
            | Tag::Table
            | Tag::Tbody
            | Tag::Tr
            | Tag::Form
            | Tag::Center
            | Tag::Noscript
            | Tag::Font
            | Tag::Span
            | Tag::Header
            | Tag::Footer
    )
}

/// The class token that names an item's kind: the first one (`product` of
/// `product post-15859 instock`; later tokens often carry ids and states).
fn item_class(tree: &Tree, n: u32) -> &str {
    tree.attrs(n)
        .and_then(|a| a.class.split_ascii_whitespace().next())
        .unwrap_or("")
}

/// How many siblings share each (parent, tag, first class token).
pub(crate) fn sibling_signatures(tree: &Tree) -> HashMap<(u32, u8, &str), u32> {
    let mut sig: HashMap<(u32, u8, &str), u32> = HashMap::new();
    for i in 1..tree.nodes.len() {
        if let Kind::Element { tag, .. } = tree.nodes[i].kind {
            let class = item_class(tree, i as u32);
            *sig.entry((tree.nodes[i].parent, tag as u8, class))
                .or_insert(0) += 1;
        }
    }
    sig
}

/// Whether `n` is one of at least three siblings with its tag and first class token.
pub(crate) fn repeated(tree: &Tree, sig: &HashMap<(u32, u8, &str), u32>, n: u32) -> bool {
    let Some(tag) = tree.tag(n) else { return false };
    let class = item_class(tree, n);
    sig.get(&(tree.nodes[n as usize].parent, tag as u8, class))
        .is_some_and(|&c| c >= 3)
}

/// Elements whose class/id/role can mark a chrome block.
fn is_block_box(t: Tag) -> bool {
    matches!(
        t,
        Tag::Div
            | Tag::Section
            | Tag::Ul
            | Tag::Ol
            | Tag::Li
            | Tag::Other
            | Tag::Aside
            | Tag::Header
            | Tag::Footer
            | Tag::Nav
            | Tag::Table
            | Tag::Form
            | Tag::Dl
            | Tag::Menu
            | Tag::Center
            | Tag::P
            | Tag::Span
            | Tag::Figure
            | Tag::Details
            | Tag::Article
            | Tag::Tr
            | Tag::Td
            | Tag::Tbody
            | Tag::Fieldset
    )
}

#[cfg(test)]
mod tests {
    use super::token_hint;

    #[test]
    fn class_words_that_are_not_chrome() {
        // CSS-module hashes are noise, not words: `adKqa` does not spell an ad.
        assert_eq!(token_hint("mdx-table_root__adKqa"), 0);
        assert_eq!(token_hint("AccordionTextItem_item__adF2E"), 0);
        assert_eq!(token_hint("ad-slot__top"), 1);
        assert_eq!(token_hint("footer__links"), 1);
        assert_eq!(token_hint("Footer_root__x7Kq2"), 1);
        // A skip link's target and a utility class are not a skip-links bar.
        assert_eq!(token_hint("wp--skip-link--target"), 0);
        assert_eq!(token_hint("skip-to-products"), 0);
        assert_eq!(token_hint("decoration-skip-ink-none"), 0);
        assert_eq!(token_hint("skip-links"), 1);
        assert_eq!(token_hint("skipNav"), 1);
        // A footer named in one word is one; other compounds are not read as chrome.
        assert_eq!(token_hint("subfooter"), 1);
        assert_eq!(token_hint("globalfooter"), 1);
        assert_eq!(token_hint("footers"), 1);
        assert_eq!(token_hint("contextmenu"), 0);
        // A forum signature, and Stack Exchange's author card (`post-signature`).
        assert_eq!(token_hint("signature"), 1);
        assert_eq!(token_hint("post-signature"), 1);
        // A poster's details beside the post: XenForo's `message-userExtras`.
        assert_eq!(token_hint("message-userExtras"), 1);
        assert_eq!(token_hint("user-extras"), 1);
        assert_eq!(token_hint("userextras"), 1);
        assert_eq!(token_hint("product-extras"), 0);
        // A poster's rank: XenForo's `message-userTitle`, vBulletin's `usertitle`.
        assert_eq!(token_hint("message-userTitle"), 1);
        assert_eq!(token_hint("usertitle"), 1);
        assert_eq!(token_hint("user-title"), 1);
        assert_eq!(token_hint("page-title"), 0);
        assert!(super::user_title("userTitle") && !super::user_title("entry-title"));
        // What a block goes without is not what it is: `no`, `hide`, `without` negate
        // the chrome words after them, not those before, and not a comment section's.
        assert_eq!(token_hint("hide-read-more-ad"), 0);
        assert_eq!(token_hint("page-no-sidebar"), 0);
        assert_eq!(token_hint("layout-without-sidebar"), 0);
        assert_eq!(token_hint("no_overlay"), 0);
        assert_eq!(token_hint("share-bar--hide-share--mobile"), 1);
        assert_eq!(token_hint("menu-item--no-submenu"), 1);
        assert_eq!(token_hint("hidden-menu"), 1);
        assert_eq!(token_hint("no-comments"), 3);
    }
}
