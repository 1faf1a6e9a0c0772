//! The learned block scorer: per-block features and a small gradient-boosted tree model.
//!
//! A *block* is an element that owns text: each visible text node belongs to its nearest
//! block-level ancestor (`p`, `li`, `td`, a heading, a `div`...; links, spans and
//! emphasis are inline). For every block the same code computes the features for the
//! training script (`scripts/train-extract.py`, through `examples/extract.rs
//! --dump-features`) and for inference, so training and inference cannot disagree.
//! The rules of `score.rs` run first; whether a block lies in their chosen content, and
//! in what they removed, are features too: the model learns where the rules are right.
//!
//! Features of the section a block sits in (the nearest heading before it: its level,
//! length, link share, distance, whether the rules keep it, and whether its first words
//! announce feedback or a shelf) and the number of its siblings holding text are there too.
//!
//! The model (`model.txt`, written by the script) is a sum of depth-limited regression
//! trees on the logit scale. A block inside the rules' content is kept unless its logit
//! falls below the model's `drop` threshold; a block outside it is added when its logit
//! exceeds the `add` threshold (the script's default model only drops: `add inf`). A page
//! where the model would drop more than `cap` of the rules' content keeps the rules'
//! choice, as does a page where it changes nothing.

use super::score::{self, Selection};
use super::tree::{Kind, Tag, Tree, NONE};
use std::sync::OnceLock;

/// Names of the features, in order (the model file repeats them and is checked).
pub(crate) const FEATURES: &[&str] = &[
    "own_len",
    "own_link",
    "own_prose",
    "punct",
    "sent_end",
    "tag_p",
    "tag_li",
    "tag_h",
    "tag_h1",
    "tag_cell",
    "tag_pre",
    "tag_dtdd",
    "tag_div",
    "depth",
    "pos",
    "anc_chrome_class",
    "anc_chrome_tag",
    "anc_comment",
    "in_article",
    "anc_content",
    "in_rule_root",
    "rule_removed",
    "rule_root_share",
    "repeated",
    "parent_len",
    "parent_link",
    "gp_len",
    "gp_link",
    "page_len",
    "page_link",
    "page_prose",
    "og_article",
    "og_product",
    "prev_len",
    "prev_link",
    "next_len",
    "next_link",
    "h1_dist",
    "in_list",
    "in_table",
    "in_form",
    "in_header_footer",
    "text_pos",
    "sec_h_level",
    "sec_h_len",
    "sec_h_link",
    "sec_h_dist",
    "sec_h_in",
    "sec_h_feedback",
    "sec_h_shelf",
    "sib_n",
];
const NF: usize = FEATURES.len();

/// One block of a page: its element and its features.
#[derive(Debug, Clone)]
pub(crate) struct Block {
    pub(crate) node: u32,
    /// Its own text, in non-space bytes.
    pub(crate) len: u32,
    pub(crate) f: [f64; NF],
}

/// Elements whose text belongs to the enclosing block.
fn is_inline(t: Tag) -> bool {
    matches!(
        t,
        Tag::A
            | Tag::Span
            | Tag::B
            | Tag::Strong
            | Tag::I
            | Tag::Em
            | Tag::Code
            | Tag::Kbd
            | Tag::Samp
            | Tag::Tt
            | Tag::Font
            | Tag::Small
            | Tag::Sup
            | Tag::Sub
            | Tag::Time
            | Tag::Abbr
            | Tag::Cite
            | Tag::Q
            | Tag::Mark
            | Tag::U
            | Tag::S
            | Tag::Strike
            | Tag::Del
            | Tag::Ins
            | Tag::Label
            | Tag::Br
            | Tag::Img
            | Tag::Wbr
            | Tag::Picture
            | Tag::Source
            | Tag::Area
    )
}

fn weight(s: &str) -> u32 {
    s.bytes().filter(|b| !b.is_ascii_whitespace()).count() as u32
}

fn ln1(x: u32) -> f64 {
    f64::from(x).ln_1p()
}

fn share(a: u32, b: u32) -> f64 {
    if b == 0 {
        0.0
    } else {
        f64::from(a) / f64::from(b)
    }
}

/// The blocks of a page and how its nodes relate to them.
#[derive(Debug)]
pub(crate) struct Layout {
    pub(crate) blocks: Vec<Block>,
    /// The owning block of each node (`NONE` for hidden nodes).
    pub(crate) owner: Vec<u32>,
    /// Whether each node lies in the rules' content (inside its root, not removed).
    pub(crate) ruled_in: Vec<bool>,
    /// Whether each node owns text (is a block).
    pub(crate) owns_text: Vec<bool>,
}

/// The blocks of `tree` with their features, given the rules' selection `sel`.
pub(crate) fn blocks(tree: &Tree, sel: &Selection) -> Layout {
    let len = tree.nodes.len();
    // Top-down: inherited flags and the owning block of each node.
    let mut hidden = vec![false; len];
    let mut owner = vec![NONE; len];
    let mut depth = vec![0u16; len];
    let mut in_link = vec![false; len];
    let mut in_p = vec![false; len];
    let mut in_root = vec![false; len];
    let mut rule_removed = vec![false; len];
    // Bits: 1 chrome class, 2 chrome tag, 4 comment, 8 article/main, 16 content hint,
    // 32 repeated, 64 list, 128 table, 256 form, 512 header/footer.
    let mut anc = vec![0u16; len];
    let mut in_article = vec![false; len];
    let sig = score::sibling_signatures(tree);
    if len > 0 {
        in_root[sel.root as usize] = true;
        hidden[0] = tree.nodes[0].hidden;
        owner[0] = 0;
    }
    for i in 1..len {
        let node = &tree.nodes[i];
        let p = node.parent as usize;
        hidden[i] = hidden[p] || node.hidden;
        depth[i] = depth[p].saturating_add(1);
        in_root[i] |= in_root[p];
        rule_removed[i] = rule_removed[p] || sel.removed.get(i).copied().unwrap_or(false);
        let ptag = tree.tag(p as u32);
        in_link[i] = in_link[p] || ptag == Some(Tag::A);
        in_p[i] =
            (in_p[p] || matches!(ptag, Some(Tag::P | Tag::Pre | Tag::Blockquote))) && !in_link[i];
        in_article[i] = in_article[p] || matches!(ptag, Some(Tag::Article | Tag::Main));
        let mut bits = anc[p];
        match node.kind {
            _ if hidden[i] => {}
            Kind::Text { .. } => owner[i] = owner[p],
            Kind::Element { tag, .. } => {
                // The rules' root is a block even when inline (a `<span>` or `<font>`
                // wrapping a whole article).
                owner[i] = if is_inline(tag) && i != sel.root as usize {
                    owner[p]
                } else {
                    i as u32
                };
                bits |= match score::chrome_hint(tree, i as u32, in_article[i]) {
                    1 => 1,
                    2 => 2,
                    3 => 4,
                    4 => 2,
                    _ => 0,
                };
                if matches!(tag, Tag::Article | Tag::Main) {
                    bits |= 8;
                }
                if score::content_hint(tree, i as u32) {
                    bits |= 16;
                }
                if score::repeated(tree, &sig, i as u32) {
                    bits |= 32;
                }
                bits |= match tag {
                    Tag::Ul | Tag::Ol | Tag::Dl | Tag::Menu => 64,
                    Tag::Table => 128,
                    Tag::Form => 256,
                    Tag::Header | Tag::Footer => 512,
                    _ => 0,
                };
            }
        }
        anc[i] = bits;
    }
    // Bottom-up: text and link text of every subtree.
    let mut raw = vec![0u32; len];
    let mut link = vec![0u32; len];
    let mut prose = vec![0u32; len];
    // Children holding text, of every node.
    let mut kids = vec![0u32; len];
    for i in (1..len).rev() {
        if hidden[i] {
            continue;
        }
        if let Some(t) = tree.text_of(i as u32) {
            raw[i] = weight(t);
            if in_link[i] {
                link[i] = raw[i];
            }
            if in_p[i] {
                prose[i] = raw[i];
            }
        }
        let p = tree.nodes[i].parent as usize;
        raw[p] = raw[p].saturating_add(raw[i]);
        link[p] = link[p].saturating_add(link[i]);
        prose[p] = prose[p].saturating_add(prose[i]);
        kids[p] += u32::from(raw[i] > 0);
    }
    // Own text of each block, in document order of its first text.
    let mut index = vec![NONE; len];
    let mut own: Vec<(u32, u32, u32, u32, u32, bool)> = Vec::new(); // node, len, link, prose, punct, ends
    for i in 1..len {
        if hidden[i] || raw[i] == 0 || tree.text_of(i as u32).is_none() || owner[i] == NONE {
            continue;
        }
        let b = owner[i] as usize;
        if index[b] == NONE {
            index[b] = own.len() as u32;
            own.push((b as u32, 0, 0, 0, 0, false));
        }
        let t = tree.text_of(i as u32).unwrap_or("");
        let o = &mut own[index[b] as usize];
        o.1 += raw[i];
        if in_link[i] {
            o.2 += raw[i];
        }
        if in_p[i] {
            o.3 += raw[i];
        }
        o.4 += t.bytes().filter(|b| b".,;:!?".contains(b)).count() as u32;
        let trimmed = t.trim_end();
        if !trimmed.is_empty() {
            o.5 = trimmed.ends_with(['.', '!', '?', ':']);
        }
    }
    let total = raw[0];
    let og = |w: &str| {
        tree.facts
            .og_type
            .as_deref()
            .is_some_and(|t| t.to_ascii_lowercase().contains(w))
    };
    let (og_article, og_product) = (og("article"), og("product"));
    let h1_block = own
        .iter()
        .position(|o| tree.tag(o.0) == Some(Tag::H1))
        .map(|x| x as f64);
    let nb = own.len();
    let mut out = Vec::with_capacity(nb);
    let mut before = 0u32;
    // The section a block sits in: the nearest heading block before it, in document order.
    let mut sec: Option<Section> = None;
    for (k, o) in own.iter().enumerate() {
        let n = o.0 as usize;
        let tag = tree.tag(o.0);
        let ruled = in_root[n] && !rule_removed[n];
        let parent = tree.nodes[n].parent;
        let gp = if parent == NONE {
            NONE
        } else {
            tree.nodes[parent as usize].parent
        };
        let (pl, pk) = if parent == NONE {
            (0, 0)
        } else {
            (raw[parent as usize], link[parent as usize])
        };
        let (gl, gk) = if gp == NONE {
            (pl, pk)
        } else {
            (raw[gp as usize], link[gp as usize])
        };
        let nb_of = |j: Option<usize>| {
            j.and_then(|j| own.get(j))
                .map_or((0.0, 0.0), |p| (ln1(p.1), share(p.2, p.1)))
        };
        let prev = nb_of(k.checked_sub(1));
        let next = nb_of(Some(k + 1));
        let bits = anc[n];
        let bit = |b: u16| f64::from(u8::from(bits & b != 0));
        let is = |c: bool| f64::from(u8::from(c));
        let f = [
            ln1(o.1),
            share(o.2, o.1),
            share(o.3, o.1),
            100.0 * share(o.4, o.1),
            is(o.5),
            is(tag == Some(Tag::P)),
            is(tag == Some(Tag::Li)),
            is(tag.is_some_and(Tag::is_heading)),
            is(tag == Some(Tag::H1)),
            is(matches!(tag, Some(Tag::Td | Tag::Th))),
            is(tag == Some(Tag::Pre)),
            is(matches!(tag, Some(Tag::Dt | Tag::Dd))),
            is(matches!(
                tag,
                Some(Tag::Div | Tag::Section | Tag::Article | Tag::Main | Tag::Other)
            )),
            f64::from(depth[n]),
            k as f64 / nb.max(1) as f64,
            bit(1),
            bit(2),
            bit(4),
            is(in_article[n] || bits & 8 != 0),
            bit(16),
            is(in_root[n]),
            is(rule_removed[n]),
            share(raw[sel.root as usize], total),
            bit(32),
            ln1(pl),
            share(pk, pl),
            ln1(gl),
            share(gk, gl),
            ln1(total),
            share(link[0], total),
            share(prose[0], total),
            is(og_article),
            is(og_product),
            prev.0,
            prev.1,
            next.0,
            next.1,
            h1_block.map_or(99.0, |h| (k as f64 - h).clamp(-50.0, 50.0)),
            bit(64),
            bit(128),
            bit(256),
            bit(512),
            share(before, total),
            sec.as_ref().map_or(0.0, |h| f64::from(h.level)),
            sec.as_ref().map_or(0.0, |h| ln1(h.len)),
            sec.as_ref().map_or(0.0, |h| share(h.link, h.len)),
            sec.as_ref().map_or(99.0, |h| (k - h.block).min(50) as f64),
            sec.as_ref().map_or(0.0, |h| is(h.ruled)),
            sec.as_ref()
                .map_or(0.0, |h| is(h.words == HeadWords::Feedback)),
            sec.as_ref()
                .map_or(0.0, |h| is(h.words == HeadWords::Shelf)),
            ln1(if parent == NONE {
                1
            } else {
                kids[parent as usize]
            }),
        ];
        if let Some(level) = tag.and_then(Tag::heading_level) {
            sec = Some(Section {
                block: k,
                level,
                len: o.1,
                link: o.2,
                ruled,
                words: heading_words(tree, o.0),
            });
        }
        before += o.1;
        out.push(Block {
            node: o.0,
            len: o.1,
            f,
        });
    }
    let ruled_in = (0..len).map(|i| in_root[i] && !rule_removed[i]).collect();
    let mut owns_text = vec![false; len];
    for b in &out {
        owns_text[b.node as usize] = true;
    }
    Layout {
        blocks: out,
        owner,
        ruled_in,
        owns_text,
    }
}

/// The heading that begins the section a block sits in.
struct Section {
    /// Its index among the page's blocks.
    block: usize,
    /// 1 for `<h1>` … 6 for `<h6>`.
    level: u8,
    /// Its own text and link text (non-space bytes).
    len: u32,
    link: u32,
    /// Whether it lies in the rules' content.
    ruled: bool,
    words: HeadWords,
}

/// What a heading's words announce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HeadWords {
    /// Reviews, comments, replies, questions and answers.
    Feedback,
    /// Links to other pages: related, popular, recent, share, follow, tags.
    Shelf,
    Other,
}

/// Heading words of readers' feedback.
const FEEDBACK_WORDS: &[&str] = &[
    "review",
    "reviews",
    "rating",
    "ratings",
    "comment",
    "comments",
    "reply",
    "replies",
    "responses",
    "questions",
    "answers",
    "testimonials",
];
/// Heading words of shelves and widgets.
const SHELF_WORDS: &[&str] = &[
    "related",
    "similar",
    "recommended",
    "popular",
    "recent",
    "trending",
    "latest",
    "share",
    "follow",
    "subscribe",
    "newsletter",
    "tags",
    "categories",
    "archives",
];
/// Words of a heading looked at.
const HEAD_WORDS: usize = 8;

/// The class of heading `h`'s first words (feedback before shelf).
fn heading_words(tree: &Tree, h: u32) -> HeadWords {
    let mut words: Vec<String> = Vec::new();
    let mut i = h + 1;
    let len = tree.nodes.len() as u32;
    while i < len && words.len() < HEAD_WORDS && is_within(tree, i, h) {
        let node = &tree.nodes[i as usize];
        if let (Kind::Text { .. }, false) = (&node.kind, node.hidden) {
            let t = tree.text_of(i).unwrap_or("");
            words.extend(super::text_words(t).take(HEAD_WORDS).map(str::to_lowercase));
        }
        i += 1;
    }
    let has = |list: &[&str]| {
        words
            .iter()
            .take(HEAD_WORDS)
            .any(|w| list.contains(&w.as_str()))
    };
    if has(FEEDBACK_WORDS) {
        HeadWords::Feedback
    } else if has(SHELF_WORDS) {
        HeadWords::Shelf
    } else {
        HeadWords::Other
    }
}

/// Whether `i` lies in the subtree of `a` (nodes are numbered in document order).
fn is_within(tree: &Tree, mut i: u32, a: u32) -> bool {
    while i != NONE && i > a {
        i = tree.nodes[i as usize].parent;
    }
    i == a
}

/// A gradient-boosted tree model on the logit scale.
#[derive(Debug)]
pub(crate) struct Model {
    base: f64,
    /// Logit below which a block inside the rules' content is dropped.
    drop: f64,
    /// Logit above which a block outside the rules' content is added.
    add: f64,
    /// Largest share of the rules' content (non-space bytes of its blocks) the model may
    /// drop from a page; a page where it would drop more keeps the rules' choice.
    cap: f64,
    /// Nodes of all trees: (feature or -1 for a leaf, threshold, left, right, value).
    nodes: Vec<(i32, f64, u32, u32, f64)>,
    /// Root node of each tree.
    roots: Vec<u32>,
}

/// The committed model, parsed once; `None` when it has no trees (the rules decide, and
/// no block features are computed).
pub(crate) fn model() -> Option<&'static Model> {
    committed().filter(|m| !m.roots.is_empty())
}

/// The committed model file, parsed once.
pub(crate) fn committed() -> Option<&'static Model> {
    static M: OnceLock<Option<Model>> = OnceLock::new();
    M.get_or_init(|| Model::parse(include_str!("model.txt")).ok())
        .as_ref()
}

impl Model {
    /// Parses the text format written by `scripts/train-extract.py`.
    pub(crate) fn parse(s: &str) -> Result<Model, String> {
        let mut m = Model {
            base: 0.0,
            drop: f64::NEG_INFINITY,
            add: f64::INFINITY,
            cap: 1.0,
            nodes: Vec::new(),
            roots: Vec::new(),
        };
        let num = |w: Option<&str>, what: &str| -> Result<f64, String> {
            w.and_then(|w| w.parse::<f64>().ok())
                .ok_or_else(|| format!("model: bad {what}"))
        };
        let mut lines = s.lines();
        if lines.next().map(str::trim) != Some("kb-extract-gbdt 1") {
            return Err("model: not a kb-extract-gbdt 1 file".into());
        }
        let mut left = 0usize;
        let mut start = 0u32;
        for line in lines {
            let mut w = line.split_ascii_whitespace();
            if left > 0 {
                let feat = num(w.next(), "node feature")? as i32;
                if feat >= NF as i32 {
                    return Err(format!("model: feature {feat} out of range"));
                }
                let thr = num(w.next(), "node threshold")?;
                let l = num(w.next(), "node left")? as u32 + start;
                let r = num(w.next(), "node right")? as u32 + start;
                let v = num(w.next(), "node value")?;
                m.nodes.push((feat, thr, l, r, v));
                left -= 1;
                continue;
            }
            match w.next() {
                Some("features") => {
                    let names: Vec<&str> = w.collect();
                    if names != FEATURES {
                        return Err("model: features differ from the extractor's".into());
                    }
                }
                Some("base") => m.base = num(w.next(), "base")?,
                Some("drop") => m.drop = num(w.next(), "drop")?,
                Some("add") => m.add = num(w.next(), "add")?,
                Some("cap") => m.cap = num(w.next(), "cap")?,
                Some("tree") => {
                    left = num(w.next(), "tree size")? as usize;
                    start = m.nodes.len() as u32;
                    m.roots.push(start);
                }
                Some(x) if !x.starts_with('#') => return Err(format!("model: unknown line {x}")),
                _ => {}
            }
        }
        let n = m.nodes.len() as u32;
        if left > 0 || m.nodes.iter().any(|x| x.0 >= 0 && (x.2 >= n || x.3 >= n)) {
            return Err("model: truncated tree".into());
        }
        Ok(m)
    }

    /// The logit that a block with features `f` is main content.
    pub(crate) fn logit(&self, f: &[f64; NF]) -> f64 {
        let mut s = self.base;
        for &r in &self.roots {
            let mut i = r as usize;
            // Trees are small; the step bound guards a malformed file against cycles.
            for _ in 0..64 {
                let Some(&(feat, thr, l, rr, v)) = self.nodes.get(i) else {
                    break;
                };
                if feat < 0 {
                    s += v;
                    break;
                }
                i = if f[feat as usize] <= thr { l } else { rr } as usize;
            }
        }
        s
    }
}

/// Refines the rules' selection with `model`: returns the nodes to skip when rendering
/// the whole page, or `None` when the model keeps no block (the rules' choice stands).
pub(crate) fn refine(tree: &Tree, sel: &Selection, model: &Model) -> Option<Vec<bool>> {
    let lay = blocks(tree, sel);
    let len = tree.nodes.len();
    let mut kept = vec![false; len];
    let (mut ruled, mut dropped, mut added) = (0u64, 0u64, false);
    for b in &lay.blocks {
        let z = model.logit(&b.f);
        let keep = if lay.ruled_in[b.node as usize] {
            ruled += u64::from(b.len);
            if z < model.drop {
                dropped += u64::from(b.len);
            }
            z >= model.drop
        } else {
            added |= z > model.add;
            z > model.add
        };
        kept[b.node as usize] = keep;
    }
    // The model refines the rules' content, it does not replace most of it: over the cap
    // (or when nothing changes, or nothing would be left) the rules' choice stands.
    let over_cap = dropped as f64 > model.cap * ruled as f64;
    if !added && (dropped == 0 || over_cap || dropped == ruled) {
        return None;
    }
    if over_cap {
        for b in &lay.blocks {
            if lay.ruled_in[b.node as usize] {
                kept[b.node as usize] = true;
            }
        }
    }
    // An element stays when it holds a kept block or belongs to one; what belongs to no
    // block with text (an image's `<figure>`) stays where the rules keep it.
    let mut holds = vec![false; len];
    for i in (1..len).rev() {
        if kept[i] {
            holds[i] = true;
        }
        if holds[i] {
            let p = tree.nodes[i].parent as usize;
            holds[p] = true;
        }
    }
    Some(
        (0..len)
            .map(|i| {
                let o = lay.owner[i];
                let stays = holds[i]
                    || o != NONE
                        && if lay.owns_text[o as usize] {
                            kept[o as usize]
                        } else {
                            lay.ruled_in[i]
                        };
                // What the rules removed inside a block they keep (a byline `<span>`)
                // stays removed.
                let ruled_out = sel.removed.get(i).copied().unwrap_or(false)
                    && o != NONE
                    && lay.ruled_in[o as usize];
                !stays || ruled_out
            })
            .collect(),
    )
}
