//! Include and exclude patterns: globs on a URL's path (and query) that narrow a crawl.
//!
//! # Syntax
//! Two separate lists, `include` and `exclude`. A pattern is a glob matched against the
//! whole path, starting with `/` (`/registrar/**`), `*` (`**/print/**`) or `{`:
//! - `*` matches within one path segment (never `/`), `**` any number of segments, `?` one
//!   character, `[abc]` / `[!abc]` a class, `{a,b}` alternatives (globset's syntax with
//!   `literal_separator`); `[?]` matches a literal `?`.
//! - `/a/**` also matches `/a` itself, so a crawl rooted at `/a` may include `/a/**`.
//! - A pattern matches a URL when it matches the URL's path (`/a/b`) or, when the URL has a
//!   query, its path and query (`/a/b?print=1`), so `**/print/**` excludes
//!   `/x/print/y?page=2` and `/search[?]*` matches any query on `/search`.
//!
//! A URL is in the patterns when no include is given or it matches at least one include,
//! and it matches no exclude: exclude wins.

use std::fmt;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use url::Url;

use crate::error::{Error, Result};

/// Most patterns accepted in one list.
pub const MAX_PATTERNS: usize = 100;
/// Longest pattern accepted, in bytes.
pub const MAX_PATTERN_LEN: usize = 512;

/// Compiled include and exclude patterns (the syntax is in the README, *Include and exclude
/// patterns*).
#[derive(Clone, Default)]
pub struct UrlPatterns {
    include: Option<GlobSet>,
    exclude: Option<GlobSet>,
}

impl fmt::Debug for UrlPatterns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UrlPatterns")
            .field("include", &self.include.as_ref().map(GlobSet::len))
            .field("exclude", &self.exclude.as_ref().map(GlobSet::len))
            .finish()
    }
}

impl UrlPatterns {
    /// Compiles the two lists. The error names the list (`include` or `exclude`) and the
    /// pattern.
    pub fn new(include: &[String], exclude: &[String]) -> Result<Self> {
        Ok(UrlPatterns {
            include: compile("include", include)?,
            exclude: compile("exclude", exclude)?,
        })
    }

    /// Patterns that let everything through.
    pub fn none() -> Self {
        Self::default()
    }

    /// Whether no pattern is set.
    pub fn is_empty(&self) -> bool {
        self.include.is_none() && self.exclude.is_none()
    }

    /// Whether `url` is in: it matches an include (or none is given) and no exclude.
    pub fn allows(&self, url: &Url) -> bool {
        let path = url.path();
        let full = url.query().map(|q| format!("{path}?{q}"));
        let hit =
            |set: &GlobSet| set.is_match(path) || full.as_deref().is_some_and(|f| set.is_match(f));
        if self.exclude.as_ref().is_some_and(hit) {
            return false;
        }
        self.include.as_ref().is_none_or(hit)
    }
}

fn compile(field: &str, patterns: &[String]) -> Result<Option<GlobSet>> {
    if patterns.is_empty() {
        return Ok(None);
    }
    if patterns.len() > MAX_PATTERNS {
        return Err(Error::invalid(format!(
            "{field}: {} patterns is above the limit of {MAX_PATTERNS}",
            patterns.len()
        )));
    }
    let mut set = GlobSetBuilder::new();
    for raw in patterns {
        let p = raw.trim();
        let bad = |why: &str| {
            Error::invalid(format!(
                "{field}: pattern '{}' {why}",
                p.chars().take(80).collect::<String>()
            ))
        };
        if p.len() > MAX_PATTERN_LEN {
            return Err(bad(&format!("is longer than {MAX_PATTERN_LEN} bytes")));
        }
        if p.starts_with('!') {
            return Err(bad(
                "starts with '!': list exclusions under exclude, without the '!'",
            ));
        }
        if !p.starts_with(['/', '*', '{']) {
            return Err(bad(
                "must start with '/' or '*' (it is matched against the URL path)",
            ));
        }
        let mut add = |glob: &str| -> Result<()> {
            let g = GlobBuilder::new(glob)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map_err(|e| bad(&format!("is not a valid glob ({})", e.kind())))?;
            set.add(g);
            Ok(())
        };
        add(p)?;
        // `/a/**` also covers `/a` itself.
        if let Some(base) = p.strip_suffix("/**") {
            if !base.is_empty() {
                add(base)?;
            }
        }
    }
    let set = set
        .build()
        .map_err(|e| Error::invalid(format!("{field}: patterns could not be compiled ({e})")))?;
    Ok(Some(set))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(&format!("https://example.com{s}")).unwrap()
    }

    fn p(include: &[&str], exclude: &[&str]) -> UrlPatterns {
        let v = |l: &[&str]| l.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        UrlPatterns::new(&v(include), &v(exclude)).unwrap()
    }

    #[test]
    fn no_patterns_allow_everything() {
        let none = UrlPatterns::none();
        assert!(none.is_empty());
        assert!(none.allows(&u("/anything?x=1")));
    }

    #[test]
    fn include_keeps_only_matching_paths() {
        let s = p(&["/registrar/**"], &[]);
        assert!(s.allows(&u("/registrar")));
        assert!(s.allows(&u("/registrar/")));
        assert!(s.allows(&u("/registrar/forms/a.html")));
        assert!(s.allows(&u("/registrar/forms?page=2")));
        assert!(!s.allows(&u("/registrarx")));
        assert!(!s.allows(&u("/admissions/registrar")));
        assert!(!s.allows(&u("/")));
    }

    #[test]
    fn star_stays_within_one_segment() {
        let s = p(&["/docs/*.html"], &[]);
        assert!(s.allows(&u("/docs/a.html")));
        assert!(s.allows(&u("/docs/a.html?v=2")));
        assert!(!s.allows(&u("/docs/sub/a.html")));
    }

    #[test]
    fn exclude_wins_over_include() {
        let s = p(&["/registrar/**"], &["**/print/**"]);
        assert!(s.allows(&u("/registrar/forms")));
        assert!(!s.allows(&u("/registrar/print/forms")));
        assert!(!s.allows(&u("/registrar/print")));
        assert!(!s.allows(&u("/registrar/print/x?y=1")));
        let only_exclude = p(&[], &["**/print/**"]);
        assert!(only_exclude.allows(&u("/a/b")));
        assert!(!only_exclude.allows(&u("/print/b")));
    }

    #[test]
    fn query_can_be_matched() {
        let s = p(&[], &["/search[?]*", "**/*[?]*print=1*"]);
        assert!(s.allows(&u("/search")));
        assert!(!s.allows(&u("/search?q=x")));
        assert!(!s.allows(&u("/a/b?x=2&print=1")));
        assert!(s.allows(&u("/a/b?x=2")));
    }

    #[test]
    fn invalid_patterns_name_the_field_and_the_pattern() {
        let v = |s: &str| vec![s.to_owned()];
        for (inc, exc, field, pat) in [
            (v("/a/[b"), vec![], "include", "/a/[b"),
            (vec![], v("/{a,b"), "exclude", "/{a,b"),
            (v("registrar/**"), vec![], "include", "registrar/**"),
            (v("!**/print/**"), vec![], "include", "!**/print/**"),
        ] {
            let e = UrlPatterns::new(&inc, &exc).unwrap_err();
            let m = e.to_string();
            assert!(
                m.starts_with(&format!("invalid_input: {field}: pattern '{pat}'")),
                "{m}"
            );
        }
        let many = vec!["/a".to_owned(); MAX_PATTERNS + 1];
        let e = UrlPatterns::new(&many, &[]).unwrap_err();
        assert!(e.to_string().contains("include"), "{e}");
    }
}
