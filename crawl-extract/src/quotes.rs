//! Quotes of text the page already holds: a forum reply that quotes an earlier post of
//! the thread (XenForo's `blockquote.bbCodeBlock--quote`, phpBB's `<blockquote><cite>`,
//! NodeBB's and Discourse's plain `<blockquote>`) repeats words a reader has just read. A
//! knowledge base gets them once, where they were written; the reply keeps its own words.

use super::markdown::subtree_end;
use super::tree::{Kind, Tag, Tree};

/// Shortest piece of a quote (normalized bytes) that counts as matched: shorter ones ("X
/// said:", "Click to expand...", one linked word) match anywhere.
const PIECE_MIN: usize = 20;
/// Share of a quote's text its matched pieces must make: the rest is the quote's own
/// chrome (who said it, an expander).
const MATCHED_SHARE: f64 = 0.6;
/// Least matched text (normalized bytes) that drops a quote.
const MATCHED_MIN: usize = 40;
/// Bytes of earlier text searched in all, per page: a page of many thousands of quotes
/// stops looking past it (each search reads the text before its quote once).
const SEARCH_BUDGET: usize = 16 << 20;

/// Marks as removed each outermost `<blockquote>` inside `root` whose text (most of it,
/// by pieces of at least [`PIECE_MIN`] bytes) already appears, word for word, in the kept
/// text before it, on a `discussion` or when its markup says it quotes a post
/// ([`reply_quote`]). Elsewhere a repeated quote stays: documentation repeats a note
/// ("Deprecated: use … instead") under each item it applies to.
pub(crate) fn drop_repeated(tree: &Tree, root: u32, removed: &mut [bool], discussion: bool) {
    let end = subtree_end(tree, root);
    let quote =
        |i: u32| tree.tag(i) == Some(Tag::Blockquote) && (discussion || reply_quote(tree, i));
    if !(root..end).any(quote) {
        return;
    }
    // The kept text so far, as [`push_words`] writes it.
    let mut norm = String::new();
    let mut budget = SEARCH_BUDGET;
    let mut i = root + 1;
    while i < end {
        if let Some(next) = skipped(tree, i, removed) {
            i = next;
            continue;
        }
        match tree.nodes[i as usize].kind {
            Kind::Text { .. } => {
                push_words(&mut norm, tree.text_of(i).unwrap_or(""));
                i += 1;
            }
            Kind::Element {
                tag: Tag::Blockquote,
                ..
            } if quote(i) => {
                let q_end = subtree_end(tree, i);
                let start = norm.len();
                if let Some(pieces) = quote_pieces(tree, i, q_end, removed, &mut norm) {
                    let cost = start.saturating_mul(pieces.len());
                    if cost <= budget && repeated(&norm[..start], &norm[start..], &pieces) {
                        removed[i as usize] = true;
                    }
                    budget = budget.saturating_sub(cost);
                } else {
                    // Its text still counts as written before what follows.
                    norm.truncate(start);
                    i += 1;
                    continue;
                }
                i = q_end;
            }
            _ => i += 1,
        }
    }
}

/// Where to go on from node `i` when it is hidden or removed: past its subtree.
fn skipped(tree: &Tree, i: u32, removed: &[bool]) -> Option<u32> {
    (tree.nodes[i as usize].hidden || removed[i as usize]).then(|| subtree_end(tree, i))
}

/// Whether blockquote `q` is marked as a forum's quote of a post: it names who wrote it
/// in a `<cite>` (phpBB, Invision), or a class of it or of its parent says quote
/// (XenForo's `bbCodeBlock--quote`, FluxBB's `div.quotebox`, vBulletin's `bbcode_quote`).
fn reply_quote(tree: &Tree, q: u32) -> bool {
    let quote_class = |n: u32| {
        tree.attrs(n).is_some_and(|a| {
            a.class.split_ascii_whitespace().any(|c| {
                let c = c.to_ascii_lowercase();
                c.contains("quote") && !c.contains("blockquote") && !c.contains("pull")
            })
        })
    };
    let end = subtree_end(tree, q);
    quote_class(q)
        || quote_class(tree.nodes[q as usize].parent)
        || (q + 1..end.min(q + 1 + CITE_SCAN)).any(|i| tree.tag(i) == Some(Tag::Cite))
}

/// Nodes at the start of a quote searched for its `<cite>`.
const CITE_SCAN: u32 = 8;

/// Appends the quote's kept text to `norm` and returns its pieces as ranges of `norm`
/// (relative to where the quote starts): the text of each run between block boundaries.
/// `None` when it holds a `<pre>` (`norm` then holds part of it).
fn quote_pieces(
    tree: &Tree,
    q: u32,
    q_end: u32,
    removed: &[bool],
    norm: &mut String,
) -> Option<Vec<(usize, usize)>> {
    let base = norm.len();
    let mut pieces = Vec::new();
    let mut open = norm.len();
    let mut i = q + 1;
    while i < q_end {
        if let Some(next) = skipped(tree, i, removed) {
            i = next;
            continue;
        }
        match tree.nodes[i as usize].kind {
            Kind::Text { .. } => push_words(norm, tree.text_of(i).unwrap_or("")),
            // A code listing quoted is an example, kept whatever came before it.
            Kind::Element { tag: Tag::Pre, .. } => return None,
            // Who is quoted (phpBB's `<cite>alice wrote:</cite>` before the quoted text,
            // set apart by its stylesheet): a piece of its own.
            Kind::Element { tag: Tag::Cite, .. } => {
                if norm.len() > open {
                    pieces.push((open - base, norm.len() - base));
                }
                open = norm.len();
                let c_end = subtree_end(tree, i);
                let mut t = i + 1;
                while t < c_end {
                    if let Some(next) = skipped(tree, t, removed) {
                        t = next;
                        continue;
                    }
                    if matches!(tree.nodes[t as usize].kind, Kind::Text { .. }) {
                        push_words(norm, tree.text_of(t).unwrap_or(""));
                    }
                    t += 1;
                }
                if norm.len() > open {
                    pieces.push((open - base, norm.len() - base));
                }
                open = norm.len();
                i = c_end;
                continue;
            }
            Kind::Element { tag, .. } if tag.is_block() => {
                if norm.len() > open {
                    pieces.push((open - base, norm.len() - base));
                }
                open = norm.len();
            }
            _ => {}
        }
        i += 1;
    }
    if norm.len() > open {
        pieces.push((open - base, norm.len() - base));
    }
    Some(pieces)
}

/// Whether the quote's pieces of at least [`PIECE_MIN`] bytes found in `before` make
/// [`MATCHED_SHARE`] of its text and at least [`MATCHED_MIN`] bytes.
fn repeated(before: &str, quote: &str, pieces: &[(usize, usize)]) -> bool {
    let total = quote.trim().len();
    if total < MATCHED_MIN || before.len() < total {
        return false;
    }
    let mut matched = 0;
    for &(s, e) in pieces {
        let p = quote[s..e].trim();
        if p.len() >= PIECE_MIN && before.contains(p) {
            matched += p.len();
        }
    }
    matched >= MATCHED_MIN && matched as f64 >= MATCHED_SHARE * total as f64
}

/// Appends the text of `t`, lower-cased, each run of white space one space, and one space
/// after it. Punctuation stays: two lines of code that differ only by it are two texts.
fn push_words(norm: &mut String, t: &str) {
    for w in t.split(char::is_whitespace).filter(|w| !w.is_empty()) {
        for c in w.chars() {
            norm.extend(c.to_lowercase());
        }
        norm.push(' ');
    }
}

#[cfg(test)]
mod tests {
    use super::{push_words, repeated};

    #[test]
    fn a_quote_is_matched_by_its_long_pieces() {
        let mut before = String::new();
        push_words(
            &mut before,
            "I never had a smartphone, so wouldn't know. Has anybody tried a beta?",
        );
        let mut q = String::new();
        push_words(&mut q, "bob said:");
        let title = (0, q.len());
        push_words(&mut q, "Has anybody tried a beta?");
        let body = (title.1, q.len());
        push_words(&mut q, "I never had a smartphone");
        let body2 = (body.1, q.len());
        assert!(repeated(&before, &q, &[title, body, body2]));
        // Words of its own in the quote: not a repeat.
        let mut own = String::new();
        push_words(
            &mut own,
            "A quote of something the page never said before now.",
        );
        assert!(!repeated(&before, &own, &[(0, own.len())]));
        // Short pieces alone never match.
        let mut short = String::new();
        push_words(&mut short, "a beta");
        assert!(!repeated(&before, &short, &[(0, short.len())]));
    }
}
