//! [`SourceStore`] checks.

use std::collections::BTreeSet;
use std::sync::Arc;

use time::OffsetDateTime;
use url::Url;

use crate::job::JobId;
use crate::source::{PageState, SourceId, SourceRecord};
use crate::traits::SourceStore;

fn at(days: i64) -> OffsetDateTime {
    OffsetDateTime::UNIX_EPOCH + time::Duration::days(20_000 + days)
}

/// A tenant no other check (or other run against a shared backend) uses.
fn tenant() -> String {
    format!("ast-{:016x}", rand::random::<u64>())
}

fn source(tenant: &str, root: &str) -> SourceRecord {
    SourceRecord::new(tenant, Url::parse(root).expect("root"), at(0))
}

fn page(src: &str, n: usize, hash: &str, run: &JobId) -> PageState {
    let url = Url::parse(&format!("{src}page/{n}")).expect("page url");
    PageState::new(
        url,
        format!("job/site/page-{n}.md"),
        hash,
        at(1),
        run.clone(),
    )
    .with_validators(Some(format!("\"etag-{n}\"")), None)
    .with_links(vec![
        Url::parse(&format!("{src}page/{}", n + 1)).expect("link")
    ])
}

/// Records round-trip, are replaced by id, and tenants see only their own sources.
pub async fn source_records(s: &dyn SourceStore) {
    let (a, b) = (tenant(), tenant());
    let mut one = source(&a, "https://one.example/");
    let two = source(&a, "https://two.example/docs/");
    let other = source(&b, "https://one.example/");
    assert_ne!(
        one.id, other.id,
        "{s}: the same site under two tenants is two sources"
    );
    for r in [&one, &two, &other] {
        s.put_source(r).await.expect("put_source");
    }
    assert_eq!(
        s.get_source(&one.id).await.expect("get"),
        Some(one.clone()),
        "{s}"
    );
    one.last_run = Some(JobId::new());
    one.settings = serde_json::json!({"maxDepth": 3});
    one.schedule = crate::source::Schedule::Cron {
        expr: "0 6 * * 1-5".into(),
        time_zone: "America/Boise".into(),
    };
    one.next_sync_at = Some(at(2));
    s.put_source(&one).await.expect("replace");
    assert_eq!(
        s.get_source(&one.id).await.expect("get"),
        Some(one.clone()),
        "{s}: replaced"
    );
    let mine: Vec<SourceId> = s
        .list_sources(&a)
        .await
        .expect("list")
        .into_iter()
        .map(|r| r.id)
        .collect();
    let mut want = vec![one.id.clone(), two.id.clone()];
    want.sort();
    assert_eq!(
        mine, want,
        "{s}: a tenant lists its own sources, in id order"
    );
    match s.list_all_sources().await {
        Ok(all) => {
            let ids: Vec<&SourceId> = all.iter().map(|r| &r.id).collect();
            for r in [&one, &two, &other] {
                assert!(
                    ids.contains(&&r.id),
                    "{s}: list_all_sources has every tenant's"
                );
            }
            assert!(ids.windows(2).all(|w| w[0] < w[1]), "{s}: in id order");
        }
        Err(e) => assert_eq!(e.kind(), crate::ErrorKind::Unsupported, "{s}: {e}"),
    }
    let missing = SourceRecord::new(
        tenant(),
        Url::parse("https://x.example/").expect("u"),
        at(0),
    );
    assert_eq!(s.get_source(&missing.id).await.expect("get"), None, "{s}");
}

/// Pages are stored by URL within their source, replaced in place, removed idempotently,
/// and never leak into another source.
pub async fn source_pages(s: &dyn SourceStore) {
    let t = tenant();
    let a = source(&t, "https://a.example/");
    let b = source(&t, "https://b.example/");
    s.put_source(&a).await.expect("put a");
    s.put_source(&b).await.expect("put b");
    let run = JobId::new();
    let pages: Vec<PageState> = (0..3)
        .map(|n| page("https://a.example/", n, "h1", &run))
        .collect();
    s.put_pages(&a.id, &pages).await.expect("put_pages");
    s.put_pages(&a.id, &pages)
        .await
        .expect("put_pages again (idempotent)");
    let got = s.get_page(&a.id, &pages[1].url).await.expect("get_page");
    assert_eq!(got.as_ref(), Some(&pages[1]), "{s}: round trip");
    assert_eq!(
        s.get_page(&b.id, &pages[1].url).await.expect("get_page"),
        None,
        "{s}: a page of one source is not in another"
    );
    let later = JobId::new();
    let mut changed = page("https://a.example/", 1, "h2", &later);
    changed.fetched_at = at(5);
    s.put_pages(&a.id, std::slice::from_ref(&changed))
        .await
        .expect("replace");
    assert_eq!(
        s.get_page(&a.id, &changed.url).await.expect("get_page"),
        Some(changed.clone()),
        "{s}: replaced by URL"
    );
    let gone = Url::parse("https://a.example/page/404").expect("u");
    let n = s
        .remove_pages(&a.id, &[pages[0].url.clone(), gone.clone()])
        .await
        .expect("remove");
    assert_eq!(n, 1, "{s}: remove counts only what was there");
    assert_eq!(
        s.remove_pages(&a.id, &[pages[0].url.clone()])
            .await
            .expect("again"),
        0,
        "{s}"
    );
    assert_eq!(
        s.get_page(&a.id, &pages[0].url).await.expect("get"),
        None,
        "{s}: removed"
    );
    assert!(
        s.get_page(&a.id, &pages[2].url)
            .await
            .expect("get")
            .is_some(),
        "{s}: kept"
    );
    s.put_pages(&b.id, &[page("https://b.example/", 9, "hb", &run)])
        .await
        .expect("put b");
    assert_eq!(
        s.delete_source(&a.id).await.expect("delete"),
        2,
        "{s}: pages deleted"
    );
    assert_eq!(
        s.delete_source(&a.id).await.expect("delete again"),
        0,
        "{s}"
    );
    assert_eq!(
        s.get_source(&a.id).await.expect("get"),
        None,
        "{s}: record deleted"
    );
    assert_eq!(
        s.get_page(&a.id, &pages[2].url).await.expect("get"),
        None,
        "{s}"
    );
    let left = s.list_pages(&b.id, None, 10).await.expect("list b");
    assert_eq!(
        left.pages.len(),
        1,
        "{s}: another source's pages survive a delete"
    );
    s.delete_source(&b.id).await.expect("cleanup");
}

/// Listing pages through a source in small batches sees every page exactly once, in
/// url-key order, with `next` set exactly when more follow.
pub async fn source_paging(s: &dyn SourceStore) {
    let t = tenant();
    let src = source(&t, "https://paged.example/");
    s.put_source(&src).await.expect("put");
    let run = JobId::new();
    let pages: Vec<PageState> = (0..23)
        .map(|n| page("https://paged.example/", n, "h", &run))
        .collect();
    for chunk in pages.chunks(10) {
        s.put_pages(&src.id, chunk).await.expect("put_pages");
    }
    let empty = source(&t, "https://empty.example/");
    let none = s.list_pages(&empty.id, None, 5).await.expect("list empty");
    assert!(
        none.pages.is_empty() && none.next.is_none(),
        "{s}: empty source"
    );
    let mut seen = Vec::new();
    let mut after: Option<String> = None;
    let mut calls = 0;
    loop {
        let batch = s
            .list_pages(&src.id, after.as_deref(), 5)
            .await
            .expect("list_pages");
        calls += 1;
        assert!(
            batch.pages.len() <= 5,
            "{s}: a batch holds at most `limit` pages"
        );
        assert!(calls <= 10, "{s}: listing does not end");
        seen.extend(batch.pages.iter().map(|p| PageState::url_key(&p.url)));
        match batch.next {
            Some(n) => {
                assert!(!batch.pages.is_empty(), "{s}: `next` after an empty batch");
                after = Some(n);
            }
            None => break,
        }
    }
    let unique: BTreeSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), 23, "{s}: every page once");
    assert_eq!(seen.len(), 23, "{s}: no page twice");
    let mut sorted = seen.clone();
    sorted.sort();
    assert_eq!(seen, sorted, "{s}: url-key order");
    let exact = s.list_pages(&src.id, None, 23).await.expect("all in one");
    assert_eq!(exact.pages.len(), 23, "{s}");
    assert!(exact.next.is_none(), "{s}: `next` only when more follow");
    s.delete_source(&src.id).await.expect("cleanup");
}

/// Every [`SourceStore`] check, through `&dyn` and through `Arc<dyn _>`.
pub async fn source_store_suite(s: Arc<dyn SourceStore>) {
    for store in [&*s as &dyn SourceStore, &s as &dyn SourceStore] {
        source_records(store).await;
        source_pages(store).await;
        source_paging(store).await;
    }
}
