//! A guarded RFC 9309 robots.txt parser and matcher.
//!
//! Why not a crate: `robotstxt` 0.3 misses a UTF-8 BOM, panics on a long multibyte line and
//! is slow on many wildcards; `texting_robots` 0.2 compiles rules with `$` into a
//! size-limited regex and rejects the WHOLE file when one rule is too complex (500
//! wildcards plus `$`), and it matches user-agent lines only when they equal the token
//! exactly. This parser is small, never builds a regex, and matches in time linear in
//! the rule and the path.
//!
//! Guards: only the first [`PARSE_LIMIT`] bytes are parsed (RFC 9309 §2.5 allows 500 KiB);
//! a UTF-8 BOM is skipped; invalid UTF-8 is replaced; an HTML document served as robots.txt
//! yields no rules; runs of `*` collapse; matching is `O(rule + path)` per rule.

use std::time::Duration;

/// The part of a robots.txt file that is parsed (RFC 9309 §2.5: at least 500 KiB).
pub const PARSE_LIMIT: usize = 500 * 1024;

/// Largest crawl delay that is represented (longer values are clamped to this).
const MAX_DELAY_SECS: f64 = 86_400.0;

/// The rules of one robots.txt that apply to one product token.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RobotsRules {
    /// Sorted by specificity: longest pattern first, allow before disallow on ties.
    rules: Vec<Rule>,
    crawl_delay: Option<Duration>,
}

#[derive(Debug, Clone, PartialEq)]
struct Rule {
    allow: bool,
    /// Octets of the normalized pattern, `$` included (RFC 9309: most octets wins).
    len: usize,
    /// Pattern split at `*` (runs collapsed), `$` removed.
    parts: Vec<String>,
    anchored: bool,
}

impl Rule {
    fn new(allow: bool, raw: &str) -> Option<Rule> {
        let pat = normalize_pattern(raw);
        if pat.is_empty() {
            // `Disallow:` with no path disallows nothing; same for an empty allow.
            return None;
        }
        let len = pat.len();
        let (body, anchored) = match pat.strip_suffix('$') {
            Some(b) => (b, true),
            None => (pat.as_str(), false),
        };
        let parts = body.split('*').map(str::to_owned).collect::<Vec<_>>();
        Some(Rule {
            allow,
            len,
            parts,
            anchored,
        })
    }

    /// Glob match with `*` = any sequence and a final `$` = end of path. Greedy leftmost
    /// matching of each literal part is exact for this pattern language and linear.
    fn matches(&self, path: &str) -> bool {
        let parts = &self.parts;
        let first = &parts[0];
        if parts.len() == 1 {
            return if self.anchored {
                path == first
            } else {
                path.starts_with(first.as_str())
            };
        }
        if !path.starts_with(first.as_str()) {
            return false;
        }
        let mut pos = first.len();
        let last = &parts[parts.len() - 1];
        for part in &parts[1..parts.len() - 1] {
            if part.is_empty() {
                continue;
            }
            match path[pos..].find(part.as_str()) {
                Some(i) => pos += i + part.len(),
                None => return false,
            }
        }
        if self.anchored {
            path.len() >= pos + last.len() && path.ends_with(last.as_str())
        } else {
            last.is_empty() || path[pos..].contains(last.as_str())
        }
    }
}

impl RobotsRules {
    /// Rules that allow everything (robots.txt unavailable, 4xx).
    pub fn allow_all() -> Self {
        RobotsRules::default()
    }

    /// Parses `body` for the product token `token` (case-insensitive, e.g. `kb-crawl`).
    ///
    /// Groups (RFC 9309 §2.1): consecutive `user-agent` lines open a group; the rules up to
    /// the next `user-agent` line after a rule belong to it. The groups naming our token are
    /// merged; if none does, the `*` groups are merged; a specific group does not inherit
    /// from `*`. Rules before any `user-agent` line are ignored. `Crawl-delay` (not in the
    /// RFC) is taken from the selected groups, the largest value if several.
    pub fn parse(body: &[u8], token: &str) -> RobotsRules {
        let body = &body[..body.len().min(PARSE_LIMIT)];
        let body = body.strip_prefix(b"\xef\xbb\xbf").unwrap_or(body);
        let text = String::from_utf8_lossy(body);
        if looks_like_html_document(&text) {
            return RobotsRules::allow_all();
        }
        let token = token.trim().to_ascii_lowercase();

        struct Group {
            agents: Vec<String>,
            rules: Vec<(bool, String)>,
            delay: Option<f64>,
        }
        let mut groups: Vec<Group> = Vec::new();
        let mut in_agents = false;
        for raw_line in text.split(['\n', '\r']) {
            let line = match raw_line.find('#') {
                Some(i) => &raw_line[..i],
                None => raw_line,
            };
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let key = key.trim().to_ascii_lowercase();
            let value = value.trim();
            match key.as_str() {
                "user-agent" | "useragent" | "user agent" => {
                    if !in_agents {
                        groups.push(Group {
                            agents: Vec::new(),
                            rules: Vec::new(),
                            delay: None,
                        });
                        in_agents = true;
                    }
                    if let Some(g) = groups.last_mut() {
                        g.agents.push(agent_token(value));
                    }
                }
                "allow" | "disallow" | "dissallow" | "disalow" => {
                    in_agents = false;
                    if let Some(g) = groups.last_mut() {
                        g.rules.push((key == "allow", value.to_owned()));
                    }
                }
                "crawl-delay" | "crawldelay" => {
                    in_agents = false;
                    if let Some(g) = groups.last_mut() {
                        if let Ok(d) = value.parse::<f64>() {
                            if d.is_finite() && d >= 0.0 {
                                g.delay = Some(g.delay.map_or(d, |o: f64| o.max(d)));
                            }
                        }
                    }
                }
                // Sitemap and unknown keys neither open nor close a group.
                _ => {}
            }
        }

        let ours: Vec<&Group> = groups
            .iter()
            .filter(|g| !token.is_empty() && g.agents.contains(&token))
            .collect();
        let selected = if ours.is_empty() {
            groups
                .iter()
                .filter(|g| g.agents.iter().any(|a| a == "*"))
                .collect()
        } else {
            ours
        };

        let mut rules: Vec<Rule> = selected
            .iter()
            .flat_map(|g| g.rules.iter())
            .filter_map(|(allow, pat)| Rule::new(*allow, pat))
            .collect();
        // Most octets first; on a tie allow (true) first.
        rules.sort_by(|a, b| b.len.cmp(&a.len).then(b.allow.cmp(&a.allow)));
        let crawl_delay = selected
            .iter()
            .filter_map(|g| g.delay)
            .fold(None, |m: Option<f64>, d| Some(m.map_or(d, |m| m.max(d))))
            .map(|d| Duration::from_secs_f64(d.min(MAX_DELAY_SECS)));
        RobotsRules { rules, crawl_delay }
    }

    /// Whether `path_and_query` (`/a/b?c`, as in a URL) may be fetched. `/robots.txt` is
    /// always allowed; no matching rule allows.
    pub fn allowed(&self, path_and_query: &str) -> bool {
        let path = normalize_path(path_and_query);
        if path == "/robots.txt" {
            return true;
        }
        self.rules
            .iter()
            .find(|r| r.matches(&path))
            .is_none_or(|r| r.allow)
    }

    /// The `Crawl-delay` of the selected group, if any.
    pub fn crawl_delay(&self) -> Option<Duration> {
        self.crawl_delay
    }

    /// Number of rules that apply.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// No rule applies (everything allowed).
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
}

/// The product token of a user-agent line: up to the first `/` or whitespace, lowercase
/// (`Googlebot/2.1 (+http://…)` → `googlebot`).
fn agent_token(value: &str) -> String {
    value
        .split(|c: char| c == '/' || c.is_whitespace())
        .next()
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// The product token of a full user agent string (`kb-crawl/0.1 (+…)` → `kb-crawl`).
pub fn product_token(user_agent: &str) -> String {
    agent_token(user_agent.trim())
}

fn looks_like_html_document(text: &str) -> bool {
    let t = text.trim_start();
    let head: String = t.chars().take(15).collect::<String>().to_ascii_lowercase();
    head.starts_with("<!doctype")
        || head.starts_with("<html")
        || head.starts_with("<head")
        || head.starts_with("<body")
        || head.starts_with("<?xml")
        || head.starts_with("<!--")
}

/// Percent-encodes everything outside printable ASCII and upper-cases existing `%xx`
/// escapes, so a pattern and a URL path compare octet for octet (RFC 9309 §2.2.2).
fn normalize_pattern(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let bytes = raw.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%'
            && bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
            && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
        {
            out.push('%');
            out.push(bytes[i + 1].to_ascii_uppercase() as char);
            out.push(bytes[i + 2].to_ascii_uppercase() as char);
            i += 3;
            continue;
        }
        if b.is_ascii_graphic() {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
        i += 1;
    }
    out
}

fn normalize_path(p: &str) -> String {
    let p = if p.is_empty() { "/" } else { p };
    normalize_pattern(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(txt: &str) -> RobotsRules {
        RobotsRules::parse(txt.as_bytes(), "kb-crawl")
    }

    #[test]
    fn robots_longest_match_wins() {
        let r = rules("User-agent: *\nDisallow: /a\nAllow: /a/b\nDisallow: /a/b/c\n");
        assert!(!r.allowed("/a"));
        assert!(!r.allowed("/a/x"));
        assert!(r.allowed("/a/b"));
        assert!(r.allowed("/a/b/x"));
        assert!(!r.allowed("/a/b/c"));
        assert!(r.allowed("/b"));
    }

    #[test]
    fn robots_allow_wins_ties() {
        let r = rules("User-agent: *\nDisallow: /page\nAllow: /page\n");
        assert!(r.allowed("/page"));
        let r = rules("User-agent: *\nAllow: /p*\nDisallow: /p$\n");
        // Same octet count (3): allow wins.
        assert!(r.allowed("/p"));
    }

    #[test]
    fn robots_wildcard_and_dollar() {
        let r = rules("User-agent: *\nDisallow: /*.pdf$\nDisallow: /private*/secret\nAllow: /$\nDisallow: /\n");
        assert!(r.allowed("/"));
        assert!(!r.allowed("/index.html"));
        let r = rules("User-agent: *\nDisallow: /*.pdf$\nDisallow: /private*/secret\n");
        assert!(!r.allowed("/docs/file.pdf"));
        assert!(r.allowed("/docs/file.pdf?x=1"));
        assert!(r.allowed("/docs/file.pdfx"));
        assert!(!r.allowed("/private-area/x/secret"));
        assert!(!r.allowed("/private/secret/more"));
        assert!(r.allowed("/private/public"));
        let r = rules("User-agent: *\nDisallow: /a$\n");
        assert!(!r.allowed("/a"));
        assert!(r.allowed("/ab"));
        let r = rules("User-agent: *\nDisallow: /*?sort=\n");
        assert!(!r.allowed("/list?sort=asc"));
        assert!(r.allowed("/list?page=2"));
        let r = rules("User-agent: *\nDisallow: /a**b***c\n");
        assert!(!r.allowed("/aXbYc"));
        assert!(r.allowed("/aXc"));
        let r = rules("User-agent: *\nDisallow: /x*ab$\n");
        // The anchored tail must not overlap the middle match.
        assert!(!r.allowed("/xab"));
        assert!(r.allowed("/xa"));
    }

    #[test]
    fn robots_specific_group_does_not_inherit_star() {
        let r = rules("User-agent: *\nDisallow: /a\n\nUser-agent: kb-crawl\nDisallow: /b\n");
        assert!(r.allowed("/a"));
        assert!(!r.allowed("/b"));
        let r = rules("User-agent: other\nDisallow: /\n\nUser-agent: *\nDisallow: /a\n");
        assert!(!r.allowed("/a"));
        assert!(r.allowed("/b"));
    }

    #[test]
    fn robots_product_token_matching() {
        // Case-insensitive, version and comment ignored, groups for us merged.
        let r = rules("User-agent: KB-Crawl/1.0 (+x)\nDisallow: /b\n\nUser-agent: other\nUser-agent: kb-crawl\nDisallow: /c\n");
        assert!(!r.allowed("/b"));
        assert!(!r.allowed("/c"));
        // A prefix of our token is not our token.
        let r = rules("User-agent: kb\nDisallow: /\n");
        assert!(r.allowed("/x"));
        assert_eq!(product_token("kb-crawl/0.1.0 (+https://x)"), "kb-crawl");
        assert_eq!(product_token("MyBot"), "mybot");
    }

    #[test]
    fn robots_groups_with_several_agents_and_rules_before_agents() {
        let txt = "Disallow: /ignored\nUser-agent: a\nUser-agent: kb-crawl\nDisallow: /x\nSitemap: https://e/s.xml\nDisallow: /y\nUser-agent: b\nDisallow: /z\n";
        let r = rules(txt);
        assert!(r.allowed("/ignored"));
        assert!(!r.allowed("/x"));
        assert!(!r.allowed("/y"));
        assert!(r.allowed("/z"));
    }

    #[test]
    fn robots_empty_disallow_allows_everything() {
        let r = rules("User-agent: *\nDisallow:\n");
        assert!(r.allowed("/anything"));
        assert!(r.is_empty());
    }

    #[test]
    fn robots_txt_itself_always_allowed() {
        let r = rules("User-agent: *\nDisallow: /\n");
        assert!(!r.allowed("/"));
        assert!(r.allowed("/robots.txt"));
    }

    #[test]
    fn robots_bom_is_stripped() {
        let r = RobotsRules::parse(
            b"\xef\xbb\xbfUser-agent: *\nDisallow: /private\n",
            "kb-crawl",
        );
        assert!(!r.allowed("/private"));
    }

    #[test]
    fn robots_comments_crlf_and_case() {
        let r = rules("# hi\r\nUSER-AGENT: * # all\r\nDISALLOW: /a # no\r\nallow: /a/ok\r\n");
        assert!(!r.allowed("/a"));
        assert!(r.allowed("/a/ok"));
    }

    #[test]
    fn robots_html_served_as_robots_allows_all() {
        let r = rules("<!DOCTYPE html>\n<html><body>\nUser-agent: *\nDisallow: /\n</body></html>");
        assert!(r.allowed("/"));
        let r = rules("<html><head><title>404</title></head><body>Disallow: /</body></html>");
        assert!(r.allowed("/x"));
    }

    #[test]
    fn robots_percent_encoding_and_non_ascii() {
        let r = rules("User-agent: *\nDisallow: /caf\u{e9}\nDisallow: /a%2fb\n");
        assert!(!r.allowed("/caf%C3%A9"));
        assert!(!r.allowed("/caf%c3%a9/menu"));
        assert!(!r.allowed("/a%2Fb"));
    }

    #[test]
    fn robots_long_multibyte_line_is_handled() {
        let long: String = "\u{1F600}\u{e9}\u{4e2d}".repeat(20_000 / 3 + 1);
        assert!(long.chars().count() >= 20_000);
        let txt = format!("User-agent: *\nDisallow: /{long}\nDisallow: /x\n# {long}\n{long}\n");
        let r = rules(&txt);
        assert!(!r.allowed("/x"));
        assert!(r.allowed("/y"));
        let url_path = format!("/{}", normalize_pattern(&long));
        assert!(!r.allowed(&url_path));
    }

    #[test]
    fn robots_500_wildcards_are_correct_and_fast() {
        let mut pat = String::from("/");
        for i in 0..500 {
            pat.push_str(&format!("a{}*", i % 10));
        }
        let txt = format!("User-agent: *\nDisallow: {pat}$\nDisallow: {pat}z\nAllow: /\n");
        let r = rules(&txt);
        assert_eq!(r.len(), 3);
        let matching: String =
            "/".to_string() + &(0..500).map(|i| format!("a{}", i % 10)).collect::<String>();
        let non_matching: String = "/".to_string() + &"a0".repeat(5000);
        let start = std::time::Instant::now();
        for _ in 0..20 {
            assert!(!r.allowed(&matching));
            assert!(r.allowed(&non_matching));
        }
        // A loose sanity bound (40 checks); the matcher is linear, see Rule::matches.
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn robots_only_first_500_kib_parsed() {
        let mut txt = String::from("User-agent: *\nDisallow: /early\n");
        while txt.len() < 5 * 1024 * 1024 {
            txt.push_str("# padding padding padding padding padding padding padding\n");
        }
        txt.push_str("Disallow: /late\n");
        let r = rules(&txt);
        assert!(!r.allowed("/early"));
        assert!(r.allowed("/late"));
    }

    #[test]
    fn robots_crawl_delay_parsed_and_guarded() {
        let r = rules("User-agent: *\nCrawl-delay: 2.5\nDisallow: /x\n");
        assert_eq!(r.crawl_delay(), Some(Duration::from_millis(2500)));
        let r = rules("User-agent: *\nCrawl-delay: 1e300\n");
        assert_eq!(r.crawl_delay(), Some(Duration::from_secs(86_400)));
        for bad in ["-1", "NaN", "inf", "soon"] {
            let r = rules(&format!("User-agent: *\nCrawl-delay: {bad}\n"));
            assert_eq!(r.crawl_delay(), None, "{bad}");
        }
        let r = rules("User-agent: *\nCrawl-delay: 9\n\nUser-agent: kb-crawl\nDisallow: /x\n");
        assert_eq!(r.crawl_delay(), None, "specific group does not inherit");
    }
}
