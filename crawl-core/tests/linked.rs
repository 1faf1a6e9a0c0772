//! Linked documents (`linkedDocuments`): same-site PDF and DOCX links passed through as
//! documents of their own type to an ingestor that accepts them, over a loopback site that
//! also serves hostile ones (an oversized PDF, a "PDF" that is HTML, a zip declared as a Word
//! file). Without the option, or without an accepting ingestor, every one of them stays
//! skipped as `not_html` and the crawl's documents are byte-for-byte those of a crawl
//! without the option.

use crate::common;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use common::{Fixture, Reply};
use crawl_core::clock::ManualClock;
use crawl_core::linked::{self, LinkedType, MAX_LINKED_BYTES};
use crawl_core::memory::MemorySink;
use crawl_core::{
    CrawlRequest, Crawler, DiffDocs, DynSink, Guardrails, Ingestor, JobRecord, JobStatus,
    NoopIngestor, Result, RunDiff, Sink, SitemapMode,
};

/// Records each diff; accepts PDF and DOCX.
#[derive(Debug, Default)]
struct Accepting {
    diffs: Mutex<Vec<DiffDocs>>,
}

impl fmt::Display for Accepting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Accepting")
    }
}

#[async_trait]
impl Ingestor for Accepting {
    async fn on_completed(&self, _job: &JobRecord, diff: &RunDiff<'_>) -> Result<()> {
        let docs = diff.collect().await?;
        self.diffs.lock().unwrap().push(docs);
        Ok(())
    }
    async fn on_deleted(&self, _job: &JobRecord) -> Result<()> {
        Ok(())
    }
    fn accepted_types(&self) -> &'static [&'static str] {
        &[linked::PDF, linked::DOCX]
    }
}

/// A minimal stored zip holding `names` (empty files).
fn zip(names: &[&str]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for name in names {
        let offset = out.len() as u32;
        out.extend_from_slice(b"PK\x03\x04\x14\0\0\0\0\0\0\0\0\0");
        out.extend_from_slice(&[0; 12]);
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(name.as_bytes());
        central.extend_from_slice(b"PK\x01\x02\x14\0\x14\0\0\0\0\0\0\0\0\0");
        central.extend_from_slice(&[0; 12]);
        central.extend_from_slice(&(name.len() as u16).to_le_bytes());
        central.extend_from_slice(&[0; 12]);
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(name.as_bytes());
    }
    let cd = out.len() as u32;
    out.extend_from_slice(&central);
    out.extend_from_slice(b"PK\x05\x06\0\0\0\0");
    out.extend_from_slice(&(names.len() as u16).to_le_bytes());
    out.extend_from_slice(&(names.len() as u16).to_le_bytes());
    out.extend_from_slice(&(central.len() as u32).to_le_bytes());
    out.extend_from_slice(&cd.to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out
}

fn pdf(version: u32) -> Vec<u8> {
    format!("%PDF-1.4\n% The student handbook, edition {version}.\n%%EOF\n").into_bytes()
}

const LINKS: [&str; 6] = [
    "/b",
    "/files/handbook.pdf",
    "/files/notes.docx",
    "/files/big.pdf",
    "/files/fake.pdf",
    "/files/sheet.docx",
];

/// The site: `/` links to a page, a PDF (its bytes change with `version`; strong ETag and
/// `304` on a match), a DOCX, a PDF over the cap, a "PDF" that is HTML and a zip declared
/// as DOCX that is not a Word file.
async fn site(version: Arc<AtomicU32>) -> Fixture {
    Fixture::start(move |hit, _| {
        let v = version.load(Ordering::SeqCst);
        match hit.path.as_str() {
            "/" => {
                let list: String = LINKS
                    .iter()
                    .map(|l| format!("<li><a href=\"{l}\">{l}</a></li>"))
                    .collect();
                Reply::html(&format!(
                    "<!doctype html><html><head><title>Home</title></head><body><main>\
                     <h1>Home</h1><p>The department's documents are linked below.</p>\
                     <ul>{list}</ul></main></body></html>"
                ))
            }
            "/b" => Reply::html(
                "<!doctype html><html><head><title>B</title></head><body><main><h1>B</h1>\
                 <p>Bursary office hours are Monday to Friday.</p></main></body></html>",
            ),
            "/files/handbook.pdf" => {
                let tag = format!("\"handbook-{v}\"");
                let matches = hit
                    .headers
                    .iter()
                    .any(|(n, val)| n.eq_ignore_ascii_case("if-none-match") && *val == tag);
                if matches {
                    Reply::status(304).header("ETag", &tag)
                } else {
                    Reply::ok(linked::PDF, pdf(v)).header("ETag", &tag)
                }
            }
            "/files/notes.docx" => Reply::ok(
                linked::DOCX,
                zip(&["[Content_Types].xml", "word/document.xml"]),
            ),
            "/files/big.pdf" => {
                let mut body = b"%PDF-1.4\n".to_vec();
                body.resize(MAX_LINKED_BYTES + 1, b'0');
                Reply::ok(linked::PDF, body)
            }
            "/files/fake.pdf" => Reply::ok(
                "application/pdf",
                "<!doctype html><html><body><p>Not a PDF at all.</p></body></html>",
            ),
            "/files/sheet.docx" => Reply::ok(linked::DOCX, zip(&["xl/workbook.xml"])),
            _ => Reply::status(404),
        }
    })
    .await
}

fn request(fx: &Fixture, linked: bool) -> CrawlRequest {
    CrawlRequest::builder(fx.url("/").as_str())
        .max_depth(1)
        .rate(None)
        .guardrails(Guardrails::lifted())
        .allow_private_network(true)
        .sitemap(SitemapMode::Off)
        .detect_soft_404(false)
        .linked_documents(linked)
        .build()
        .unwrap()
}

fn crawler(sink: &Arc<MemorySink>, ingestor: Arc<dyn Ingestor>) -> Crawler {
    Crawler::builder()
        .sink(Arc::clone(sink) as DynSink)
        .ingestor(ingestor)
        .clock(Arc::new(ManualClock::new(
            time::OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap(),
        )))
        .build()
        .unwrap()
}

/// Every stored file of the job: key → bytes.
async fn files(sink: &MemorySink, job: &crawl_core::JobId) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for d in sink.list(job).await.unwrap() {
        let bytes = sink.get(&d.key).await.unwrap().unwrap();
        let rel = d.key.split_once('/').unwrap().1.to_owned();
        out.insert(rel, bytes);
    }
    out
}

async fn crawl(c: &Crawler, req: CrawlRequest) -> JobRecord {
    let handle = c.start(req).await.unwrap();
    let record = handle.wait().await.unwrap();
    assert_eq!(record.status, JobStatus::Completed, "{record:?}");
    record
}

#[tokio::test]
async fn linked_pdf_and_docx_reach_an_accepting_ingestor_and_hostile_ones_are_skipped() {
    let fx = site(Arc::new(AtomicU32::new(1))).await;
    let sink = Arc::new(MemorySink::new());
    let ingestor = Arc::new(Accepting::default());
    let c = crawler(&sink, Arc::clone(&ingestor) as _);
    let record = crawl(&c, request(&fx, true)).await;
    let p = &record.progress;
    // Every linked file counts as a page of the budget.
    assert_eq!(p.pages_processed, 7, "{p:?}");
    assert_eq!(p.stored, 4, "{p:?}");
    assert_eq!(p.skipped.get("too_large"), Some(&1), "{p:?}");
    assert_eq!(p.skipped.get(linked::TYPE_MISMATCH), Some(&2), "{p:?}");
    assert_eq!(p.skipped.get("not_html"), None, "{p:?}");

    let files = files(&sink, &record.id).await;
    let host = fx.url("/").host_str().unwrap().to_owned();
    let domain = format!("{host}_{}", fx.addr.port());
    let pdf_key = format!("{domain}/handbook.pdf");
    let docx_key = format!("{domain}/notes.docx");
    assert_eq!(files.get(&pdf_key), Some(&pdf(1)), "{:?}", files.keys());
    assert_eq!(
        files.get(&docx_key).and_then(|b| LinkedType::sniff(b)),
        Some(LinkedType::Docx)
    );
    assert_eq!(files.len(), 4, "{:?}", files.keys());
    let diffs = ingestor.diffs.lock().unwrap();
    let urls: Vec<String> = diffs[0].upserts.iter().map(|d| d.url.to_string()).collect();
    assert!(
        urls.contains(&fx.url("/files/handbook.pdf").to_string()),
        "{urls:?}"
    );
    assert_eq!(urls.len(), 4, "{urls:?}");
}

#[tokio::test]
async fn linked_files_count_in_the_page_budget() {
    let fx = site(Arc::new(AtomicU32::new(1))).await;
    let sink = Arc::new(MemorySink::new());
    let c = crawler(&sink, Arc::new(Accepting::default()));
    let mut req = request(&fx, true);
    req.max_pages = 3;
    let record = crawl(&c, req).await;
    assert_eq!(record.progress.pages_processed, 3, "{:?}", record.progress);
    // `/`, `/b` and the first linked file, in link order.
    assert_eq!(fx.count("/files/handbook.pdf"), 1);
    assert_eq!(fx.count("/files/notes.docx"), 0);
}

#[tokio::test]
async fn without_the_option_or_an_accepting_ingestor_linked_files_stay_not_html() {
    let fx = site(Arc::new(AtomicU32::new(1))).await;
    let mut seen = Vec::new();
    for (linked, ingestor) in [
        (false, Arc::new(Accepting::default()) as Arc<dyn Ingestor>),
        (true, Arc::new(NoopIngestor) as Arc<dyn Ingestor>),
        (false, Arc::new(NoopIngestor) as Arc<dyn Ingestor>),
    ] {
        let sink = Arc::new(MemorySink::new());
        let c = crawler(&sink, ingestor);
        let record = crawl(&c, request(&fx, linked)).await;
        let p = &record.progress;
        assert_eq!(p.skipped.get("not_html"), Some(&5), "{linked}: {p:?}");
        assert_eq!(p.stored, 2, "{p:?}");
        // Job ids differ: compare what is under each job.
        seen.push(files(&sink, &record.id).await);
    }
    assert_eq!(seen[0], seen[1], "the option alone changes nothing");
    assert_eq!(seen[0], seen[2]);
    assert!(seen[0].keys().all(|k| k.ends_with(".md")), "{:?}", seen[0]);
    // Off, the request's JSON is the one it was before the option existed.
    let json = serde_json::to_value(request(&fx, false)).unwrap();
    assert!(json.get("linkedDocuments").is_none(), "{json}");
}

#[tokio::test]
async fn a_resync_finds_an_unchanged_pdf_unchanged_and_a_changed_one_changed_in_place() {
    let version = Arc::new(AtomicU32::new(1));
    let fx = site(Arc::clone(&version)).await;
    let sink = Arc::new(MemorySink::new());
    let ingestor = Arc::new(Accepting::default());
    let c = crawler(&sink, Arc::clone(&ingestor) as _);
    let pdf_url = fx.url("/files/handbook.pdf");
    let run = |c: Crawler, req: CrawlRequest| async move {
        let (_, handle) = c.start_sync("ast-1", req).await.unwrap();
        let record = handle.wait().await.unwrap();
        assert_eq!(record.status, JobStatus::Completed, "{record:?}");
        record
    };
    let first = run(c.clone(), request(&fx, true)).await;
    assert_eq!(first.progress.changes.added, 4, "{:?}", first.progress);
    let documents = first.id.clone();
    let key = sink
        .list(&documents)
        .await
        .unwrap()
        .into_iter()
        .find(|d| d.url == pdf_url)
        .unwrap()
        .key;

    // Unchanged: the stored ETag goes with the request, the server answers 304.
    let second = run(c.clone(), request(&fx, true)).await;
    let ch = &second.progress.changes;
    assert_eq!((ch.added, ch.changed, ch.removed), (0, 0, 0), "{ch:?}");
    assert_eq!(ch.unchanged, 4, "{ch:?}");
    let conditional = fx
        .hits()
        .iter()
        .filter(|h| h.path == "/files/handbook.pdf")
        .filter(|h| {
            h.headers
                .iter()
                .any(|(n, v)| n.eq_ignore_ascii_case("if-none-match") && v == "\"handbook-1\"")
        })
        .count();
    assert_eq!(conditional, 1, "the re-sync asked conditionally");
    assert!(
        ingestor.diffs.lock().unwrap()[1].upserts.is_empty(),
        "nothing handed over again"
    );

    // Changed bytes: `changed`, at the same key, with the new bytes.
    version.store(2, Ordering::SeqCst);
    let third = run(c.clone(), request(&fx, true)).await;
    let ch = &third.progress.changes;
    assert_eq!((ch.added, ch.changed, ch.removed), (0, 1, 0), "{ch:?}");
    let stored = sink.list(&documents).await.unwrap();
    let now = stored.iter().find(|d| d.url == pdf_url).unwrap();
    assert_eq!(now.key, key, "same document identity");
    assert_eq!(sink.get(&key).await.unwrap(), Some(pdf(2)));
    let diff = &ingestor.diffs.lock().unwrap()[2];
    assert_eq!(diff.upserts.len(), 1, "{diff:?}");
    assert_eq!(diff.upserts[0].url, pdf_url);
    assert_eq!(diff.upserts[0].key, key);
    use sha2::Digest;
    assert_eq!(
        diff.upserts[0].content_hash,
        hex::encode(sha2::Sha256::digest(pdf(2)))
    );
}
