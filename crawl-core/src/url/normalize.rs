use url::Url;

/// Query parameters that never change a page's content and are removed.
const TRACKING: &[&str] = &[
    "fbclid",
    "gclid",
    "dclid",
    "gbraid",
    "wbraid",
    "msclkid",
    "yclid",
    "mc_cid",
    "mc_eid",
    "_ga",
    "_gl",
    "igshid",
    "ref_src",
    "phpsessid",
    "jsessionid",
    "sid",
    "sessionid",
    "session_id",
    "aspsessionid",
    "cfid",
    "cftoken",
    "zanpid",
    "_hsenc",
    "_hsmi",
    "oly_anon_id",
    "oly_enc_id",
    "vero_id",
    "__s",
    "mkt_tok",
];

fn is_tracking(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.starts_with("utm_") || n.starts_with("pk_") || TRACKING.contains(&n.as_str())
}

/// The canonical form of a URL, so each page is fetched once: lowercase scheme and host,
/// default port removed, dot segments resolved, fragment dropped, percent-escapes of
/// unreserved characters decoded and hex in the remaining escapes uppercased, `;jsessionid=`
/// path parameters, tracking and session parameters removed, query parameters sorted, an
/// empty query dropped. Returns `None` for non-http(s) URLs.
pub fn normalize(url: &Url) -> Option<Url> {
    if url.scheme() != "http" && url.scheme() != "https" {
        return None;
    }
    let mut u = url.clone();
    u.set_fragment(None);
    // The url crate already lowercases scheme and host, removes default ports and resolves
    // dot segments (WHATWG); the rest is ours.
    let path = u.path();
    let mut p = normalize_escapes(path);
    if let Some(i) = p.to_ascii_lowercase().find(";jsessionid=") {
        p.truncate(i);
    }
    if p != u.path() {
        u.set_path(&p);
    }
    if let Some(q) = u.query() {
        let mut pairs: Vec<(String, String)> = q
            .split('&')
            .filter(|s| !s.is_empty())
            .map(|kv| match kv.split_once('=') {
                Some((k, v)) => (normalize_escapes(k), normalize_escapes(v)),
                None => (normalize_escapes(kv), String::new()),
            })
            .filter(|(k, _)| !is_tracking(k))
            .collect();
        pairs.sort();
        if pairs.is_empty() {
            u.set_query(None);
        } else {
            let q: Vec<String> = pairs
                .into_iter()
                .map(|(k, v)| if v.is_empty() { k } else { format!("{k}={v}") })
                .collect();
            u.set_query(Some(&q.join("&")));
        }
    }
    Some(u)
}

/// Decodes escapes of unreserved characters (`A-Za-z0-9-._~`) and uppercases the hex of the
/// others.
fn normalize_escapes(s: &str) -> String {
    if !s.contains('%') {
        return s.to_owned();
    }
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let h = (b[i + 1] as char).to_digit(16);
            let l = (b[i + 2] as char).to_digit(16);
            if let (Some(h), Some(l)) = (h, l) {
                let c = (h * 16 + l) as u8;
                if c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~') {
                    out.push(c as char);
                } else {
                    out.push('%');
                    out.push((b[i + 1] as char).to_ascii_uppercase());
                    out.push((b[i + 2] as char).to_ascii_uppercase());
                }
                i += 3;
                continue;
            }
        }
        // Safe: we only split at ASCII bytes, so this is a char boundary walk.
        let ch_len = s[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&s[i..i + ch_len]);
        i += ch_len;
    }
    out
}

/// Resolves an href found on `base` and normalizes it; `None` for unusable links.
pub fn resolve_link(base: &Url, href: &str) -> Option<Url> {
    let href = href.trim();
    if href.is_empty() || href.starts_with('#') {
        return None;
    }
    normalize(&base.join(href).ok()?)
}

/// The dedup key of a normalized URL: the URL without its scheme (`http` and `https` of one
/// page are the same page), without a trailing slash on the path (`/docs` and `/docs/` are
/// one page on nearly every site), and with `www.` folded when `fold_www` is set.
pub fn dedup_key(url: &Url, fold_www: bool) -> String {
    let host = url.host_str().unwrap_or_default();
    let host = if fold_www {
        host.strip_prefix("www.").unwrap_or(host)
    } else {
        host
    };
    let mut key = String::with_capacity(url.as_str().len());
    key.push_str(host);
    if let Some(p) = url.port() {
        key.push(':');
        key.push_str(&p.to_string());
    }
    let path = url.path();
    key.push_str(if path.len() > 1 {
        path.trim_end_matches('/')
    } else {
        path
    });
    if let Some(q) = url.query() {
        key.push('?');
        key.push_str(q);
    }
    key
}

/// Why a URL looks like a crawler trap, if it does: over-long URLs, too many path segments,
/// a path segment repeated three times or more, a huge query, or an endless calendar (a URL
/// about dates whose year is more than 5 years back or 2 years ahead of now).
pub fn trap_reason(url: &Url) -> Option<&'static str> {
    trap_reason_at(url, time::OffsetDateTime::now_utc().year())
}

/// [`trap_reason`] with the current year given.
pub fn trap_reason_at(url: &Url, this_year: i32) -> Option<&'static str> {
    if url.as_str().len() > 2048 {
        return Some("trap_url_too_long");
    }
    let segs: Vec<&str> = url.path().split('/').filter(|s| !s.is_empty()).collect();
    if segs.len() > 24 {
        return Some("trap_too_many_segments");
    }
    for (i, s) in segs.iter().enumerate() {
        if segs[i..].iter().filter(|t| *t == s).count() >= 3 {
            return Some("trap_repeating_segments");
        }
    }
    if url
        .query()
        .is_some_and(|q| q.len() > 1024 || q.split('&').count() > 32)
    {
        return Some("trap_query_too_long");
    }
    if is_calendar_trap(url, this_year) {
        return Some("trap_calendar");
    }
    None
}

/// A date-browsing URL (calendar, events, archive by date) far from today: the kind of link
/// an endless "next month" / "previous month" chain produces.
fn is_calendar_trap(url: &Url, this_year: i32) -> bool {
    let text = format!("{}?{}", url.path(), url.query().unwrap_or("")).to_ascii_lowercase();
    const MARKERS: &[&str] = &[
        "calendar", "date", "month", "year", "day", "event", "agenda",
    ];
    if !MARKERS.iter().any(|m| text.contains(m)) {
        return false;
    }
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() {
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i - start == 4 {
                let year: i32 = text[start..i].parse().unwrap_or(0);
                if (1000..3000).contains(&year) && (year < this_year - 5 || year > this_year + 2) {
                    return true;
                }
            }
        } else {
            i += 1;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> String {
        normalize(&Url::parse(s).unwrap()).unwrap().to_string()
    }

    #[test]
    fn normalization_gives_one_form_per_page() {
        assert_eq!(
            n("HTTP://Example.COM:80/a/./b/../c#frag"),
            "http://example.com/a/c"
        );
        assert_eq!(
            n("https://example.com:443/%7Euser/%41"),
            "https://example.com/~user/A"
        );
        assert_eq!(n("https://example.com/a%2fb"), "https://example.com/a%2Fb");
        assert_eq!(
            n("https://example.com/p?b=2&utm_source=x&a=1&fbclid=y&gclid=z"),
            "https://example.com/p?a=1&b=2"
        );
        assert_eq!(
            n("https://example.com/p?utm_medium=x"),
            "https://example.com/p"
        );
        assert_eq!(
            n("https://example.com/p;jsessionid=ABC?x=1"),
            "https://example.com/p?x=1"
        );
        assert_eq!(
            n("https://example.com/p?PHPSESSID=1&q=%7e"),
            "https://example.com/p?q=~"
        );
        assert_eq!(n("https://example.com"), "https://example.com/");
        assert!(normalize(&Url::parse("mailto:a@b.c").unwrap()).is_none());
    }

    #[test]
    fn dedup_key_ignores_scheme_and_www() {
        let a = Url::parse("http://www.example.com/a").unwrap();
        let b = Url::parse("https://example.com/a").unwrap();
        assert_eq!(dedup_key(&a, true), dedup_key(&b, true));
        assert_ne!(dedup_key(&a, false), dedup_key(&b, false));
        let c = Url::parse("https://example.com/a/").unwrap();
        assert_eq!(dedup_key(&c, true), dedup_key(&b, true));
        let root = Url::parse("https://example.com:8080/?q=1").unwrap();
        assert_eq!(dedup_key(&root, true), "example.com:8080/?q=1");
    }

    #[test]
    fn traps_are_named() {
        let t = |s: &str| trap_reason(&Url::parse(s).unwrap());
        assert_eq!(
            t("https://e.com/a/b/a/b/a/b"),
            Some("trap_repeating_segments")
        );
        let many: Vec<String> = (0..30).map(|i| format!("s{i}")).collect();
        assert_eq!(
            t(&format!("https://e.com/{}", many.join("/"))),
            Some("trap_too_many_segments")
        );
        assert_eq!(
            t(&format!("https://e.com/{}", "a".repeat(3000))),
            Some("trap_url_too_long")
        );
        assert_eq!(t("https://e.com/docs/intro/"), None);
        let c = |s: &str| trap_reason_at(&Url::parse(s).unwrap(), 2026);
        assert_eq!(c("https://e.com/calendar/2031/05"), Some("trap_calendar"));
        assert_eq!(
            c("https://e.com/events?month=3&year=1987"),
            Some("trap_calendar")
        );
        assert_eq!(c("https://e.com/calendar/2026/11"), None);
        assert_eq!(c("https://e.com/events?date=2027-01-15"), None);
        // Old years outside date-browsing URLs are ordinary pages (archives, history).
        assert_eq!(c("https://e.com/history/1987/founding"), None);
    }

    #[test]
    fn escapes_survive_multibyte_text() {
        assert_eq!(n("https://example.com/é%41"), "https://example.com/%C3%A9A");
    }
}
