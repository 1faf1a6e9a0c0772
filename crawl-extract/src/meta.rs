//! Page metadata and link discovery.

use super::markdown::resolve;
use super::tree::{Kind, Tag, Tree};
use super::{Extracted, Link, MetaRobots};
use std::collections::HashSet;
use url::Url;

fn clean(s: &str) -> Option<String> {
    let t = s.split_whitespace().collect::<Vec<_>>().join(" ");
    (!t.is_empty()).then_some(t)
}

/// The URL relative links resolve against: `<base href>` if valid, else the page URL.
pub(crate) fn base_url(tree: &Tree, page: &Url) -> Url {
    tree.facts
        .base_href
        .as_deref()
        .and_then(|b| page.join(b.trim()).ok())
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .unwrap_or_else(|| page.clone())
}

fn first_h1(tree: &Tree) -> Option<String> {
    let (i, _) = tree.nodes.iter().enumerate().find(|&(i, n)| {
        !n.hidden
            && matches!(n.kind, Kind::Element { tag: Tag::H1, .. })
            && !super::score::is_logo_h1(tree, i as u32)
    })?;
    let end = super::markdown::subtree_end(tree, i as u32);
    let mut s = String::new();
    for j in i as u32 + 1..end {
        if let Some(t) = tree.text_of(j) {
            s.push_str(t);
            s.push(' ');
        }
    }
    clean(&s)
}

/// Everything but the markdown.
pub(crate) fn metadata(tree: &Tree, base: &Url) -> Extracted {
    let f = &tree.facts;
    let title = f
        .title
        .as_deref()
        .and_then(clean)
        .or_else(|| f.og_title.as_deref().and_then(clean))
        .or_else(|| first_h1(tree));
    let description = f
        .description
        .as_deref()
        .and_then(clean)
        .or_else(|| f.og_description.as_deref().and_then(clean));
    let canonical = f
        .canonical
        .as_deref()
        .and_then(|c| resolve(base, c))
        .filter(|u| matches!(u.scheme(), "http" | "https"));
    let language = f
        .html_lang
        .as_deref()
        .and_then(clean)
        .or_else(|| f.content_language.as_deref().and_then(clean));
    let mut meta_robots = MetaRobots::default();
    for d in f.robots.as_deref().unwrap_or("").split(',') {
        match d.trim().to_ascii_lowercase().as_str() {
            "noindex" => meta_robots.noindex = true,
            "nofollow" => meta_robots.nofollow = true,
            "none" => {
                meta_robots.noindex = true;
                meta_robots.nofollow = true;
            }
            _ => {}
        }
    }
    let mut links: Vec<Link> = f
        .links
        .iter()
        .filter_map(|(href, nofollow)| {
            let mut u = resolve(base, href).filter(|u| matches!(u.scheme(), "http" | "https"))?;
            u.set_fragment(None);
            Some(Link {
                url: u,
                nofollow: *nofollow,
            })
        })
        .collect();
    // Dedup on borrowed strings: a page with 300,000 links costs no second copy of each.
    let keep: Vec<bool> = {
        let mut seen: HashSet<&str> = HashSet::with_capacity(links.len());
        links.iter().map(|l| seen.insert(l.url.as_str())).collect()
    };
    let mut k = keep.into_iter();
    links.retain(|_| k.next().unwrap_or(false));
    let text_len = tree
        .nodes
        .iter()
        .zip(hidden_mask(tree))
        .filter(|(_, h)| !h)
        .filter_map(|(n, _)| match n.kind {
            Kind::Text { start, end } => tree.text.get(start as usize..end as usize),
            Kind::Element { .. } => None,
        })
        .map(|t| t.chars().filter(|c| !c.is_whitespace()).count())
        .sum();
    Extracted {
        markdown: String::new(),
        title,
        description,
        canonical,
        language,
        links,
        meta_robots,
        text_len,
        script_bytes: f.script_bytes,
        script_count: f.script_count,
    }
}

/// Per node: it or an ancestor is hidden.
fn hidden_mask(tree: &Tree) -> Vec<bool> {
    let mut m = vec![false; tree.nodes.len()];
    for i in 0..tree.nodes.len() {
        let n = &tree.nodes[i];
        m[i] = n.hidden || (n.parent as usize) < i && m[n.parent as usize];
    }
    m
}
