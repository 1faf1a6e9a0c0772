//! Hostile input: nothing may panic, overflow the stack or take quadratic time.

use super::*;
use proptest::prelude::*;

fn url() -> Url {
    Url::parse("https://example.com/").expect("static URL")
}

fn both(html: &str) -> (Extracted, Extracted) {
    let whole = ExtractOptions {
        main_content: false,
        keep_hidden: true,
        ..Default::default()
    };
    (
        extract(html, &url(), &ExtractOptions::default()),
        extract(html, &url(), &whole),
    )
}

#[test]
fn deep_nesting_3000() {
    let html = format!("{}deep text{}", "<div>".repeat(3000), "</div>".repeat(3000));
    let (a, b) = both(&html);
    assert!(a.markdown.contains("deep text"));
    assert!(b.markdown.contains("deep text"));
}

#[test]
fn deep_nesting_100000_mixed() {
    let html = format!(
        "{}<p>bottom</p>{}<p>after</p>",
        "<div><ul><li><blockquote><table><tr><td>".repeat(20_000),
        "</td></tr></table></blockquote></li></ul></div>".repeat(20_000)
    );
    let (a, b) = both(&html);
    assert!(b.markdown.contains("bottom"));
    assert!(b.markdown.contains("after"));
    let _ = a;
    let unclosed = "<div><span><a href=x><b>".repeat(25_000) + "end";
    let (a, b) = both(&unclosed);
    assert!(a.markdown.contains("end") && b.markdown.contains("end"));
}

/// A formula nested past the tree's depth cap, and many formulas each with a script:
/// written as TeX without overflowing the stack or scanning a formula per formula.
#[test]
fn deep_and_many_formulas() {
    let deep = format!(
        "<p>f <math>{}<mi>x</mi>{}</math> end</p>",
        "<mrow><msup>".repeat(20_000),
        "<mn>2</mn></msup></mrow>".repeat(20_000)
    );
    let (a, b) = both(&deep);
    assert!(
        a.markdown.contains("end") && b.markdown.contains("$"),
        "{}",
        a.markdown
    );
    let many = format!(
        "<p>{}</p>",
        "<math><msup><mi>x</mi><mn>2</mn></msup></math> ".repeat(50_000)
    );
    let (a, _) = both(&many);
    assert_eq!(a.markdown.matches("$x^2$").count(), 50_000);
}

#[test]
fn many_siblings() {
    let html = "<p>x</p>".repeat(200_000);
    let (a, _) = both(&html);
    assert_eq!(a.markdown.matches('x').count(), 200_000);
    let lis = format!("<ul>{}</ul>", "<li><a href='/a'>i</a>".repeat(200_000));
    let _ = both(&lis);
}

#[test]
fn a_long_line_before_many_empty_blocks() {
    // Each empty link writes a break that the next block takes back: the blank tail is
    // scanned, never the 2 MB line before it (200,000 x 2 MB if it were).
    let html = format!(
        "<p>{}</p>{}<p>end</p>",
        "word ".repeat(400_000),
        "<div><a href='/x'><span></span></a></div>".repeat(200_000)
    );
    let (a, b) = both(&html);
    assert!(a.markdown.ends_with("end\n") && b.markdown.ends_with("end\n"));
    assert!(!b.markdown.contains("\n\n\n"));
}

#[test]
fn like_sections_with_long_class_lists() {
    // The like-sections test compares class lists: 600 sections of 600 classes each,
    // beside one written in paragraphs, must not take 600 x 600 x 600 comparisons.
    let classes = |k: usize| -> String { (0..600).map(|j| format!("c{k}x{j} ")).collect() };
    let sections: String = (0..600)
        .map(|k| format!("<div class='s{k} {}'>Section {k} says something of its own here, at length and in words enough for the reader to take it for a section of text, not a label or a button.</div>", classes(k)))
        .collect();
    let para = "<p>Prose that the descent picks, long enough to count as paragraphs for it.</p>";
    let html = format!(
        "<div><div class='best {}'>{}</div>{sections}</div>",
        classes(9999),
        para.repeat(1200)
    );
    let (a, b) = both(&html);
    assert!(a.markdown.contains("Prose that") && b.markdown.contains("Section 599"));
}

#[test]
fn nested_and_many_h1s() {
    // Every `<h1>` is checked for being a site's name: its subtree is scanned once.
    let nested = format!(
        "{}x{}",
        "<h1><a href='/'>".repeat(50_000),
        "</a></h1>".repeat(50_000)
    );
    let _ = both(&nested);
    let many = "<h1><a href='/'>Site</a></h1><p>text</p>".repeat(100_000);
    let (a, _) = both(&many);
    assert!(a.markdown.contains("text"));
}

#[test]
fn huge_attribute() {
    let big = "a".repeat(10 * 1024 * 1024);
    let html = format!("<p class=\"{big}\" title='{big}'>text</p><a href=\"/{big}\">l</a><img src=\"{big}\" alt=\"{big}\">");
    let (a, b) = both(&html);
    assert!(a.markdown.contains("text") && b.markdown.contains("text"));
    // Unterminated attribute quote to the end of input.
    let _ = both(&format!("<p title=\"{big}"));
}

#[test]
fn binary_junk_and_lossy_utf8() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let bytes: Vec<u8> = (0..2_000_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // Bias towards markup bytes so the tokenizer sees plenty of tags.
            match state % 8 {
                0 => b'<',
                1 => b'>',
                2 => b'/',
                _ => (state >> 24) as u8,
            }
        })
        .collect();
    let text = String::from_utf8_lossy(&bytes);
    let _ = both(&text);
    let _ = both(&decode_html(&bytes, None));
    let _ = both(&decode_html(&bytes, Some("text/html; charset=shift_jis")));
}

#[test]
fn truncated_constructs() {
    for s in [
        "<",
        "</",
        "<!--",
        "<!",
        "<a href=",
        "<a href='",
        "<p",
        "&",
        "&#",
        "&#x",
        "&#99999999999;",
        "<script>",
        "<title>",
        "</>",
        "<table><td>",
        "<pre>",
        "<code>",
        "<li>",
        "&amp",
    ] {
        let _ = both(s);
    }
}

fn tag_soup() -> impl Strategy<Value = String> {
    let tag = prop::sample::select(vec![
        "div",
        "p",
        "a",
        "ul",
        "ol",
        "li",
        "table",
        "tr",
        "td",
        "th",
        "pre",
        "code",
        "h1",
        "h3",
        "blockquote",
        "nav",
        "footer",
        "script",
        "style",
        "svg",
        "noscript",
        "img",
        "br",
        "span",
        "template",
        "title",
        "textarea",
        "main",
        "article",
        "dl",
        "dd",
        "select",
        "option",
    ]);
    let attr = prop::sample::select(vec![
        "",
        " hidden",
        " href='/x'",
        " href=javascript:x",
        " src=/i.png",
        " class='nav'",
        " class=\"language-rust\"",
        " style='display:none'",
        " aria-hidden=true",
        " alt='[x]'",
    ]);
    let piece = prop_oneof![
        (tag.clone(), attr).prop_map(|(t, a)| format!("<{t}{a}>")),
        tag.prop_map(|t| format!("</{t}>")),
        "[a-z #*|\\-_`>&;\u{200B}\u{202E}\n]{0,12}",
        Just("<!--".to_string()),
        Just("&amp;".to_string()),
    ];
    prop::collection::vec(piece, 0..200).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_strings_never_panic(s in any::<String>()) {
        let _ = both(&s);
    }

    #[test]
    fn tag_soup_never_panics(s in tag_soup()) {
        let (a, b) = both(&s);
        // Invisible characters never survive into the output.
        let clean = !a.markdown.contains('\u{200B}') && !b.markdown.contains('\u{202E}');
        prop_assert!(clean, "invisible characters kept");
        for l in a.links.iter().chain(&b.links) {
            prop_assert!(matches!(l.url.scheme(), "http" | "https"));
        }
    }

    #[test]
    fn arbitrary_bytes_decode(b in prop::collection::vec(any::<u8>(), 0..2048), ct in prop::option::of("[ -~]{0,40}")) {
        let _ = decode_html(&b, ct.as_deref());
    }
}

#[test]
fn responsive_twins_nested_and_many() {
    // Each responsive block's text is read once per responsive ancestor: the tree's depth
    // cap bounds that, not the nesting of the input.
    let text = "words of a block repeated for every screen size ".repeat(20_000);
    let nested = format!(
        "{}{text}{}",
        "<div class='d-md-none'>".repeat(3000),
        "</div>".repeat(3000)
    );
    let (a, b) = both(&nested);
    assert!(a.markdown.contains("words of a block") && b.markdown.contains("words of a block"));
    // A hundred thousand twins come out as one.
    let many =
        "<div class='hidden-xs'>The same notice, written again and again.</div>".repeat(100_000);
    let (a, _) = both(&many);
    assert_eq!(a.markdown.matches("The same notice").count(), 1);
}

#[test]
fn many_quotes_of_a_long_post() {
    // Each quote is looked for in all the text before it: 3,000 replies quoting a 2 KB
    // post would read 9 GB without the page's search budget.
    let post = "word ".repeat(400);
    let reply =
        format!("<div class='reply'><blockquote class='quote'><p>{post}</p></blockquote><p>me too</p></div>");
    let html = format!(
        "<main><h1>Thread</h1><p>{post}</p>{}</main>",
        reply.repeat(3_000)
    );
    let (a, b) = both(&html);
    assert!(a.markdown.contains("me too") && b.markdown.contains("me too"));
    // The first replies' quotes are dropped; past the budget the rest are kept.
    let quoted = a.markdown.matches("> word").count();
    assert!(quoted > 0 && quoted < 3_000, "{quoted}");
}

#[test]
fn panels_in_deep_collapsed_wrappers() {
    // Each named panel walks up through the wrappers that hold only it: 2,000 panels in
    // 40 collapsed wrappers each are shown in one pass over the tree and short walks.
    let wrap = "<div style='height:0;overflow:hidden'>";
    let one = |n: u32| {
        format!(
            "<button aria-expanded='false' aria-controls='p{n}'>Question {n}</button>{}\
             <div id='p{n}'>Answer number {n}.</div>{}",
            wrap.repeat(40),
            "</div>".repeat(40)
        )
    };
    let html: String = (0..2_000).map(one).collect();
    let (a, b) = both(&format!("<main><h1>FAQ</h1>{html}</main>"));
    assert!(
        a.markdown.contains("Answer number 1999.") && b.markdown.contains("Answer number 1999.")
    );
    // Twenty thousand collapsed boxes that no toggle names stay hidden.
    let many = format!(
        "<main><h1>Page</h1><p>Shown text.</p>{}</main>",
        "<div style='max-height:0;overflow:hidden'><p>closed box</p></div>".repeat(20_000)
    );
    let (a, _) = both(&many);
    assert!(a.markdown.contains("Shown text.") && !a.markdown.contains("closed box"));
}
