//! Sitemaps in the serverless crawl. Init reads them once, as the embedded engine does right
//! after admitting the root (same reader, same bounds, same fetcher: network policy, rate
//! limit and robots.txt apply), and keeps their in-scope URLs, in the order read, as an aux
//! object of the job. The plan step of level [`SITEMAP_DEPTH`] admits them before the root's
//! links, so both crawls admit the same pages in the same order under a page cap.

use std::collections::{BTreeMap, HashSet};

use async_trait::async_trait;
use crawl_core::engine::PageContext;
use crawl_core::sitemap::{read_sitemaps, SitemapTarget, SitemapUrl, SITEMAP_DEPTH};
use crawl_core::{Candidate, FrontierEntry, Result};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use url::Url;

/// Aux name of what Init read from the sitemaps ([`SitemapSeed`]).
pub(crate) const SITEMAP_NAME: &str = "sfn-sitemap.json";

/// Most sitemap URLs kept that may not be crawled (robots.txt, traps, policy: counted when
/// the level is admitted); past it they are counted at once, so a sitemap of disallowed URLs
/// cannot grow the object without bound.
const MAX_EXCLUDED_KEPT: usize = 50_000;

/// The sitemaps' URLs for level [`SITEMAP_DEPTH`], and what was not used, by reason.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct SitemapSeed {
    /// New in-scope URLs in the order read, each once; the root left out.
    pub urls: Vec<SeedUrl>,
    /// Exclusion counts (`sitemap_off_site`, `sitemap_over_budget`...), added to the job's
    /// `excluded` with the level's admission.
    pub counts: BTreeMap<String, u64>,
}

/// One URL of a [`SitemapSeed`].
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct SeedUrl {
    url: Url,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "time::serde::rfc3339::option"
    )]
    lastmod: Option<OffsetDateTime>,
    /// Why it may not be crawled, when it may not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    excluded: Option<String>,
}

impl SitemapSeed {
    /// Reads the site's sitemaps for the crawl of `ctx`, whose root has dedup key `root_key`.
    /// URLs are taken while the page budget (`max_pages` less the root) is not spent, and
    /// one batch past it, as the embedded ledger does: the level's admission counts those
    /// over the budget.
    pub(crate) async fn read(ctx: &PageContext, root_key: &str) -> Result<SitemapSeed> {
        let budget = u64::from(ctx.request.max_pages).saturating_sub(1);
        let mut c = Collector {
            ctx,
            root_key,
            budget,
            admissible: 0,
            excluded_kept: 0,
            keys: HashSet::new(),
            seed: SitemapSeed::default(),
        };
        let report = read_sitemaps(ctx, &mut c).await?;
        let mut seed = c.seed;
        for (reason, n) in report.counts {
            *seed.counts.entry(reason).or_default() += n;
        }
        Ok(seed)
    }

    /// The seed's URLs as candidates of level [`SITEMAP_DEPTH`], in order.
    pub(crate) fn candidates(self, ctx: &PageContext) -> Vec<Candidate> {
        self.urls
            .into_iter()
            .map(|u| {
                let key = ctx.key(&u.url);
                let mut entry = FrontierEntry::new(u.url, SITEMAP_DEPTH);
                entry.lastmod = u.lastmod;
                Candidate::new(key, entry, u.excluded)
            })
            .collect()
    }
}

/// The [`SitemapTarget`] of Init: keeps the candidates instead of admitting them.
struct Collector<'a> {
    ctx: &'a PageContext,
    root_key: &'a str,
    budget: u64,
    /// Distinct URLs kept that may be crawled.
    admissible: u64,
    excluded_kept: usize,
    keys: HashSet<String>,
    seed: SitemapSeed,
}

#[async_trait]
impl SitemapTarget for Collector<'_> {
    async fn take(&mut self, urls: Vec<SitemapUrl>) -> Result<bool> {
        if self.admissible > self.budget {
            return Ok(false);
        }
        let candidates = self.ctx.sitemap_candidates(&urls, SITEMAP_DEPTH).await?;
        for c in candidates {
            if c.key == self.root_key || !self.keys.insert(c.key) {
                continue;
            }
            match &c.excluded {
                None => self.admissible += 1,
                Some(reason) if self.excluded_kept >= MAX_EXCLUDED_KEPT => {
                    *self.seed.counts.entry(reason.clone()).or_default() += 1;
                    continue;
                }
                Some(_) => self.excluded_kept += 1,
            }
            self.seed.urls.push(SeedUrl {
                url: c.entry.url,
                lastmod: c.entry.lastmod,
                excluded: c.excluded,
            });
        }
        Ok(self.admissible <= self.budget)
    }
}
