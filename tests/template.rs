//! Site-template learning over stored documents: repeated blocks go, page content stays,
//! and the template is written once.

use std::sync::Arc;

use kb_crawl::conformance::sample_doc;
use kb_crawl::engine::strip_site_template;
use kb_crawl::memory::MemorySink;
use kb_crawl::{JobId, Sink, TemplateOptions};

#[tokio::test]
async fn repeated_blocks_are_removed_from_every_page_and_kept_once() {
    let sink = Arc::new(MemorySink::new());
    let job = JobId::new();
    let notice = "Office hours: Monday to Friday, 8am to 5pm. Call 555-0100.";
    for i in 0..8 {
        let body = format!("# Page {i}\n\nUnique text number {i} about topic {i}.\n\n{notice}\n");
        let d = sample_doc(
            &job,
            &format!("https://example.com/p{i}"),
            Some(&format!("Page {i}")),
            &body,
        );
        sink.put(&d).await.unwrap();
    }
    let changed = strip_site_template(&*sink, &job, &TemplateOptions::default())
        .await
        .unwrap();
    assert_eq!(changed, 8);
    for d in sink.list(&job).await.unwrap() {
        let text = String::from_utf8(sink.get(&d.key).await.unwrap().unwrap()).unwrap();
        assert!(!text.contains("Office hours"), "{text}");
        assert!(text.contains("Unique text number"), "{text}");
        let (_, body) = kb_crawl::keys::parse_file(text.as_bytes()).unwrap();
        assert!(
            text.contains(&format!("sha256:{}", sha256(&body))),
            "content hash not updated"
        );
    }
    let site = sink
        .get(&format!("{job}/site-template.md"))
        .await
        .unwrap()
        .unwrap();
    assert!(String::from_utf8(site).unwrap().contains("Office hours"));
}

#[tokio::test]
async fn a_block_on_few_pages_is_kept() {
    let sink = Arc::new(MemorySink::new());
    let job = JobId::new();
    for i in 0..8 {
        let shared = if i < 2 {
            "\n\nShared by two pages only.\n"
        } else {
            ""
        };
        let body = format!("# Page {i}\n\nUnique text {i}.{shared}");
        let d = sample_doc(
            &job,
            &format!("https://example.com/p{i}"),
            Some(&format!("P{i}")),
            &body,
        );
        sink.put(&d).await.unwrap();
    }
    assert_eq!(
        strip_site_template(&*sink, &job, &TemplateOptions::default())
            .await
            .unwrap(),
        0
    );
    assert!(sink
        .get(&format!("{job}/site-template.md"))
        .await
        .unwrap()
        .is_none());
}

fn sha256(s: &str) -> String {
    use std::fmt::Write;
    let d = <sha2::Sha256 as sha2::Digest>::digest(s.as_bytes());
    d.iter().fold(String::new(), |mut o, b| {
        let _ = write!(o, "{b:02x}");
        o
    })
}
