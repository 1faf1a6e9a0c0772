//! Sections introduced by a shelf heading ("You may also like", "Related posts",
//! "Customers also bought", "Share this"): recommendation and sharing widgets that sit
//! inside the chosen content of product pages and blog posts, whatever their classes.

use super::tree::{Kind, Tag, Tree, NONE};

/// Heading texts (lower-case words) that introduce a shelf of other pages or a share bar.
const SHELF_HEADINGS: &[&[&str]] = &[
    &["you", "may", "also", "like"],
    &["you", "might", "also", "like"],
    &["you", "may", "like"],
    &["you", "might", "like"],
    &["you", "may", "also", "be", "interested"],
    &["related", "posts"],
    &["related", "post"],
    &["related", "articles"],
    &["related", "products"],
    &["related", "stories"],
    &["related", "content"],
    &["related", "items"],
    &["related", "reading"],
    &["recommended", "for", "you"],
    &["recommended", "products"],
    &["recommended", "articles"],
    &["customers", "also", "bought"],
    &["customers", "also", "viewed"],
    &["customers", "who", "bought"],
    &["customers", "who", "viewed"],
    &["frequently", "bought", "together"],
    &["recently", "viewed"],
    &["similar", "products"],
    &["similar", "items"],
    &["more", "stories"],
    &["more", "from"],
    &["recent", "posts"],
    &["recent", "comments"],
    &["popular", "posts"],
    &["trending"],
    &["read", "next"],
    &["like", "this"],
    &["share", "this"],
    &["similar", "threads"],
    &["similar", "posts"],
    &["similar", "articles"],
    &["similar", "stories"],
    &["related", "videos"],
    &["related", "news"],
    &["people", "also", "viewed"],
    &["people", "also", "bought"],
    &["people", "who", "viewed"],
    &["people", "who", "bought"],
    &["more", "like", "this"],
    &["you", "may", "also", "enjoy"],
    &["you", "might", "also", "enjoy"],
    &["you", "may", "be", "interested"],
    &["you", "might", "be", "interested"],
    &["editor", "s", "picks"],
    &["editors", "picks"],
    &["most", "popular"],
    &["most", "read"],
    &["popular", "stories"],
    &["recommended", "reading"],
    &["recommended", "stories"],
    &["recommended", "posts"],
    &["also", "in", "the", "news"],
    &["explore", "related"],
];
/// Words a shelf heading may have beyond its phrase ("More from *the blog*").
const SHELF_EXTRA_WORDS: usize = 3;
/// Nodes of a heading looked at for its text.
const HEADING_SCAN: u32 = 64;

/// Marks as removed the sections that a shelf heading (`<h2>`–`<h6>`) begins. A section is
/// the heading's parent, or the parent of the wrapper holding only the heading, when the
/// heading is its first text; it is kept when it holds the page's `<main>`/`<article>`/
/// `<h1>` (`has_main`) or most of the page's prose. `raw` and `prose` are the per-node text
/// totals of the chrome pass.
pub(crate) fn remove_shelves(
    tree: &Tree,
    raw: &[u32],
    prose: &[u32],
    has_main: &[bool],
    removed: &mut [bool],
) {
    let total_prose = prose.first().copied().unwrap_or(0);
    for h in 1..tree.nodes.len() as u32 {
        let Some(tag) = tree.tag(h) else { continue };
        if !tag.is_heading() || tag == Tag::H1 || tree.nodes[h as usize].hidden {
            continue;
        }
        if !is_shelf_heading(tree, h) {
            continue;
        }
        // Climb out of wrappers that hold the heading alone.
        let mut c = h;
        loop {
            let p = tree.nodes[c as usize].parent;
            if p == NONE || p == 0 || first_text_child(tree, raw, p) != Some(c) {
                break;
            }
            if raw[p as usize] != raw[c as usize] {
                let s = p as usize;
                if !has_main[s] && prose[s].saturating_mul(2) <= total_prose {
                    removed[s] = true;
                }
                break;
            }
            c = p;
        }
    }
}

/// The first child of `p` holding text.
fn first_text_child(tree: &Tree, raw: &[u32], p: u32) -> Option<u32> {
    tree.children(p)
        .find(|&c| raw[c as usize] > 0 && !tree.nodes[c as usize].hidden)
}

/// Whether the text of heading `h` is a shelf phrase, with a few words after it at most.
fn is_shelf_heading(tree: &Tree, h: u32) -> bool {
    let len = tree.nodes.len() as u32;
    let mut words: Vec<String> = Vec::new();
    let mut i = h + 1;
    while i < len.min(h + 1 + HEADING_SCAN) && is_descendant(tree, i, h) {
        let node = &tree.nodes[i as usize];
        if let (Kind::Text { .. }, false) = (&node.kind, node.hidden) {
            let t = tree.text_of(i).unwrap_or("");
            for w in super::text_words(t) {
                words.push(w.to_lowercase());
                if words.len() > 8 {
                    return false;
                }
            }
        }
        i += 1;
    }
    SHELF_HEADINGS.iter().any(|ph| {
        words.len() >= ph.len()
            && words.len() <= ph.len() + SHELF_EXTRA_WORDS
            && ph.iter().zip(&words).all(|(a, b)| a == b)
    })
}

/// Whether `i` lies in the subtree of `a`.
fn is_descendant(tree: &Tree, mut i: u32, a: u32) -> bool {
    while i != NONE && i > a {
        i = tree.nodes[i as usize].parent;
    }
    i == a
}
