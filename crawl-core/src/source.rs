//! Sources: one site an owner keeps in a knowledge base, and what each of its runs found.
//!
//! A *source* is the normalized root URL of a site with its settings, under a tenant key (the
//! assistant). Every crawl of a source is a *run* (an ordinary job). The source keeps, per
//! page, what a later run needs to tell `unchanged` from `changed` without downloading the
//! page again: the canonical URL, the document key, the validators (`ETag`,
//! `Last-Modified`), the content hash of the stored markdown body and the run that last saw
//! it. [`SourceStore`](crate::SourceStore) is where that lives.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use time::OffsetDateTime;
use url::Url;

use crate::error::{Error, Result};
use crate::job::JobId;

/// A source's id: `src-` followed by 16 lowercase hex digits of the SHA-256 of its tenant and
/// normalized root URL, so the same site under the same tenant is always the same source.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct SourceId(String);

impl SourceId {
    /// The id of the source `root` under `tenant` (`root` is normalized by the caller: the
    /// crawl's normalized root URL).
    pub fn derive(tenant: &str, root: &Url) -> Self {
        let mut h = Sha256::new();
        h.update(tenant.as_bytes());
        h.update([0u8]);
        h.update(root.as_str().as_bytes());
        let digest = h.finalize();
        SourceId(format!("src-{}", hex::encode(&digest[..8])))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for SourceId {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let ok = s.len() == 20
            && s.starts_with("src-")
            && s[4..]
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if ok {
            Ok(SourceId(s.to_owned()))
        } else {
            Err(Error::invalid(format!(
                "sourceId: '{}' is not a source id (src- followed by 16 lowercase hex digits)",
                s.chars().take(80).collect::<String>()
            )))
        }
    }
}

impl TryFrom<String> for SourceId {
    type Error = Error;
    fn try_from(s: String) -> Result<Self> {
        s.parse()
    }
}

impl From<SourceId> for String {
    fn from(id: SourceId) -> String {
        id.0
    }
}

impl fmt::Display for SourceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for SourceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SourceId({})", self.0)
    }
}

/// One source: a site kept in a tenant's knowledge base.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SourceRecord {
    /// Its id ([`SourceId::derive`] of `tenant` and `root`).
    pub id: SourceId,
    /// Whose knowledge base it feeds (the assistant id).
    pub tenant: String,
    /// The normalized root URL.
    pub root: Url,
    /// When the source was created.
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// The latest run started, if any.
    #[serde(default)]
    pub last_run: Option<JobId>,
    /// The settings its runs use (the crawl request's JSON), kept as given.
    #[serde(default)]
    pub settings: serde_json::Value,
    /// The job whose key prefix holds the source's documents: its first run. Every later
    /// run writes there, so a page keeps one document key for the life of the source.
    #[serde(default)]
    pub documents: Option<JobId>,
    /// The site template learned so far (its blocks, as markdown): a later run strips it
    /// before comparing a page with its stored version.
    #[serde(default)]
    pub template: String,
    /// When runs start on their own.
    #[serde(default)]
    pub schedule: Schedule,
    /// When the next scheduled run is due (`None` without a schedule). Kept with the record,
    /// so a restarted scheduler neither loses nor repeats a run.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub next_sync_at: Option<OffsetDateTime>,
}

impl SourceRecord {
    /// A new source of `root` under `tenant`, created at `now`.
    pub fn new(tenant: impl Into<String>, root: Url, now: OffsetDateTime) -> Self {
        let tenant = tenant.into();
        SourceRecord {
            id: SourceId::derive(&tenant, &root),
            tenant,
            root,
            created_at: now,
            last_run: None,
            settings: serde_json::Value::Null,
            documents: None,
            template: String::new(),
            schedule: Schedule::None,
            next_sync_at: None,
        }
    }
}

impl SourceRecord {
    /// The crawl request a run of the source uses: its stored settings (the caller's part,
    /// a [`StartCrawl`](crate::StartCrawl); the root URL when they name none) under the
    /// deployment's policy and guardrails, for its tenant. The error names the field.
    pub fn request(
        &self,
        policy: &crate::CrawlPolicy,
        guardrails: &crate::Guardrails,
    ) -> Result<crate::CrawlRequest> {
        let body = match &self.settings {
            serde_json::Value::Object(m) => m.clone(),
            _ => serde_json::Map::new(),
        };
        let mut body = crate::StartCrawl::from_object(body)?;
        if body.url.is_none() {
            body.url = Some(self.root.to_string());
        }
        let mut request = body.into_request(policy, guardrails)?;
        request.assistant_id = Some(self.tenant.clone());
        Ok(request)
    }
}

/// When a source's runs start on their own: `none`, `daily`, `weekly` (at 03:00 in the time
/// zone; `weekly` on Sundays), or a five-field cron expression, each in an IANA time zone.
///
/// As JSON: `"none"`, `"daily"`, `"weekly"`, or an object
/// `{"cron": "0 6 * * 1-5", "timeZone": "America/Boise"}` (`timeZone` defaults to `UTC`;
/// `{"every": "daily", "timeZone": "..."}` sets the zone of the named schedules). The cron
/// expression and the zone are checked where schedules are computed (crawl-api's
/// scheduler); this type only holds them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Schedule {
    /// Runs only when asked.
    #[default]
    None,
    /// Every day at 03:00 in `time_zone`.
    Daily {
        /// IANA time zone name.
        time_zone: String,
    },
    /// Every Sunday at 03:00 in `time_zone`.
    Weekly {
        /// IANA time zone name.
        time_zone: String,
    },
    /// A five-field cron expression (minute hour day-of-month month day-of-week).
    Cron {
        /// The expression.
        expr: String,
        /// IANA time zone name.
        time_zone: String,
    },
}

impl Schedule {
    /// The cron expression the schedule fires on and its time zone; `None` for no schedule.
    pub fn cron(&self) -> Option<(&str, &str)> {
        match self {
            Schedule::None => None,
            Schedule::Daily { time_zone } => Some(("0 3 * * *", time_zone)),
            Schedule::Weekly { time_zone } => Some(("0 3 * * 0", time_zone)),
            Schedule::Cron { expr, time_zone } => Some((expr, time_zone)),
        }
    }
}

const UTC: &str = "UTC";

impl Serialize for Schedule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let named = |name: &str, tz: &str| (name.to_owned(), tz.to_owned());
        let (every, tz) = match self {
            Schedule::None => return s.serialize_str("none"),
            Schedule::Daily { time_zone } if time_zone == UTC => return s.serialize_str("daily"),
            Schedule::Weekly { time_zone } if time_zone == UTC => return s.serialize_str("weekly"),
            Schedule::Daily { time_zone } => named("daily", time_zone),
            Schedule::Weekly { time_zone } => named("weekly", time_zone),
            Schedule::Cron { expr, time_zone } => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("cron", expr)?;
                m.serialize_entry("timeZone", time_zone)?;
                return m.end();
            }
        };
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("every", &every)?;
        m.serialize_entry("timeZone", &tz)?;
        m.end()
    }
}

impl<'de> Deserialize<'de> for Schedule {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        Schedule::from_json(&serde_json::Value::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

impl Schedule {
    /// Reads the JSON forms above; the error names `schedule` and what is wrong.
    pub fn from_json(v: &serde_json::Value) -> Result<Self> {
        use serde_json::Value;
        let named = |name: &str, tz: String| match name {
            "none" => Ok(Schedule::None),
            "daily" => Ok(Schedule::Daily { time_zone: tz }),
            "weekly" => Ok(Schedule::Weekly { time_zone: tz }),
            other => Err(Error::invalid(format!(
                "schedule: '{}' is not none, daily, weekly or {{\"cron\": ..., \"timeZone\": ...}}",
                other.chars().take(40).collect::<String>()
            ))),
        };
        match v {
            Value::Null => Ok(Schedule::None),
            Value::String(name) => named(name, UTC.to_owned()),
            Value::Object(m) => {
                if let Some(k) = m
                    .keys()
                    .find(|k| !matches!(k.as_str(), "cron" | "every" | "timeZone"))
                {
                    return Err(Error::invalid(format!(
                        "schedule: unknown field '{}' (cron, every, timeZone)",
                        k.chars().take(40).collect::<String>()
                    )));
                }
                let tz = match m.get("timeZone") {
                    None | Some(Value::Null) => UTC.to_owned(),
                    Some(Value::String(t)) => t.clone(),
                    Some(_) => {
                        return Err(Error::invalid(
                            "schedule.timeZone: must be an IANA time zone name",
                        ))
                    }
                };
                match (m.get("cron"), m.get("every")) {
                    (Some(Value::String(expr)), None) => Ok(Schedule::Cron {
                        expr: expr.trim().to_owned(),
                        time_zone: tz,
                    }),
                    (None, Some(Value::String(name))) => named(name, tz),
                    _ => Err(Error::invalid(
                        "schedule: an object needs exactly one of \"cron\" (a cron expression) or \"every\" (daily, weekly)",
                    )),
                }
            }
            _ => Err(Error::invalid(
                "schedule: must be none, daily, weekly or {\"cron\": ..., \"timeZone\": ...}",
            )),
        }
    }
}

/// The source a crawl is a run of, and where its documents live.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SyncTarget {
    /// The source.
    pub source: SourceId,
    /// The job whose key prefix holds the source's documents ([`SourceRecord::documents`]).
    pub documents: JobId,
}

impl SyncTarget {
    /// A run of `source` writing under `documents`.
    pub fn new(source: SourceId, documents: JobId) -> Self {
        SyncTarget { source, documents }
    }
}

/// How a run of a source changed one page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PageChange {
    /// New in this run.
    Added,
    /// Stored before; its markdown changed.
    Changed,
    /// Stored before; the same markdown (or the server said `304 Not Modified`).
    Unchanged,
    /// Gone from the site on evidence (see the README's removal rule).
    Removed,
    /// Fetched again with a different body; whether it changed is decided when the run
    /// finalises, once this run's site template is known. Never seen after a run ends.
    Pending,
}

impl PageChange {
    /// `added`, `changed`, `unchanged`, `removed` or `pending`.
    pub fn as_str(self) -> &'static str {
        match self {
            PageChange::Added => "added",
            PageChange::Changed => "changed",
            PageChange::Unchanged => "unchanged",
            PageChange::Removed => "removed",
            PageChange::Pending => "pending",
        }
    }
}

impl fmt::Display for PageChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a source knows about one of its pages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PageState {
    /// The page's canonical (normalized) URL: its identity in the source.
    pub url: Url,
    /// The key of its document in the sink (stable across runs).
    pub key: String,
    /// The `ETag` the server sent with the stored version.
    #[serde(default)]
    pub etag: Option<String>,
    /// The `Last-Modified` the server sent with the stored version.
    #[serde(default)]
    pub last_modified: Option<String>,
    /// SHA-256 (hex) of the stored markdown body (after site-template removal, without
    /// `fetched_at`).
    pub content_hash: String,
    /// When the stored version was fetched.
    #[serde(with = "time::serde::rfc3339")]
    pub fetched_at: OffsetDateTime,
    /// The run that last saw the page (fetched it, or was told it had not changed).
    pub last_seen: JobId,
    /// The in-scope links the stored version had: a `304` answer carries no body, and a run
    /// must still follow an unchanged page's links.
    #[serde(default)]
    pub links: Vec<Url>,
    /// How the run `last_seen` changed the page.
    #[serde(default)]
    pub change: Option<PageChange>,
    /// The content hash before the run `last_seen` (`None` for a page it added).
    #[serde(default)]
    pub previous_hash: Option<String>,
    /// Why a page was found unchanged (`not_modified`, `same_content`, `sitemap_lastmod`) or
    /// removed (the evidence, e.g. `http_404`, `not_reached`).
    #[serde(default)]
    pub reason: Option<String>,
}

impl PageState {
    /// The state of `url` stored at `key` with `content_hash`, seen by `run` at `fetched_at`.
    pub fn new(
        url: Url,
        key: impl Into<String>,
        content_hash: impl Into<String>,
        fetched_at: OffsetDateTime,
        run: JobId,
    ) -> Self {
        PageState {
            url,
            key: key.into(),
            etag: None,
            last_modified: None,
            content_hash: content_hash.into(),
            fetched_at,
            last_seen: run,
            links: Vec::new(),
            change: None,
            previous_hash: None,
            reason: None,
        }
    }

    /// With how the run `last_seen` changed it, the hash before that run, and the reason.
    pub fn with_change(
        mut self,
        change: PageChange,
        previous_hash: Option<String>,
        reason: Option<&str>,
    ) -> Self {
        self.change = Some(change);
        self.previous_hash = previous_hash;
        self.reason = reason.map(str::to_owned);
        self
    }

    /// The hash the page had before run `run`: for a page that run already touched (a
    /// resumed run processing it again), what it had before; else its stored hash. `None`
    /// when `run` added it.
    pub fn hash_before(&self, run: &JobId) -> Option<String> {
        if &self.last_seen == run {
            self.previous_hash.clone()
        } else {
            Some(self.content_hash.clone())
        }
    }

    /// With the links of the stored version.
    pub fn with_links(mut self, links: Vec<Url>) -> Self {
        self.links = links;
        self
    }

    /// With the validators the server sent.
    pub fn with_validators(mut self, etag: Option<String>, last_modified: Option<String>) -> Self {
        self.etag = etag;
        self.last_modified = last_modified;
        self
    }

    /// The key a [`SourceStore`](crate::SourceStore) orders and finds this page by: the hex
    /// SHA-256 of its URL (fixed length, safe in every backend's key syntax).
    pub fn url_key(url: &Url) -> String {
        hex::encode(Sha256::digest(url.as_str().as_bytes()))
    }
}

/// One page of [`SourceStore::list_pages`](crate::SourceStore::list_pages).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PageBatch {
    /// Pages in [`PageState::url_key`] order.
    pub pages: Vec<PageState>,
    /// Where the next batch starts; `None` after the last.
    pub next: Option<String>,
}

impl PageBatch {
    /// A batch of `pages` followed by `next`.
    pub fn new(pages: Vec<PageState>, next: Option<String>) -> Self {
        PageBatch { pages, next }
    }

    /// A batch of `pages` (in url-key order); when `more` follow, `next` is the last page's
    /// url key, so the listing goes on right after it.
    pub fn ending(pages: Vec<PageState>, more: bool) -> Self {
        let next = match pages.last() {
            Some(last) if more => Some(PageState::url_key(&last.url)),
            _ => None,
        };
        PageBatch { pages, next }
    }
}

/// One line of a run's `{run}/changes.jsonl`: a page the run added, changed or removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ChangeLine {
    /// The page's canonical URL.
    pub url: Url,
    /// Its document key.
    pub key: String,
    /// `added`, `changed` or `removed`.
    pub change: PageChange,
    /// The hash of its markdown after the run (for a removed page, the stored one).
    pub content_hash: String,
    /// The hash before the run (`null` for a page it added).
    #[serde(default)]
    pub previous_hash: Option<String>,
    /// Why it was removed (or found unchanged); `null` otherwise.
    #[serde(default)]
    pub reason: Option<String>,
}

impl ChangeLine {
    /// The name of the file among the run's auxiliary objects.
    pub const FILE: &'static str = "changes.jsonl";

    /// The line of a page's state as the run left it.
    pub fn of(p: &PageState) -> Self {
        ChangeLine {
            url: p.url.clone(),
            key: p.key.clone(),
            change: p.change.unwrap_or(PageChange::Unchanged),
            content_hash: p.content_hash.clone(),
            previous_hash: p.previous_hash.clone(),
            reason: p.reason.clone(),
        }
    }

    /// Reads a `changes.jsonl` file; the error names the file.
    pub fn parse(name: &str, bytes: &[u8]) -> Result<Vec<ChangeLine>> {
        bytes
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|line| {
                serde_json::from_slice(line).map_err(|e| {
                    Error::new(
                        crate::ErrorKind::Storage,
                        format!("{name}: malformed line ({e})"),
                    )
                })
            })
            .collect()
    }
}

pub use crate::diff::{DiffDocs, RunDiff};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_read_and_write_their_json_forms() {
        use serde_json::json;
        for (v, want) in [
            (json!("none"), Schedule::None),
            (json!(null), Schedule::None),
            (
                json!("daily"),
                Schedule::Daily {
                    time_zone: "UTC".into(),
                },
            ),
            (
                json!({"every": "weekly", "timeZone": "America/Boise"}),
                Schedule::Weekly {
                    time_zone: "America/Boise".into(),
                },
            ),
            (
                json!({"cron": " 0 6 * * 1-5 ", "timeZone": "Europe/Paris"}),
                Schedule::Cron {
                    expr: "0 6 * * 1-5".into(),
                    time_zone: "Europe/Paris".into(),
                },
            ),
            (
                json!({"cron": "*/15 * * * *"}),
                Schedule::Cron {
                    expr: "*/15 * * * *".into(),
                    time_zone: "UTC".into(),
                },
            ),
        ] {
            let got: Schedule = serde_json::from_value(v.clone()).unwrap();
            assert_eq!(got, want, "{v}");
            let back: Schedule =
                serde_json::from_value(serde_json::to_value(&got).unwrap()).unwrap();
            assert_eq!(back, got);
        }
        assert_eq!(serde_json::to_value(Schedule::None).unwrap(), json!("none"));
        for bad in [
            json!("hourly"),
            json!(3),
            json!({"cron": "* * * * *", "every": "daily"}),
            json!({"cron": 5}),
            json!({"cron": "* * * * *", "zone": "UTC"}),
            json!({"every": "daily", "timeZone": 1}),
        ] {
            let err = Schedule::from_json(&bad).unwrap_err();
            assert!(err.message().starts_with("schedule"), "{bad}: {err}");
        }
    }

    #[test]
    fn ids_are_stable_per_tenant_and_root_and_parse_back() {
        let root = Url::parse("https://www.example.edu/registrar").unwrap();
        let a = SourceId::derive("ast-1", &root);
        assert_eq!(a, SourceId::derive("ast-1", &root));
        assert_ne!(a, SourceId::derive("ast-2", &root));
        let other = Url::parse("https://www.example.edu/admissions").unwrap();
        assert_ne!(a, SourceId::derive("ast-1", &other));
        assert_eq!(a.as_str().parse::<SourceId>().unwrap(), a);
        for bad in [
            "",
            "src-",
            "src-XYZ",
            "job-0123456789abcdef",
            "src-0123456789abcdeg",
        ] {
            let err = bad.parse::<SourceId>().unwrap_err();
            assert!(err.to_string().contains("sourceId"), "{err}");
        }
    }
}
