//! Tree construction from tokens: implicit closes, depth cap, dropped and hidden
//! subtrees, and the page facts gathered on the way.

use super::hidden::{print_only, style_collapses, style_hides, style_toggles};
use super::tokenize::{decode_into, tokenize, RawAttr, Sink};
use super::tree::{Attrs, Kind, Node, Tag, Tree, MAX_DEPTH, NONE};
use super::ExtractOptions;

impl Tree {
    /// Parses `html` into a tree. The root (index 0) is a synthetic document element.
    pub(crate) fn parse(html: &str, opts: &ExtractOptions) -> Tree {
        let mut b = Builder {
            tree: Tree::default(),
            stack: Vec::new(),
            overflow: 0,
            keep_hidden: opts.keep_hidden,
            scratch: String::new(),
            toggled: Vec::new(),
            ld_json: false,
            controls: Vec::new(),
            panels: Vec::new(),
            labels: Vec::new(),
            picture_src: None,
        };
        b.tree.nodes.push(Node {
            kind: Kind::Element {
                tag: Tag::Other,
                attrs: NONE,
            },
            parent: NONE,
            first_child: NONE,
            last_child: NONE,
            next_sibling: NONE,
            hidden: false,
        });
        b.stack.push(Open {
            node: 0,
            tag: Tag::Other,
            dead: false,
        });
        tokenize(html, &mut b);
        b.controls.sort_unstable();
        b.controls.dedup();
        b.tree.facts.control_forms.sort_unstable();
        b.tree.facts.control_forms.dedup();
        reveal(&mut b.tree, &b.toggled, &b.panels, &b.controls, &b.labels);
        if super::twins::hide_twins(&mut b.tree) {
            prune_hidden(&mut b.tree);
        }
        b.tree
    }
}

/// Share of the page's text a toggled-hidden element needs to be the page itself.
const REVEAL_SHARE: f64 = 0.5;

/// Share of the page's text the parts of a body shown in parts need together: a reader
/// sees less than a quarter of the page without them.
const REVEAL_PARTS_SHARE: f64 = 0.75;
/// Most columns a table cell spans when laid on the grid.
const MAX_COLSPAN: u16 = 32;
/// Most rows a table cell spans when laid on the grid.
const MAX_ROWSPAN: u16 = 1000;
/// Bound (exclusive) of a list number CommonMark reads: nine digits.
const MAX_NUMBER: u32 = 1_000_000_000;

/// Whether element `t` holds a formula (`<math>`) and no text outside formulas.
fn formulas_only(tree: &Tree, t: u32) -> bool {
    super::markdown::text_only_inside(tree, t, |i| tree.tag(i) == Some(Tag::Math))
}

/// HTML's formatting elements but `<a>`: the inline markup a browser opens again when a
/// misnested end closes it early.
fn is_formatting(t: Tag) -> bool {
    matches!(
        t,
        Tag::B
            | Tag::Code
            | Tag::Em
            | Tag::Font
            | Tag::I
            | Tag::S
            | Tag::Small
            | Tag::Strike
            | Tag::Strong
            | Tag::Tt
            | Tag::U
    )
}

/// Whether `c` is all that `p` holds, white space aside.
fn only_child(tree: &Tree, p: u32, c: u32) -> bool {
    tree.children(p)
        .all(|x| x == c || tree.text_of(x).is_some_and(|t| t.trim().is_empty()))
}

/// Shows the panels a disclosure opens: elements with an id named by the `aria-controls`
/// of a toggle that carries `aria-expanded` (an accordion's sections, a FAQ's answers, a
/// "read more"), hidden by `hidden`, `aria-hidden` or a toggled style, themselves or by
/// wrappers that hold nothing else. One click shows them to any reader, so they are the
/// page's text, not text hidden from its readers.
///
/// Then shows the elements hidden by a toggled style (`opacity:0`, `display:none`) that hold
/// the page: its `<h1>` or `<main>` (or lie inside `<main>`) and at least [`REVEAL_SHARE`]
/// of the text a reader sees with it shown (its own, plus what no toggled element holds: a
/// mega-menu's hidden panels do not count against it). Pages that fade or switch their body in by script ship
/// it so; the text a sighted reader gets is that body, not the little left outside it.
/// When no one element holds the page but the top-level hidden ones together hold its
/// title and [`REVEAL_PARTS_SHARE`] of its text, they are its body shipped in parts
/// (out-of-order streaming) and are all shown. Every other hidden element stays hidden
/// and loses its subtree, as if it had never been stored.
fn reveal(
    tree: &mut Tree,
    toggled: &[u32],
    panels: &[u32],
    controls: &[Box<str>],
    labels: &[(u32, Box<str>)],
) {
    if toggled.is_empty() && panels.is_empty() && labels.is_empty() {
        return;
    }
    let named = |tree: &Tree, n: u32| {
        tree.attrs(n)
            .is_some_and(|a| !a.id.is_empty() && controls.binary_search(&a.id).is_ok())
    };
    for &t in toggled.iter().chain(panels) {
        if named(tree, t) {
            tree.nodes[t as usize].hidden = false;
        }
    }
    // A panel whose wrapper the toggle hides instead (Chakra's `chakra-collapse`, a slide
    // animation's box): wrappers that hold the panel and nothing else open with it. (A
    // hidden element with stored children is one kept for `reveal`: the others were
    // dropped with their subtree while parsing. Only pages that kept some pay the pass.)
    if !(controls.is_empty() || toggled.is_empty() && panels.is_empty()) {
        for n in 1..tree.nodes.len() as u32 {
            if !named(tree, n) {
                continue;
            }
            let (mut c, mut p) = (n, tree.nodes[n as usize].parent);
            while p != 0 && only_child(tree, p, c) {
                tree.nodes[p as usize].hidden = false;
                (c, p) = (p, tree.nodes[p as usize].parent);
            }
        }
    }
    // A hidden tab panel that holds code is one of a documentation page's language
    // switchers (Python / Node.js / Java...): each sample is the page's content, and a click
    // on its tab shows it. Other tab panels (a shop's "Reviews", "Shipping") stay hidden.
    let tabpanel = |tree: &Tree, n: u32| {
        tree.attrs(n)
            .is_some_and(|x| x.role.eq_ignore_ascii_case("tabpanel"))
    };
    let tabs = toggled.iter().chain(panels).any(|&t| tabpanel(tree, t));
    for n in (1..tree.nodes.len()).filter(|_| tabs) {
        if !matches!(tree.nodes[n].kind, Kind::Element { tag: Tag::Pre, .. }) {
            continue;
        }
        let mut a = tree.nodes[n].parent as usize;
        while a != 0 {
            let node = &tree.nodes[a];
            if node.hidden && tabpanel(tree, a as u32) {
                tree.nodes[a].hidden = false;
                break;
            }
            a = node.parent as usize;
        }
    }
    // A formula's MathML hidden by a style beside a drawing of it (MediaWiki's
    // `span.mwe-math-mathml-a11y` beside an `aria-hidden` image) is what a reader gets of
    // the formula: a wrapper that holds nothing but formulas is shown.
    if tree.facts.math {
        for &t in toggled {
            if formulas_only(tree, t) {
                tree.nodes[t as usize].hidden = false;
            }
        }
    }
    // A disclosure's button is its panel's title when the panel is shown (opened here, or
    // open from the start).
    let mut opened: Vec<&str> = Vec::new();
    if !labels.is_empty() {
        for n in 1..tree.nodes.len() as u32 {
            if !tree.nodes[n as usize].hidden && named(tree, n) {
                opened.extend(tree.attrs(n).map(|a| &*a.id));
            }
        }
        opened.sort_unstable();
    }
    let shown: Vec<u32> = labels
        .iter()
        .filter(|(_, ids)| {
            ids.split_ascii_whitespace()
                .any(|id| opened.binary_search(&id).is_ok())
        })
        .map(|&(b, _)| b)
        .collect();
    for b in shown {
        tree.nodes[b as usize].hidden = false;
    }

    let len = tree.nodes.len();
    // Text (non-space bytes) and whether a `<main>`/`<h1>` is inside, outside elements
    // hidden for good (those were not stored).
    let mut text = vec![0u64; len];
    // The same, leaving out what toggled elements hold: the text a sighted reader gets.
    let mut shown = vec![0u64; len];
    let mut titled = vec![false; len];
    for i in (1..len).rev() {
        let n = &tree.nodes[i];
        if let Kind::Text { start, end } = n.kind {
            let t = tree.text.get(start as usize..end as usize).unwrap_or("");
            text[i] = t.bytes().filter(|b| !b.is_ascii_whitespace()).count() as u64;
            shown[i] = text[i];
        }
        titled[i] |= matches!(
            n.kind,
            Kind::Element {
                tag: Tag::Main | Tag::H1,
                ..
            }
        );
        let p = n.parent as usize;
        text[p] += text[i];
        if !n.hidden {
            shown[p] += shown[i];
        }
        titled[p] |= titled[i];
    }
    // The body shown in parts: out-of-order streaming (Marko's async fragments) ships
    // each late part as its own `display:none` block that a script moves into place.
    // The parts are the hidden blocks at the top level (not inside another hidden block,
    // nor inside a header, nav, footer or aside: a mega-menu's panels are not parts).
    // The same pass marks what lies inside the page's main landmark: a block there that
    // holds most of the page is its body even without a title (a shop's collection page
    // has no `<h1>`; an access-gate app hides everything in `<main>` until its script has
    // run). (Only pages with toggled elements pay for the pass.)
    let (parts, in_main): (Vec<usize>, Vec<bool>) = if toggled.is_empty() {
        (Vec::new(), Vec::new())
    } else {
        let mut inside = vec![false; len];
        let mut in_main = vec![false; len];
        for i in 1..len {
            let p = tree.nodes[i].parent as usize;
            let pn = &tree.nodes[p];
            in_main[i] = in_main[p] || (p != 0 && tree.is_main(p as u32));
            inside[i] = inside[p]
                || (p != 0
                    && (pn.hidden
                        || matches!(
                            pn.kind,
                            Kind::Element {
                                tag: Tag::Header | Tag::Nav | Tag::Footer | Tag::Aside,
                                ..
                            }
                        )));
        }
        let parts = toggled
            .iter()
            .map(|&t| t as usize)
            .filter(|&t| tree.nodes[t].hidden && !inside[t])
            .collect();
        (parts, in_main)
    };
    let in_parts: u64 = parts.iter().map(|&t| text[t]).sum();
    let mut one = false;
    for &t in toggled {
        let t = t as usize;
        let page = (shown[0] + text[t]).max(1) as f64;
        // One block that holds the page (and most of what is hidden beside it).
        if (titled[t] || in_main[t])
            && text[t] as f64 >= REVEAL_SHARE * page
            && 2 * text[t] >= in_parts
        {
            tree.nodes[t].hidden = false;
            one = true;
        }
    }
    // No one block holds it, but the parts together hold the title and most of the text:
    // what a reader sees without them is a bare header and footer.
    let page = (shown[0] + in_parts).max(1) as f64;
    if !one && parts.iter().any(|&t| titled[t]) && in_parts as f64 >= REVEAL_PARTS_SHARE * page {
        for t in parts {
            tree.nodes[t].hidden = false;
        }
    }
    prune_hidden(tree);
}

/// Drops the subtrees of hidden elements (their element stays, childless), renumbering
/// the nodes: the tree is the one built had they been dropped while parsing.
fn prune_hidden(tree: &mut Tree) {
    let len = tree.nodes.len();
    let mut new_id = vec![NONE; len];
    let mut kept: Vec<Node> = Vec::with_capacity(len);
    for i in 0..len {
        let p = tree.nodes[i].parent;
        if i > 0 && (new_id[p as usize] == NONE || tree.nodes[p as usize].hidden) {
            continue;
        }
        new_id[i] = kept.len() as u32;
        let mut n = tree.nodes[i].clone();
        n.parent = if i == 0 { NONE } else { new_id[p as usize] };
        n.first_child = NONE;
        n.last_child = NONE;
        n.next_sibling = NONE;
        kept.push(n);
    }
    // Relink children in document order.
    for j in 1..kept.len() {
        let p = kept[j].parent as usize;
        let prev = kept[p].last_child;
        kept[p].last_child = j as u32;
        if prev == NONE {
            kept[p].first_child = j as u32;
        } else {
            kept[prev as usize].next_sibling = j as u32;
        }
    }
    tree.nodes = kept;
    let forms = std::mem::take(&mut tree.facts.control_forms);
    tree.facts.control_forms = forms
        .into_iter()
        .map(|f| new_id[f as usize])
        .filter(|&f| f != NONE)
        .collect();
}

#[derive(Debug, Clone, Copy)]
struct Open {
    node: u32,
    tag: Tag,
    /// Inside a dropped/hidden subtree: nothing below is stored.
    dead: bool,
}

struct Builder {
    tree: Tree,
    stack: Vec<Open>,
    /// Elements opened beyond [`MAX_DEPTH`] and not yet closed.
    overflow: usize,
    keep_hidden: bool,
    scratch: String,
    /// Elements hidden only by a toggled style, stored with their subtree so [`reveal`]
    /// can weigh them.
    toggled: Vec<u32>,
    /// The `<script>` just opened holds JSON-LD.
    ld_json: bool,
    /// Every id named by an `aria-controls` (the panels a toggle opens).
    controls: Vec<Box<str>>,
    /// Elements with an id hidden by `hidden`/`aria-hidden` (not by a style that hides for
    /// good), stored with their subtree so [`reveal`] can show them when a disclosure's
    /// toggle names them.
    panels: Vec<u32>,
    /// Disclosure buttons and the ids they control, stored hidden with their subtree:
    /// [`reveal`] shows the ones whose panel it opens.
    labels: Vec<(u32, Box<str>)>,
    /// The image a `<picture>`'s last `<source srcset>` offers, for its `<img>` when that
    /// names none of its own.
    picture_src: Option<Box<str>>,
}

/// The URL of a `srcset`'s largest candidate (by its `w` or `x` descriptor; the first of
/// equals), or `None` for one that names no URL. Parsed as HTML does: a URL runs to the
/// next space (it may hold commas: `w_400,h_300`), its descriptors to the next comma.
fn largest_candidate(srcset: &str) -> Option<&str> {
    let mut best: Option<(&str, f64)> = None;
    let mut rest = srcset;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == ',');
        if rest.is_empty() {
            break;
        }
        let end = rest
            .find(|c: char| c.is_ascii_whitespace())
            .unwrap_or(rest.len());
        let (raw, after) = rest.split_at(end);
        let url = raw.trim_end_matches(',');
        let mut size = 1.0;
        if url.len() == raw.len() {
            // Descriptors up to the comma that ends the candidate.
            let stop = after.find(',').unwrap_or(after.len());
            for d in after[..stop].split_ascii_whitespace() {
                if let Some(n) = d
                    .strip_suffix(['w', 'x'])
                    .and_then(|n| n.parse::<f64>().ok())
                {
                    size = n;
                }
            }
            rest = &after[stop..];
        } else {
            rest = after;
        }
        // A placeholder (an inline image, `#`) is no candidate.
        if !url.is_empty()
            && !url.starts_with("data:")
            && !url.starts_with('#')
            && best.is_none_or(|(_, b)| size > b)
        {
            best = Some((url, size));
        }
    }
    best.map(|(u, _)| u)
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl Builder {
    fn decode(&mut self, raw: &str) -> String {
        self.scratch.clear();
        decode_into(raw, &mut self.scratch);
        self.scratch.clone()
    }

    fn append(&mut self, kind: Kind, hidden: bool) -> u32 {
        let parent = self.stack.last().map_or(0, |o| o.node);
        let id = self.tree.nodes.len() as u32;
        self.tree.nodes.push(Node {
            kind,
            parent,
            first_child: NONE,
            last_child: NONE,
            next_sibling: NONE,
            hidden,
        });
        self.attach_last(parent, id);
        id
    }

    fn pop_to(&mut self, idx: usize) {
        self.stack.truncate(idx.max(1));
    }

    /// Stores an element the markup implies (a row around a cell, formatting opened
    /// again) and opens it.
    fn open_element(&mut self, tag: Tag, attrs: u32, hidden: bool) {
        let node = self.append(Kind::Element { tag, attrs }, hidden);
        self.push_open(Open {
            node,
            tag,
            dead: false,
        });
    }

    /// Closes the link open at `idx` of the stack, as a browser does when an `<a>` starts
    /// inside another (`<a name="top"/>` of an XHTML page, a card's link around an
    /// author's): no link holds another. This is HTML's adoption agency algorithm for the
    /// nodes we store:
    /// - with no block opened in the link, the inline elements opened in it close with
    ///   it, and the formatting ones open again for what follows;
    /// - a block opened in it (the furthest block) moves out to follow it and stays open,
    ///   inside copies of the formatting elements between them (at most three, the
    ///   nearest), and what the block holds is wrapped in a copy of the link: `<a
    ///   href=x><div><h3>Title</h3><a href=y>` keeps "Title" a link to `x`. The copy is
    ///   closed the same way in turn, so each block down to the current node keeps its
    ///   text in the link.
    ///
    /// Copies are inserted at the index that keeps the nodes in document order.
    fn close_link(&mut self, mut idx: usize) {
        loop {
            let block = (idx + 1..self.stack.len()).find(|&j| self.stack[j].tag.is_block());
            let Some(b) = block else {
                // The formatting elements closed with it open again for what follows
                // (HTML's "reconstruct the active formatting elements"): `<a>see
                // <code><a>x</a></code>` leaves `x` in code.
                let reopen: Vec<(Tag, u32)> = self.stack[idx + 1..]
                    .iter()
                    .filter(|o| !o.dead && o.node != NONE && is_formatting(o.tag))
                    .map(|o| (o.tag, o.node))
                    .collect();
                self.pop_to(idx);
                for (tag, node) in reopen {
                    let Kind::Element { attrs, .. } = self.tree.nodes[node as usize].kind else {
                        continue;
                    };
                    let hidden = self.tree.nodes[node as usize].hidden;
                    self.open_element(tag, attrs, hidden);
                }
                return;
            };
            // A part not stored (flattened past the depth cap, or dropped) cannot be
            // moved: the link stays open, as before this rule.
            let (link, moved) = (self.stack[idx].node, self.stack[b].node);
            if idx == 0
                || link == NONE
                || moved == NONE
                || self.stack[idx..=b].iter().any(|o| o.dead)
            {
                return;
            }
            self.detach_last(moved);
            // The formatting elements between the link and the block, nearest last.
            let mut formats: Vec<Open> = self.stack[idx + 1..b]
                .iter()
                .filter(|o| o.node != NONE && is_formatting(o.tag))
                .copied()
                .collect();
            formats.drain(..formats.len().saturating_sub(3));
            // Their copies, then the block, follow the link in its parent.
            let mut parent = self.tree.nodes[link as usize].parent;
            let mut at = moved;
            for f in &mut formats {
                let copy = self.insert_node(at, f.node);
                self.attach_last(parent, copy);
                (parent, f.node, at) = (copy, copy, at + 1);
            }
            let moved = at;
            self.attach_last(parent, moved);
            // What the block holds goes into a copy of the link.
            let copy = self.insert_node(moved + 1, link);
            let mut c = self.tree.nodes[moved as usize].first_child;
            while c != NONE {
                self.tree.nodes[c as usize].parent = copy;
                c = self.tree.nodes[c as usize].next_sibling;
            }
            let m = &mut self.tree.nodes[moved as usize];
            let (first, last) = (m.first_child, m.last_child);
            m.first_child = copy;
            m.last_child = copy;
            let cn = &mut self.tree.nodes[copy as usize];
            cn.parent = moved;
            cn.first_child = first;
            cn.last_child = last;
            // Were `[.., link, between.., block, above..]`; now `[.., formats..,
            // block, copy, above..]`, and the copy is closed in turn.
            let block_at = idx + formats.len();
            self.stack.splice(idx..b, formats);
            idx = block_at + 1;
            self.stack.insert(
                idx,
                Open {
                    node: copy,
                    tag: Tag::A,
                    dead: false,
                },
            );
        }
    }

    /// Detaches `n` from its parent, whose last child it is.
    fn detach_last(&mut self, n: u32) {
        let p = self.tree.nodes[n as usize].parent;
        let prev = self
            .tree
            .children(p)
            .find(|&c| self.tree.nodes[c as usize].next_sibling == n);
        match prev {
            Some(c) => {
                self.tree.nodes[c as usize].next_sibling = NONE;
                self.tree.nodes[p as usize].last_child = c;
            }
            None => {
                self.tree.nodes[p as usize].first_child = NONE;
                self.tree.nodes[p as usize].last_child = NONE;
            }
        }
        self.tree.nodes[n as usize].next_sibling = NONE;
    }

    /// Appends the detached `n` (a new node, or one moved) to `parent`'s children.
    fn attach_last(&mut self, parent: u32, n: u32) {
        let p = &mut self.tree.nodes[parent as usize];
        let prev = p.last_child;
        p.last_child = n;
        if prev == NONE {
            p.first_child = n;
        } else {
            self.tree.nodes[prev as usize].next_sibling = n;
        }
        self.tree.nodes[n as usize].parent = parent;
    }

    /// Inserts at index `at` a detached copy of element `of` (no children), moving every
    /// node from `at` on one place up. Only the detached block being moved and what it
    /// holds (the nodes stored since it opened) sit from `at - 1` on, so no node before
    /// that names one of them.
    fn insert_node(&mut self, at: u32, of: u32) -> u32 {
        let bump = |x: u32| if x != NONE && x >= at { x + 1 } else { x };
        for n in &mut self.tree.nodes[at.saturating_sub(1) as usize..] {
            n.parent = bump(n.parent);
            n.first_child = bump(n.first_child);
            n.last_child = bump(n.last_child);
            n.next_sibling = bump(n.next_sibling);
        }
        for o in &mut self.stack {
            o.node = bump(o.node);
        }
        for n in self.toggled.iter_mut().chain(&mut self.panels) {
            *n = bump(*n);
        }
        for (n, _) in &mut self.labels {
            *n = bump(*n);
        }
        for n in &mut self.tree.facts.control_forms {
            *n = bump(*n);
        }
        let of = &self.tree.nodes[of as usize];
        let copy = Node {
            kind: of.kind.clone(),
            parent: NONE,
            first_child: NONE,
            last_child: NONE,
            next_sibling: NONE,
            hidden: of.hidden,
        };
        self.tree.nodes.insert(at as usize, copy);
        at
    }

    /// Index in the stack of the nearest open `tag`, not crossing any of `stop`.
    fn find_open(&self, tag: Tag, stop: &[Tag]) -> Option<usize> {
        for (i, o) in self.stack.iter().enumerate().rev().take(MAX_DEPTH) {
            if o.tag == tag {
                return Some(i);
            }
            if stop.contains(&o.tag) {
                return None;
            }
        }
        None
    }

    fn implicit_close(&mut self, tag: Tag) {
        const SCOPE: &[Tag] = &[
            Tag::Table,
            Tag::Td,
            Tag::Th,
            Tag::Caption,
            Tag::Button,
            Tag::Template,
            Tag::Html,
        ];
        if tag.closes_p() {
            if let Some(i) = self.find_open(Tag::P, SCOPE) {
                self.pop_to(i);
            }
        }
        match tag {
            Tag::Li => {
                if let Some(i) = self.find_open(
                    Tag::Li,
                    &[Tag::Ul, Tag::Ol, Tag::Menu, Tag::Table, Tag::Td, Tag::Th],
                ) {
                    self.pop_to(i);
                }
            }
            Tag::Dt | Tag::Dd => {
                let i = self
                    .find_open(Tag::Dd, &[Tag::Dl, Tag::Table])
                    .into_iter()
                    .chain(self.find_open(Tag::Dt, &[Tag::Dl, Tag::Table]))
                    .max();
                if let Some(i) = i {
                    self.pop_to(i);
                }
            }
            Tag::Tr | Tag::Thead | Tag::Tbody | Tag::Tfoot => {
                for t in [Tag::Td, Tag::Th, Tag::Tr] {
                    if let Some(i) = self.find_open(t, &[Tag::Table]) {
                        self.pop_to(i);
                    }
                }
                if tag != Tag::Tr {
                    for t in [Tag::Thead, Tag::Tbody, Tag::Tfoot] {
                        if let Some(i) = self.find_open(t, &[Tag::Table]) {
                            self.pop_to(i);
                        }
                    }
                }
            }
            Tag::Td | Tag::Th => {
                for t in [Tag::Td, Tag::Th] {
                    if let Some(i) = self.find_open(t, &[Tag::Table, Tag::Tr]) {
                        self.pop_to(i);
                    }
                }
            }
            // A table started in a table outside its cells (`<table><tr><td>x</td></tr>
            // <table>`, a close tag forgotten) ends the one open: a browser reads two
            // tables, one after the other.
            Tag::Table => {
                if let Some(i) =
                    self.find_open(Tag::Table, &[Tag::Td, Tag::Th, Tag::Caption, Tag::Template])
                {
                    self.pop_to(i);
                }
            }
            Tag::Option => {
                if let Some(i) = self.find_open(Tag::Option, &[Tag::Select]) {
                    self.pop_to(i);
                }
            }
            // Not inside a dropped subtree (an `<object>`'s fallback links), where nothing
            // is stored.
            Tag::A if !self.stack.last().is_some_and(|o| o.dead) => {
                let scope = &[
                    Tag::Td,
                    Tag::Th,
                    Tag::Caption,
                    Tag::Template,
                    Tag::Table,
                    Tag::Object,
                ];
                if let Some(i) = self.find_open(Tag::A, scope) {
                    self.close_link(i);
                }
            }
            Tag::H1 | Tag::H2 | Tag::H3 | Tag::H4 | Tag::H5 | Tag::H6
                if self.stack.last().is_some_and(|o| o.tag.is_heading()) =>
            {
                self.stack.pop();
            }
            _ => {}
        }
    }

    fn head_facts(&mut self, tag: Tag, attrs: &[RawAttr<'_>]) {
        let get = |n: &str| {
            attrs
                .iter()
                .find(|a| a.name.eq_ignore_ascii_case(n))
                .map(|a| a.value)
        };
        match tag {
            Tag::Meta => {
                let key = get("name")
                    .or_else(|| get("property"))
                    .unwrap_or("")
                    .to_ascii_lowercase();
                let content = get("content").map(|c| self.decode(c));
                let f = &mut self.tree.facts;
                match key.as_str() {
                    "description" => f.description = f.description.take().or(content),
                    "og:description" => f.og_description = f.og_description.take().or(content),
                    "og:title" => f.og_title = f.og_title.take().or(content),
                    "og:type" => f.og_type = f.og_type.take().or(content),
                    "robots" => {
                        if let Some(c) = content {
                            f.robots = Some(match f.robots.take() {
                                Some(r) => r + "," + &c,
                                None => c,
                            });
                        }
                    }
                    _ => {
                        if get("http-equiv")
                            .is_some_and(|h| h.eq_ignore_ascii_case("content-language"))
                        {
                            f.content_language = f.content_language.take().or(content);
                        }
                    }
                }
            }
            Tag::Link => {
                let rel = get("rel").unwrap_or("");
                if rel
                    .split_ascii_whitespace()
                    .any(|r| r.eq_ignore_ascii_case("canonical"))
                {
                    if let Some(h) = get("href") {
                        let h = self.decode(h);
                        self.tree.facts.canonical.get_or_insert(h);
                    }
                }
            }
            Tag::Base => {
                if let Some(h) = get("href") {
                    let h = self.decode(h);
                    self.tree.facts.base_href.get_or_insert(h);
                }
            }
            Tag::Html => {
                if let Some(l) = get("lang").or_else(|| get("xml:lang")) {
                    let l = self.decode(l);
                    self.tree.facts.html_lang.get_or_insert(l);
                }
            }
            Tag::A | Tag::Area => {
                if let Some(h) = get("href") {
                    let h = self.decode(h);
                    let nf = get("rel").is_some_and(|r| {
                        r.split_ascii_whitespace()
                            .any(|x| x.eq_ignore_ascii_case("nofollow"))
                    });
                    self.tree.facts.links.push((h, nf));
                }
            }
            Tag::Script => {
                if get("src").is_some() {
                    self.tree.facts.script_count += 1;
                }
                self.ld_json =
                    get("type").is_some_and(|t| t.eq_ignore_ascii_case("application/ld+json"));
            }
            _ => {}
        }
    }
}

impl<'a> Sink<'a> for Builder {
    fn start_tag(&mut self, name: &str, raw: &[RawAttr<'a>], self_closing: bool) {
        let tag = Tag::from_name(name);
        self.head_facts(tag, raw);
        if matches!(tag, Tag::Html | Tag::Head | Tag::Body) {
            return; // Structure only; the synthetic root stands for them.
        }
        self.implicit_close(tag);
        let parent_dead = self.stack.last().is_some_and(|o| o.dead);
        // A cell straight in a table (`<table><td>`, `<tbody><th>`) is in a row the browser
        // opens for it.
        if matches!(tag, Tag::Td | Tag::Th)
            && !parent_dead
            && self.stack.len() < MAX_DEPTH
            && self
                .stack
                .last()
                .is_some_and(|o| matches!(o.tag, Tag::Table | Tag::Thead | Tag::Tbody | Tag::Tfoot))
        {
            self.open_element(Tag::Tr, NONE, false);
        }
        if tag == Tag::Input && !parent_dead {
            self.task_box(raw);
        }
        if matches!(tag, Tag::Input | Tag::Textarea | Tag::Select | Tag::Button) {
            self.note_control(tag, raw);
        }
        self.tree.facts.math |= tag == Tag::Math && !parent_dead;
        // The self-closing flag counts for foreign (svg, math) and unknown elements only.
        let void = tag.is_void()
            || (self_closing
                && (matches!(tag, Tag::Other | Tag::Svg) || tag.is_mathml() || parent_dead));
        if parent_dead {
            if !void {
                self.push_open(Open {
                    node: NONE,
                    tag,
                    dead: true,
                });
            }
            return;
        }
        let mut a = Attrs::default();
        let mut any = false;
        let mut hidden = false;
        let mut hidden_attr = false;
        // Hidden by `display:none`, `visibility:hidden` or `opacity:0` alone.
        let mut toggled = false;
        let mut aria_hidden = false;
        let mut for_good = false;
        // Hidden by a style an accordion uses for a closed panel (a zero height).
        let mut collapsed = false;
        let mut controls: Option<&str> = None;
        let mut expands = false;
        // A declarative shadow root (`<template shadowrootmode=open>`, server-rendered web
        // components): the browser renders what it holds in place of the host's children.
        let mut shadow_root = false;
        let mut srcset: Option<&str> = None;
        // A formula's `<annotation>` in TeX; one in another notation is not shown.
        let mut tex = false;
        for at in raw {
            let n = at.name;
            let set = |s: &mut Builder, v: &str| -> Box<str> { s.decode(v).into_boxed_str() };
            if n.eq_ignore_ascii_case("class") {
                a.class = set(self, at.value);
                any = true;
            } else if n.eq_ignore_ascii_case("id") {
                a.id = set(self, at.value);
                any = true;
            } else if n.eq_ignore_ascii_case("href") {
                a.href = Some(set(self, at.value));
                any = true;
            } else if n.eq_ignore_ascii_case("src") {
                if a.src.is_none() {
                    a.src = Some(set(self, at.value));
                    any = true;
                }
            } else if n.eq_ignore_ascii_case("data-src")
                || n.eq_ignore_ascii_case("data-lazy-src")
                || n.eq_ignore_ascii_case("data-original")
            {
                let v = set(self, at.value);
                if !v.trim().is_empty() && !v.starts_with("data:") {
                    a.src = Some(v);
                    any = true;
                }
            } else if (n.eq_ignore_ascii_case("srcset") || n.eq_ignore_ascii_case("data-srcset"))
                && matches!(tag, Tag::Img | Tag::Source)
            {
                srcset = srcset.or(Some(at.value));
            } else if n.eq_ignore_ascii_case("colspan") || n.eq_ignore_ascii_case("rowspan") {
                // Spans beyond these are a layout's, or a typo; 0 ("to the end") and junk
                // count as one.
                let v = at.value.trim().parse::<u16>().unwrap_or(1);
                if v > 1 {
                    if n.eq_ignore_ascii_case("colspan") {
                        a.colspan = v.min(MAX_COLSPAN);
                    } else {
                        a.rowspan = v.min(MAX_ROWSPAN);
                    }
                    any = true;
                }
            } else if (tag == Tag::Ol && n.eq_ignore_ascii_case("start"))
                || (tag == Tag::Li && n.eq_ignore_ascii_case("value"))
            {
                // CommonMark writes at most nine digits and no sign; other numbers are
                // left to count from one.
                a.number = at
                    .value
                    .trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|&v| v < MAX_NUMBER);
                any |= a.number.is_some();
            } else if tag == Tag::Math && n.eq_ignore_ascii_case("alttext") {
                a.alt = set(self, at.value);
                any = true;
            } else if tag == Tag::Math && n.eq_ignore_ascii_case("display") {
                a.display_block = at.value.trim().eq_ignore_ascii_case("block");
                any |= a.display_block;
            } else if tag == Tag::Annotation && n.eq_ignore_ascii_case("encoding") {
                tex = is_tex(at.value);
            } else if n.eq_ignore_ascii_case("alt") {
                a.alt = set(self, at.value);
                any = true;
            } else if n.eq_ignore_ascii_case("role") {
                a.role = set(self, at.value);
                any = true;
            } else if n.eq_ignore_ascii_case("data-lang") || n.eq_ignore_ascii_case("data-language")
            {
                a.lang = set(self, at.value);
                any = true;
            } else if n.eq_ignore_ascii_case("itemprop") {
                if at
                    .value
                    .split_ascii_whitespace()
                    .any(|t| t.eq_ignore_ascii_case("articleBody"))
                {
                    a.article_body = true;
                    any = true;
                }
            } else if n.eq_ignore_ascii_case("data-nosnippet") {
                a.nosnippet = true;
                any = true;
            } else if n.eq_ignore_ascii_case("itemtype") {
                self.schema_types(at.value.split_ascii_whitespace().map(|t| {
                    let t = t.trim_end_matches('/');
                    t.rsplit('/').next().unwrap_or(t)
                }));
            } else if n.eq_ignore_ascii_case("hidden") {
                hidden_attr = true;
            } else if tag == Tag::Template
                && (n.eq_ignore_ascii_case("shadowrootmode")
                    || n.eq_ignore_ascii_case("shadowroot"))
            {
                shadow_root = true;
            } else if n.eq_ignore_ascii_case("aria-controls") {
                controls = Some(at.value);
            } else if n.eq_ignore_ascii_case("aria-expanded") {
                expands = true;
            } else if n.eq_ignore_ascii_case("aria-hidden") {
                let v = at.value.trim().eq_ignore_ascii_case("true");
                hidden |= v;
                aria_hidden |= v;
            } else if n.eq_ignore_ascii_case("style") && style_hides(at.value) {
                if style_toggles(at.value) {
                    toggled = true;
                } else {
                    hidden = true;
                    collapsed = style_collapses(at.value);
                    for_good = !collapsed;
                }
            } else if n.eq_ignore_ascii_case("type") && tag == Tag::Input {
            }
        }
        // An image named only by a `srcset` (its own, or its `<picture>`'s `<source>`), or
        // whose `src` is an inline placeholder: the largest candidate.
        match tag {
            Tag::Picture => self.picture_src = None,
            Tag::Source => {
                if let Some(u) = srcset.and_then(largest_candidate) {
                    self.picture_src = Some(self.decode(u).into_boxed_str());
                }
            }
            Tag::Img => {
                let own = srcset.and_then(largest_candidate);
                let picture = self.picture_src.take();
                if a.src
                    .as_deref()
                    .is_none_or(|s| s.trim_start().starts_with("data:"))
                {
                    if let Some(u) = own {
                        a.src = Some(self.decode(u).into_boxed_str());
                        any = true;
                    } else if picture.is_some() {
                        a.src = picture;
                        any = true;
                    }
                }
            }
            _ => {}
        }
        // A disclosure's toggle (`aria-expanded` beside `aria-controls`: accordions, "show
        // more", FAQ questions) names the panel it opens; tabs (`aria-selected`) do not count.
        if let Some(c) = controls.filter(|_| expands) {
            for id in c.split_ascii_whitespace() {
                self.controls.push(id.into());
            }
        }
        // Shown only on paper (sphinx-book-theme's `div.onlyprint`, a second copy of the
        // page's `<h1>`): on no screen, so not the page's text. Nor is a carousel's copy of
        // its own slide, added so it can loop: the slide is in the page already.
        if print_only(&a.class) || super::twins::carousel_clone(&a.class) {
            hidden = true;
            for_good = true;
        }
        // A formula's annotation in a notation other than TeX (MathML content markup, a
        // solver's input) is not what the reader sees, nor what the markdown writes.
        if tag == Tag::Annotation && !tex {
            hidden = true;
            for_good = true;
        }
        // React's streamed server rendering sends each late part of the page as a
        // `<div hidden id="S:n">` that its script moves into place at once: content.
        hidden |= hidden_attr && !(tag == Tag::Div && stream_segment(&a.id));
        // A panel a disclosure may open (a toggle's `aria-controls` names its id, known only
        // at the end), or a tab panel (`reveal` shows those that hold code): hidden by
        // `hidden` or `aria-hidden`, not by a style that hides for good.
        let panel = hidden
            && !for_good
            && (hidden_attr || aria_hidden || collapsed)
            && (!a.id.is_empty() || a.role.eq_ignore_ascii_case("tabpanel") || collapsed)
            && !self.keep_hidden
            && !tag.is_dropped();
        // A hidden <input type=hidden> etc. is dropped anyway; hidden text is dropped unless kept.
        let hidden = hidden && !panel && !self.keep_hidden;
        // Hidden only by a toggled style, or a panel: kept, with its subtree, until `reveal`
        // decides.
        let toggled = (toggled || panel) && !hidden && !self.keep_hidden && !tag.is_dropped();
        // A disclosure's `<button>` (form controls are dropped): its text is the panel's
        // title (a FAQ's question), kept, hidden, until `reveal` knows whether it opened one.
        let label = (tag == Tag::Button && expands && !hidden && !toggled && !self.keep_hidden)
            .then_some(controls)
            .flatten();
        let toggled = toggled || label.is_some();
        let dropped = (tag.is_dropped() && label.is_none() && !shadow_root) || hidden;
        // An `<a>` with only a name (`<a name="top">`, `<a id="s2">`) is no link but a place
        // a link leads to. One with no attribute, a class, a role or a handler may be a
        // script's link or control ("Enlarge image"), and stays one.
        let placeholder = tag == Tag::A
            && !raw.is_empty()
            && raw.iter().all(|at| {
                at.name.eq_ignore_ascii_case("name") || at.name.eq_ignore_ascii_case("id")
            });
        let attrs = if any {
            self.tree.attrs.push(a);
            (self.tree.attrs.len() - 1) as u32
        } else {
            NONE
        };
        if self.stack.len() >= MAX_DEPTH && !void {
            // Flatten: the element is not stored, its content goes to the ancestor.
            if dropped || toggled {
                self.push_open(Open {
                    node: NONE,
                    tag,
                    dead: true,
                });
            } else {
                self.overflow += 1;
            }
            return;
        }
        // The shadow root is stored as the block it renders as; it is closed as a template.
        // A placeholder `<a>` is stored as the inline wrapper it renders as; it is closed
        // as an `<a>`.
        let stored = if shadow_root {
            Tag::Div
        } else if placeholder {
            Tag::Span
        } else {
            tag
        };
        let id = self.append(Kind::Element { tag: stored, attrs }, dropped || toggled);
        if let Some(c) = label {
            self.labels.push((id, c.into()));
        } else if panel {
            self.panels.push(id);
        } else if toggled {
            self.toggled.push(id);
        }
        if !void {
            self.push_open(Open {
                node: id,
                tag,
                dead: dropped,
            });
        }
    }

    fn end_tag(&mut self, name: &str) {
        let tag = Tag::from_name(name);
        if matches!(tag, Tag::Html | Tag::Head | Tag::Body) {
            return;
        }
        // `</br>` is a line break to a browser (HTML's one end tag read as a start tag), not
        // nothing: `one</br>two` is two words on two lines.
        if tag == Tag::Br {
            self.start_tag(name, &[], false);
            return;
        }
        if self.overflow > 0 && !self.stack.last().is_some_and(|o| o.tag == tag && o.dead) {
            self.overflow -= 1;
            return;
        }
        if tag == Tag::Other {
            // Unknown names: only close if the innermost element has this name class.
            if self.stack.len() > 1 && self.stack.last().is_some_and(|o| o.tag == Tag::Other) {
                self.stack.pop();
            }
            return;
        }
        if let Some(i) = self.find_open(tag, &[]) {
            self.pop_to(i);
        }
    }

    fn text(&mut self, mut raw: &'a str) {
        if self.stack.last().is_some_and(|o| o.dead) {
            return;
        }
        // A newline right after `<pre>`'s start tag is not part of its content (HTML's
        // parsing rule: markup puts the code on the line below the tag).
        if let Some(o) = self.stack.last() {
            let n = &self.tree.nodes[o.node as usize];
            if n.first_child == NONE
                && matches!(self.tree.tag(o.node), Some(Tag::Pre | Tag::Textarea))
            {
                raw = raw
                    .strip_prefix("\r\n")
                    .or_else(|| raw.strip_prefix('\n'))
                    .unwrap_or(raw);
            }
        }
        let start = self.tree.text.len();
        decode_into(raw, &mut self.tree.text);
        let end = self.tree.text.len();
        if end == start {
            return;
        }
        // Merge with a preceding text sibling.
        let parent = self.stack.last().map_or(0, |o| o.node);
        let last = self.tree.nodes[parent as usize].last_child;
        if let Some(Node {
            kind: Kind::Text { end: e, .. },
            ..
        }) = self.tree.nodes.get_mut(last as usize)
        {
            if *e as usize == start {
                *e = end as u32;
                return;
            }
        }
        self.append(
            Kind::Text {
                start: start as u32,
                end: end as u32,
            },
            false,
        );
    }

    fn raw_text(&mut self, element: &str, raw: &'a str) {
        match element {
            "script" => {
                self.tree.facts.script_bytes += raw.len();
                let product = std::mem::take(&mut self.ld_json) && self.schema_types(ld_types(raw));
                if let Some(d) = product.then(|| product_description(raw)).flatten() {
                    let f = &mut self.tree.facts;
                    if f.product_description
                        .as_ref()
                        .is_none_or(|o| o.len() < d.len())
                    {
                        f.product_description = Some(d);
                    }
                }
            }
            // The document's title, not an svg <title> (whose parent is dead).
            "title" if self.tree.facts.title.is_none() => {
                let in_svg = self.stack.len() >= 2 && self.stack[self.stack.len() - 2].dead;
                let t = collapse(&self.decode(raw));
                if !t.is_empty() && !in_svg {
                    self.tree.facts.title = Some(t);
                }
            }
            _ => {}
        }
    }
}

impl Builder {
    /// Notes the form open around a control a reader fills or presses (not an
    /// `<input type="hidden">`): a form without one is a wrapper (Reddit writes each
    /// comment's text in a `<form class="usertext">` holding only hidden inputs).
    fn note_control(&mut self, tag: Tag, raw: &[RawAttr<'_>]) {
        let hidden_input = tag == Tag::Input
            && raw.iter().any(|a| {
                a.name.eq_ignore_ascii_case("type") && a.value.trim().eq_ignore_ascii_case("hidden")
            });
        if hidden_input {
            return;
        }
        if let Some(form) = self
            .stack
            .iter()
            .rev()
            .find(|o| o.tag == Tag::Form && o.node != NONE)
            .map(|o| o.node)
        {
            if self.tree.facts.control_forms.last() != Some(&form) {
                self.tree.facts.control_forms.push(form);
            }
        }
    }

    /// A disabled checkbox that opens a list item (GFM's task list, as MkDocs, pymdownx
    /// and GitHub render it: `<li><input type=checkbox checked disabled> Done`, maybe in a
    /// `<label>`) marks the item a task, done or not; the form control itself is dropped.
    fn task_box(&mut self, raw: &[RawAttr<'_>]) {
        let has = |name: &str| raw.iter().any(|a| a.name.eq_ignore_ascii_case(name));
        let checkbox = raw.iter().any(|a| {
            a.name.eq_ignore_ascii_case("type") && a.value.trim().eq_ignore_ascii_case("checkbox")
        });
        // Renderers of markdown task lists (GitHub, pymdownx, markdown-it, goldmark,
        // kramdown) write a disabled box; an enabled one is a form's (a shop card's
        // "compare", a comment's fold toggle).
        if !checkbox || !has("disabled") {
            return;
        }
        // The item is open at most two wrappers up, and holds no text yet.
        let Some(li) = self
            .stack
            .iter()
            .rev()
            .take(3)
            .find(|o| o.tag == Tag::Li && !o.dead)
            .map(|o| o.node)
        else {
            return;
        };
        let since = (li as usize + 1)..self.tree.nodes.len();
        if since.len() > 8
            || since.clone().any(|i| {
                self.tree
                    .text_of(i as u32)
                    .is_some_and(|t| !t.trim().is_empty())
            })
        {
            return;
        }
        let node = &mut self.tree.nodes[li as usize];
        let Kind::Element { attrs, .. } = &mut node.kind else {
            return;
        };
        if *attrs == NONE {
            self.tree.attrs.push(Attrs::default());
            *attrs = (self.tree.attrs.len() - 1) as u32;
        }
        let checked = has("checked");
        if let Some(a) = self.tree.attrs.get_mut(*attrs as usize) {
            a.task = Some(checked);
        }
    }

    fn push_open(&mut self, o: Open) {
        self.stack.push(o);
    }

    /// Notes the schema.org types the page declares that tell what kind of page it is:
    /// `DiscussionForumPosting` (forum threads: Discourse, Invision, XenForo) and `QAPage`
    /// (question-and-answer sites) make a discussion, whose replies are content;
    /// `Product` a product page.
    /// Records the page kinds `types` name; whether one of them is a `Product`.
    fn schema_types<'t>(&mut self, types: impl Iterator<Item = &'t str>) -> bool {
        let mut product = false;
        for t in types {
            let f = &mut self.tree.facts;
            match t {
                "DiscussionForumPosting" | "QAPage" => f.discussion = true,
                "Product" => (f.product, product) = (true, true),
                _ => {}
            }
        }
        product
    }
}

/// Whether an `<annotation>`'s `encoding` is TeX (`application/x-tex`, `TeX`,
/// `application/x-latex`).
fn is_tex(encoding: &str) -> bool {
    let e = encoding.trim().to_ascii_lowercase();
    e.ends_with("tex") || e.ends_with("latex")
}

/// Whether `id` names a segment of React's streamed rendering (`S:` and a hex number).
fn stream_segment(id: &str) -> bool {
    id.strip_prefix("S:")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The longest `description` string of a schema.org `Product` object in a JSON-LD text
/// (at any depth: `@graph`, arrays), parsed with `serde_json`; texts over 1 MiB are not
/// parsed.
fn product_description(json: &str) -> Option<String> {
    use serde_json::Value;
    if json.len() > 1 << 20 {
        return None;
    }
    let root: Value = serde_json::from_str(json.trim()).ok()?;
    let mut best: Option<&str> = None;
    let mut stack = vec![&root];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(o) => {
                let is_product = match o.get("@type") {
                    Some(Value::String(t)) => t == "Product",
                    Some(Value::Array(ts)) => ts.iter().any(|t| t == "Product"),
                    _ => false,
                };
                if let (true, Some(Value::String(d))) = (is_product, o.get("description")) {
                    if best.is_none_or(|b| b.len() < d.len()) {
                        best = Some(d);
                    }
                }
                stack.extend(o.values());
            }
            _ => {}
        }
    }
    best.map(str::to_owned)
}

/// The values of every `"@type"` key of a JSON-LD text (a string or an array of them),
/// read without parsing the JSON: enough to name the page's kind.
fn ld_types(json: &str) -> impl Iterator<Item = &str> {
    json.match_indices("\"@type\"").flat_map(move |(at, key)| {
        let rest = json[at + key.len()..].trim_start();
        let rest = rest.strip_prefix(':').unwrap_or("").trim_start();
        let value = match rest.strip_prefix('[') {
            Some(list) => &list[..list.find(']').unwrap_or(0)],
            None if rest.starts_with('"') => {
                let end = rest[1..].find('"').map_or(0, |e| e + 2);
                &rest[..end]
            }
            None => "",
        };
        value
            .split(',')
            .map(|v| v.trim().trim_matches('"'))
            .filter(|v| !v.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::ld_types;

    #[test]
    fn json_ld_types_are_read_without_parsing() {
        let json = r#"{"@context":"https://schema.org","@graph":[{"@type" : "Product",
            "name":"Mug","category":"Kitchen"},{"@type":["WebPage","QAPage"]},
            {"@type":"Offer","price":"3"}, {"@type": 7}, "@type"]}"#;
        let t: Vec<&str> = ld_types(json).collect();
        assert_eq!(t, ["Product", "WebPage", "QAPage", "Offer"]);
    }
}
