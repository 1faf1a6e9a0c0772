//! Site-template learning: blocks of markdown that repeat across many pages of a
//! site (menus, footers, boilerplate notices) are recognised by a fingerprint and
//! removed. It works on the stored markdown only, so it never needs a second fetch.

use sha2::{Digest, Sha256};
use std::collections::HashMap;

/// Learns which markdown blocks are site template.
///
/// A block is a run of lines separated by blank lines; its fingerprint is a 64-bit
/// hash of its lower-cased, whitespace-collapsed text. A block is template when it
/// appears on at least `min_pages` pages and on at least `min_fraction` of the pages
/// observed.
#[derive(Debug, Clone, Default)]
pub struct TemplateLearner {
    min_pages: usize,
    min_fraction: f64,
    pages: usize,
    /// fingerprint -> (pages containing it, first-seen order, block text). The text
    /// is kept only once the block has been seen on a second page (or on the first
    /// when `min_pages` is 1), so memory grows with the number of distinct blocks,
    /// not with the site's text.
    blocks: HashMap<u64, (usize, usize, Option<Box<str>>)>,
}

fn fingerprint(block: &str) -> Option<u64> {
    let norm = block
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase();
    if norm.is_empty() {
        return None;
    }
    let d = Sha256::digest(norm.as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    Some(u64::from_le_bytes(b))
}

/// Blank-line separated blocks of `markdown`, fences kept whole.
fn blocks(markdown: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut in_fence = false;
    let mut pos = 0;
    for line in markdown.split_inclusive('\n') {
        let t = line.trim();
        if t.starts_with("```") {
            in_fence = !in_fence;
        }
        if t.is_empty() && !in_fence {
            if let Some(s) = start.take() {
                out.push(markdown[s..pos].trim_end());
            }
        } else if start.is_none() {
            start = Some(pos);
        }
        pos += line.len();
    }
    if let Some(s) = start {
        out.push(markdown[s..].trim_end());
    }
    out
}

impl TemplateLearner {
    /// A learner for which a block is template when it appears on `min_pages` pages
    /// and on `min_fraction` (0..=1) of the pages observed.
    pub fn new(min_pages: usize, min_fraction: f64) -> Self {
        TemplateLearner {
            min_pages: min_pages.max(1),
            min_fraction,
            ..Default::default()
        }
    }

    /// Records one page's markdown (call once per page).
    pub fn observe(&mut self, markdown: &str) {
        self.pages += 1;
        let mut seen = std::collections::HashSet::new();
        for b in blocks(markdown) {
            if let Some(fp) = fingerprint(b) {
                if seen.insert(fp) {
                    let order = self.blocks.len();
                    let e = self.blocks.entry(fp).or_insert((0, order, None));
                    e.0 += 1;
                    if e.2.is_none() && e.0 >= self.min_pages.min(2) {
                        e.2 = Some(b.into());
                    }
                }
            }
        }
    }

    fn is_template_fp(&self, fp: u64) -> bool {
        self.blocks.get(&fp).is_some_and(|&(n, _, _)| {
            n >= self.min_pages
                && self.pages > 0
                && n as f64 >= self.min_fraction * self.pages as f64
        })
    }

    /// Whether `block` (compared by fingerprint) is template.
    pub fn is_template_block(&self, block: &str) -> bool {
        fingerprint(block).is_some_and(|fp| self.is_template_fp(fp))
    }

    /// `markdown` without its template blocks.
    pub fn strip(&self, markdown: &str) -> String {
        let kept: Vec<&str> = blocks(markdown)
            .into_iter()
            .filter(|b| !self.is_template_block(b))
            .collect();
        let mut s = kept.join("\n\n");
        if !s.is_empty() {
            s.push('\n');
        }
        s
    }

    /// The site-level document: each template block once, in first-seen order.
    pub fn template_markdown(&self) -> String {
        let mut t: Vec<(usize, &str)> = self
            .blocks
            .iter()
            .filter(|(fp, _)| self.is_template_fp(**fp))
            .filter_map(|(_, (_, order, text))| Some((*order, text.as_deref()?)))
            .collect();
        t.sort_by_key(|v| v.0);
        let mut s = t.iter().map(|v| v.1).collect::<Vec<_>>().join("\n\n");
        if !s.is_empty() {
            s.push('\n');
        }
        s
    }

    /// Number of pages observed.
    pub fn pages_observed(&self) -> usize {
        self.pages
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(body: &str) -> String {
        format!("[Home](https://e.x/) [About](https://e.x/a)\n\n{body}\n\n© 2024 Example Inc.\nAll rights reserved.\n")
    }

    #[test]
    fn learns_and_strips_repeated_blocks() {
        let mut l = TemplateLearner::new(3, 0.5);
        for i in 0..4 {
            l.observe(&page(&format!("Unique article number {i}.")));
        }
        assert_eq!(l.pages_observed(), 4);
        assert!(l.is_template_block("©   2024 EXAMPLE Inc.\nAll rights reserved."));
        assert!(!l.is_template_block("Unique article number 1."));
        assert_eq!(l.strip(&page("Fresh text.")), "Fresh text.\n");
        assert_eq!(
            l.template_markdown(),
            "[Home](https://e.x/) [About](https://e.x/a)\n\n© 2024 Example Inc.\nAll rights reserved.\n"
        );
    }

    #[test]
    fn thresholds_apply() {
        let mut l = TemplateLearner::new(3, 0.5);
        l.observe(&page("a"));
        l.observe(&page("b"));
        // Seen on 2 pages only: below min_pages.
        assert!(!l.is_template_block("© 2024 Example Inc.\nAll rights reserved."));
        let mut f = TemplateLearner::new(2, 0.9);
        for i in 0..10 {
            f.observe(if i < 5 {
                "shared notice\n\nbody"
            } else {
                "other"
            });
        }
        // 5 of 10 pages is below the 90 % fraction.
        assert!(!f.is_template_block("shared notice"));
        assert!(f.template_markdown().is_empty());
    }

    #[test]
    fn repeated_block_within_one_page_counts_once_and_fences_stay_whole() {
        let mut l = TemplateLearner::new(2, 0.1);
        l.observe("x\n\nx\n\n```\ncode\n\nmore\n```");
        assert!(!l.is_template_block("x"));
        l.observe("```\ncode\n\nmore\n```");
        assert!(l.is_template_block("```\ncode\n\nmore\n```"));
        assert_eq!(l.strip("keep\n\n```\ncode\n\nmore\n```\n"), "keep\n");
    }

    #[test]
    fn text_is_kept_only_for_blocks_seen_twice() {
        let mut l = TemplateLearner::new(2, 0.0);
        l.observe("once only\n\nshared");
        l.observe("shared\n\nsecond page");
        let kept: Vec<&str> = l.blocks.values().filter_map(|v| v.2.as_deref()).collect();
        assert_eq!(kept, ["shared"]);
        assert_eq!(l.blocks.len(), 3);
        assert_eq!(l.template_markdown(), "shared\n");
        // With min_pages 1 every block is template at once, so its text is kept.
        let mut one = TemplateLearner::new(1, 0.0);
        one.observe("solo");
        assert_eq!(one.template_markdown(), "solo\n");
    }
}
