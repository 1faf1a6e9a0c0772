//! Documentation fidelity: synthetic pages shaped like Sphinx and DocBook markup.

use super::*;

fn url() -> Url {
    Url::parse("https://docs.example.com/library/page.html").expect("static URL")
}

fn md(html: &str) -> String {
    extract(html, &url(), &ExtractOptions::default()).markdown
}

fn whole(html: &str) -> String {
    let o = ExtractOptions {
        main_content: false,
        ..Default::default()
    };
    extract(html, &url(), &o).markdown
}

fn para(words: &str, n: usize) -> String {
    format!("<p>{}</p>", vec![words; n].join(" "))
}

/// A Sphinx page: navigation around `div.body[role=main]` holding `body`.
fn sphinx(body: &str) -> String {
    format!(
        "<html><body><div class='related' role='navigation'><ul><li><a href='/'>index</a></li>\
         <li><a href='/modules'>modules</a></li></ul></div>\
         <div class='document'><div class='documentwrapper'><div class='bodywrapper'>\
         <div class='body' role='main'>{body}</div></div></div>\
         <div class='sphinxsidebar' role='navigation'><h3>Table of Contents</h3><ul>\
         <li><a href='#a'>Section a</a></li><li><a href='#b'>Section b</a></li></ul></div>\
         </div><div class='footer'>© Copyright 2001-2023, Python Software Foundation.</div>\
         </body></html>"
    )
}

#[test]
fn page_title_introduction_and_sibling_sections_are_kept() {
    // The first section holds most of the text: selection used to descend into it and
    // drop the `<h1>`, the introduction and the last section.
    let rows: String = (100..140)
        .map(|c| format!("<p>Status code {c} means the server answered with this code.</p>"))
        .collect();
    let html = sphinx(&format!(
        "<section id='module-http'><span id='http-modules'></span>\
         <h1>http — HTTP modules<a class='headerlink' href='#module-http'>¶</a></h1>\
         <p>Source code: Lib/http/__init__.py. This package collects modules.</p>\
         <section id='http-status-codes'><h2>HTTP status codes</h2>{rows}</section>\
         <section id='http-methods'><h2>HTTP methods</h2>\
         <p>Supported methods are listed here.</p></section></section>"
    ));
    let m = md(&html);
    assert!(m.starts_with("# http — HTTP modules\n"), "{m}");
    assert!(m.contains("This package collects modules."), "{m}");
    assert!(m.contains("## HTTP status codes"), "{m}");
    assert!(m.contains("## HTTP methods\n\nSupported methods"), "{m}");
    assert!(
        !m.contains("Copyright") && !m.contains("Table of Contents"),
        "{m}"
    );
}

#[test]
fn section_ids_built_from_heading_text_are_not_chrome() {
    let html = sphinx(&format!(
        "<section id='lexical-analysis'><h1>Lexical analysis</h1>{}\
         <section id='comments'><h2>Comments<a class='headerlink' href='#comments'>¶</a></h2>\
         <p>A comment starts with a hash character that is not part of a string.</p></section>\
         <section id='menus'><h2>Menus</h2><p>IDLE has two main window types.</p></section>\
         <section id='sharing-state-between-processes'><h2>Sharing state between processes</h2>\
         <p>It is best to avoid using shared state.</p></section>\
         <section id='cookie-objects-1'><h2>Cookie Objects</h2>\
         <p>Morsel objects are dict-like objects.</p></section></section>",
        para("A Python program is read by a parser.", 12)
    ));
    let m = md(&html);
    for kept in [
        "## Comments",
        "A comment starts with a hash",
        "## Menus",
        "two main window types",
        "## Sharing state between processes",
        "## Cookie Objects",
    ] {
        assert!(m.contains(kept), "{kept} missing from {m}");
    }
    // A chrome id that is not the heading's text still marks chrome.
    let html = sphinx(&format!(
        "<h1>Guide</h1>{}<div id='comments'><h3>Leave a reply</h3><p>{}</p></div>",
        para("The guide explains everything in detail.", 12),
        "Great post, thanks!"
    ));
    assert!(!md(&html).contains("Great post"));
}

#[test]
fn a_list_of_links_introduced_by_a_paragraph_is_kept() {
    let items: String = ["tuple", "list", "dict", "set", "frozenset", "type", "deque"]
        .iter()
        .map(|c| {
            format!(
                "<li><p><a class='reference internal' href='#{c}'><code class='xref py \
                 py-class docutils literal'><span class='pre'>{c}</span></code></a></p></li>"
            )
        })
        .collect();
    let html = sphinx(&format!(
        "<section id='generic-alias-type'><h1>Generic Alias Type</h1>{}\
         <p>The following standard library classes support parameterized generics. This \
         list is non-exhaustive.</p><ul class='simple'>{items}</ul>{}</section>",
        para(
            "GenericAlias objects are generally created by subscripting a class.",
            6
        ),
        para(
            "The builtin functions isinstance and issubclass do not accept them.",
            6
        )
    ));
    let m = md(&html);
    assert!(
        m.contains("- [`tuple`](https://docs.example.com/library/page.html#tuple)"),
        "{m}"
    );
    assert!(m.contains("[`deque`]"), "{m}");
    // A menu (no paragraph introduces it) is still dropped.
    assert!(!m.contains("Section a"), "{m}");
}

#[test]
fn code_language_comes_from_the_sphinx_wrapper() {
    let m = whole(
        "<div class='highlight-python3 notranslate'><div class='highlight'><pre>\
         <span class='n'>x</span> = 1</pre></div></div>\
         <div class='highlight-none notranslate'><div class='highlight'><pre>plain</pre></div></div>\
         <div class='highlight-default'><div class='highlight'><pre>d</pre></div></div>",
    );
    assert_eq!(
        m,
        "```python3\nx = 1\n```\n\n```\nplain\n```\n\n```\nd\n```\n"
    );
    let m = whole(
        "<pre class='lang-rust'>fn f() {}</pre><pre><code class='language-c'>int x;</code></pre>",
    );
    assert_eq!(m, "```rust\nfn f() {}\n```\n\n```c\nint x;\n```\n");
}

#[test]
fn links_inside_pre_become_plain_code() {
    let m = whole(
        "<pre><strong id='grammar-token-if_stmt'>if_stmt</strong> ::= \"if\" \
         <a class='reference internal' href='expressions.html#grammar-token-assignment_expression'>\
         assignment_expression</a> \":\"</pre>",
    );
    assert_eq!(
        m,
        "```\nif_stmt ::= \"if\" assignment_expression \":\"\n```\n"
    );
}

#[test]
fn markdown_emphasis_characters_in_text_are_escaped() {
    let m = whole("<p>Define __lt__ and *args or a*b; keep snake_case and `tick`.</p>");
    assert_eq!(
        m,
        "Define \\_\\_lt\\_\\_ and \\*args or a\\*b; keep snake_case and \\`tick\\`.\n"
    );
    // Inside code everything stays literal.
    assert_eq!(whole("<p><code>__lt__(*a)</code></p>"), "`__lt__(*a)`\n");
}

#[test]
fn heading_and_definition_permalinks_are_dropped() {
    let m = whole(
        "<h2>Functions<a class='headerlink' href='#functions' title='Permalink'>¶</a></h2>\
         <dl><dt id='time.sleep'><code>time.sleep(secs)</code>\
         <a class='headerlink' href='#time.sleep'>¶</a></dt><dd><p>Suspend.</p></dd></dl>\
         <h3>Other<a class='anchor' href='#other'>#</a></h3>",
    );
    assert_eq!(
        m,
        "## Functions\n\n`time.sleep(secs)`\n\nSuspend.\n\n### Other\n"
    );
}

#[test]
fn a_table_cells_paragraphs_stay_apart() {
    // Sphinx's index: each cell holds paragraphs, a link over its description. Read as one
    // run of text the links and descriptions blur ("since 2.0 Tutorial start here").
    let m = whole(
        "<table class='contentstable'><tr><td><p class='biglink'><a href='t/'>Tutorial</a><br>\
         <span class='linkdescr'>start here</span></p><p class='biglink'>\
         <a href='l/'>Library Reference</a><br><span class='linkdescr'>keep this</span></p></td>\
         <td><p>Glossary</p><p>FAQs</p></td></tr>\
         <tr><td><a href='x/'><div><img src='x.png' alt=''></div></a><div>Xylophone</div></td>\
         <td><div>one</div><br><div>two</div></td></tr></table>",
    );
    assert_eq!(
        m,
        "| [Tutorial](https://docs.example.com/library/t/)<br> start here<br> \
         [Library Reference](https://docs.example.com/library/l/)<br> keep this | Glossary<br> FAQs |\n\
         |---|---|\n\
         | [![](https://docs.example.com/library/x.png)](https://docs.example.com/library/x/)<br> \
         Xylophone | one<br> two |\n"
    );
}

#[test]
fn a_table_whose_cells_hold_lists_stays_a_table() {
    let m = whole(
        "<table class='docutils'><thead><tr><th><p>Code</p></th><th><p>Refs</p></th></tr></thead>\
         <tbody><tr><td><p>200</p></td><td><ul class='simple'><li><p>RFC 7231</p></li>\
         <li><p>RFC 9110</p></li></ul></td></tr>\
         <tr><td><p>404</p></td><td><p>RFC 7231</p></td></tr></tbody></table>",
    );
    assert_eq!(
        m,
        "| Code | Refs |\n|---|---|\n| 200 | RFC 7231<br> RFC 9110 |\n| 404 | RFC 7231 |\n"
    );
    // One row of columns of lists (an index page) is a layout, rendered as blocks.
    let m = whole(
        "<table class='indextable'><tr><td><ul><li>a</li><li>b</li></ul></td>\
         <td><ul><li>c</li></ul></td></tr></table>",
    );
    assert_eq!(m, "- a\n- b\n\n- c\n");
}

#[test]
fn docbook_navigation_tables_are_removed() {
    let nav = |kind: &str| {
        format!(
            "<div class='nav{kind}'><table width='100%' summary='Navigation {kind}'>\
             <tr><td width='40%' align='left'><a accesskey='p' href='ch01.html'>Prev</a> </td>\
             <td width='20%' align='center'><a accesskey='u' href='index.html'>Up</a></td>\
             <td width='40%' align='right'> <a accesskey='n' href='ch03.html'>Next</a></td></tr>\
             <tr><td width='40%' align='left' valign='top'>Chapter 1. Getting started with the tool </td>\
             <td width='20%' align='center'><a accesskey='h' href='index.html'>Home</a></td>\
             <td width='40%' align='right' valign='top'> Chapter 3. Advanced configuration</td>\
             </tr></table><hr></div>"
        )
    };
    let html = format!(
        "<html><body>{}<div class='chapter'><div class='titlepage'><h2 class='title'>\
         Chapter 2. Setup</h2></div>{}</div>{}</body></html>",
        nav("header"),
        para("Install the package and edit the configuration file.", 2),
        nav("footer")
    );
    let m = md(&html);
    assert!(m.contains("## Chapter 2. Setup"), "{m}");
    assert!(
        !m.contains("Prev") && !m.contains("Advanced configuration"),
        "{m}"
    );
}

#[test]
fn a_table_under_the_page_title_keeps_the_title_and_stays_a_table() {
    // The table holds nearly all the text: selection used to enter it (and its rows),
    // dropping the `<h1>` and rendering the rows as paragraphs.
    let rows: String = (0..40)
        .map(|i| format!("<tr><td>os.event{i}</td><td>path, mode, flags of the call</td></tr>"))
        .collect();
    let html = sphinx(&format!(
        "<section id='audit-events-table'><h1>Audit events table</h1>\
         <p>This table contains all events raised.</p>\
         <table class='docutils'><thead><tr><th>Event</th><th>Arguments</th></tr></thead>\
         <tbody>{rows}</tbody></table></section>"
    ));
    let m = md(&html);
    assert!(
        m.starts_with("# Audit events table\n\nThis table contains"),
        "{m}"
    );
    assert!(
        m.contains("| Event | Arguments |\n|---|---|\n| os.event0 | path, mode"),
        "{m}"
    );
}

#[test]
fn a_chapter_title_above_its_table_of_contents_is_kept() {
    // A chapter page: the `<h1>`, one paragraph, then the toctree (a list of links
    // inside a wrapper div) holding most of the text. Selection used to descend into the
    // wrapper and keep the list alone.
    let items: String = (0..30)
        .map(|i| {
            format!(
                "<li class='toctree-l1'><a class='reference internal' href='mod{i}.html'>\
                 <code>mod{i}</code> — Module number {i} of this chapter</a><ul>\
                 <li class='toctree-l2'><a href='mod{i}.html#a'>Functions of mod{i}</a></li>\
                 </ul></li>"
            )
        })
        .collect();
    let html = sphinx(&format!(
        "<section id='generic-services'><span id='allos'></span>\
         <h1>Generic Operating System Services<a class='headerlink' href='#x'>¶</a></h1>\
         <p>The modules described in this chapter provide interfaces to operating system \
         features. Here is an overview:</p>\
         <div class='toctree-wrapper compound'><ul>{items}</ul></div></section>"
    ));
    let m = md(&html);
    assert!(
        m.starts_with("# Generic Operating System Services\n"),
        "{m}"
    );
    assert!(m.contains("Here is an overview:"), "{m}");
    assert!(m.contains("Module number 29 of this chapter"), "{m}");
    assert!(m.contains("Functions of mod29"), "{m}");
}

/// A list inside a sentence: the paragraph before it leads into it and the one after it
/// goes on in lower case (a Rust crate's "Licensed under either of" two licence links
/// "at your option.", gi-docgen's "`func` should use one of" two functions "to set a
/// popup"). The list of links was dropped as a menu. A list after a paragraph that
/// does not go on after it stays a menu.
/// A Starlight page: the `<h1>` alone in one `div.content-panel`, the body in the next
/// one of the same class list; each section heading in a `div.sl-heading-wrapper` beside
/// its permalink. Its `og:type` is `article`, so the page reads as one: the title was
/// dropped with its panel, and a heading that is a link ("Documentation", linking to
/// the book) went with its wrapper as a teaser.
#[test]
fn a_title_panel_and_permalinked_headings_are_kept() {
    let section = |id: &str, title: &str, body: &str| {
        format!(
            "<div class='sl-heading-wrapper level-h2'><h2 id='{id}'>{title}</h2>\
             <a class='sl-anchor-link' href='#{id}'><span aria-hidden='true'>#</span>\
             <span class='sr-only'>Section titled {id}</span></a></div>{body}"
        )
    };
    let page = |title_panel: &str| {
        format!(
            "<html><head><meta property='og:type' content='article'></head><body><header>\
             <a href='/'>My Docs</a></header><nav class='sidebar'><ul>\
             <li><a href='/a/'>Alpha</a></li><li><a href='/b/'>Beta</a></li></ul></nav>\
             <main><div class='content-panel astro-a7po'>{title_panel}</div>\
             <div class='content-panel astro-a7po'><div class='sl-markdown-content'>{}{}{}\
             </div><footer><a href='/a/' rel='prev'>Previous Alpha</a></footer></div></main>\
             </body></html>",
            para(
                "Rust macro to implement the builder pattern for arbitrary structs.",
                6
            ),
            section(
                "how-it-works",
                "How it Works",
                &para("The macro writes a builder.", 6)
            ),
            section(
                "documentation",
                "<a href='https://example.org/book'>Documentation</a>",
                &para("Detailed explanation of all features.", 2)
            ),
        )
    };
    let m = md(&page(
        "<div class='sl-container'><h1 id='_top'>Builder Pattern Derive</h1></div>",
    ));
    assert!(
        m.starts_with("# Builder Pattern Derive\n\nRust macro"),
        "{m}"
    );
    assert!(
        m.contains("## [Documentation](https://example.org/book)\n\nDetailed explanation"),
        "{m}"
    );
    assert!(
        !m.contains("Section titled") && !m.contains("Previous Alpha"),
        "{m}"
    );
    // A README whose sections are `#`s: the body holds `<h1>`s of its own, and the title
    // panel stays with it all the same.
    let m = md(
        &page("<div class='sl-container'><h1 id='_top'>Builder Pattern Derive</h1></div>").replace(
            "<h2 id='how-it-works'>How it Works</h2>",
            "<h1 id='how-it-works'>How it Works</h1>",
        ),
    );
    assert!(
        m.starts_with("# Builder Pattern Derive\n\nRust macro"),
        "{m}"
    );
    assert!(m.contains("# How it Works\n"), "{m}");
    // A headline's block with a byline beside the title stands apart from the body, as
    // an article's does.
    let m = md(&page(
        "<div class='sl-container'><h1 id='_top'>Builder Pattern Derive</h1>\
         <p>By Jane Doe, 3 May</p></div>",
    ));
    assert!(!m.contains("Jane Doe"), "{m}");
}

/// A README's "## Table of Contents" over a list of the page's own anchors: the list is
/// dropped as a menu, and its heading went on standing over nothing. A "Contents" heading
/// over text stays.
#[test]
fn a_table_of_contents_heading_goes_with_its_list() {
    let page = |toc: &str| {
        format!(
            "<html><body><main><h1>zod</h1>{}<h2 id='table-of-contents'>Table of Contents\
             <a class='header-anchor' href='#table-of-contents'>#</a></h2>{toc}\
             <h2 id='install'>Install</h2>{}<h2 id='usage'>Usage</h2>{}</main></body></html>",
            para(
                "TypeScript-first schema validation with static type inference.",
                6
            ),
            para(
                "Install the package with your package manager of choice.",
                4
            ),
            para("Create a schema and parse the data against it.", 4),
        )
    };
    let m = md(&page(
        "<ul><li><a href='#install'>Install</a></li><li><a href='#usage'>Usage</a></li>\
         <li><a href='#api'>API</a><ul><li><a href='#strings'>Strings</a></li></ul></li></ul>",
    ));
    assert!(!m.contains("Table of Contents"), "{m}");
    assert!(m.contains("## Install\n\nInstall the package"), "{m}");
    let m = md(&page(&para(
        "The sections below cover installing and using it.",
        2,
    )));
    assert!(
        m.contains("## Table of Contents\n\nThe sections below"),
        "{m}"
    );
}

/// Apache's module pages: a box of the page's own anchors under a heading of any words
/// ("Directives" over `ul#toc`, in page order) is a table of contents: it goes, and its
/// heading with it, unless a heading under it follows (it heads a chapter too). Under
/// each directive, "See also" links to other directives of the page, back and forth:
/// cross-references, the section's text.
#[test]
fn a_heading_over_the_pages_anchors_goes_with_them_and_cross_references_stay() {
    let directive = |id: &str, see: &str| {
        format!(
            "<div class='directive-section'><h2 id='{id}'>{id} Directive</h2>{}{see}</div>",
            para(
                &format!("The {id} directive sets how the server answers requests."),
                4
            )
        )
    };
    let page = |quickview: &str, see: &str| {
        format!(
            "<html><body><div id='page-content'><div id='preamble'><h1>Apache Module mod_actions</h1>{}</div>\
             <div id='quickview'>{quickview}<h3>Bugfix checklist</h3><ul class='seealso'>\
             <li><a href='https://example.org/changes'>httpd changelog</a></li></ul></div>\
             {}{}{}</div></body></html>",
            para("This module runs scripts by media type or method.", 4),
            directive("action", ""),
            directive("define", see),
            directive("script", ""),
        )
    };
    let toc = "<h3 class='directives'>Directives</h3><ul id='toc'>\
               <li><a href='#action'>Action</a></li><li><a href='#define'>Define</a></li>\
               <li><a href='#script'>Script</a></li></ul>";
    let see = "<h3>See also</h3><ul><li><code><a href='#script'>Script</a></code></li>\
               <li><code><a href='#action'>Action</a></code></li></ul>";
    let m = md(&page(toc, see));
    assert!(!m.contains("Directives"), "{m}");
    assert!(m.contains("### Bugfix checklist"), "{m}");
    assert!(m.contains("### See also\n\n- [`Script`]"), "{m}");
    // A chapter's heading over its menu heads the sections that follow.
    let m = md(&page(
        &toc.replace("<h3 class='directives'>", "<h2 class='directives'>")
            .replace("Directives</h3>", "Directives</h2>"),
        see,
    ));
    assert!(m.contains("Directives"), "{m}");
    // A page's title over its jump menu is still the page's title.
    let m = md(&format!(
        "<main><div class='hero'><h1>Electric Guitars</h1><ul><li><a href='#solid'>Solid body</a></li>\
         <li><a href='#hollow'>Hollow body</a></li></ul></div>\
         <section id='solid'><h2>Solid body</h2>{}</section><section id='hollow'><h2>Hollow body</h2>{}</section></main>",
        para("Solid body guitars sustain longer and resist feedback.", 4),
        para("Hollow body guitars sound warmer and rounder.", 4)
    ));
    assert!(m.starts_with("# Electric Guitars"), "{m}");
}

/// TypeDoc's interface page: an "Index" disclosure (`summary > h5`) over a section
/// "Properties" whose links name the page's own file (`AddDaysOptions.html#in` on
/// `…/interfaces/AddDaysOptions.html`), then the members under their own "Properties".
/// The links are a table of contents of the page and go; their labels go with them,
/// the last first ("Properties"), then the one over it ("Index").
#[test]
fn labels_over_links_to_the_pages_own_file_go_with_them() {
    let page = |member_href: &str| {
        format!(
            "<html><body><div class='col-content'><div class='tsd-page-title'>\
             <h1>Interface AddDaysOptions</h1></div>{}\
             <section class='tsd-index-group'><details open><summary><h5>Index</h5></summary>\
             <div class='tsd-accordion-details'><section><h3>Properties</h3><div>\
             <a href='{member_href}#in'><span>in</span></a>\
             <a href='{member_href}#step'><span>step</span></a></div></section></div>\
             </details></section><section><h2>Properties</h2>\
             <section id='in'><h3>in</h3>{}</section><section id='step'><h3>step</h3>{}</section>\
             </section></div></body></html>",
            para("The addDays function options.", 3),
            para("The context to use in the function.", 4),
            para("How many days to add at a time.", 4),
        )
    };
    let at = |html: &str| {
        let u = Url::parse("https://docs.example.com/interfaces/AddDaysOptions.html")
            .expect("static URL");
        extract(html, &u, &ExtractOptions::default()).markdown
    };
    for href in [
        "AddDaysOptions.html",
        "../interfaces/AddDaysOptions.html",
        "",
    ] {
        let m = at(&page(href));
        assert!(!m.contains("Index"), "{href}: {m}");
        assert_eq!(m.matches("Properties").count(), 1, "{href}: {m}");
        assert!(m.contains("## Properties\n\n### in"), "{href}: {m}");
    }
    // Links to another page's places are not this page's table of contents.
    let m = at(&page("AddHoursOptions.html"));
    assert!(m.contains("### Properties"), "{m}");
}

/// A link goes to a place on the page when it names only a fragment or the page's own
/// address, as its base resolves it.
#[test]
fn a_link_to_the_pages_own_address_goes_to_a_place_on_it() {
    let mut tree = tree::Tree::parse("<p>x</p>", &ExtractOptions::default());
    assert_eq!(tree.fragment("#in"), Some("in"));
    assert_eq!(tree.fragment("#"), Some(""));
    // Without an address, only a bare fragment is known to stay on the page.
    assert_eq!(tree.fragment("Opts.html#in"), None);
    let page = Url::parse("https://docs.example.com/interfaces/Opts.html").expect("static URL");
    let address = |base: &str| tree::Address {
        page: page.clone(),
        base: Url::parse(base).expect("static URL"),
    };
    tree.address = Some(address(page.as_str()));
    assert_eq!(tree.fragment("Opts.html#in"), Some("in"));
    assert_eq!(tree.fragment("../interfaces/Opts.html#in"), Some("in"));
    assert_eq!(
        tree.fragment("https://docs.example.com/interfaces/Opts.html#in"),
        Some("in")
    );
    assert_eq!(tree.fragment("Other.html#in"), None);
    assert_eq!(tree.fragment("Opts.html"), None);
    assert_eq!(tree.fragment("Opts.html?v=2#in"), None);
    // A `<base>` elsewhere resolves the same name to another page.
    tree.address = Some(address("https://docs.example.com/classes/"));
    assert_eq!(tree.fragment("Opts.html#in"), None);
}

/// pydoctor's class page: `div#main` (the skip link's target, no `<main>`) holds the title
/// block, the class's signature and docstring, a table of its own members, a much longer
/// table of inherited ones, then its members' documentation. `id="main"` names the main
/// content as `<main>` does, so the title beside the tables keeps them together; without
/// it the descent took the inherited table alone.
#[test]
fn an_element_with_the_id_main_is_the_main_content() {
    let inherited: String = (0..40)
        .map(|i| {
            format!(
                "<tr><td>Method</td><td><code><a href='TokenList.html#m{i}'>method_{i}</a></code></td>\
                 <td>Inherited method number {i} of the token list.</td></tr>"
            )
        })
        .collect();
    let page = |id: &str| {
        format!(
            "<html><body><nav class='sidebar'><a href='index.html'>API</a></nav>\
             <div id='{id}'><div class='page-header'><h1>MIMEVersion</h1></div>\
             <p class='class-signature'><code>class MIMEVersion(TokenList):</code></p>\
             <div id='splitTables'><table><tr><td>Class Variable</td><td><code>\
             <a href='#major'>major</a></code></td><td>The major version.</td></tr></table>\
             <p>Inherited from <code><a href='TokenList.html'>TokenList</a></code>:</p>\
             <table>{inherited}</table></div>\
             <div class='basevariable'><div class='functionHeader'>major =</div>\
             <div class='docstring'><p>The major version of MIME in the header.</p></div></div>\
             </div></body></html>"
        )
    };
    let m = md(&page("main"));
    assert!(m.starts_with("# MIMEVersion"), "{m}");
    assert!(m.contains("class MIMEVersion(TokenList):"), "{m}");
    assert!(m.contains("The major version of MIME"), "{m}");
    assert!(m.contains("method_39"), "{m}");
    // Another id names nothing: the inherited table outweighs the rest, as before.
    let m = md(&page("body"));
    assert!(!m.contains("The major version of MIME"), "{m}");
}

/// pydoctor's package page: the title is one link, to the page itself
/// (`<h1><code><a href="email.html">email</a></code></h1>` on `…/email.html`), in a block
/// beside a toggle button. A title linking to its own page is a permalink, not a link
/// away: the block is no menu.
#[test]
fn a_title_linking_to_its_own_page_is_no_menu() {
    let rows: String = (0..12)
        .map(|i| {
            format!(
                "<tr><td>Module</td><td><code><a href='email.m{i}.html'>m{i}</a></code></td>\
                 <td>What module {i} of the package does.</td></tr>"
            )
        })
        .collect();
    let page = |href: &str| {
        format!(
            "<html><body><div id='main'><div class='page-header'><h1><code><a href='{href}'>email\
             </a></code></h1><div id='showPrivate'><button>Toggle Private API</button></div></div>\
             <div class='moduleDocstring'><p>A package for parsing, handling, and generating \
             email messages.</p></div><table>{rows}</table></div></body></html>"
        )
    };
    let at = |html: &str| {
        let u = Url::parse("https://docs.example.com/api/email.html").expect("static URL");
        extract(html, &u, &ExtractOptions::default()).markdown
    };
    for href in ["email.html", "#", "https://docs.example.com/api/email.html"] {
        let m = at(&page(href));
        assert!(m.starts_with("# "), "{href}: {m}");
        assert!(m.contains("email"), "{href}: {m}");
    }
    // A title linking elsewhere (a teaser's headline) is still a link.
    let m = at(&page("other.html"));
    assert!(!m.starts_with("# "), "{m}");
}

/// pdoc's module page: the title over the module's whole source (shown by a "View Source"
/// toggle), then a section for each function, its signature's source and its docstring.
/// The module's source outweighs the rest, and the descent took it alone: every
/// function's documentation went.
#[test]
fn a_titled_listing_beside_sections_of_prose_keeps_them() {
    let source: String = (0..400)
        .map(|i| format!("def helper_{i}(value):\n    return value + {i}\n"))
        .collect();
    let function = |name: &str, doc: &str| {
        format!(
            "<section id='{name}'><input id='{name}-view-source' class='view-source-toggle-state' \
             type='checkbox'><label class='view-source-button' for='{name}-view-source'>View \
             Source</label><div class='attr function'><span class='def'>def</span> \
             <span class='name'>{name}</span>(obj):</div><div class='pdoc-code codehilite'>\
             <pre><span></span><code>def {name}(obj):\n    return obj\n</code></pre></div>\
             <div class='docstring'>{}</div></section>",
            para(doc, 4)
        )
    };
    let html = format!(
        "<html><body><nav class='pdoc'><a href='index.html'>Module index</a></nav>\
         <main class='pdoc'><section class='module-info'><h1 class='modulename'>dataclasses\
         </h1><input id='mod-view-source' class='view-source-toggle-state' type='checkbox'>\
         <label class='view-source-button' for='mod-view-source'>View Source</label>\
         <div class='pdoc-code codehilite'><pre><span></span><code>{source}</code></pre></div>\
         </section>{}{}{}</main></body></html>",
        function(
            "fields",
            "Return a tuple describing the fields of this dataclass."
        ),
        function(
            "asdict",
            "Return the fields of a dataclass instance as a new dictionary."
        ),
        function(
            "replace",
            "Return a new object replacing specified fields with new values."
        ),
    );
    let m = md(&html);
    assert!(m.starts_with("# dataclasses"), "{m}");
    assert!(m.contains("def helper_399(value):"), "{m}");
    assert!(m.contains("Return a tuple describing the fields"), "{m}");
    assert!(m.contains("Return a new object replacing"), "{m}");
}

#[test]
fn a_list_inside_a_sentence_is_kept() {
    let page = |after: &str| {
        format!(
            "<html><body><nav><a href='/'>Home</a></nav><main><h1>rsa</h1>{}\
             <h2 id='license'>License</h2><p>Licensed under either of</p><ul>\
             <li><a href='http://www.apache.org/licenses/LICENSE-2.0'>Apache License, Version 2.0</a></li>\
             <li><a href='http://opensource.org/licenses/MIT'>MIT license</a></li></ul>{after}\
             <h3>Contribution</h3>{}</main></body></html>",
            para("A portable RSA implementation in pure Rust.", 8),
            para("Unless you explicitly state otherwise, contributions are dual licensed.", 2),
        )
    };
    let m = md(&page("<p>at your option.</p>"));
    assert!(
        m.contains("Licensed under either of\n\n- [Apache License, Version 2.0](http://www.apache.org/licenses/LICENSE-2.0)\n\
                    - [MIT license](http://opensource.org/licenses/MIT)\n\nat your option."),
        "{m}"
    );
    let m = md(&page("<p>At your option.</p>"));
    assert!(!m.contains("MIT license"), "{m}");
}

#[test]
fn a_wrapped_list_of_links_announced_by_a_colon_is_kept() {
    // Sphinx wraps each toctree in `div.toctree-wrapper`; the second is introduced by a
    // paragraph of two words ending with a colon. Both used to go as link-dense menus.
    let toc = |name: &str| -> String {
        let items: String = (0..4)
            .map(|i| {
                format!("<li class='toctree-l1'><a href='{name}{i}.html'>{name} part {i}</a></li>")
            })
            .collect();
        format!("<div class='toctree-wrapper compound'><ul>{items}</ul></div>")
    };
    let html = sphinx(&format!(
        "<section id='module-email'><h1>email — An email and MIME handling package</h1>\
         {}<p>Contents of the email package documentation, in the order to read them:</p>{}\
         {}<p>Legacy API:</p>{}</section>",
        para(
            "The email package is a library for managing email messages.",
            12
        ),
        toc("modern"),
        para(
            "The remaining sections cover the legacy API of the package.",
            12
        ),
        toc("legacy"),
    ));
    let m = md(&html);
    assert!(m.contains("- [modern part 3]"), "{m}");
    assert!(m.contains("Legacy API:\n\n- [legacy part 0]"), "{m}");
    assert!(m.contains("- [legacy part 3]"), "{m}");
}

/// An index page (Sphinx's `genindex`): an entry whose sub-entries are links only
/// ("!=" → "operator, [1]") keeps them; the outer list decides for its sublists, which were
/// dropped one by one as link-dense menus. The sidebar's menu still goes.
#[test]
fn the_sublists_of_a_kept_list_stay_with_it() {
    let mut entries = String::new();
    for (i, op) in ["!=", "%=", "&=", "**=", "//=", "<<=", ">>=", "^="]
        .iter()
        .enumerate()
    {
        entries.push_str(&format!(
            "<li>{op} <ul><li><a href='reference/expressions.html#index-{i}'>operator</a>, \
             <a href='library/stdtypes.html#index-{i}'>[1]</a></li></ul></li>\
             <li>{op} (augmented assignment) <ul><li><a href='reference/simple_stmts.html#x{i}'>\
             assignment statement</a></li></ul></li>"
        ));
    }
    let html = sphinx(&format!(
        "<section><h1 id='index-symbols'>Index – Symbols</h1>\
         <table class='indextable genindextable'><tr><td><ul>{entries}</ul></td></tr></table>\
         </section>"
    ));
    let m = md(&html);
    assert_eq!(m.matches("[operator]").count(), 8, "{m}");
    assert_eq!(m.matches("[assignment statement]").count(), 8, "{m}");
    assert!(m.contains("- !=\n  - [operator]"), "{m}");
    assert!(!m.contains("Section a"), "{m}");
}

/// A table of links under a header row (pathlib's "Correspondence to tools in the os
/// module": `os.path.abspath()` | `Path.absolute()`) is data, however link-dense: it went
/// whole as a link-dense menu. A headerless table of links (a navigation bar) still goes.
#[test]
fn a_table_of_links_with_a_header_row_is_kept() {
    let rows: String = [
        ("abspath", "absolute"),
        ("realpath", "resolve"),
        ("exists", "exists"),
    ]
    .iter()
    .map(|(a, b)| {
        format!(
            "<tr><td><p><a href='os.path.html#os.path.{a}'><code>os.path.{a}()</code></a>\
                 </p></td><td><p><a href='#pathlib.Path.{b}'><code>Path.{b}()</code></a></p>\
                 </td></tr>"
        )
    })
    .collect();
    let html = sphinx(&format!(
        "<section><h1>pathlib</h1>{}<section><h2>Correspondence to tools in the os module</h2>\
         <table class='docutils align-default'><thead><tr><th><p><a href='os.html'>os</a></p>\
         </th><th><p><a href='#module-pathlib'>pathlib</a></p></th></tr></thead><tbody>{rows}\
         </tbody></table><table><tr><td><a href='/a'>Home</a></td><td><a href='/b'>Up</a></td>\
         </tr></table></section></section>",
        para(
            "This module offers classes representing filesystem paths.",
            8
        )
    ));
    let m = md(&html);
    assert!(
        m.contains("| [`os.path.abspath()`](https://docs.example.com/library/os.path.html#os.path.abspath) |"),
        "{m}"
    );
    assert_eq!(m.matches("\n| ").count(), 4, "a header and three rows: {m}");
    assert!(!m.contains("[Home]"), "{m}");
}

/// Numbered sections (Sphinx's `<span class="section-number">2.3. </span>`): the id is built
/// from the title without its number, so "2.3. Python-related paths and files" with
/// `id="python-related-paths-and-files"` is the section's subject, not a "related" shelf.
/// It went whole (its table of install paths with it).
#[test]
fn a_numbered_section_whose_id_spells_its_title_is_not_chrome() {
    let html = sphinx(&format!(
        "<section id='using-python-on-unix-platforms'><h1><span class='section-number'>2. \
         </span>Using Python on Unix platforms</h1>{}\
         <section id='python-related-paths-and-files'><h2><span class='section-number'>2.3. \
         </span>Python-related paths and files<a class='headerlink' \
         href='#python-related-paths-and-files'>¶</a></h2>\
         <p>These are subject to difference depending on local installation conventions.</p>\
         <table><thead><tr><th><p>File/directory</p></th><th><p>Meaning</p></th></tr></thead>\
         <tbody><tr><td><p><code>exec_prefix/bin/python3</code></p></td>\
         <td><p>Recommended location of the interpreter.</p></td></tr></tbody></table>\
         </section></section>",
        para("Python comes preinstalled on most Linux distributions.", 10)
    ));
    let m = md(&html);
    assert!(m.contains("## 2.3. Python-related paths and files"), "{m}");
    assert!(
        m.contains("Recommended location of the interpreter."),
        "{m}"
    );
    // A chrome id that is a number and a chrome word, not a title, still marks chrome.
    let html = sphinx(&format!(
        "<h1>Guide</h1>{}<div id='2-related'><h3>Related</h3><p>{}</p></div>",
        para("The guide explains everything in detail.", 12),
        "See also our other posts about gardening."
    ));
    assert!(!md(&html).contains("gardening"), "{}", md(&html));
}

/// A page of two titled documents (Sphinx's `library/curses.html`: `curses`, then
/// `curses.textpad`, each a `<section>` under its own `<h1>`): both are kept. The second
/// went whole, the larger one being chosen alone.
#[test]
fn titled_sections_side_by_side_are_all_kept() {
    let html = sphinx(&format!(
        "<section id='module-curses'><h1>curses — Terminal handling</h1>{}\
         <section id='functions'><h2>Functions</h2>{}</section></section>\
         <section id='module-curses.textpad'><span id='curses-textpad'></span>\
         <h1>curses.textpad — Text input widget</h1>{}\
         <table><thead><tr><th><p>Keystroke</p></th><th><p>Action</p></th></tr></thead>\
         <tbody><tr><td><p>Control-A</p></td><td><p>Go to left edge of window.</p></td></tr>\
         </tbody></table></section>",
        para(
            "The curses module provides an interface to the curses library.",
            10
        ),
        para(
            "The module curses defines the following functions and exceptions.",
            20
        ),
        para(
            "The textpad module provides a Textbox class for elementary editing.",
            3
        )
    ));
    let m = md(&html);
    assert!(m.contains("# curses — Terminal handling"), "{m}");
    assert!(m.contains("# curses.textpad — Text input widget"), "{m}");
    assert!(
        m.contains("| Control-A | Go to left edge of window. |"),
        "{m}"
    );
    assert!(!m.contains("Section a"), "{m}");
}

/// docutils indents a list inside a table cell by wrapping it in `<blockquote><div>`
/// (`sys.thread_info`'s "Name of the thread implementation:" cell): it is a list in a cell,
/// and the table stays a table. The blockquote made it read as a layout, flattened to
/// paragraphs.
#[test]
fn a_table_whose_cells_hold_indented_lists_stays_a_table() {
    let m = whole(
        "<table class='docutils align-default'><thead><tr><th><p>Attribute</p></th>\
         <th><p>Explanation</p></th></tr></thead><tbody>\
         <tr><td><p><code>name</code></p></td><td><p>Name of the thread implementation:</p>\
         <blockquote><div><ul class='simple'><li><p><code>'nt'</code>: Windows threads</p></li>\
         <li><p><code>'pthread'</code>: POSIX threads</p></li></ul></div></blockquote></td></tr>\
         <tr><td><p><code>version</code></p></td><td><p>Name and version.</p></td></tr>\
         </tbody></table>",
    );
    assert_eq!(
        m,
        "| Attribute | Explanation |\n|---|---|\n| `name` | Name of the thread implementation:\
         <br> `'nt'`: Windows threads<br> `'pthread'`: POSIX threads |\n\
         | `version` | Name and version. |\n"
    );
    // A quotation in a cell is still prose laid out in a table, not data.
    let m = whole(
        "<table><tr><td>alice</td><td><blockquote><p>quoted</p></blockquote><p>reply</p></td>\
         </tr><tr><td>bob</td><td><p>more</p></td></tr></table>",
    );
    assert!(!m.contains('|'), "{m}");
}

/// A grid of links announced by a paragraph ("PEP 594 led to the deprecations of the
/// following modules:" above a table of 19 module links, no header row) is part of the
/// text like a list so introduced; it was dropped as a link-dense menu. So is one row of
/// columns of entries (Sphinx's index page: "Meta information:" over two columns of links).
/// A one-cell box of links after a paragraph (a call to action, a table of contents) is not
/// a grid, nor one row of single links.
#[test]
fn a_grid_of_links_introduced_by_a_paragraph_is_kept() {
    let cell =
        |m: &str| format!("<td><p><a href='../library/{m}.html'><code>{m}</code></a></p></td>");
    let row = |ms: &[&str]| {
        format!(
            "<tr>{}</tr>",
            ms.iter().map(|m| cell(m)).collect::<String>()
        )
    };
    let html = sphinx(&format!(
        "<section><h1>What's New In Python 3.11</h1>{}<h2>Deprecated</h2><p>\
         <a href='https://peps.example/594'><strong>PEP 594</strong></a> led to the \
         deprecations of the following modules slated for removal in Python 3.13:</p>\
         <table class='docutils align-default'><tbody>{}{}</tbody></table><p>Read the <a href='/guide'>full guide to the release</a>:</p>\
         <table><tr><td><a href='/a'>Talk to us</a> <a href='/b'>Book a demo</a></td></tr></table>\
         <p><strong>Meta information:</strong></p><table class='contentstable'><tr><td>\
         <p><a href='/bugs'>Reporting bugs</a></p><p><a href='/about'>About the documentation</a>\
         </p></td><td><p><a href='/license'>History and License</a></p>\
         <p><a href='/copyright'>Copyright</a></p></td></tr></table><p>Share it:</p>\
         <table><tr><td><a href='/f'>Facebook</a></td><td><a href='/t'>Twitter</a></td></tr></table>\
         {}</section>",
        para("This article explains the new features in Python 3.11.", 8),
        row(&["aifc", "chunk", "msilib"]),
        row(&["audioop", "crypt", "nis"]),
        para("The removed modules are listed in the porting notes.", 6),
    ));
    let m = md(&html);
    assert!(
        m.contains("| [`aifc`](https://docs.example.com/library/aifc.html) |"),
        "{m}"
    );
    assert!(m.contains("[`nis`]"), "{m}");
    assert!(!m.contains("Book a demo"), "{m}");
    // One row of columns, each holding more than one entry, is such a grid too; one row of
    // single links (a share bar) is not.
    assert!(
        m.contains("[Reporting bugs](https://docs.example.com/bugs)<br> [About the documentation]"),
        "{m}"
    );
    assert!(
        m.contains("[Copyright](https://docs.example.com/copyright) |"),
        "{m}"
    );
    assert!(!m.contains("Twitter"), "{m}");
}

/// A page whose body is one code block under its title (a grammar specification:
/// `<h1>`, an introduction, then `div.highlight > pre`): the title and the introduction are
/// kept; selection used to descend into the code block.
#[test]
fn a_code_block_under_the_page_title_keeps_the_title() {
    let rules: String = (0..60)
        .map(|i| format!("rule_{i}: expression_{i} | other_{i}\n"))
        .collect();
    let html = sphinx(&format!(
        "<section id='full-grammar-specification'><h1>10. Full Grammar specification</h1>\
         <p>This is the full Python grammar, derived directly from the grammar used to \
         generate the CPython parser.</p><div class='highlight-peg notranslate'>\
         <div class='highlight'><pre>{rules}</pre></div></div></section>"
    ));
    let m = md(&html);
    assert!(m.starts_with("# 10. Full Grammar specification\n"), "{m}");
    assert!(m.contains("This is the full Python grammar"), "{m}");
    assert!(m.contains("```peg\nrule_0: expression_0"), "{m}");
}

/// docutils links each heading to its entry in the page's table of contents
/// (`<a class="toc-backref" href="#id2">`). The heading is a title, not a link: it renders
/// as text, and a section holding only its heading is not a link-dense menu (the FAQ's
/// "General GUI Questions" went, with the level it opens).
#[test]
fn a_headings_back_reference_is_part_of_the_title() {
    let html = sphinx(&format!(
        "<section id='gui-faq'><h1><a class='toc-backref' href='#id1'>GUI FAQ</a>\
         <a class='headerlink' href='#gui-faq'>¶</a></h1>\
         <section id='general'><h2><a class='toc-backref' href='#id2' role='doc-backlink'>\
         General GUI Questions</a></h2></section>\
         <section id='toolkits'><h2><a class='toc-backref' href='#id3'>What GUI toolkits exist?\
         </a></h2>{}</section></section>",
        para("Standard builds of Python include an interface to Tk.", 8)
    ));
    let m = md(&html);
    assert!(
        m.starts_with("# GUI FAQ\n\n## General GUI Questions\n\n## What GUI toolkits exist?\n"),
        "{m}"
    );
    // A heading linking elsewhere keeps its link.
    let m = whole("<h2><a href='/posts/one'>First post</a></h2><p>Text.</p>");
    assert!(
        m.contains("## [First post](https://docs.example.com/posts/one)"),
        "{m}"
    );
}

/// An empty chapter (mdBook: `<main>` holding the chapter's `<h1>` and nothing else; a
/// Sphinx letters page whose links all go as a menu): the descent from the page used to
/// find the keyboard-help overlay or the footer. Scraps outside a `<main>` that holds an
/// `<h1>` give way to the landmark; a real body outside it (a site whose `<main>` holds only
/// the article's header) does not.
#[test]
fn an_empty_chapter_is_its_title_not_the_help_overlay() {
    let page = |outside: &str| {
        format!(
            "<html><body><div id='mdbook-help-container'><div id='mdbook-help-popup'>\
             <h2 class='mdbook-help-title'>Keyboard shortcuts</h2><div><p>Press <kbd>←</kbd> \
             or <kbd>→</kbd> to navigate between chapters</p><p>Press <kbd>S</kbd> to search \
             in the book</p></div></div></div><nav id='sidebar' class='sidebar'><ol>\
             <li><a href='intro.html'>Introduction</a></li><li><a href='lexical.html'>Lexical \
             structure</a></li><li><a href='tokens.html'>Tokens</a></li></ol></nav>\
             <div id='page-wrapper'><div id='menu-bar'><h1 class='menu-title'>The Reference</h1>\
             </div><div id='content'><main><h1 id='lexical-structure'><a class='header' \
             href='#lexical-structure'>Lexical structure</a></h1></main>{outside}</div></div>\
             </body></html>"
        )
    };
    assert_eq!(md(&page("")), "# Lexical structure\n");
    let body = para(
        "The article's body is written here, outside the landmark.",
        20,
    );
    let m = md(&page(&format!("<div class='article-body'>{body}</div>")));
    assert!(m.contains("The article's body is written here"), "{m}");
}

/// mdBook wraps every table in `div.table-wrapper`. A table with a header row is data
/// however link-dense (R10), but the wrapper was weighed first and went as a menu, table and
/// all (Cargo's "Command | Default Profile"). A wrapper holding only a headed table is the
/// table; a menu laid out in a wrapped table has no header and still goes.
#[test]
fn a_wrapped_table_with_a_header_row_is_kept() {
    let rows: String = ["run", "build", "test", "bench", "install"]
        .iter()
        .map(|c| {
            format!(
                "<tr><td><a href='../commands/cargo-{c}.html'><code>cargo {c}</code></a></td>\
                 <td><a href='#{c}'><code>{c}</code> profile</a></td></tr>"
            )
        })
        .collect();
    let html = format!(
        "<html><body><nav id='sidebar'><ol><li><a href='a.html'>Guide</a></li>\
         <li><a href='b.html'>Reference</a></li></ol></nav><main><h1>Profiles</h1>{}\
         <p>The profile used depends on the command. The default profile if none is \
         specified is:</p><div class='table-wrapper'><table><thead><tr><th>Command</th>\
         <th>Default Profile</th></tr></thead><tbody>{rows}</tbody></table></div>{}\
         <div class='table-wrapper'><table><tr><td><a href='/p'>Previous</a></td>\
         <td><a href='/n'>Next</a></td></tr></table></div></main></body></html>",
        para("Profiles provide a way to alter the compiler settings.", 6),
        para("Profile settings can be changed in the manifest.", 6),
    );
    let m = md(&html);
    assert!(m.contains("| Command | Default Profile |"), "{m}");
    assert!(m.contains("[`cargo install`]"), "{m}");
    assert!(!m.contains("[Next]"), "{m}");
}

/// rustdoc lays an item's page out flat under its header: `div.main-heading` (the `<h1>`),
/// the declaration, the description, then `<h2>Implementations</h2><div>…</div><h2>Trait
/// Implementations</h2><div>…</div>`. The methods' list held most of the text, so selection
/// descended into it and kept only the description beside it: the `<h1>`, the declaration,
/// the section titles and the trait implementations went.
#[test]
fn a_titled_document_of_flat_sections_keeps_all_of_them() {
    let methods: String = [
        "open",
        "create",
        "sync_all",
        "sync_data",
        "set_len",
        "metadata",
    ]
    .iter()
    .map(|m| {
        format!(
            "<details class='toggle method-toggle' open><summary><section id='method.{m}' \
                 class='method'><h4 class='code-header'>pub fn <a href='#method.{m}' \
                 class='fn'>{m}</a>(&amp;self) -&gt; <a href='../io/type.Result.html'>Result\
                 </a></h4></section></summary><div class='docblock'><p>Calls {m} on the \
                 file, waiting until the operating system has finished the whole of it and \
                 returning any error it reports to the caller.</p></div></details>"
        )
    })
    .collect();
    let html = format!(
        "<html><body><nav class='sidebar'><ul><li><a href='#method.open'>open</a></li>\
         <li><a href='#method.create'>create</a></li></ul></nav><main><div class='width-limiter'>\
         <section id='main-content' class='content'><div class='main-heading'>\
         <div class='rustdoc-breadcrumbs'><a href='../index.html'>std</a>::<a href='index.html'>\
         fs</a></div><h1>Struct <span class='struct'>File</span></h1><span class='sub-heading'>\
         <a class='src' href='../../src/std/fs.rs.html'>Source</a></span></div>\
         <pre class='rust item-decl'><code>pub struct File {{ /* private fields */ }}</code></pre>\
         <details class='toggle top-doc' open><summary class='hideme'><span>Expand description\
         </span></summary><div class='docblock'><p>An object providing access to an open file \
         on the filesystem.</p></div></details>\
         <h2 id='implementations' class='section-header'>Implementations<a href='#implementations' \
         class='anchor'>§</a></h2><div id='implementations-list'><details class='toggle \
         implementors-toggle' open><summary><section id='impl-File' class='impl'>\
         <h3 class='code-header'>impl File</h3></section></summary><div class='impl-items'>\
         {methods}</div></details></div>\
         <h2 id='trait-implementations' class='section-header'>Trait Implementations\
         <a href='#trait-implementations' class='anchor'>§</a></h2>\
         <div id='trait-implementations-list'><section id='impl-Debug-for-File' class='impl'>\
         <h3 class='code-header'>impl Debug for File</h3></section><div class='docblock'><p>\
         Formats the value using the given formatter.</p></div></div>\
         <h2 id='synthetic-implementations' class='section-header'>Auto Trait Implementations\
         </h2><div id='synthetic-implementations-list'><section class='impl'>\
         <h3 class='code-header'>impl Send for File</h3></section></div>\
         </section></div></main></body></html>"
    );
    let m = md(&html);
    for kept in [
        "# Struct File",
        "pub struct File",
        "An object providing access",
        "## Implementations",
        "#### pub fn sync_all(&self)",
        "## Trait Implementations",
        "### impl Debug for File",
        "## Auto Trait Implementations",
    ] {
        assert!(m.contains(kept), "{kept}: {m}");
    }
}

/// A DocBook reference page (PostgreSQL's `sql-select.html`): the name, the synopsis and
/// `div.refsect1` sections under `<h2>`s, no `<h1>`. "Parameters" held most of the text, so
/// the descent took it (with the sections before it as its lead) and dropped "Examples" and
/// "Compatibility". Three or more sections titled at the same level are the document's.
#[test]
fn sections_titled_at_one_level_are_all_kept() {
    let section = |t: &str, body: &str| format!("<div class='refsect1'><h2>{t}</h2>{body}</div>");
    let html = format!(
        "<html><body><div class='navheader'><table><tr><td><a href='prev.html'>Prev</a></td>\
         <td><a href='next.html'>Next</a></td></tr></table></div><div class='refentry'>\
         <div class='refnamediv'><h2>SELECT</h2><p>SELECT — retrieve rows from a table</p></div>\
         {}{}{}{}</div><div class='navfooter'><a href='index.html'>Home</a></div></body></html>",
        section(
            "Description",
            &para("SELECT retrieves rows from zero or more tables.", 3)
        ),
        section(
            "Parameters",
            &para(
                "The WITH clause allows you to specify subqueries by name.",
                40
            )
        ),
        section(
            "Examples",
            &para("To join the table films with the table distributors.", 3)
        ),
        section(
            "Compatibility",
            &para("The SELECT statement is compatible with the standard.", 3)
        ),
    );
    let m = md(&html);
    for kept in [
        "## Description",
        "## Parameters",
        "## Examples",
        "## Compatibility",
    ] {
        assert!(m.contains(kept), "{kept}: {m}");
    }
    assert!(!m.contains("[Prev]"), "{m}");
}

/// A DocBook table page (PostgreSQL's system catalogs and function tables): the title,
/// an introduction, then `div.table > p.title + div.table-contents > table`, one column
/// under a header cell ("Column Type Description"), then notes. The descent entered the
/// table, which then held most of the text: the title, the introduction and the notes
/// went, and its rows came out as paragraphs. A data table with prose beside it is part
/// of the text; entered alone it stays the unit; one column under a header cell is a table.
#[test]
fn a_captioned_data_table_stays_a_table_beside_its_text() {
    let rows: String = (0..30)
        .map(|i| {
            format!(
                "<tr><td class='catalog_table_entry'><p class='column_definition'>\
                 <code class='structfield'>col{i}</code> <code class='type'>oid</code></p>\
                 <p>The column number {i} of the catalog</p></td></tr>"
            )
        })
        .collect();
    let html = format!(
        "<html><body><div class='navheader'><table><tr><td><a href='p.html'>Prev</a></td>\
         <td><a href='n.html'>Next</a></td></tr></table></div><div class='sect1'>\
         <div class='titlepage'><div><div><h2 class='title'>53.52. pg_trigger</h2></div></div>\
         </div><p>The catalog <code>pg_trigger</code> stores triggers on tables and views. \
         See CREATE TRIGGER for more information.</p><div class='table'><p class='title'>\
         <strong>Table 53.52. pg_trigger Columns</strong></p><div class='table-contents'>\
         <table class='table' border='1'><thead><tr><th class='catalog_table_entry'>\
         <p class='column_definition'>Column Type</p><p>Description</p></th></tr></thead>\
         <tbody>{rows}</tbody></table></div></div><p>Currently, column-specific triggering is \
         supported only for UPDATE events, and so tgattr is relevant only for that event \
         type.</p></div></body></html>"
    );
    let m = md(&html);
    assert!(m.starts_with("## 53.52. pg_trigger\n"), "{m}");
    assert!(m.contains("stores triggers on tables"), "{m}");
    assert!(
        m.contains("| Column Type<br> Description |\n|---|\n| `col0` `oid`<br> The column"),
        "{m}"
    );
    assert!(m.contains("Currently, column-specific triggering"), "{m}");
    // Alone on its page, a data table is still rendered as one.
    let m = md(&format!(
        "<html><body><div><table><thead><tr><th>Key Word</th><th>Status</th></tr></thead>\
         <tbody>{}</tbody></table></div><div><a href='/'>Home</a></div></body></html>",
        (0..40)
            .map(|i| format!("<tr><td><code>WORD{i}</code></td><td>non-reserved</td></tr>"))
            .collect::<String>()
    ));
    assert!(
        m.starts_with("| Key Word | Status |\n|---|---|\n| `WORD0` | non-reserved |"),
        "{m}"
    );
}

#[test]
fn a_list_of_sections_is_sections_not_indented_code() {
    // Javadoc lists its member details as sections in list items, two levels deep. The
    // heading took the place of the item's marker but the item's indentation stayed, so
    // everything under `### sum` was indented four spaces: an indented code block.
    let html = "<main><h1>Class Totals</h1><p>Sums and counts of a stream of values.</p>\
        <ul class='details'><li><section><h2>Method Details</h2>\
        <ul class='members'><li><section><h3>sum</h3>\
        <p>Returns the sum of the <a href='Values.html'>values</a> seen so far.</p>\
        </section></li><li><section><h3>count</h3>\
        <p>Returns how many values were seen.</p></section></li></ul>\
        </section></li></ul></main>";
    let m = md(html);
    assert!(m.contains("\n## Method Details\n"), "{m}");
    assert!(m.contains("\n### sum\n\nReturns the sum"), "{m}");
    assert!(!m.lines().any(|l| l.starts_with("    ")), "{m}");
    // A heading later in an item stays in it, and one in a quote stays in the quote.
    let m = whole(
        "<ul><li><p>First step of the install.</p><h3>Then</h3>\
         <p>Second step.</p></li></ul><blockquote><h2>Quoted title</h2><p>Quoted text.</p></blockquote>",
    );
    assert!(
        m.contains("- First step of the install.\n\n  ### Then\n\n  Second step."),
        "{m}"
    );
    assert!(m.contains("> ## Quoted title"), "{m}");
}

#[test]
fn a_link_inside_inline_code_is_a_link_not_code_text() {
    // Apache's manual and Javadoc write `<code><a>name</a></code>`: the link's syntax
    // came out inside the code span, as literal text (`` `[mod_cache](url)` ``).
    let m = whole(
        "<p>See the <code class='module'><a href='mod_cache.html'>mod_cache</a></code> module, \
         call <code><a href='P.html'>getProcessor</a>()</code>, and \
         <code><a href='t.html'>a`b</a></code>.</p>",
    );
    assert!(
        m.contains("[`mod_cache`](https://docs.example.com/library/mod_cache.html) module"),
        "{m}"
    );
    // A link that is part of a longer span keeps its text; the span stays one span.
    assert!(m.contains("call `getProcessor()`,"), "{m}");
    assert!(
        m.contains("[``a`b``](https://docs.example.com/library/t.html)"),
        "{m}"
    );
}

#[test]
fn code_that_shows_a_fence_gets_a_longer_fence() {
    // A page about markdown shows fenced code inside its code blocks: a three-backtick
    // fence closed at the code's first fence line, and the rest of the page was code.
    let m = whole(
        "<pre><code class='language-markdown'>```python\ndef f():\n    pass\n```\n</code></pre>\
         <p>After the block.</p><blockquote><pre>````\nx\n````</pre></blockquote>",
    );
    assert!(
        m.starts_with("````markdown\n```python\ndef f():\n    pass\n```\n````\n\nAfter the block."),
        "{m}"
    );
    assert!(m.contains("> `````\n> ````\n> x\n> ````\n> `````"), "{m}");
}

#[test]
fn names_in_ids_and_header_rows_are_not_chrome() {
    // Apache's directive headings: `<h2><span id="CookieName">CookieName</span>
    // Directive</h2>` lost the name (its id holds the chrome word `cookie`).
    let m = md("<main><h1>Module reference</h1>\
        <h2><span id='CookieName'>CookieName</span> Directive</h2>\
        <p>Sets the name of the tracking cookie used by the module for every request.</p>\
        <h2><span id='ServerSignature'>ServerSignature</span> Directive</h2>\
        <p>Configures the footer line under server-generated documents.</p></main>");
    assert!(
        m.contains("## CookieName Directive") && m.contains("## ServerSignature Directive"),
        "{m}"
    );
    // What a heading holds is its title, whatever its class; an id that spells its
    // element's text names that text.
    let m = md(
        "<main><h1>Editor</h1><h2><span class='menu'>File</span> menu</h2>\
        <p>The <span id='ServerSignature'>ServerSignature</span> setting adds a footer line \
        under the documents the server generates.</p></main>",
    );
    assert!(
        m.contains("## File menu") && m.contains("The ServerSignature setting"),
        "{m}"
    );
    // Django prefixes its section ids (`s-related-objects`), GitHub its heading anchors
    // (`user-content-menus`): the whole section went.
    for id in ["s-related-objects", "user-content-related-objects"] {
        let m = md(&format!(
            "<main><h1>Making queries</h1>{}<div class='section' id='{id}'>\
             <h2>Related objects</h2><p>When you define a relationship in a model, instances \
             of that model have an API to access the related objects.</p>\
             <pre>e = Entry.objects.get(id=2)</pre></div>{}</main>",
            para(
                "Once you have created your data models, Django gives you an API.",
                4
            ),
            para("The closing paragraph of the page.", 3)
        ));
        assert!(
            m.contains("## Related objects") && m.contains("e = Entry.objects.get(id=2)"),
            "{id}: {m}"
        );
    }
    // A one-letter prefix does not excuse a chrome word that is no title.
    let m = md(&format!(
        "<main><h1>Guide</h1>{}<div id='s-related'><h3>More to read</h3>\
         <p>See also our other posts about gardening.</p></div></main>",
        para("The guide explains everything in detail.", 12)
    ));
    assert!(!m.contains("gardening"), "{m}");
    // A row of `<th>` cells is the table's header row, whatever its class says.
    let m = md(&format!(
        "<main><h1>Variables</h1>{}<table><tr class='header'><th>Old name</th><th>New name</th></tr>\
         <tr><td>OLD_ONE</td><td>NEW_ONE</td></tr><tr><td>OLD_TWO</td><td>NEW_TWO</td></tr>\
         </table></main>",
        para("The mapping between old and new names is in the table below.", 3)
    ));
    assert!(
        m.contains("| Old name | New name |\n|---|---|\n| OLD_ONE"),
        "{m}"
    );
}

#[test]
fn an_api_signature_is_content() {
    // Javadoc: the class's `type-signature` after a rule, each member's
    // `member-signature` under its heading. `signature` marks a forum post's signature
    // as chrome; these went with it (all 3,359 signatures of commons-lang3's API).
    let m = md(&format!(
        "<main><h1>Class ArchUtils</h1><section class='class-description'><hr>\
         <div class='type-signature'><span class='modifiers'>public class </span>\
         <span class='element-name'>ArchUtils</span> extends Object</div>{}</section>\
         <section class='detail'><h3>getProcessor</h3>\
         <div class='member-signature'><span class='modifiers'>public static</span>\
         <span class='return-type'>Processor</span> <span class='element-name'>getProcessor</span>()</div>\
         <div class='block'>Returns the processor the program runs on.</div></section></main>",
        para("Provides methods for identifying the architecture of the current JVM.", 3)
    ));
    assert!(m.contains("public class ArchUtils extends Object"), "{m}");
    assert!(m.contains("public static"), "{m}");
    // A signature under a post is still the poster's, not the page's.
    let m = md(&format!(
        "<main><h1>First trip to Japan</h1><div class='post'><div class='body'>{}</div>\
         <div class='post-signature'>Travelling since 1999 with a camera and a notebook.</div></div></main>",
        para("We land in Tokyo in April and have twelve days for the trip.", 4)
    ));
    assert!(
        m.contains("twelve days") && !m.contains("Travelling since"),
        "{m}"
    );
}

#[test]
fn a_modules_introduction_before_its_members_is_kept_whole() {
    // mkdocstrings: the module's docstring (a sentence, a paragraph, `<h3>`s over more
    // paragraphs, examples) in the block that also holds `div.doc-children`, the members,
    // which outweigh it. The descent entered the members and kept back only the long
    // paragraphs before them as a lead: the first sentence, the headings and the short
    // paragraphs went.
    let member = |name: &str| {
        format!(
            "<div class='doc doc-object doc-function'><h2 class='doc-heading'><code>{name}(data)</code></h2>\
             <div class='doc doc-contents'>{}<pre><code>def {name}(data):\n    return sum(data)</code></pre></div></div>",
            para(&format!("Return the {name} of the data, which may be a sequence or an iterable."), 4)
        )
    };
    let members: String = ["mean", "median", "mode", "stdev", "variance", "quantiles"]
        .iter()
        .map(|n| member(n))
        .collect();
    let html = format!(
        "<html><body><nav class='md-nav'><ul><li><a href='/'>Home</a></li><li><a href='/json/'>json</a></li></ul></nav>\
         <main><article class='md-content__inner'><h1>statistics</h1><div class='doc doc-object doc-module'>\
         <div class='doc doc-contents first'><p>Basic statistics module.</p>{}\
         <h3 id='averages'>Calculating averages</h3><p>Calculate the arithmetic mean of data:</p>\
         <blockquote><p>mean([1, 2, 3]) 2</p></blockquote>{}\
         <div class='doc doc-children'>{members}</div></div></div></article></main></body></html>",
        para("This module provides functions for calculating statistics of data, including averages.", 3),
        para("Calculate the median, or 50th percentile, of data grouped into class intervals.", 3),
    );
    let m = md(&html);
    assert!(m.contains("Basic statistics module."), "{m}");
    assert!(m.contains("### Calculating averages"), "{m}");
    assert!(
        m.contains("arithmetic mean of data:") && m.contains("mean([1, 2, 3])"),
        "{m}"
    );
    assert!(m.contains("## `quantiles(data)`"), "{m}");
    assert!(!m.contains("[json]"), "{m}");
}

#[test]
fn what_the_last_sentence_introduces_after_the_text_is_kept() {
    // QDoc's group pages: `div.descr` ends "JSON support in Qt consists of these
    // classes:", and the table of those classes comes after it, past a "See also" line,
    // outside the block the text is in: the sentence introduced nothing.
    let rows: String = ["QJsonArray", "QJsonDocument", "QJsonObject", "QJsonValue"]
        .iter()
        .map(|c| {
            format!(
                "<tr><td class='tblName'><p><a href='{}.html'>{c}</a></p></td>\
                 <td class='tblDescr'><p>Encapsulates a JSON value of the kind {c} names</p></td></tr>",
                c.to_lowercase()
            )
        })
        .collect();
    let page = |last: &str| {
        format!(
            "<html><body><div class='sidebar'><ul><li><a href='/'>Qt 5.15</a></li><li><a href='/core'>Qt Core</a></li></ul></div>\
             <div class='content'><h1 class='title'>JSON Support in Qt</h1><div class='descr'>{}\
             <h4>The JSON Classes</h4><p>All JSON classes are value based, implicitly shared classes.</p>\
             <p>{last}</p></div><p><b>See also </b><a href='savegame.html'>JSON Save Game Example</a>.</p>\
             <div class='table'><table class='annotated'>{rows}</table></div></div></body></html>",
            para("Qt provides support for dealing with JSON data, a format to encode object data.", 12)
        )
    };
    let m = md(&page("JSON support in Qt consists of these classes:"));
    assert!(m.contains("qjsonvalue.html) | Encapsulates"), "{m}");
    // Text that introduces nothing does not take what follows it.
    let m = md(&page("JSON support in Qt is value based."));
    assert!(!m.contains("QJsonValue"), "{m}");
}

#[test]
fn a_header_inside_a_section_heads_it() {
    // JSDoc's default template: each class page's `<section>` opens with a `<header>`
    // holding the class's signature and description; `<header>` outside `<main>` and
    // `<article>` was taken for the page's banner, and both went.
    let m = md(&format!(
        "<html><body><nav><h2><a href='index.html'>Home</a></h2><ul><li><a href='a.html'>Config</a></li></ul></nav>\
         <div id='main'><h1 class='page-title'>Class: Config</h1><section><header>\
         <h2><span class='ancestors'><a href='config.html'>jsdoc/config</a>~</span>Config(jsonOrObject)</h2>\
         <div class='class-description'><p>Represents a JSDoc application configuration.</p></div></header>\
         <article><h2>Constructor</h2><h4 class='name' id='Config'>new Config(jsonOrObject)</h4>{}\
         <h3 class='subsection-title'>Methods</h3><h4 class='name' id='get'>get()</h4>{}</article></section></div>\
         <footer>Documentation generated by JSDoc 4.4.1</footer></body></html>",
        para("Creates a configuration from the contents of a file or an object.", 3),
        para("Gets the merged configuration values.", 3)
    ));
    assert!(m.contains("## [jsdoc/config]"), "{m}");
    assert!(
        m.contains("Represents a JSDoc application configuration."),
        "{m}"
    );
    assert!(!m.contains("generated by JSDoc"), "{m}");
    // A site's banner is still chrome, in a `<section>` or not, when no title opens it.
    let m = md(&format!(
        "<html><body><section class='page'><header class='masthead'><a href='/'>Acme</a>\
         <ul><li><a href='/docs'>Docs</a></li><li><a href='/blog'>Blog</a></li></ul></header>\
         <div class='content'><h1>Install</h1>{}</div></section></body></html>",
        para(
            "Install the command line tool with the package manager of your system.",
            4
        )
    ));
    assert!(!m.contains("[Blog]"), "{m}");
}

#[test]
fn a_declaration_between_a_title_and_its_sections_is_content() {
    // TypeDoc: a type alias's declaration right after the title block (breadcrumbs, then
    // the `<h1>`); an interface's after its description and before the sections it heads.
    // Neither opens its section, and `signature` names a post's signature: both went
    // (256 of date-fns' 530 pages).
    let title = |name: &str| {
        format!(
            "<div class='tsd-page-title'><ul class='tsd-breadcrumb'><li><a href='../modules.html'>date-fns</a></li>\
             <li><a href='{name}.html'>{name}</a></li></ul><h1>{name}</h1></div>"
        )
    };
    let m = md(&format!(
        "<div class='col-content'>{}<div class='tsd-signature'>ContextFn: (value: \
         <a href='DateArg.html'>DateArg</a>) =&gt; DateType</div>\
         <div class='tsd-comment'><p>{}</p></div>\
         <section class='tsd-panel'><h4>Type Parameters</h4><ul><li>DateType extends Date</li></ul></section></div>",
        title("ContextFn"),
        "The function to create a date in the context of another date. ".repeat(3)
    ));
    assert!(m.contains("ContextFn: (value:"), "{m}");
    let m = md(&format!(
        "<div class='col-content'>{}<section class='tsd-comment'><p>{}</p></section>\
         <div class='tsd-signature'>interface AddDaysOptions {{<br>in?: \
         <a href='ContextFn.html'>ContextFn</a>;<br>}}</div>\
         <section class='tsd-panel'><h4>Type Parameters</h4><ul><li>DateType extends Date</li></ul></section>\
         <section><h2>Properties</h2><h3>in</h3><p>{}</p></section></div>",
        title("AddDaysOptions"),
        "The addDays function options, each of them optional. ".repeat(3),
        "The context to use in the function, which normalizes its arguments. ".repeat(3)
    ));
    assert!(m.contains("interface AddDaysOptions {"), "{m}");
    assert!(
        m.contains("Type Parameters") && m.contains("normalizes"),
        "{m}"
    );
    // A post's signature ends its post, after the text, with nothing of the page after it.
    let post = |n: u32| {
        format!(
            "<div class='post'><h3>Re: tide tables {n}</h3><div class='body'><p>{}</p></div>\
             <div class='signature'>Sailing the Solent since 1999 {n}</div></div>",
            "The tide tables for the harbour are published every spring by the port. ".repeat(3)
        )
    };
    let m = md(&format!(
        "<main><h1>Tide tables</h1>{}{}</main>",
        post(1),
        post(2)
    ));
    assert!(
        m.contains("every spring") && !m.contains("Sailing the Solent"),
        "{m}"
    );
}

#[test]
fn a_subsection_holding_most_of_the_text_keeps_its_document() {
    // Node's API pages: no `<h1>`; the module's `<h2>`, a short introduction, then
    // `<section>`s under `<h3>`s. The descent took the largest section alone: the
    // module's title, its introduction and the other sections went.
    let m = md(&format!(
        "<nav><ul><li><a href='/a'>Assert</a></li><li><a href='/b'>Buffer</a></li></ul></nav>\
         <div id='apicontent'><h2>Console</h2><p>The console module provides a simple \
         debugging console.</p><pre><code>console.log('hello');</code></pre>\
         <section><h3>Class: Console</h3>{}</section>\
         <section><h3>Inspector only methods</h3><p>These methods work in the inspector.</p></section></div>",
        para("The Console class can be used to create a simple logger with configurable output streams.", 12)
    ));
    assert!(m.starts_with("## Console\n"), "{m}");
    assert!(
        m.contains("console.log('hello');") && m.contains("### Inspector only methods"),
        "{m}"
    );
    assert!(!m.contains("Buffer"), "{m}");
}

#[test]
fn a_list_of_links_under_its_own_heading_is_kept() {
    // Apache's manual ends each directive with "See also" and a list of links: dropped as
    // a menu, leaving the heading alone (156 items on 23 pages).
    let directive = |name: &str| {
        format!(
            "<div class='directive-section'><h2>{name} Directive</h2>{}\
             <h3>See also</h3><ul><li><a href='core.html#allowoverride'>AllowOverride</a></li>\
             <li><a href='configuring.html'>Configuration Files</a></li></ul></div>",
            para(
                &format!(
                    "The {name} directive sets the name of the file to read in each directory."
                ),
                3
            )
        )
    };
    let html = format!(
        "<main><h1>Apache Core Features</h1>{}{}</main>",
        directive("AccessFileName"),
        directive("AllowOverrideList")
    );
    let m = md(&html);
    assert!(m.contains("### See also\n\n- [AllowOverride]"), "{m}");
    // A list of the page's own places under a heading is its table of contents: it
    // repeats the headings, and goes.
    let toc = "<h3>Directives</h3><ul><li><a href='#accessfilename'>AccessFileName</a></li>\
               <li><a href='#allowoverridelist'>AllowOverrideList</a></li></ul>";
    let m = md(&html.replacen("</h1>", &format!("</h1>{toc}"), 1));
    assert!(
        m.contains("### See also\n\n- [AllowOverride]") && !m.contains("[AccessFileName]"),
        "{m}"
    );
    // On an article, a headed list of links is its site's.
    let m = md(&format!(
        "<html><head><meta property='og:type' content='article'></head><body><article>\
         <h1>A walk in the hills</h1>{}<h3>On this day</h3><ul><li><a href='/2007/x'>Bobbing to \
         the surface</a></li><li><a href='/2006/y'>Trip itinerary</a></li></ul></article></body></html>",
        para("We walked along the ridge for hours and saw nobody at all.", 6)
    ));
    assert!(!m.contains("Bobbing"), "{m}");
}

#[test]
fn footnotes_in_an_aside_are_content() {
    // Sphinx 5 and later write footnotes as `<aside class="footnote" role="note">` in an
    // `<aside class="footnote-list">`; `<aside>` marks chrome, so the notes went (63 of
    // Python's pages lost theirs).
    let m = md(&sphinx(&format!(
        "<h1>Bytes Objects</h1>{}<p>The zero flag has effect here<a class='footnote-reference' \
         href='#f1' id='r1'>[1]</a>.</p><p class='rubric'>Footnotes</p>\
         <aside class='footnote-list brackets'><aside class='footnote brackets' id='f1' role='note'>\
         <span class='label'><a role='doc-backlink' href='#r1'>1</a></span>\
         <p>For integer specifiers the 0-conversion flag has effect even with a precision.</p>\
         </aside></aside>",
        para("These functions raise TypeError when expecting a bytes parameter.", 4)
    )));
    assert!(m.contains("0-conversion flag has effect"), "{m}");
    // An aside of another kind is still chrome.
    let m =
        md(&sphinx(&format!(
        "<h1>Bytes Objects</h1>{}<aside class='promo'><p>Try our hosted service today.</p></aside>",
        para("These functions raise TypeError when expecting a bytes parameter.", 4)
    )));
    assert!(!m.contains("hosted service"), "{m}");
}

#[test]
fn a_code_listing_written_as_lines_is_a_code_block() {
    // Doxygen writes its listings as `div.fragment > div.line` with a `span.lineno`, no
    // `<pre>`: each line came out as a paragraph, numbers glued on, indentation lost,
    // and lines that are mostly a link dropped as menus.
    let html = "<div class='contents'><h1>SDL_scancode.h</h1>\
        <p>Defines keyboard scancodes, the physical keys of the keyboard.</p>\
        <div class='fragment'>\n<div class='line'><a id='l1'></a><span class='lineno'>1</span>typedef enum</div>\n\
        <div class='line'><span class='lineno'>2</span>{</div>\n\
        <div class='line'><span class='lineno'>3</span>    <a class='code' href='a.html#x'>SDL_SCANCODE_UNKNOWN</a> = 0,</div>\n\
        <div class='line'><span class='lineno'>4</span>    SDL_SCANCODE_A = 4,</div>\n\
        <div class='line'><span class='lineno'>5</span>} SDL_Scancode;</div>\n</div></div>";
    let m = md(html);
    assert!(
        m.contains(
            "```\ntypedef enum\n{\n    SDL_SCANCODE_UNKNOWN = 0,\n    SDL_SCANCODE_A = 4,\n} SDL_Scancode;\n```"
        ),
        "{m}"
    );
    // Lines without the listing's class are ordinary blocks.
    let m = whole("<div><div class='line'>one</div><div class='line'>two</div></div>");
    assert_eq!(m, "one\n\ntwo\n");
}

#[test]
fn a_table_with_title_rows_is_tables_under_headings() {
    // Doxygen's `table.memberdecls`: a row holding only an `<h2>` ("Functions",
    // "Macros") over the members of each kind. A heading in a table made it a layout,
    // flattened cell by cell (7,691 rows of SDL2's API docs).
    let html = "<div class='contents'><h1>SDL_keyboard.h</h1>\
        <p>Include file for SDL keyboard event handling.</p><table class='memberdecls'>\
        <tr class='heading'><td colspan='2'><h2 class='groupheader'>Functions</h2></td></tr>\
        <tr><td>int</td><td><a href='#a1'>SDL_GetKeyboardFocus</a> (void)</td></tr>\
        <tr><td>void</td><td><a href='#a2'>SDL_StartTextInput</a> (void)</td></tr>\
        <tr class='heading'><td colspan='2'><h2 class='groupheader'>Macros</h2></td></tr>\
        <tr><td>#define</td><td>SDL_KEYBOARD_MAX 8</td></tr>\
        <tr><td>#define</td><td>SDL_KEYBOARD_MIN 1</td></tr></table></div>";
    let m = md(html);
    assert!(
        m.contains("## Functions\n\n| int | [SDL_GetKeyboardFocus]"),
        "{m}"
    );
    assert!(
        m.contains("|---|---|\n| void | [SDL_StartTextInput]"),
        "{m}"
    );
    assert!(
        m.contains("## Macros\n\n| \\#define | SDL_KEYBOARD_MAX 8 |"),
        "{m}"
    );
    // Under a header row a small title row stays a row: the columns stay named.
    let m = md(
        "<main><h1>Soup</h1><p>Ingredients for a vegetable soup.</p><table>\
        <tr><th>Ingredient</th><th>Per person</th></tr>\
        <tr><td colspan='2'><h5>Vegetables</h5></td></tr>\
        <tr><td>Onions</td><td>1</td></tr><tr><td>Celery</td><td>80g</td></tr></table></main>",
    );
    assert!(
        m.contains("| Ingredient | Per person |\n|---|---|\n| Vegetables |  |\n| Onions | 1 |"),
        "{m}"
    );
}

#[test]
fn a_paragraph_of_code_broken_by_line_breaks_is_a_code_block() {
    // Apache's manual writes its examples as `<p><code>…<br>…</code></p>`: the span
    // broke into backtick fragments across blank lines, and HTML in the example became
    // raw HTML a markdown renderer swallows.
    let m = md(&format!(
        "<main><h1>Image maps</h1>{}<div class='example'><p><code>\n  &lt;a href=\"/maps/map1.map\"&gt;<br>\n  \
         &lt;img ismap src=\"/images/map1.gif\"&gt;<br>\n  directive value [<var>x</var>,<var>y</var>\n  ...]\n</code></p></div></main>",
        para("Reference the map file from a page with markup like this.", 3)
    ));
    assert!(
        m.contains(
            "```\n<a href=\"/maps/map1.map\">\n<img ismap src=\"/images/map1.gif\">\ndirective value [x,y ...]\n```"
        ),
        "{m}"
    );
    // Code in a sentence stays a span.
    let m = whole("<p>Use <code>a<br>b</code> here.</p>");
    assert!(!m.contains("```"), "{m}");
}

#[test]
fn a_preamble_with_the_title_keeps_the_sections_after_it() {
    // Apache's module pages: `div#preamble` holds the `<h1>`, a summary table and the
    // introduction; `div.section`s under `<h2>`s follow. The descent took the largest
    // section alone.
    let html = format!(
        "<div id='page-content'><div id='preamble'><h1>Apache Module mod_buffer</h1>\
         <table class='module'><tr><th>Description:</th><td>Support for request buffering</td></tr>\
         <tr><th>Status:</th><td>Extension</td></tr></table>\
         <h3>Summary</h3><p>This module provides the ability to buffer the input and output filter \
         stacks. Under certain circumstances, content generators might create content in small \
         chunks; buffering them can improve performance.</p></div>\
         <div class='section'><h2>BufferSize Directive</h2>{}</div>\
         <div class='section'><h2>Request notes</h2><p>The module creates no request notes.</p></div></div>",
        para("The BufferSize directive specifies the amount of data in bytes that will be buffered before being read from or written to each request.", 10)
    );
    let m = md(&html);
    assert!(m.starts_with("# Apache Module mod_buffer"), "{m}");
    assert!(
        m.contains("## BufferSize Directive") && m.contains("## Request notes"),
        "{m}"
    );
}

#[test]
fn a_block_inside_a_heading_is_part_of_its_title() {
    // erl_docgen writes `<h4><div class="title-anchors"><a href="…/edit"><span></span></a>
    // </div><span>all(Pred, List) -> boolean()</span></h4>`: the heading ended at its
    // first block child, leaving an empty `####` and the signature as a paragraph (4,853
    // headings of Erlang/OTP's docs).
    let m = whole(
        "<h4 id='all-2'><div class='title-anchors'><a href='https://github.com/x/edit' \
         title='Found an issue?'><span class='pencil'></span></a></div>\
         <span class='title-name'>all(Pred, List) -&gt; boolean()</span></h4>\
         <p>Returns true if Pred(Elem) returns true for all elements.</p>",
    );
    assert!(
        m.starts_with("#### all(Pred, List) -> boolean()\n\nReturns true"),
        "{m}"
    );
    // Two blocks in one heading are one line of it.
    let m = whole("<h2><div>Part one</div><div>The beginning</div></h2><p>Text.</p>");
    assert_eq!(m, "## Part one The beginning\n\nText.\n");
}

#[test]
fn a_heading_made_of_links_is_kept() {
    // Erlang's data types: `<h4><div><a name="type-key">key()</a> = <a href>term()</a>
    // </div></h4>`. The div in the heading was dropped as a menu (mostly link text), and
    // the heading with it (208 headings).
    let m = md(&format!(
        "<html><body><main><h1>persistent_term</h1>{}<h3>Data Types</h3>\
         <h4 id='type-key'><div class='title-name'><a name='type-key'>key()</a> = \
         <a href='erlang.html#type-term'>term()</a></div></h4><p>Any Erlang term.</p>\
         </main></body></html>",
        para(
            "This module is similar to ets in that it provides a storage for terms.",
            4
        )
    ));
    assert!(m.contains("#### key() = [term()]("), "{m}");
}

#[test]
fn a_pre_inside_a_pre_is_one_code_block() {
    // gi-docgen's declarations: `<pre><code><div class="highlight"><pre>…</pre></div>
    // </code></pre>`. The inner `<pre>` opened a second fence inside the first, between
    // blank lines (340 of 835 GTK pages).
    let m = whole(
        "<pre><code><div class='highlight'><pre><span class='kt'>GtkWidget</span>*\n\
         <span class='n'>gtk_label_new</span> (const char* str)\n</pre></div>\n</code></pre>",
    );
    assert_eq!(m, "```\nGtkWidget*\ngtk_label_new (const char* str)\n```\n");
    // A block inside code starts a line, without a blank one.
    let m = whole("<pre><div>one</div><div>two</div></pre>");
    assert_eq!(m, "```\none\ntwo\n```\n");
}

#[test]
fn a_title_standing_alone_before_the_content_is_kept() {
    // gi-docgen's API pages: `<header><h3>Method</h3><h1>…</h1></header>` beside the one
    // `<section>` holding the rest. The descent took the section; the header was no
    // lead (too short) so the title went (1,614 headings of GTK's docs).
    let body = para(
        "Sets the text of the label of the button. This will also clear any previously set labels.",
        4,
    );
    let m = md(&format!(
        "<html><body><section id='main' class='content'><header><h3>Method</h3>\
         <h1>Gtk.Button.set_label</h1></header><section><h4>Declaration</h4>\
         <pre><code>void gtk_button_set_label (GtkButton* button, const char* label)</code></pre>\
         <h4>Description</h4>{body}</section></section></body></html>"
    ));
    assert!(
        m.starts_with("### Method\n\n# Gtk.Button.set_label\n\n#### Declaration"),
        "{m}"
    );
    // Headings between the title and the content title it too (Erlang's pages).
    let m = md(&format!(
        "<html><body><h1>ssh_sftpd</h1><h3>Options</h3><div>{body}</div></body></html>"
    ));
    assert!(
        m.starts_with("# ssh_sftpd\n\n### Options\n\nSets the text"),
        "{m}"
    );
    // A thread's title stands apart from its posts, as an article's does.
    let m = md(&format!(
        "<html><body><div class='thread-header'><h1>Best laptop for students?</h1></div>\
         <div class='posts'>{body}</div></body></html>"
    ));
    assert!(!m.contains("Best laptop"), "{m}");
    // A title in a block that a chrome class marks is the site's (mdBook's
    // `div#menu-bar > h1.menu-title`).
    let m = md(&format!(
        "<html><body><div id='menu-bar'><h1 class='menu-title'>The Book</h1></div>\
         <div id='content'><main><h2>Comments</h2>{body}</main></div></body></html>"
    ));
    assert!(!m.contains("The Book"), "{m}");
}

#[test]
fn a_list_under_its_heading_is_kept_through_its_wrappers() {
    // gi-docgen's class pages: `<div class="toggle-wrapper"><h4>Ancestors</h4><div
    // class="docblock"><ul>` of links. R51 keeps a list right after its heading; here
    // the wrappers were judged first and dropped as menus (1,334 list items of GTK's
    // docs, and Sphinx toctrees under their caption on SciPy's).
    let items: String = (0..8)
        .map(|i| format!("<li><a href='class.Widget{i}.html'>GtkWidgetNumber{i}</a></li>"))
        .collect();
    let html = format!(
        "<html><body><main><h1>Gtk.Button</h1>{}\
         <div class='toggle-wrapper ancestors'><h4>Ancestors</h4><div class='docblock'>\
         <ul>{items}</ul></div></div><h4>Instance methods</h4><p>Does things to the button.</p>\
         </main></body></html>",
        para(
            "The GtkButton widget is generally used to trigger a callback function.",
            12
        )
    );
    let m = md(&html);
    assert!(
        m.contains("#### Ancestors\n\n- [GtkWidgetNumber0]") && m.contains("GtkWidgetNumber7"),
        "{m}"
    );
    // The list's own wrapper right after the heading, with no wrapper around both.
    let m = md(&html.replace("<div class='toggle-wrapper ancestors'>", "<div>"));
    let bare = html.replace(
        "<div class='toggle-wrapper ancestors'><h4>Ancestors</h4><div class='docblock'>\
         <ul>",
        "<h4>Ancestors</h4><div class='docblock'><ul>",
    );
    let bare = bare.replacen("</ul></div></div>", "</ul></div>", 1);
    assert!(
        bare.contains("<h4>Ancestors</h4><div class='docblock'><ul>"),
        "{bare}"
    );
    let m2 = md(&bare);
    assert!(
        m.contains("GtkWidgetNumber7") && m2.contains("#### Ancestors\n\n- [GtkWidgetNumber0]"),
        "{m}\n---\n{m2}"
    );
    // A wrapper of a list of the page's own places is still its table of contents.
    let toc: String = (0..8)
        .map(|i| format!("<li><a href='#s{i}'>Section{i}</a></li>"))
        .collect();
    let m = md(&html.replace(&items, &toc));
    assert!(!m.contains("Section3"), "{m}");
}

#[test]
fn a_paragraph_of_one_link_and_words_is_a_sentence() {
    // `<p>Reference: <a>Go ARM64 Assembly Instructions Reference Manual</a></p>`, GLib's
    // "Use <a>g_mutex_init()</a>": mostly link text, so dropped as a menu.
    let html = format!(
        "<html><body><main><h1>Assembler</h1>{}<h3>ARM64</h3>\
         <p>R18 is the platform register, reserved on the Apple platform.</p>\
         <p>Reference: <a href='/pkg/arm64'>Go ARM64 Assembly Instructions Reference Manual</a></p>\
         <h3>PPC64</h3><p>This assembler is used by GOARCH values ppc64 and ppc64le.</p>\
         </main></body></html>",
        para(
            "This document is a quick outline of the unusual form of assembly language.",
            4
        )
    );
    let m = md(&html);
    assert!(m.contains("Reference: [Go ARM64 Assembly"), "{m}");
    // Two links are a menu, words or not.
    let m = md(&html.replace(
        "Reference: <a href='/pkg/arm64'>Go ARM64 Assembly Instructions Reference Manual</a>",
        "Go: <a href='/pkg/arm64'>Instructions Reference Manual</a> \
         <a href='/pkg/ppc64'>Another Instructions Manual</a>",
    ));
    assert!(!m.contains("Another Instructions"), "{m}");
}

#[test]
fn the_introduction_between_the_title_and_the_content_is_kept() {
    // RDoc: `<h1>class Set</h1><section class="description"><p>…</p></section><section
    // class="documentation-section">` holding the methods, most of the text. The title
    // came back with R53 but the overview between it and the methods went (14,083 words
    // on 384 of the standard library's pages).
    let method = |i: usize| {
        format!(
            "<div class='method-detail'><div class='method-heading'>m{i}(enum)</div>\
             <div class='method-description'><p>Returns a new set built by merging the set \
             and the elements of the given enumerable object number {i}.</p><pre>def m{i}(enum)\n  \
             dup.merge(enum)\nend</pre></div></div>"
        )
    };
    let methods: String = (0..6).map(method).collect();
    let m = md(&format!(
        "<html><body><main role='main'><h1 class='class'>class Set</h1>\
         <section class='description'><p>This library provides the Set class, which deals \
         with a collection of unordered values with no duplicates, and is easy to use.</p></section>\
         <section class='documentation-section'><section class='method-section'><header>\
         <h3>Public Instance Methods</h3></header>{methods}</section></section></main>\
         <div class='closing'><p>These docs are an open source project: help us improve \
         these pages by sending a pull request; every fix, however small, is welcome here.</p></div></body></html>"
    ));
    assert!(
        m.starts_with("# class Set\n\nThis library provides the Set class"),
        "{m}"
    );
    // Prose after the content is not its introduction. (Inside `<main>` it is kept since
    // 6f6ecb1: the methods' section is a subsection of the document the `<h1>` titles,
    // and the descent stays at `<main>`, which holds that prose too; darkfish writes
    // nothing after the methods inside `<main>`.)
    assert!(!m.contains("open source project"), "{m}");
}

#[test]
fn line_numbers_beside_a_listing_are_not_code() {
    // Pygments' `table.highlighttable` (gtk-doc, Sphinx with `linenos`), Rouge's
    // `td.gutter` (Jekyll) and Hugo's `table.lntable`: the numbers came out as a code
    // block of their own, or inside the listing (237 blocks on GLib's pages).
    let m = whole(
        "<div class='highlight-python'><table class='highlighttable'><tr><td class='linenos'>\
         <div class='linenodiv'><pre><span>1</span>\n<span>2</span></pre></div></td>\
         <td class='code'><div class='highlight'><pre>def f(x):\n    return x\n</pre></div></td>\
         </tr></table></div>",
    );
    assert_eq!(m, "```python\ndef f(x):\n    return x\n```\n");
    let m = whole(
        "<figure class='highlight'><pre><code class='language-ruby'><table class='rouge-table'>\
         <tbody><tr><td class='gutter gl'><pre class='lineno'>1\n2\n</pre></td><td class='code'>\
         <pre>def foo\nend\n</pre></td></tr></tbody></table></code></pre></figure>",
    );
    assert_eq!(m, "```ruby\ndef foo\nend\n```\n");
    // Numbered rows of a table are its data.
    let m = whole(
        "<table><tr><th>Step</th><th>Command</th></tr><tr><td>1</td><td><pre>make</pre></td></tr>\
         <tr><td>2</td><td><pre>make install</pre></td></tr></table>",
    );
    assert!(m.contains('1') && m.contains('2'), "{m}");
}

#[test]
fn two_titled_sections_of_plain_text_are_both_kept() {
    // gi-docgen's member pages: `div.declaration` (an `<h4>` and the C declaration) and
    // `div.description` (an `<h4>` and the text), one holding most of it. R23 needs three
    // sections at one level; with two, the descent took the description alone.
    let html = format!(
        "<html><body><main><div class='declaration'><h4>Declaration</h4><div class='docblock'>\
         <pre><code>void gtk_assistant_update_buttons_state (GtkAssistant* assistant)</code></pre>\
         </div></div><div class='description'><h4>Description</h4><div class='docblock'>{}</div>\
         </div></main></body></html>",
        para(
            "Forces assistant to recompute the buttons state in most situations.",
            6
        )
    );
    let m = md(&html);
    assert!(
        m.starts_with("#### Declaration\n\n```\nvoid gtk_assistant_update_buttons_state")
            && m.contains("#### Description\n\nForces"),
        "{m}"
    );
    // A titled block of links beside the text is a sidebar.
    let m = md(&html.replace(
        "<pre><code>void gtk_assistant_update_buttons_state (GtkAssistant* assistant)</code></pre>",
        "<p><a href='/a'>Two bailed over fatal accident</a> Two people questioned are \
         freed on bail.</p><p><a href='/b'>Stowaway cat travels far</a> A cat hid in a van.</p>",
    ));
    assert!(!m.contains("Stowaway"), "{m}");
}

#[test]
fn cells_spanning_rows_and_columns_keep_the_columns_aligned() {
    // SciPy's interpolation summary: `<td rowspan="3">1D</td>` over three rows. The rows
    // below had one cell fewer, so each cell moved one column to the left.
    let m = whole(
        "<table><thead><tr><th></th><th>kind</th><th>routine</th></tr></thead><tbody>\
         <tr><td rowspan='3'>1D</td><td>linear</td><td>numpy.interp</td></tr>\
         <tr><td>cubic spline</td><td>CubicSpline</td></tr>\
         <tr><td>nearest</td><td>interp1d</td></tr>\
         <tr><td>N-D curve</td><td>spline</td><td>make_interp_spline</td></tr></tbody></table>",
    );
    assert_eq!(
        m,
        "|  | kind | routine |\n|---|---|---|\n| 1D | linear | numpy.interp |\n\
         |  | cubic spline | CubicSpline |\n|  | nearest | interp1d |\n\
         | N-D curve | spline | make_interp_spline |\n"
    );
    // A cell spanning columns, and one spanning rows in the middle of a row.
    let m = whole(
        "<table><tr><th colspan='2'>Name</th><th>Fee</th></tr>\
         <tr><td>Ada</td><td rowspan='2'>L.</td><td>10</td></tr>\
         <tr><td>Bob</td><td>12</td></tr></table>",
    );
    assert_eq!(
        m,
        "| Name |  | Fee |\n|---|---|---|\n| Ada | L. | 10 |\n| Bob |  | 12 |\n"
    );
}

#[test]
fn a_parameter_and_its_type_are_kept_apart() {
    // numpydoc's parameter lists: the name in `<strong>`, its type in a classifier span
    // with nothing between them in the HTML (Sphinx's stylesheet draws the colon).
    let m = whole(
        "<dl class='field-list'><dt>Parameters</dt><dd><dl>\
         <dt><strong>fun</strong><span class='classifier'>callable</span></dt>\
         <dd><p>The objective function.</p></dd>\
         <dt><strong>x0</strong><span class='classifier-delimiter'>:</span> \
         <span class='classifier'>ndarray</span></dt><dd><p>Initial guess.</p></dd>\
         </dl></dd></dl>",
    );
    assert!(m.contains("**fun** : callable"), "{m}");
    // Plain docutils writes its own colon: one, not two.
    assert!(
        m.contains("**x0**: ndarray") || m.contains("**x0** : ndarray"),
        "{m}"
    );
    assert!(!m.contains(": :"), "{m}");
}

#[test]
fn a_short_class_page_keeps_its_sections_and_the_words_around_its_code() {
    // RDoc's page of a small class: its attributes and its one method, each section
    // under `<header><h3>`, the method's source outweighing its name and description.
    // The descent went section by section into the `<pre>`'s wrapper: the page came out
    // as its title and a bare listing (154 pages of Ruby's standard library).
    let attributes = "<section class='attribute-method-details'><header><h3>Attributes</h3>\
         </header><div class='method-detail'><div class='method-heading'>\
         <span class='method-name'>reason</span><span>[R]</span></div>\
         <div class='method-description'><p>the class of the error, as a string.</p></div>\
         </div></section>";
    let methods = "<section class='method-section'><header><h3>Public Class Methods</h3>\
         </header><div class='method-detail'><div class='method-heading'>\
         <span class='method-name'>new</span><span class='method-args'>(error)</span></div>\
         <div class='method-description'><p>Creates a new remote error that wraps the error.</p>\
         <div class='method-source-code'><pre># File drb/drb.rb, line 433\n\
         def initialize(error)\n  @reason = error.class.to_s\n  \
         super(\"#{error.message} (#{error.class})\")\n  set_backtrace(error.backtrace)\n\
         end</pre></div></div></div></section>";
    let page = |sections: &str| {
        md(&format!(
            "<html><body><nav><ul><li><a href='/'>Home</a></li><li><a href='/idx'>Index</a>\
             </li></ul></nav><main role='main'><h1 class='class'>class DRb::DRbRemoteError</h1>\
             <section class='documentation-section'>{sections}</section></main></body></html>"
        ))
    };
    // Two methods: the section holds two listings.
    let two = methods.replace(
        "</div></section>",
        "</div><div class='method-detail'><div class='method-heading'>\
         <span class='method-name'>reason</span></div><div class='method-description'>\
         <p>Returns the class name.</p><pre>def reason\n  @reason\nend</pre></div></div>\
         </section>",
    );
    let m = page(&format!("{attributes}{two}"));
    // Sections opening with `<header><h3>` side by side are one document's.
    assert!(
        m.contains("### Attributes") && m.contains("the class of the error"),
        "{m}"
    );
    assert!(
        m.contains("Creates a new remote error") && m.contains("def initialize(error)"),
        "{m}"
    );
    assert!(!m.contains("Index"), "{m}");
    // A class of one method: the listing alone is not the page; the method's name and
    // description come with it.
    let m = page(methods);
    assert!(
        m.contains("new(error)") && m.contains("Creates a new remote error"),
        "{m}"
    );
    assert!(m.contains("def initialize(error)"), "{m}");
}

#[test]
fn text_that_spells_markdown_or_html_stays_text() {
    // Qt's signatures: `QAtomicPointer&lt;<span>T</span>&gt;`, the `<` in one text node
    // and `T>` in the next; written `<T>` it is a tag a markdown reader hides.
    let m = whole(
        "<h3>QAtomicPointer(const <a href='/q.html'>QAtomicPointer</a>&lt;<span>T</span>&gt; \
         &amp;<i>other</i>)</h3>",
    );
    assert!(
        m.contains("[QAtomicPointer](https://docs.example.com/q.html)\\<T>"),
        "{m}"
    );
    // A `!` before a link made it an image.
    let m = whole("<p>i.e. isEmpty() == !<a href='/r.html#isValid'>isValid</a>().</p>");
    assert!(
        m.contains("== \\![isValid](https://docs.example.com/r.html#isValid)()"),
        "{m}"
    );
    // Text that spells an entity (`&amp;amp;` in the HTML) read as the character.
    let m = whole(
        "<p>the HTML entity <b>&amp;amp;</b>, or <code>x</code> &amp;#94; and &amp; alone</p>",
    );
    assert!(
        m.contains("**\\&amp;**") && m.contains("\\&#94;") && m.contains(" & alone"),
        "{m}"
    );
}

#[test]
fn code_and_lists_keep_their_lines() {
    // The newline right after `<pre>` is markup, not a first blank line of code (SQLite
    // and Go write every listing that way); nor is a quote's prefix after the code.
    let m = whole("<pre>\nCREATE TABLE t1(a ANY) STRICT;\n</pre>");
    assert_eq!(m, "```\nCREATE TABLE t1(a ANY) STRICT;\n```\n");
    let m = whole("<blockquote><pre>\ntypedef struct b b;\n</pre></blockquote>");
    assert!(
        m.ends_with("> ```\n> typedef struct b b;\n> ```\n"),
        "{m:?}"
    );
    // A label written straight inside a numbered list (SQLite's release notes): the item
    // after it, numbered 2, cannot interrupt the label's paragraph; a blank line parts them.
    let m = whole(
        "<ol><p><b>Fixes:</b><li>One fix.<p><b>Enhancements:</b><li>Faster parser.\
         <li>Smaller journal.</ol>",
    );
    assert!(
        m.contains("**Enhancements:**\n\n2. Faster parser.\n3. Smaller journal."),
        "{m}"
    );
}

#[test]
fn nothing_inside_a_listing_is_chrome() {
    // Haddock's hyperlinked source: each definition is a `<span>` with its name as id, and
    // a definition named `notComment` read as a comment section and went from the code.
    let m = md(&format!(
        "<html><body><nav><a href='/'>Home</a> <a href='/src'>Source</a></nav><main>\
         <h1>CppIfdef</h1>{}<pre><span id='line-200'></span><span id='notComment'><span class='hs-var'>\
         notComment</span></span> = not . (\"//\" `isPrefixOf`)\n\
         <span id='navigation'>navigation</span> = <span class='sidebar'>sidebar</span> 1\n</pre></main></body></html>",
        para("The preprocessor's conditional directives, and how they are evaluated.", 3)
    ));
    assert!(m.contains("notComment = not"), "{m}");
    assert!(m.contains("navigation = sidebar 1"), "{m}");
}

#[test]
fn a_link_named_in_a_table_row_beside_its_description_is_kept() {
    // QDoc's class tables: the name cell is a paragraph of one link, dropped as a menu,
    // which left every row with an empty first cell (542 cells on 16 of Qt's pages).
    let rows: String = [
        ("qjsonarray", "QJsonArray", "Encapsulates a JSON array"),
        (
            "qjsondocument",
            "QJsonDocument",
            "Way to read and write JSON documents",
        ),
        ("qjsonvalue", "QJsonValue", "Encapsulates a value in JSON"),
    ]
    .iter()
    .map(|(h, n, d)| {
        format!(
            "<tr><td class='tblName'><p><a href='{h}.html'>{n}</a></p></td>\
             <td class='tblDescr'><p>{d}</p></td></tr>"
        )
    })
    .collect();
    let m = md(&format!(
        "<html><body><div class='sidebar'><ul><li><a href='/a'>Qt Core</a></li>\
         <li><a href='/b'>Qt GUI</a></li></ul></div><div class='content mainContent'>\
         <h1>JSON Support in Qt</h1>{}<h2>Classes</h2><table class='annotated'>{rows}</table>\
         </div></body></html>",
        para(
            "Qt provides support for dealing with JSON data in its own binary format.",
            3
        )
    ));
    assert!(
        m.contains("| [QJsonArray](https://docs.example.com/library/qjsonarray.html) | Encapsulates a JSON array |"),
        "{m}"
    );
    // A menu laid out in a table has links in every cell: still a menu.
    let menu = md(&format!(
        "<html><body><main><h1>JSON Support in Qt</h1>{}<table><tr><td><a href='/a'>Home</a>\
         </td><td><a href='/b'>Downloads</a></td><td><a href='/c'>Contact</a></td></tr></table>\
         </main></body></html>",
        para(
            "Qt provides support for dealing with JSON data in its own binary format.",
            3
        )
    ));
    assert!(!menu.contains("Downloads"), "{menu}");
}

#[test]
fn a_see_also_sentence_of_links_is_kept() {
    // Python's C API pages and SQLite's: "See also <a>PyObject_GetItem()</a>,
    // <a>PyObject_SetItem()</a> and <a>PyObject_DelItem()</a>.", all links but its first
    // words, dropped as a menu.
    let link = |n: &str| {
        format!(
            "<a class='reference internal' href='object.html#c.{n}'><code class='xref c \
             c-func docutils literal notranslate'><span class='pre'>{n}()</span></code></a>"
        )
    };
    let m = md(&sphinx(&format!(
        "<section id='mapping'><h1>Mapping Protocol</h1>{}<p>See also {}, {} and {}.</p>\
         <dl class='c function'><dt><span>int</span> PyMapping_Check(PyObject *o)</dt>\
         <dd>{}</dd></dl></section>",
        para(
            "Return 1 if the object provides the mapping protocol or supports slicing.",
            2
        ),
        link("PyObject_GetItem"),
        link("PyObject_SetItem"),
        link("PyObject_DelItem"),
        para(
            "Note that it returns 1 for Python classes with a getitem method.",
            2
        )
    )));
    assert!(m.contains("See also [`PyObject_GetItem()`]"), "{m}");
}

/// pod2html's SEE ALSO is a paragraph per kind of reference, each a list written as a
/// sentence: the second and third were dropped as menus, only the first follows the
/// heading. A run of such lists that does not start at a heading is still a menu.
#[test]
fn see_also_paragraphs_of_links_after_a_heading_are_kept() {
    let page = |see_also: &str| {
        format!(
            "<html><body><ul id='index'><li><a href='#NAME'>NAME</a></li>\
             <li><a href='#DESCRIPTION'>DESCRIPTION</a></li><li><a href='#SEE-ALSO'>SEE ALSO</a>\
             </li></ul><h1 id='NAME'>NAME</h1><p>Net::FTP - FTP Client class</p>\
             <h1 id='DESCRIPTION'>DESCRIPTION</h1>{}{see_also}<h1 id='AUTHOR'>AUTHOR</h1>\
             <p>Graham Barr.</p></body></html>",
            para(
                "Net::FTP is a class implementing a simple FTP client in Perl.",
                8
            )
        )
    };
    let refs = "<p><a>Net::Netrc</a>, <a>Net::Cmd</a>;</p>\
                <p><a href='http://man.he.net/man1/ftp'>ftp(1)</a>, \
                <a href='http://man.he.net/man8/ftpd'>ftpd(8)</a>;</p>\
                <p><a href='https://www.ietf.org/rfc/rfc959.txt'>https://www.ietf.org/rfc/rfc959.txt</a>, \
                <a href='https://www.ietf.org/rfc/rfc2428.txt'>https://www.ietf.org/rfc/rfc2428.txt</a>.</p>";
    let m = md(&page(&format!("<h1 id='SEE-ALSO'>SEE ALSO</h1>{refs}")));
    assert!(
        m.contains(
            "# SEE ALSO\n\nNet::Netrc, Net::Cmd;\n\n[ftp(1)](http://man.he.net/man1/ftp), \
                    [ftpd(8)](http://man.he.net/man8/ftpd);\n\n\
                    [https://www.ietf.org/rfc/rfc959.txt]("
        ),
        "{m}"
    );
    let m = md(&page(&format!(
        "<p>Closing words of the description follow.</p>{refs}"
    )));
    assert!(!m.contains("ftpd(8)"), "{m}");
}

/// A manual page's "SEE ALSO" (asciidoc's git manuals, Erlang's): one link a line, or
/// links and commas, in a paragraph wrapped in the section's body divs. Kept as the
/// section's text however link-dense, as a list under its heading is; links only spaces
/// apart are still a menu.
#[test]
fn a_see_also_paragraph_of_links_one_a_line_is_kept() {
    let sect = |title: &str, body: &str| {
        format!(
            "<div class='sect1'><h2 id='_{t}'>{title}</h2><div class='sectionbody'>{body}\
             </div></div>",
            t = title.to_lowercase().replace(' ', "_")
        )
    };
    let links = |sep: &str| {
        ["git-status", "git-rm", "git-reset", "git-mv"]
            .iter()
            .map(|n| format!("<a href='{n}.html'>{n}(1)</a>"))
            .collect::<Vec<_>>()
            .join(sep)
    };
    let page =
        |see_also: &str| {
            format!(
            "<body><div id='header'><h1>git-add(1) Manual Page</h1></div><div id='content'>{}{}{}\
             </div><div id='footer'>Last updated 2023</div></body>",
            sect(
                "DESCRIPTION",
                &para(
                    "This command updates the index using the current content found in the \
                     working tree, to prepare the content staged for the next commit.",
                    4
                )
            ),
            sect("SEE ALSO", see_also),
            sect("GIT", "<div class='paragraph'><p>Part of the git suite</p></div>")
        )
        };
    let paragraph = |p: &str| format!("<div class='paragraph'><p>{p}</p></div>");
    for sep in ["\n", ",\n", ", "] {
        let m = md(&page(&paragraph(&links(sep))));
        assert!(
            m.contains("## SEE ALSO\n\n[git-status(1)]("),
            "{sep:?}: {m}"
        );
    }
    let m = md(&page(&paragraph(&links(" "))));
    assert!(!m.contains("SEE ALSO"), "{m}");
    // One link a paragraph (gitremote-helpers(7)), and a manual page named without a link
    // among the links (git-diff(1): `diff(1), <a>git-difftool(1)</a>, …`).
    let each: String = links("\n").lines().map(paragraph).collect();
    let m = md(&page(&each));
    assert!(
        m.contains("## SEE ALSO\n\n[git-status(1)](") && m.contains("[git-mv(1)]("),
        "{m}"
    );
    let named = [
        "git-difftool",
        "git-log",
        "git-format-patch",
        "git-apply",
        "git-show",
    ]
    .map(|n| format!("<a href='{n}.html'>{n}(1)</a>"))
    .join(",\n");
    let m = md(&page(&paragraph(&format!("diff(1),\n{named}"))));
    assert!(
        m.contains("## SEE ALSO\n\ndiff(1), [git-difftool(1)]("),
        "{m}"
    );
    // Words that are not a manual page's name make it a sentence, kept or not by others.
    assert!(
        !score::manual_page("diff") && !score::manual_page("(1)") && !score::manual_page("a(b)")
    );
    assert!(score::manual_page("printf(3p).") && score::manual_page("git-config(1)"));
}

/// A box named a sidebar set in a manual's text (DocBook's `div.sidebar`, here as
/// Publican writes it, with `div.para` for paragraphs) is the text's: a "VOCABULARY" or
/// "GOING FURTHER" box between the section's paragraphs. A page's sidebar beside the
/// text stays out.
#[test]
fn a_sidebar_set_in_a_manuals_text_is_kept() {
    let para = |t: &str| format!("<div class='para'>\n\t\t\t{t}\n\t\t</div>");
    let sidebar = |title: &str, body: &str| {
        format!(
            "<div class='sidebar'><a id='sb'></a><div class='titlepage'><div><div>\
             <p class='title'><strong>{title}</strong></p></div></div></div>{}</div>",
            para(body)
        )
    };
    let html = format!(
        "<body><div id='banner'><a href='/get'>Download the ebook</a></div>\
         <ul class='docnav'><li><a href='prev.html'>Prev</a></li><li><a href='next.html'>Next\
         </a></li></ul><div class='section'><div class='titlepage'><div><div>\
         <h2 class='title'>6.3. The apt-cache Command</h2></div></div></div>\
         <a id='i1' class='indexterm'></a>{}{}{}{}<div class='section'><div class='titlepage'>\
         <div><div><h3 class='title'>6.3.1. The apt-cache policy Command</h3></div></div></div>\
         {}<pre class='screen'>$ apt-cache policy\nPackage files:\n 100 /var/lib/dpkg/status\n\
         \x20    release a=now</pre>{}</div></div>\
         <div class='sidebar'><h3>Elsewhere</h3><ul><li><a href='/a'>Ebook</a></li>\
         <li><a href='/b'>Paperback</a></li><li><a href='/c'>Donate</a></li></ul></div></body>",
        para(
            "The apt-cache command can display much of the information stored in APT's \
             internal database, gathered from the sources listed in the sources.list file."
        ),
        sidebar(
            "VOCABULARY Cache",
            "A cache is a temporary storage system used to speed up frequent data access \
             when the usual access method is expensive, from processors to storage systems."
        ),
        para(
            "The apt-cache command can do keyword-based package searches with apt-cache \
             search keyword, and display the headers of the available versions."
        ),
        sidebar(
            "ALTERNATIVE axi-cache",
            "apt-cache search is a very rudimentary tool, basically implementing grep on \
             package descriptions; axi-cache search term provides better results."
        ),
        para(
            "The apt-cache policy command displays the pinning priorities and distribution \
             properties of each package source, as explained in the previous section."
        ),
        para(
            "Although there is a newer version in the backports repository, APT will not \
             install it automatically based on the priority of that repository."
        ),
    );
    let m = md(&html);
    assert!(
        m.starts_with("## 6.3. The apt-cache Command\n\nThe apt-cache command can display"),
        "{m}"
    );
    assert!(m.contains("A cache is a temporary storage system"), "{m}");
    assert!(
        m.contains("apt-cache search is a very rudimentary tool"),
        "{m}"
    );
    assert!(m.contains("$ apt-cache policy"), "{m}");
    assert!(
        !m.contains("Paperback") && !m.contains("Download the ebook"),
        "{m}"
    );
    // docutils' sidebar directive, as Sphinx writes it in Python's asyncio page: an
    // `<aside>` with its title in `p.sidebar-title`, a code example in it.
    let words = self::para(
        "asyncio is a library to write concurrent code using the async/await syntax.",
        3,
    );
    let m = md(&sphinx(&format!(
        "<section id='asyncio'><h1>asyncio</h1><aside class='sidebar'>\
         <p class='sidebar-title'>Hello World!</p><div class='highlight-python3 notranslate'>\
         <div class='highlight'><pre>import asyncio\n\nasync def main():\n    print('Hello ...')\n\
         \x20   await asyncio.sleep(1)\n    print('... World!')\n\nasyncio.run(main())</pre></div>\
         </div></aside>{words}{words}</section>"
    )));
    assert!(
        m.contains("Hello World!\n\n```python3\nimport asyncio"),
        "{m}"
    );
}

/// A heading written with a space at its end (before a link around an icon, which writes
/// nothing: a listing title's feed link) has none in markdown.
#[test]
fn a_heading_ends_without_a_space() {
    let m = whole(
        "<h3>See Also <a href='/feed'></a></h3><p>Text.</p><h2>C# <i class='icon'></i></h2>\
         <p>More.</p>",
    );
    assert_eq!(m, "### See Also\n\nText.\n\n## C#\n\nMore.\n");
}

#[test]
fn a_signature_heading_of_links_beside_its_permalink_is_kept() {
    // rustdoc: each associated item is a `<section>` holding its source link, its `§`
    // permalink and an `<h4>` signature whose names are links ("type <a>Error</a> =
    // <a>Infallible</a>"); the section was dropped as a menu, heading and all, and the
    // item's description came out under the heading before it.
    let item = |class: &str, id: &str, sig: &str, doc: &str| {
        format!(
            "<details class='{class}' open><summary><section id='{id}' class='trait-impl'>\
             <a class='src rightside' href='../src/convert.rs.html#831'>Source</a>\
             <a href='#{id}' class='anchor'>§</a><h4 class='code-header'>{sig}</h4>\
             </section></summary><div class='docblock'>{doc}</div></details>"
        )
    };
    let imp = |tr: &str, ty: &str, m: &str| {
        format!(
            "<details class='toggle implementors-toggle' open><summary>\
             <section id='impl-{tr}' class='impl'><a class='src rightside' \
             href='../src/convert.rs.html#827'>Source</a><a href='#impl-{tr}' class='anchor'>§</a>\
             <h3 class='code-header'>impl&lt;T, U&gt; <a class='trait' href='trait.{tr}.html'>{tr}\
             </a>&lt;U&gt; for T</h3></section></summary><div class='impl-items'>{}{}</div></details>",
            item(
                "toggle",
                &format!("associatedtype.Error-{tr}"),
                &format!(
                    "type <a href='trait.{tr}.html#associatedtype.Error'>Error</a> = \
                     <a class='enum' href='enum.{ty}.html'>{ty}</a>"
                ),
                "The type returned in the event of a conversion error."
            ),
            item(
                "toggle method-toggle",
                &format!("method.{m}"),
                &format!(
                    "fn <a href='trait.{tr}.html#tymethod.{m}'>{m}</a>(value: U) -&gt; \
                     <a class='enum' href='enum.Result.html'>Result</a>&lt;T, Self::Error&gt;"
                ),
                "Performs the conversion."
            )
        )
    };
    let m = md(&format!(
        "<html><body><nav class='sidebar'><ul><li><a href='#a'>Methods</a></li>\
         <li><a href='#b'>Trait Implementations</a></li></ul></nav><main>\
         <section id='main-content' class='content'><h1>Struct Ref</h1>\
         <div class='docblock'><p>Wraps a borrowed reference to a value in a RefCell box.</p>\
         </div><h2 id='blanket-implementations'>Blanket Implementations</h2>\
         <div id='blanket-implementations-list'>{}{}</div></section></main></body></html>",
        imp("TryFrom", "Infallible", "try_from"),
        imp("TryInto", "Ordering", "try_into")
    ));
    assert!(m.contains("#### type [Error]"), "{m}");
    assert!(
        m.contains("[Infallible]") && m.contains("[Ordering]"),
        "{m}"
    );
    assert!(m.contains("#### fn [try_into]"), "{m}");
}

#[test]
fn a_title_block_of_one_linked_heading_is_kept() {
    // DocBook (Boost's BoostBook pages): each section's title is `div.titlepage > div >
    // div > h3`, the heading one link to the section itself. The wrappers are all link
    // text, so they went as menus and every heading with them (81 of 81 on one page).
    let section = |id: &str, title: &str, words: &str| {
        format!(
            "<div class='section'><div class='titlepage'><div><div><h3 class='title'>\
             <a name='sds.{id}'></a><a class='link' href='sds.html#sds.{id}' \
             title='{title}'>{title}</a></h3></div></div></div>{}</div>",
            para(words, 3)
        )
    };
    let m = md(&format!(
        "<html><body><div class='spirit-nav'><a href='a.html'>Prev</a> \
         <a href='b.html'>Next</a></div><div class='section'><div class='titlepage'><div>\
         <div><h2 class='title'><a name='sds'></a><a class='link' href='sds.html' \
         title='Synchronized Data Structures'>Synchronized Data Structures</a></h2></div>\
         </div></div>{}{}</div></body></html>",
        section(
            "values",
            "Synchronized Values",
            "The mutex is tied to the value, so you cannot access it without a lock."
        ),
        section(
            "queues",
            "Synchronized Queues",
            "Queues let threads hand work to each other without sharing anything else."
        )
    ));
    assert!(m.contains("## [Synchronized Data Structures]("), "{m}");
    assert!(m.contains("### [Synchronized Values]("), "{m}");
    assert!(m.contains("### [Synchronized Queues]("), "{m}");
    // On an article, a heading of one link alone in its block is a teaser of another
    // page (a "Latest insights" item after the post), still weighed as links.
    let m = md(&format!(
        "<html><head><meta property='og:type' content='article'></head><body><div \
         class='post'><h1>How regulation changed</h1>{}<div class='teaser'><h4><a \
         href='/blog/other-story'>Crypto regulatory affairs: the proposed rules</a></h4>\
         </div></div></body></html>",
        para(
            "Regulators around the world set out new rules for exchanges this year.",
            6
        )
    ));
    assert!(!m.contains("other-story"), "{m}");
}

#[test]
fn a_code_block_of_no_code_is_not_written() {
    // mandoc's manual pages (Tcl's, from an empty `.nf`/`.fi` in the page's macros) open
    // with `<br/><pre>\n</pre>`: an empty fenced block before the first section, on 231
    // of 232 pages.
    let m = whole(
        "<div class='manual-text'><br/><pre>\n</pre><section class='Sh'><h1 class='Sh' \
         id='NAME'>NAME</h1><p class='Pp'>after - Execute a command after a time delay</p>\
         <pre>  \n </pre><pre>after 1000\n</pre></section></div>",
    );
    assert_eq!(
        m,
        "# NAME\n\nafter - Execute a command after a time delay\n\n```\nafter 1000\n```\n"
    );
    // In a list item the item stays.
    let m = whole("<ul><li><pre></pre></li><li>two</li></ul>");
    assert!(m.contains("two"), "{m}");
}

#[test]
fn a_term_linking_to_itself_is_its_text() {
    // mandoc's manual pages give each `.TP` term an id and a link to it:
    // `<dt id="after"><a class="permalink" href="#after"><b>after</b> <i>ms</i></a></dt>`
    // (1,264 terms on 79 of Tcl's 232 pages). The term came out as a link to itself.
    let m = whole(
        "<dl class='Bl-tag'><dt id='after'><a class='permalink' href='#after'><b>after \
         </b><i>ms</i></a></dt><dd>The command sleeps for <i>ms</i> milliseconds.</dd>\
         <dt id='cancel'><a href='#idle'>after cancel</a></dt><dd>Cancels it.</dd></dl>",
    );
    assert!(m.starts_with("**after** *ms*\n"), "{m}");
    // A link to another place on the page stays a link.
    assert!(
        m.contains("[after cancel](https://docs.example.com/library/page.html#idle)"),
        "{m}"
    );
}

#[test]
fn documentation_comments_under_each_member_are_content() {
    // Scaladoc writes each member's documentation in `div.comment.cmt`, TypeDoc in
    // `div.tsd-comment`: `comment` marked them as a comment thread, and every member's
    // description and example went (Scaladoc's code blocks 0.52).
    let member = |name: &str| {
        format!(
            "<li><h4 class='signature'><span class='kind'>def</span> \
             <span class='name'>{name}</span>(x: Int): Int</h4>\
             <div class='fullcomment'><div class='comment cmt'><p>Applies {name} to \
             the value and returns the result of the computation.</p>\
             <pre>scala&gt; {name}(1)\nres0: Int = 2</pre></div>\
             <dl class='attributes block'><dt>Definition Classes</dt><dd>Ops</dd></dl></div></li>"
        )
    };
    let members: String = ["inc", "dec", "twice", "negate"]
        .iter()
        .map(|n| member(n))
        .collect();
    let m = md(&format!(
        "<html><body><div id='definition'><h1>Ops</h1></div>\
         <div id='template'><div id='values'><h3>Value Members</h3><ol>{members}</ol></div></div>\
         <div id='footer'>Scala programming documentation.</div></body></html>"
    ));
    assert!(m.contains("Applies negate to the value"), "{m}");
    assert!(m.contains("res0: Int = 2"), "{m}");
    // TypeDoc's shape: the comment under each member's title and signature.
    let member = |name: &str| {
        format!(
            "<section class='tsd-panel tsd-member'><h3>{name}</h3><ul class='tsd-signatures'>\
             <li class='tsd-signature'>{name}(): void</li><li class='tsd-description'>\
             <div class='tsd-comment tsd-typography'><p>Calls {name} on every listener that \
             was registered before the event was emitted.</p></div></li></ul></section>"
        )
    };
    let members: String = ["start", "stop", "pause"]
        .iter()
        .map(|n| member(n))
        .collect();
    let m = md(&format!(
        "<html><body><div class='container'><h1>Class Emitter</h1>{members}</div></body></html>"
    ));
    assert!(m.contains("Calls stop on every listener"), "{m}");
    // A comment thread after a post still goes.
    let comment = |who: &str| {
        format!(
            "<div class='comment'><p class='author'>{who}</p><p>Great write-up, thanks \
             for sharing this with everyone here.</p></div>"
        )
    };
    let m = md(&format!(
        "<html><body><article><h1>My trip</h1>{}</article><div id='comments'>{}{}{}</div>\
         </body></html>",
        para(
            "We walked along the river for three days and slept in small inns.",
            6
        ),
        comment("ann"),
        comment("bob"),
        comment("cid")
    ));
    assert!(!m.contains("Great write-up"), "{m}");
}

#[test]
fn permalinks_of_a_symbol_or_an_icon_are_dropped() {
    // Doxygen's `<span class="permalink"><a>◆</a></span>` opens every member's heading
    // ("## ◆ push_back"); Scaladoc's permalink icon follows every signature
    // ("[![Permalink](…/permalink.png)](…)").
    let m = md(&format!(
        "<html><body><div id='doc-content'><div class='contents'>\
         <h2 class='groupheader'>Member Function Documentation</h2>\
         <h2 class='memtitle'><span class='permalink'><a href='#a1'>&#9670;&nbsp;</a></span>\
         push_back()</h2><div class='memitem'><div class='memdoc'>{}</div></div>\
         <h4 class='signature'>def size: Int</h4><span class='permalink'>\
         <a href='../index.html#scala.List@size:Int' title='Permalink'>\
         <img src='../lib/permalink.png' alt='Permalink'></a></span>{}\
         <p>Posted on Monday. <a class='permalink' href='/2012/07/post.html'>Permalink</a></p>\
         </div></div></body></html>",
        para("Appends the given element to the end of the container.", 4),
        para("The number of elements in this list, counted each time.", 4)
    ));
    assert!(m.contains("## push_back()"), "{m}");
    assert!(!m.contains("permalink.png"), "{m}");
    // A permalink written as a word stays a link.
    assert!(m.contains("[Permalink]("), "{m}");
}

#[test]
fn a_section_body_under_its_heading_is_not_the_page_when_the_title_is_no_heading() {
    // Doxygen's namespace and file pages: the title is a `div.title`, then a summary table
    // titled by a row `<h2>`, then "Detailed Description" over `div.textblock`. The
    // descent took the text block, the only prose, and the table and headings went
    // (100 of 612 libstdc++ pages).
    let rows: String = ["hours", "minutes", "seconds", "milliseconds"]
        .iter()
        .map(|n| {
            format!(
                "<tr class='memitem:{n}'><td class='memItemLeft'>constexpr chrono::{n}&#160;\
                 </td><td class='memItemRight'><a class='el' href='a01571.html#{n}'>\
                 operator\"\"{n}</a> ()</td></tr><tr class='separator:{n}'>\
                 <td class='memSeparator' colspan='2'>&#160;</td></tr>"
            )
        })
        .collect();
    let m = md(&format!(
        "<html><body><div id='top'><div id='projectname'>libstdc++</div></div>\
         <div id='doc-content'><div class='header'><div class='summary'>\
         <a href='#func-members'>Functions</a></div><div class='headertitle'>\
         <div class='title'>std::chrono_literals Namespace Reference</div></div></div>\
         <div class='contents'><table class='memberdecls'><tr class='heading'>\
         <td colspan='2'><h2 class='groupheader'>Functions</h2></td></tr>{rows}</table>\
         <h2 class='groupheader'>Detailed Description</h2><div class='textblock'>{}</div>\
         </div></div></body></html>",
        para(
            "These suffixes create duration values with tick periods of hours or seconds.",
            6
        )
    ));
    assert!(m.contains("## Detailed Description"), "{m}");
    assert!(m.contains("operator\"\"minutes"), "{m}");
}

#[test]
fn the_title_block_above_the_content_is_kept_at_any_level() {
    // R54. The descent entered the page's body block and the title beside it went.
    let body = para(
        "Contributed the reference manual and many fixes to the parser over the years.",
        3,
    );
    let entries: String = (0..12)
        .map(|i| format!("<dt><span>Person {i}</span></dt><dd>{body}</dd>"))
        .collect();
    // BoostBook: no `<h1>`; the page's title is an `<h2>` linking to the page itself, in
    // `div.titlepage` before the body block.
    let m = md(&format!(
        "<html><body><div class='nav'><a href='prev.html'>Prev</a> <a href='up.html'>Up</a>\
         </div><div class='section'><div class='titlepage'><div><div><h2 class='title'>\
         <a class='link' href='page.html'>Acknowledgements</a></h2></div></div></div>\
         <div class='variablelist'><dl>{entries}</dl></div></div></body></html>"
    ));
    assert!(m.starts_with("## [Acknowledgements]"), "{m}");
    // DocBook: chapters of nested sections, each under its `div.titlepage`; the descent
    // reaches the innermost section, and every title above it is kept.
    let m = md(&format!(
        "<html><body><div class='chapter'><div class='titlepage'><div><div><h2 class='title'>\
         Chapter 5. Strings</h2></div></div></div><div class='section'><div class='titlepage'>\
         <div><div><h2 class='title'>String Classes</h2></div></div></div><div class='section'>\
         <div class='titlepage'><div><div><h3 class='title'>Simple Transformations</h3></div>\
         </div></div><div class='section'><div class='titlepage'><div><div><h4 class='title'>\
         Case folding</h4></div></div></div><blockquote>{body}{body}{body}</blockquote></div>\
         </div></div></div></body></html>"
    ));
    assert!(
        m.starts_with(
            "## Chapter 5. Strings\n\n## String Classes\n\n### Simple Transformations\n\n#### Case folding"
        ),
        "{m}"
    );
    // rustdoc: the item's `<h1>`, its declaration in code, then a notice that outweighs
    // the declaration; the declaration stays between the title and the notice.
    let m = md(
        "<html><body><section id='main-content'><div class='main-heading'><h1>Type Alias \
         <a href='index.html'>raw</a>::<a href='#'>c_ulong</a></h1></div>\
         <pre class='item-decl'><code>pub type c_ulong = u64;</code></pre><span><div>\
         Deprecated since 1.8.0: these type aliases are no longer supported by the standard \
         library, the libc crate should be used instead for the correct definitions</div>\
         <div>Available on Linux only.</div></span></section></body></html>",
    );
    assert!(m.contains("pub type c_ulong = u64;"), "{m}");
    // Scaladoc: the title block holds an icon, the owner's link, the `<h1>` and an `<h3>`
    // of links ("Related Doc"); links in its headings do not make it a menu.
    let members: String = (0..12)
        .map(|i| format!("<li><h4>def member{i}(x: Int): Int</h4>{body}</li>"))
        .collect();
    let m = md(&format!(
        "<html><body><div id='definition'><img src='class_big.png'><p id='owner'>\
         <a href='package.html'>scala</a></p><h1>Some</h1><h3><span><div>Related Doc: \
         <a href='package.html'>package scala</a></div></span></h3></div>\
         <h4 id='signature'>final case class Some[+A](x: A)</h4>\
         <div id='template'><h3>Value Members</h3><ol>{members}</ol></div></body></html>"
    ));
    assert!(m.contains("# Some\n"), "{m}");
    assert!(m.contains("final case class Some"), "{m}");
}

#[test]
fn a_paragraph_of_links_under_its_own_heading_is_kept() {
    // R's help pages (Rd2HTML) end with "See Also" and a paragraph of links, each in
    // `<code>`: dropped as a menu, leaving the heading alone (121 of 381 pages).
    let html = format!(
        "<html><body><div class='container'><h2>Fitting Linear Models</h2>\
         <h3>Description</h3>{}<h3>See Also</h3>\
         <p><code><a href='../../stats/help/C.html'>C</a></code>,\n\
         <code><a href='../../stats/help/contr.helmert.html'>contr.helmert</a></code>,\n\
         <code><a href='../../stats/help/glm.html'>glm</a></code>.</p>\
         <h3>Examples</h3><pre><code>lm(y ~ x)</code></pre></div></body></html>",
        para(
            "lm is used to fit linear models, including multivariate ones.",
            4
        )
    );
    let m = md(&html);
    assert!(
        m.contains(
            "### See Also\n\n[`C`](https://docs.example.com/stats/help/C.html), [`contr.helmert`]"
        ),
        "{m}"
    );
    // A paragraph of the page's own places under a heading is a table of contents.
    let toc = html.replace("../../stats/help/", "#");
    assert!(!md(&toc).contains("[`glm`]"), "{}", md(&toc));
    // On an article, a headed line of links is its site's.
    let m = md(&format!(
        "<html><head><meta property='og:type' content='article'></head><body><article>\
         <h1>A walk in the hills</h1>{}<h3>More from us</h3><p><a href='/2007/x'>Bobbing to \
         the surface</a> <a href='/2006/y'>Trip itinerary</a></p></article></body></html>",
        para(
            "We walked along the ridge for hours and saw nobody at all.",
            6
        )
    ));
    assert!(!m.contains("Bobbing"), "{m}");
}

#[test]
fn footnotes_beside_the_content_are_kept() {
    // texi2any (Texinfo 6.8) writes a manual as one page: `<h1>`, `div.top` holding every
    // chapter, then `div.footnote` beside it. The descent took `div.top` and the notes
    // went (R's manuals: 332 footnotes on 6 pages).
    let chapter = |n: u32, title: &str| {
        format!(
            "<div class='chapter' id='c{n}'><div class='header'><p>Next: <a href='#c{}'>next</a>\
             </p></div><h2 class='chapter'>{n} {title}</h2>{}<p>Unpack it with a suitable\
             <a id='DOCF{n}' href='#FOOT{n}'><sup>{n}</sup></a> tar.</p></div>",
            n + 1,
            para(
                "R is a system for statistical computation and graphics, with a language.",
                8
            )
        )
    };
    let html = format!(
        "<html><body><h1 class='settitle'>R Installation and Administration</h1>\
         <div class='top' id='Top'>{}{}{}</div>\
         <div class='footnote'><hr><h4 class='footnotes-heading'>Footnotes</h4>\
         <h5><a id='FOOT1' href='#DOCF1'>(1)</a></h5>\
         <p>e.g. GNU tar version 1.15 or later, or that from the libarchive distributions.</p>\
         <h5><a id='FOOT2' href='#DOCF2'>(2)</a></h5>\
         <p>for some Subversion clients http may appear to work, but requires redirection.</p>\
         </div></body></html>",
        chapter(1, "Obtaining R"),
        chapter(2, "Installing R"),
        chapter(3, "Running R")
    );
    let m = md(&html);
    assert!(
        m.starts_with("# R Installation and Administration\n"),
        "{m}"
    );
    assert!(m.contains("## 3 Running R"), "{m}");
    assert!(
        m.contains("#### Footnotes")
            && m.contains("GNU tar version 1.15")
            && m.contains("requires redirection."),
        "{m}"
    );
    // The same notes beside an article's body under a site's header, without the title.
    let html = format!(
        "<html><body><div class='masthead'><a href='/'>The Site</a></div><div id='main'>\
         <div class='post'>{}<p>It rose again in May.<sup><a href='#fn1'>1</a></sup></p></div>\
         <div class='footnotes'><ol><li id='fn1'>Measured in 2019, before the new bridge was \
         opened to traffic.</li></ol></div></div>\
         <div class='sidebar'><h3>Archives</h3><ul><li><a href='/2019'>2019</a></li></ul></div>\
         </body></html>",
        para(
            "The river rose four metres in a night and the old ford was gone.",
            10
        )
    );
    let m = md(&html);
    assert!(
        m.contains("Measured in 2019") && !m.contains("Archives"),
        "{m}"
    );
    // Notes the text does not point to are not its notes.
    let m = md(&html.replace("#fn1", "/notes#fn1"));
    assert!(!m.contains("Measured in 2019"), "{m}");
    // An article's reference list stands apart from its body, as its headline does.
    let m = md(&html.replace(
        "<html>",
        "<html><head><meta property='og:type' content='article'></head>",
    ));
    assert!(!m.contains("Measured in 2019"), "{m}");
}

#[test]
fn a_menu_of_the_pages_own_sections_after_a_paragraph_goes() {
    // texi2any writes each node's menu as `ul.section-toc` of `#fragment` links after the
    // node's first paragraph: the subsection headings again, kept as a list introduced by
    // prose (R's manuals: 171 menus on 7 pages).
    let html = format!(
        "<html><body><h1>R Installation and Administration</h1><div class='chapter'>\
         <h2 class='chapter'>1 Obtaining R</h2>{}\
         <ul class='section-toc'><li><a href='#Getting-the-sources'>Getting the sources</a></li>\
         <li><a href='#Getting-patched-versions'>Getting patched versions</a></li></ul>\
         <div class='section' id='Getting-the-sources'><h3>1.1 Getting the sources</h3>{}</div>\
         <div class='section' id='Getting-patched-versions'><h3>1.2 Getting patched versions</h3>\
         {}</div></div></body></html>",
        para(
            "Sources, binaries and documentation for R can be obtained via CRAN.",
            3
        ),
        para(
            "The simplest way is to download the most recent file and unpack it.",
            6
        ),
        para(
            "A patched version of the current release is made available daily.",
            6
        )
    );
    let m = md(&html);
    assert!(m.contains("### 1.2 Getting patched versions"), "{m}");
    assert!(!m.contains("[Getting the sources]"), "{m}");
    // A list of the page's places that a paragraph announces with a colon stays.
    let m = md(&html.replace(
        " Sources, binaries and documentation for R can be obtained via CRAN.</p>",
        " This chapter has two sections:</p>",
    ));
    assert!(m.contains("[Getting the sources]"), "{m}");
}

/// A VitePress page: the theme's layout around `div.vp-doc` holding `body` (minified, as
/// the build writes it).
fn vitepress(body: &str) -> String {
    format!(
        "<html><head><title>npm-install | npm docs</title></head><body><div id='app'>\
         <div class='Layout'><header class='VPNav'><a class='title' href='/'>npm docs</a>\
         <nav><a href='/'>Home</a><a href='/markdown-examples'>Examples</a></nav></header>\
         <aside class='VPSidebar'><nav><ul><li><a href='/commands/npm-access'>npm-access</a></li>\
         <li><a href='/commands/npm-install'>npm-install</a></li></ul></nav></aside>\
         <div class='VPContent has-sidebar' id='VPContent'><div class='VPDoc has-sidebar'>\
         <div class='container'><div class='aside'><nav class='VPDocAsideOutline'>\
         <div class='outline-title'>On this page</div></nav></div><div class='content'>\
         <main class='main'><div class='vp-doc _commands_npm-install'><div>{body}</div></div>\
         </main><footer class='VPDocFooter'><nav class='prev-next'><a class='pager-link prev' \
         href='/commands/npm-init'>Previous page npm-init</a></nav></footer></div></div></div>\
         </div></div></div></body></html>"
    )
}

/// A page of Sphinx's Furo theme: the site's sidebar, then `article[role=main]` holding
/// `body`, then the page's table of contents.
fn furo(body: &str) -> String {
    format!(
        "<html><body><div class='page'><aside class='sidebar-drawer'><div class='sidebar-tree'>\
         <ul><li class='toctree-l1'><a href='../index.html'>Installing Sphinx</a></li>\
         <li class='toctree-l1 current'><a href='#'>Getting started</a></li></ul></div></aside>\
         <div class='main'><div class='content'><div class='article-container'>\
         <article role='main' id='furo-main-content'>{body}</article>\
         <footer><div class='related-pages'><a class='next-page' href='next.html'>Next</a>\
         </div></footer></div><aside class='toc-drawer'><div class='toc-tree'><ul>\
         <li><a href='#a'>Section a</a></li></ul></div></aside></div></div></div>\
         </body></html>"
    )
}

#[test]
fn a_code_blocks_language_label_is_not_a_paragraph() {
    // VitePress writes the language over each listing as `span.lang` beside the `<pre>`;
    // the fence names it already.
    let listing = |lang: &str, code: &str| {
        format!(
            "<div class='language-{lang} vp-adaptive-theme'><button title='Copy Code' \
             class='copy'></button><span class='lang'>{lang}</span><pre class='shiki \
             shiki-themes github-light github-dark vp-code' tabindex='0'><code><span \
             class='line'><span>{code}</span></span></code></pre></div>"
        )
    };
    let html = vitepress(&format!(
        "<h3 id='synopsis' tabindex='-1'>Synopsis <a class='header-anchor' href='#synopsis' \
         aria-label='Permalink to &quot;Synopsis&quot;'>\u{200b}</a></h3>{}\
         <p>This command installs a package and any packages that it depends on, in the \
         order the lock file gives.</p>{}<p>Then run the tests of the package you installed \
         to see that it works.</p>",
        listing("bash", "npm install [&lt;package-spec&gt; ...]"),
        listing("js", "const x = require('x')"),
    ));
    let m = md(&html);
    assert!(
        m.contains("### Synopsis\n\n```bash\nnpm install [<package-spec> ...]\n```"),
        "{m}"
    );
    assert!(
        m.contains("depends on, in the order the lock file gives.\n\n```js\n"),
        "{m}"
    );
    assert!(!m.contains("\nbash\n") && !m.contains("\njs\n"), "{m}");
}

/// A Docusaurus docs page: navbar, sidebar, `article` holding breadcrumbs and
/// `div.theme-doc-markdown` around `body`, pagination and the page's table of contents.
fn docusaurus(body: &str) -> String {
    format!(
        "<html><head><title>npm-install | My Site</title></head><body><div id='__docusaurus'>\
         <nav class='navbar navbar--fixed-top'><div class='navbar__inner'><a class='navbar__brand' \
         href='/'><b class='navbar__title'>My Site</b></a><a class='navbar__item' \
         href='/docs/intro'>Tutorial</a><a class='navbar__item' href='/blog'>Blog</a></div></nav>\
         <div class='main-wrapper'><div class='docsWrapper'><div class='docRoot'>\
         <aside class='theme-doc-sidebar-container'><nav class='menu'><ul class='menu__list'>\
         <li class='menu__list-item'><a class='menu__link' href='/docs/npm/commands/npm-access'>\
         npm-access</a></li><li class='menu__list-item'><a class='menu__link' \
         href='/docs/npm/commands/npm-install'>npm-install</a></li></ul></nav></aside>\
         <main class='docMainContainer'><div class='container'><div class='row'><div class='col'>\
         <div class='docItemContainer'><article><nav class='theme-doc-breadcrumbs'><ul \
         class='breadcrumbs'><li class='breadcrumbs__item'><a href='/'>Home</a></li></ul></nav>\
         <div class='theme-doc-markdown markdown'><header><h1>npm-install</h1></header>{body}</div>\
         </article><nav class='pagination-nav'><a class='pagination-nav__link' \
         href='/docs/npm/commands/npm-init'>Previous npm-init</a></nav></div></div>\
         <div class='col col--3'><div class='theme-doc-toc-desktop'><ul class='table-of-contents'>\
         <li><a href='#synopsis' class='table-of-contents__link'>Synopsis</a></li></ul></div>\
         </div></div></div></main></div></div></div><footer class='footer'>Copyright © 2026 My \
         Project, Inc.</footer></div></body></html>"
    )
}

#[test]
fn a_sentence_of_one_word_and_two_links_is_kept() {
    // "See <a>…</a> and <a>…</a>." is mostly link text, and opens with one word only: it
    // went as a menu. Its own words join the links and a full stop ends it.
    let see = "<p>See <a href='/docs/npm/configuring-npm/package-lock-json'>package-lock.json</a> \
               and <a href='/docs/npm/commands/npm-shrinkwrap'><code>npm shrinkwrap</code></a>.</p>";
    let body = format!(
        "<h3 class='anchor' id='description'>Description<a href='#description' \
         class='hash-link' aria-label='Direct link to Description'>\u{200b}</a></h3>\
         <p>This command installs a package and any packages that it depends on, in the \
         order of precedence below.</p><ul><li><code>npm-shrinkwrap.json</code></li>\
         <li><code>package-lock.json</code></li></ul>{see}{}",
        para("The lock file decides which versions are installed.", 8)
    );
    let m = md(&docusaurus(&body));
    assert!(m.contains("See [package-lock.json]("), "{m}");
    assert!(m.contains(" and [`npm shrinkwrap`]("), "{m}");
    // A line of links with no end stop is still a menu.
    let menu = "<p>Follow <a href='/a'>the changelog feed</a> or <a href='/b'>the release \
                announcements list</a></p>";
    let m = md(&docusaurus(&format!("{body}{menu}")));
    assert!(!m.contains("changelog feed"), "{m}");
}

#[test]
fn an_address_on_a_line_of_its_own_is_kept() {
    // Markdown's autolink (`<https://www.npmjs.com/>`) as the whole answer under its
    // heading: one link, all link text, it went as a menu.
    let body = format!(
        "<h3 class='anchor' id='where'>Where can I find my published packages?<a \
         href='#where' class='hash-link'>\u{200b}</a></h3><p><a href='https://www.npmjs.com/' \
         target='_blank' rel='noopener noreferrer'>https://www.npmjs.com/</a></p>\
         <h3 class='anchor' id='see-also'>See also</h3><ul><li><a \
         href='/docs/npm/commands/npm-config'>npm config</a></li></ul>{}",
        para("The registry holds the packages that npm installs.", 8)
    );
    let m = md(&docusaurus(&body));
    assert!(
        m.contains("published packages?\n\n[https://www.npmjs.com/](https://www.npmjs.com/)\n"),
        "{m}"
    );
    // A paragraph of one link that names its page is the answer too, as the whole body
    // of its section (`a_sections_whole_body_of_one_link_is_kept`); beside other text of
    // the section it is still a menu entry.
    let body = body.replace(">https://www.npmjs.com/<", ">Browse the npm website<");
    assert!(md(&docusaurus(&body)).contains("packages?\n\n[Browse the npm website]"));
    let body = body.replace(
        "</a></p><h3 class='anchor' id='see-also'>",
        "</a></p><p>The website lists every package.</p><h3 class='anchor' id='see-also'>",
    );
    assert!(!md(&docusaurus(&body)).contains("Browse the npm"));
}

#[test]
fn items_of_a_loose_list_that_are_one_link_are_kept() {
    // Sphinx writes every item of a list in a paragraph, `<li><p><a>…</a></p></li>`
    // (Python-Markdown too, for a list with blank lines between its items): an item
    // that is one link is part of the list, not a menu of its own.
    let html = furo(&format!(
        "<section id='getting-started'><h1>Getting started</h1>{}\
         <section id='more-topics'><h2>More topics to be covered</h2><ul class='simple'>\
         <li><p><a class='reference internal' href='extensions/index.html'>\
         <span class='doc'>Other extensions</span></a>:</p></li>\
         <li><p>Static files</p></li>\
         <li><p><a class='reference internal' href='theming.html'>\
         <span class='doc'>Selecting a theme</span></a></p></li>\
         <li><p>Using extensions</p></li>\
         <li><p><a class='reference internal' href='../extdev/index.html#dev-extensions'>\
         <span class='std std-ref'>Writing extensions</span></a></p></li>\
         </ul></section></section>",
        para(
            "Sphinx is a documentation generator that translates plain text files.",
            6
        )
    ));
    let m = md(&html);
    assert!(m.contains("- Static files"), "{m}");
    assert!(m.contains("- [Selecting a theme]("), "{m}");
    assert!(m.contains("- [Writing extensions]("), "{m}");
}

#[test]
fn a_title_shown_only_in_print_is_not_a_second_title() {
    // sphinx-book-theme writes a copy of the page's `<h1>` in `div.onlyprint` (its
    // stylesheet shows it on paper only) before the article: with two titles on the page,
    // the one in the article went, and with it all but the note the descent chose.
    let html = format!(
        "<html><body><nav class='bd-links'><ul><li><a href='../index.html'>Usage</a></li>\
         </ul></nav><main id='main-content' class='bd-main' role='main'>\
         <div class='bd-content'><div class='bd-article-container'>\
         <div id='jb-print-docs-body' class='onlyprint'><h1>Sphinx Web Support</h1>\
         <div id='print-main-content'><div id='jb-print-toc'></div></div></div>\
         <article class='bd-article'><section id='sphinx-web-support'>\
         <h1>Sphinx Web Support<a class='headerlink' href='#sphinx-web-support'>#</a></h1>\
         <div class='versionadded'><p><span class='versionmodified added'>Added in version \
         1.1.</span></p></div>\
         <p>Sphinx provides a Python API to integrate its documentation into your web \
         application.</p><div class='admonition note'><p class='admonition-title'>Note</p>{}\
         </div><div class='toctree-wrapper compound'><ul>\
         <li class='toctree-l1'><a class='reference internal' href='quickstart.html'>Web \
         Support Quick Start</a></li>\
         <li class='toctree-l1'><a class='reference internal' href='api.html'>The WebSupport \
         class</a></li></ul></div></section></article></div></div></main></body></html>",
        para(
            "Web Support originated from the Pocoo community, the creators of Sphinx.",
            4
        )
    );
    let m = md(&html);
    assert!(m.starts_with("# Sphinx Web Support\n"), "{m}");
    assert_eq!(m.matches("Sphinx Web Support").count(), 1, "{m}");
    assert!(m.contains("Added in version 1.1."), "{m}");
    assert!(m.contains("Sphinx provides a Python API"), "{m}");
}

#[test]
fn a_see_also_of_one_link_is_kept() {
    // Sphinx's `.. seealso::` over one cross-reference: the title and a paragraph that is
    // one link, link-dense as a whole, went (Sphinx's napoleon examples, Python's logging
    // and venv pages).
    let html = furo(&format!(
        "<section id='example-numpy'><h1>Example NumPy Style Python Docstrings</h1>\
         <div class='admonition seealso'><p class='admonition-title'>See also</p>\
         <p><a class='reference internal' href='example_google.html#example-google'>\
         <span class='std std-ref'>Example Google Style Python Docstrings</span></a></p>\
         </div>{}<section id='api'><h2>API</h2>{}\
         <div class='admonition seealso'><p class='admonition-title'>See also</p>\
         <p><a class='reference internal' href='event_callbacks.html#event-env-purge-doc'>\
         <code class='xref std std-event docutils literal notranslate'>env-purge-doc</code>\
         </a></p></div></section></section>",
        para(
            "This module demonstrates documentation as specified by the NumPy guide.",
            4
        ),
        para(
            "This method is called on the removal of the document from the environment.",
            4
        )
    ));
    let m = md(&html);
    assert!(
        m.contains("[Example Google Style Python Docstrings]("),
        "{m}"
    );
    assert!(m.contains("[`env-purge-doc`]("), "{m}");
    assert_eq!(m.matches("See also").count(), 2, "{m}");
}

#[test]
fn a_reference_pages_sections_after_its_preamble_and_quick_links_are_kept() {
    // Apache httpd's module pages: the title, a summary under a lesser heading, a box of
    // quick links, then one section per directive under headings of a rank the preamble
    // does not use.
    let directive = |name: &str| {
        format!(
            "<div class='directive-section'><h2 id='{name}'>{name} Directive</h2>\
             <table class='directive'><tr><th><a href='directive-dict.html#Syntax'>Syntax:</a>\
             </th><td><code>{name} bytes</code></td></tr></table><p>The <code>{name}</code> \
             directive specifies the amount of data in bytes that will be buffered before \
             being read from or written to each request.</p></div>"
        )
    };
    let page = |sections: &str| {
        format!(
            "<html><body><div id='page-header'><a href='/'>Modules</a> <a href='/faq'>FAQ</a>\
             </div><div id='page-content'><div id='preamble'><h1>Apache Module mod_buffer</h1>\
             <table class='module'><tr><th><a href='module-dict.html#Status'>Status:</a></th>\
             <td>Extension</td></tr></table><h3>Summary</h3>{}{}</div>\
             <div id='quickview'><h3 class='directives'>Directives</h3><ul id='toc'><li>\
             <img alt='' src='down.gif'> <a href='#BufferSize'>BufferSize</a></li></ul>\
             <h3>Bugfix checklist</h3><ul class='seealso'><li><a href='https://example.org/\
             CHANGES'>httpd changelog</a></li><li><a href='https://bz.example.org/buglist'>Known \
             issues</a></li><li><a href='https://bz.example.org/enter_bug'>Report a bug</a></li>\
             </ul><h3>See also</h3><ul class='seealso'><li><a href='../filter.html'>Filters</a>\
             </li></ul></div><div class='top'><a href='#page-header'><img alt='top' src='up.gif'>\
             </a></div>{sections}</div><div id='footer'><p>Copyright The Apache Software \
             Foundation.</p></div></body></html>",
            para(
                "This module provides the ability to buffer the input and output filter stacks.",
                3
            ),
            para(
                "Buffering the response may allow the backend to complete processing sooner.",
                3
            ),
        )
    };
    for sections in [
        directive("BufferSize"),
        directive("BufferSize") + &directive("BufferLimit"),
    ] {
        let m = md(&page(&sections));
        assert!(m.starts_with("# Apache Module mod_buffer"), "{m}");
        assert!(m.contains("## BufferSize Directive"), "{m}");
        assert!(m.contains("The `BufferSize` directive specifies"), "{m}");
        assert_eq!(
            m.contains("BufferLimit"),
            sections.contains("BufferLimit"),
            "{m}"
        );
        assert!(!m.contains("Copyright"), "{m}");
    }
    // A long section after a short preamble of links and metadata: the content picker
    // goes to the section, and the preamble (the title, the summary) comes with it.
    let long = directive("UserDir").replace(
        "</div>",
        &format!(
            "{}<h3>Merging details</h3>{}</div>",
            para(
                "Lists of specific usernames and directories are merged in the order given.",
                6
            ),
            para(
                "Either form may be used in virtual hosts and in the main server config.",
                6
            )
        ),
    );
    let short = page(&long).replace(
        &para(
            "Buffering the response may allow the backend to complete processing sooner.",
            3,
        ),
        "",
    );
    let short = short.replacen(
        &para(
            "This module provides the ability to buffer the input and output filter stacks.",
            3,
        ),
        "<p><span>Available Languages: </span><a href='/en/'>en</a> | <a href='/fr/'>fr</a> | \
         <a href='/ja/'>ja</a></p><p>This module provides user-specific directories, \
         reached with the <code>http://example.com/~user/</code> syntax.</p>",
        1,
    );
    let row = |k: &str, v: &str| {
        format!("<tr><th><a href='module-dict.html#{k}'>{k}:</a></th><td>{v}</td></tr>")
    };
    let table = [
        row("Description", "User-specific directories"),
        row("Status", "Base"),
        row("Module Identifier", "userdir_module"),
        row("Source File", "mod_userdir.c"),
        row("Compatibility", "Available in Apache 2.0 and later"),
    ]
    .concat();
    let short = short.replace(
        "<tr><th><a href='module-dict.html#Status'>Status:</a></th><td>Extension</td></tr>",
        &table,
    );
    let m = md(&short);
    assert!(m.starts_with("# Apache Module mod_buffer"), "{m}");
    assert!(
        m.contains("### Summary") && m.contains("user-specific directories"),
        "{m}"
    );
    assert!(
        m.contains("## UserDir Directive") && m.contains("### Merging details"),
        "{m}"
    );
    // Not a title block of links without prose of its own (a header of menus).
    let menus = (0..12)
        .map(|i| format!("<a href='/m{i}'>Module number {i}</a> "))
        .collect::<String>();
    let m = md(&short.replace(
        "<p>This module provides user-specific directories, reached with the \
         <code>http://example.com/~user/</code> syntax.</p>",
        &format!("<p>{menus}</p>"),
    ));
    assert!(
        m.starts_with("## UserDir Directive") && !m.contains("Module number"),
        "{m}"
    );
}

#[test]
fn a_reference_page_titled_twice_keeps_its_title_and_every_section() {
    // Erlang/OTP's reference pages: the title in a top bar and again above the content,
    // then one wrapper per section: the description (most of the prose), data types in
    // code, an "Exports" title standing alone and the functions' block after it.
    let types = (0..6)
        .map(|i| format!("<article class='data-types-body'><h4>type_{i}()</h4><code>type_{i}() = atom()</code></article>"))
        .collect::<String>();
    let funcs = (0..6)
        .map(|i| {
            format!(
                "<article class='func'><h4 class='func-head'>add_thing_{i}(Server, Dir) -&gt; ok</h4>\
                 <div class='REFBODY fun-types'><h3>Types</h3><div>Server = pid()</div></div>\
                 <div class='exports-tube'><p>Adds thing {i} to the server.</p></div></article>"
            )
        })
        .collect::<String>();
    let page = |top: &str, after: &str| {
        format!(
            "<html><body><div class='topbar-title'><h1>{top}</h1></div><aside id='leftnav'>\
             <nav><ul><li><a href='/a'>Applications</a></li><li><a href='/b'>Modules</a></li>\
             </ul></nav></aside><div id='content'><div class='innertube'><center><h1>xref</h1>\
             </center></div><div class='innertube'><h3>Module Summary</h3><div>A cross \
             reference tool.</div></div><section class='description'><div class='innertube'>\
             <h3>Description</h3><div class='REFBODY description-body'>{}{}</div></div>\
             </section><div class='innertube'><h3>Data Types</h3>{types}</div>\
             <div class='innertube'><h3>Exports</h3></div><div class='exports-body'>{funcs}\
             </div>{after}</div><div class='footer'>Copyright Ericsson AB.</div></body></html>",
            para(
                "Xref is a cross reference tool that finds dependencies between functions.",
                12
            ),
            para(
                "Calls between functions are either local calls or external calls.",
                12
            ),
        )
    };
    let see_also =
        "<section class='innertube'><h3>See Also</h3><p>beam_lib(3), digraph(3)</p></section>";
    let m = md(&page("xref", see_also));
    assert!(m.starts_with("# xref\n"), "{m}");
    for part in [
        "### Description",
        "### Data Types",
        "type_5() = atom()",
        "### Exports",
        "#### add_thing_0(Server, Dir) -> ok",
        "Adds thing 5 to the server.",
        "### See Also",
    ] {
        assert!(m.contains(part), "{part}: {m}");
    }
    assert!(
        !m.contains("Copyright") && !m.contains("Applications"),
        "{m}"
    );
    // A section of links after them is not one of them.
    let links = "<div class='innertube'><h3>Related</h3><ul><li><a href='/x'>Another module \
        of the toolset</a></li><li><a href='/y'>Yet another module of the toolset</a></li></ul></div>";
    let m = md(&page("xref", links));
    assert!(
        m.contains("Adds thing 5") && !m.contains("Another module"),
        "{m}"
    );
}

#[test]
fn a_reference_page_whose_functions_outweigh_its_description_keeps_its_title_and_every_section() {
    // Erlang/OTP's socket module: the functions' block holds most of the text, so it is
    // the content, and the description before it is its lead. The title, the summary,
    // the data types (signatures, no prose) and the "Exports" title sit beside them in
    // the same wrapper, and stay.
    let types = (0..8)
        .map(|i| {
            format!(
                "<article class='data-types-body'><h4><span class='bold_code'>\
                 sock_type_{i}() = stream | dgram | raw</span></h4>\
                 <div class='data-type-desc'></div></article>"
            )
        })
        .collect::<String>();
    let funcs = (0..30)
        .map(|i| {
            format!(
                "<div class='exports-tube'><h4>send_{i}(Socket, Data) -&gt; ok</h4>\
                 <div class='REFBODY rb-4'><p>Sends data {i} on a connected socket and \
                 returns when the operating system has taken all of it, or an error.</p>\
                 </div></div>"
            )
        })
        .collect::<String>();
    let html = format!(
        "<html><body><div class='topbar-title'><h1>socket</h1></div><aside id='leftnav'>\
         <nav><ul><li><a href='/a'>Applications</a></li><li><a href='/b'>Modules</a></li>\
         </ul></nav></aside><div id='content'><div class='innertube'><center><h1>socket</h1>\
         </center></div><div class='innertube'><h3>Module Summary</h3><div>Socket \
         interface.</div></div><section class='description'><div class='innertube'>\
         <h3>Description</h3><div class='REFBODY description-body'>{}<div class='note'>\
         <div class='label'>Note</div>{}</div></div></div></section><div class='innertube'>\
         <h3>Data Types</h3>{types}</div><div class='innertube'><h3>Exports</h3></div>\
         <div class='exports-body'>{funcs}</div></div><div class='footer'>Copyright \
         Ericsson AB.</div></body></html>",
        para("This module provides an API for network sockets.", 3),
        para("Some functions allow for an asynchronous call.", 3),
    );
    let m = md(&html);
    assert!(m.starts_with("# socket\n"), "{m}");
    for part in [
        "### Module Summary",
        "### Description",
        "### Data Types",
        "sock_type_7() = stream | dgram | raw",
        "### Exports",
        "#### send_0(Socket, Data) -> ok",
        "Sends data 29",
    ] {
        assert!(m.contains(part), "{part}: {m}");
    }
    assert!(
        !m.contains("Copyright") && !m.contains("Applications"),
        "{m}"
    );
}

#[test]
fn a_section_of_signatures_after_the_content_is_a_body_not_a_title() {
    // Erlang/OTP's xref: the description is the content; after it, "Data Types" holds
    // nothing but `<h4>` signatures under its `<h3>`, then the "Exports" title stands
    // alone before the functions. A block of lesser headings under its title is a
    // section's body; titles of one level and nothing else (Scaladoc's empty "Inherited
    // from" groups) are not.
    let types = (0..6)
        .map(|i| format!("<h4 class='data-type-name'><span class='bold_code'><a name='type-t{i}'>t{i}()</a> = atom()</span></h4><div class='data-type-desc'></div>"))
        .collect::<String>();
    let funcs = (0..4)
        .map(|i| format!("<div class='exports-tube'><h4>add_{i}(Server) -&gt; ok</h4><div><p>Adds thing {i}.</p></div></div>"))
        .collect::<String>();
    let inherited = (0..4)
        .map(|i| format!("<div class='parent'><h3>Inherited from Base{i}</h3></div>"))
        .collect::<String>();
    let html = format!(
        "<html><body><div id='content'><div class='innertube'><h1>xref</h1></div>\
         <section class='description'><div class='innertube'><h3>Description</h3><div>{}{}\
         </div></div></section><div class='innertube'><h3>Data Types</h3>\
         <article class='data-types-body'>{types}</article></div><div class='innertube'>\
         <h3>Exports</h3></div><div class='exports-body'>{funcs}</div>\
         <div id='inherited'>{inherited}</div></div></body></html>",
        para(
            "Xref is a cross reference tool that finds dependencies between functions.",
            12
        ),
        para(
            "Calls between functions are either local calls or external calls.",
            12
        ),
    );
    let m = md(&html);
    for part in [
        "### Description",
        "### Data Types",
        "t5() = atom()",
        "### Exports",
        "Adds thing 3.",
    ] {
        assert!(m.contains(part), "{part}: {m}");
    }
    assert!(!m.contains("Inherited from"), "{m}");
}

#[test]
fn a_list_under_a_caption_that_is_a_heading_by_its_role_stays() {
    // Sphinx's toctrees in a page's text (asyncio's "Reference"): each a caption,
    // `<p class="caption" role="heading">`, over its list of links. The caption is the
    // list's heading by its ARIA role, so the list is that section's text.
    let toctree = |cap: &str, items: &[&str]| {
        let lis = items
            .iter()
            .map(|i| format!("<li class='toctree-l1'><a class='reference internal' href='{i}.html'>{i}</a></li>"))
            .collect::<String>();
        format!(
            "<div class='toctree-wrapper compound'><p class='caption' role='heading'>\
             <span class='caption-text'>{cap}</span></p><ul>{lis}</ul></div>"
        )
    };
    let html = sphinx(&format!(
        "<section id='asyncio'><h1>asyncio</h1>{}<p class='rubric'>Reference</p>{}{}</section>",
        para(
            "asyncio is a library to write concurrent code with async and await.",
            6
        ),
        toctree("High-level APIs", &["Runners", "Streams", "Queues"]),
        toctree("Low-level APIs", &["Futures", "Transports"]),
    ));
    let m = md(&html);
    for part in [
        "High-level APIs",
        "[Runners](",
        "[Queues](",
        "Low-level APIs",
        "[Transports](",
    ] {
        assert!(m.contains(part), "{part}: {m}");
    }
    assert!(!m.contains("Section a"), "{m}");
}

#[test]
fn a_site_name_linking_up_to_the_root_is_not_the_pages_title() {
    // Django's docs (Sphinx's classic layout): the site's name is an `<h1>` linking to the
    // root by a relative path (`../../../index.html`), above the page's own `<h1>`. With two
    // titles the title rule was off, and the admonition holding most of the prose came out
    // alone, without the page's title, introduction and table of contents.
    let toc = [
        "Aggregation functions",
        "Database constraints",
        "Model fields",
        "Form fields and widgets",
        "Database functions",
        "Model indexes",
    ]
    .iter()
    .map(|t| {
        let sub = ["General-purpose functions", "Functions for statistics", "Usage examples", "Exclusion constraints", "Range fields", "Full text search", "Lookups and transforms", "Database migration operations"]
            .iter()
            .map(|u| format!("<li class='toctree-l2'><a class='reference internal' href='{t}.html#{u}'>{u}</a></li>"))
            .collect::<String>();
        format!("<li class='toctree-l1'><a class='reference internal' href='{t}.html'>{t}</a><ul>{sub}</ul></li>")
    })
    .collect::<String>();
    let html = format!(
        "<html><body><div id='hd'><h1><a href='../../../index.html'>Django documentation</a></h1>\
         <ul id='nav'><li><a href='/a'>Home</a></li><li><a href='/b'>Index</a></li></ul></div>\
         <div id='bd'><div class='yui-g'><div class='section' id='postgres'><h1>postgres</h1>\
         <p>PostgreSQL has a number of features not shared by the other databases Django \
         supports. This optional module contains model fields and form fields for a number \
         of PostgreSQL specific data types.</p>\
         <div class='admonition note'><p class='admonition-title'>Note</p>{}</div>\
         <div class='toctree-wrapper compound'><ul>{toc}</ul></div></div></div></div></body></html>",
        para("Django is, and will continue to be, a database-agnostic web framework.", 8),
    );
    let m = md(&html);
    assert!(m.starts_with("# postgres\n"), "{m}");
    for part in [
        "features not shared",
        "database-agnostic",
        "[Model fields](",
    ] {
        assert!(m.contains(part), "{part}: {m}");
    }
    assert!(!m.contains("Django documentation"), "{m}");
    for (href, home) in [
        ("../../../index.html", true),
        ("../", true),
        ("./../index.html", true),
        ("../about.html", false),
        ("../topics/index.html", false),
    ] {
        assert_eq!(score::is_home_href(href), home, "{href}");
    }
}

#[test]
fn footnotes_that_are_links_stay_with_the_text() {
    // mdBook's footnotes: `<ol class="footnote-definition">` at the end of `<main>`, each
    // note a link to its source and a link back to the text. Link-dense as a menu is, it is
    // the text's: the note the text points to.
    let html = format!(
        "<html><body><nav class='sidebar'><ol><li><a href='ch01.html'>Getting Started</a></li>\
         <li><a href='ch02.html'>Guessing Game</a></li></ol></nav><main><h1>Hash Maps</h1>{}\
         <p>By default, HashMap uses a hashing function called SipHash<sup \
         class='footnote-reference' id='fr-siphash-1'><a href='#footnote-siphash'>1</a></sup>.\
         </p>{}<hr><ol class='footnote-definition'><li id='footnote-siphash'><p><a \
         href='https://en.wikipedia.org/wiki/SipHash'>https://en.wikipedia.org/wiki/SipHash</a> \
         <a href='#fr-siphash-1'>↩</a></p></li></ol></main></body></html>",
        para("The type HashMap stores a mapping of keys to values.", 8),
        para(
            "Hash maps are useful when you want to look up data by a key.",
            8
        ),
    );
    let m = md(&html);
    assert!(
        m.contains("](https://en.wikipedia.org/wiki/SipHash)"),
        "{m}"
    );
    assert!(!m.contains("Guessing Game"), "{m}");
}

#[test]
fn a_one_line_pre_alone_in_its_cell_keeps_the_table_a_table() {
    // nginx's directive tables (Syntax / Default / Context) and reST tables of key codes
    // put a one-line literal block, `<pre>`, alone in a cell. A code block cannot stand in
    // a markdown cell, and the whole table was flattened into paragraphs for it; as a code
    // span it keeps the table. A longer `<pre>`, or one among a cell's paragraphs, still
    // flattens the table, and a one-row table around an example (Texinfo's indentation)
    // leaves the example a code block.
    let rows = |default: &str| {
        format!(
            "<table class='directive'><tr><td>Syntax:</td><td><code>rewrite_log on | off;</code>\
             </td></tr><tr><td>Default:</td><td>{default}</td></tr><tr><td>Context:</td>\
             <td><code>http</code>, <code>server</code></td></tr></table>"
        )
    };
    let page = |table: String| {
        format!(
            "<html><body><main><h1>Rewrite module</h1>{}{table}{}</main></body></html>",
            para(
                "The module changes request URIs using regular expressions.",
                4
            ),
            para(
                "Enables or disables logging of the module's processing results.",
                4
            ),
        )
    };
    let m = md(&page(rows("<pre>rewrite_log off;</pre>")));
    assert!(m.contains("| Default: | `rewrite_log off;` |"), "{m}");
    assert!(m.contains("| Context: | `http`, `server` |"), "{m}");
    let m = md(&page(rows("<pre>rewrite_log off;\nrewrite on;</pre>")));
    assert!(m.contains("```\nrewrite_log off;\nrewrite on;\n```"), "{m}");
    assert!(!m.contains("| Default:"), "{m}");
    let m = md(&page(rows(
        "<p>Off by default:</p><pre>rewrite_log off;</pre>",
    )));
    assert!(!m.contains("| Default:"), "{m}");
    let m = md(&page(
        "<table><tr><td>&nbsp;</td><td><pre class='example'>msgfmt -o x.mo x.po</pre></td></tr></table>"
            .to_string(),
    ));
    assert!(m.contains("```\nmsgfmt -o x.mo x.po\n```"), "{m}");
}

/// A box named a sidebar right after a section's only paragraph, or right after its
/// title, is the text's too (Publican: a section of one paragraph and its "BACK TO
/// BASICS" box; an item whose paragraph opens with a `div.title`; two boxes in a row; an
/// index term's empty anchor between). A page's sidebar after a menu stays out.
#[test]
fn a_sidebar_after_a_sections_only_paragraph_is_kept() {
    let para = |t: &str| format!("<div class='para'>\n\t\t\t{t}\n\t\t</div>");
    let sidebar = |title: &str, body: &str| {
        format!(
            "<div class='sidebar'><div class='titlepage'><div><div><p class='title'>\
             <strong>{title}</strong></p></div></div></div><a id='ix' class='indexterm'></a>{}\
             </div>",
            para(body)
        )
    };
    let title = |h: &str, t: &str| {
        format!("<div class='titlepage'><div><div><{h} class='title'>{t}</{h}></div></div></div>")
    };
    let html = format!(
        "<body><ul class='docnav'><li><a href='prev.html'>Prev</a></li><li><a href='next.html'>\
         Next</a></li></ul><div class='section'>{}{}<div class='section'>{}\
         <a id='i1' class='indexterm'></a>{}{}</div><div class='section'>{}{}{}{}\
         <div class='itemizedlist'><ul><li class='listitem'><div class='para'>\
         <div class='title'>License must not contaminate other software.</div>\
         The license must not place restrictions on other software that is distributed along \
         with the licensed software.</div>{}</li></ul></div></div></div>\
         <ul class='menu'><li><a href='/a'>Ebook</a></li><li><a href='/b'>Paperback</a></li>\
         </ul><div class='sidebar'><p>Our handbook is written by volunteers; buy the printed \
         book or the ebook to support the authors and get every future edition.</p></div></body>",
        title("h2", "8.12. Miscellaneous"),
        para(
            "This section gathers the configuration steps that do not fit in the other \
             sections of this chapter, from time to the filesystems."
        ),
        title("h3", "8.12.1. Time Synchronization"),
        para(
            "Time synchronization, which may seem superfluous on a computer, is very \
             important on a network, where every computer should agree on the time."
        ),
        sidebar(
            "BACK TO BASICS NTP",
            "NTP (Network Time Protocol) allows a machine to synchronize with others fairly \
             accurately by taking into consideration the delays induced by the transfer."
        ),
        title("h3", "8.12.2. Mounting Filesystems"),
        sidebar(
            "BACK TO BASICS Mounting and unmounting",
            "In a Unix-like system such as Debian, files are organized in a single tree-like \
             hierarchy of directories, whatever the device they are stored on."
        ),
        sidebar(
            "GOING FURTHER Auto-mounting",
            "systemd is able to manage automount points: those are mount points that are \
             mounted on demand when a user attempts to access their target directories."
        ),
        para(
            "The /etc/fstab file gives a list of all possible mounts that happen either \
             automatically on startup or manually for removable storage devices."
        ),
        sidebar(
            "BACK TO BASICS Copyleft",
            "Copyleft is a principle that consists in using copyrights to guarantee the \
             freedom of a work and its derivatives, rather than restrict the rights of uses."
        ),
    );
    let m = md(&html);
    for kept in [
        "NTP (Network Time Protocol) allows",
        "In a Unix-like system such as Debian",
        "systemd is able to manage automount points",
        "Copyleft is a principle",
    ] {
        assert!(m.contains(kept), "{kept}: {m}");
    }
    assert!(!m.contains("written by volunteers"), "{m}");
}

/// A `<div class="para">` is a paragraph (Publican writes every paragraph so): its text is
/// prose, so a chapter's introduction, its first section and their boxes stay with the
/// last section that holds most of the text.
#[test]
fn a_div_named_para_is_a_paragraph() {
    let para = |t: &str| format!("<div class='para'>\n\t\t\t{t}\n\t\t</div>");
    let long = para(
        &"The apt-cache policy command displays the pinning priorities and distribution \
          properties of each package source, as explained in the previous section. "
            .repeat(3),
    );
    let html = format!(
        "<body><div id='banner'><a href='/get'>Download the ebook</a></div>\
         <ul class='docnav'><li><a href='prev.html'>Prev</a></li><li><a href='next.html'>Next\
         </a></li></ul><div class='section'><div class='titlepage'><div><div>\
         <h2 class='title'>6.3. The apt-cache Command</h2></div></div></div>{}{}\
         <div class='section'><div class='titlepage'><div><div><h3 class='title'>6.3.1. The \
         apt-cache policy Command</h3></div></div></div>{long}{long}{long}{long}</div></div>\
         <ul class='docnav'><li><a href='prev.html'>Prev</a></li><li><a href='next.html'>Next\
         </a></li></ul></body>",
        para(
            "The apt-cache command can display much of the information stored in APT's \
             internal database, gathered from the sources listed in the sources.list file."
        ),
        para(
            "The apt-cache command can do keyword-based package searches with apt-cache \
             search keyword, and display the headers of the available versions."
        ),
    );
    let m = md(&html);
    assert!(
        m.starts_with("## 6.3. The apt-cache Command\n\nThe apt-cache command can display"),
        "{m}"
    );
    assert!(m.contains("keyword-based package searches"), "{m}");
    assert!(!m.contains("Download the ebook"), "{m}");
}

/// An address on a line of its own after a mark (DocBook's `<div class="url">→ <a>…</a>`
/// inside a paragraph) is what the text points to, not a menu of one link.
#[test]
fn an_address_after_a_mark_is_kept() {
    let words = para(
        "The installation manual describes another way of preparing a USB key that allows \
         you to customize the installer's default options set in the kernel command line.",
        2,
    );
    let html = format!(
        "<body><ul class='nav'><li><a href='/'>Home</a></li><li><a href='/docs'>Docs</a></li>\
         </ul><main><h1>Booting from a USB Key</h1>{words}<div>A more detailed explanation \
         is in the installation manual. <div class='url'>→ <a href='https://www.debian.org/\
         releases/stable/amd64/ch04s03'>https://www.debian.org/releases/stable/amd64/ch04s03\
         </a></div></div>{words}</main></body>"
    );
    let m = md(&html);
    assert!(
        m.contains("→ [https://www.debian.org/releases/stable/amd64/ch04s03]("),
        "{m}"
    );
}

/// DocBook's "See Also" of a reference page written as an inline `span.simplelist` of
/// links apart by commas right under its heading (PostgreSQL's `sql-*.html`) is the
/// section's text, as a paragraph of such links is.
#[test]
fn a_see_also_span_of_links_is_kept() {
    let words = para(
        "VACUUM reclaims storage occupied by dead tuples. In normal operation, tuples that \
         are deleted or obsoleted by an update are not physically removed from their table.",
        3,
    );
    let html = format!(
        "<body><div class='navheader'><table><tr><td><a href='prev.html'>Prev</a></td>\
         <td><a href='next.html'>Next</a></td></tr></table></div><div class='refentry'>\
         <div class='refnamediv'><h2>VACUUM</h2><p>VACUUM — garbage-collect and optionally \
         analyze a database</p></div><div class='refsect1'><h2>Description</h2>{words}</div>\
         <div class='refsect1'><h2>See Also</h2><span class='simplelist'>\
         <a class='xref' href='app-vacuumdb.html'>vacuumdb</a>, <a class='xref' \
         href='runtime-config-resource.html#COST'>Section 20.4.4</a>, <a class='xref' \
         href='routine-vacuuming.html#AUTOVACUUM'>Section 25.1.6</a>, <a class='xref' \
         href='sql-analyze.html'>ANALYZE</a>, <a class='xref' href='pgstatstatements.html'>\
         pg_stat_statements</a></span></div></div>\
         <div class='navfooter'><a href='index.html'>Home</a></div></body>"
    );
    let m = md(&html);
    assert!(
        m.contains("## See Also\n\n[vacuumdb](") && m.contains("[Section 25.1.6]("),
        "{m}"
    );
    assert!(!m.contains("Prev") && !m.contains("Home"), "{m}");
}

/// A section under its own heading whose id extends its enclosing section's id keeps it
/// when the word read as chrome comes from that enclosing id (PostgreSQL:
/// `LOGICAL-REPLICATION-SUBSCRIPTION-SLOT` in `LOGICAL-REPLICATION-SUBSCRIPTION`, where
/// "subscription" names the subject). A block without a heading extending `comments`
/// (`comments-wrapper`) is still chrome.
#[test]
fn a_section_id_extending_its_parents_is_its_subject() {
    let words = |w: &str| para(w, 3);
    let html = format!(
        "<body><div class='sect1' id='LOGICAL-REPLICATION-SUBSCRIPTION'><div class='titlepage'>\
         <div><div><h2 class='title'>31.2. Subscription</h2></div></div></div>{}\
         <div class='sect2' id='LOGICAL-REPLICATION-SUBSCRIPTION-SLOT'><div class='titlepage'>\
         <div><div><h3 class='title'>31.2.1. Replication Slot Management</h3></div></div></div>\
         {}</div><div class='sect2' id='LOGICAL-REPLICATION-SUBSCRIPTION-EXAMPLES'>\
         <div class='titlepage'><div><div><h3 class='title'>31.2.2. Examples</h3></div></div>\
         </div><p>Create some test tables on the publisher.</p><pre class='programlisting'>\
         test_pub=# CREATE TABLE t1(a int, b text, PRIMARY KEY(a));\nCREATE TABLE</pre></div>\
         <section id='comments'><h2>Comments</h2><p>With an account on the Fediverse you \
         can respond to this post; known replies are displayed below.</p>\
         <div id='comments-wrapper'><p>Loading comments relies on \
         JavaScript; enable it to read the replies posted on the fediverse.</p></div>\
         </section></div></body>",
        words(
            "A subscription is the downstream side of logical replication. The node where a \
             subscription is defined is referred to as the subscriber."
        ),
        words(
            "Each active subscription receives changes from a replication slot on the remote \
             publishing side, created when the subscription is created."
        ),
    );
    let m = md(&html);
    assert!(m.contains("### 31.2.1. Replication Slot Management"), "{m}");
    assert!(m.contains("test_pub=# CREATE TABLE t1"), "{m}");
    assert!(!m.contains("Loading comments"), "{m}");
}

/// A section opens with the section it wraps: RDoc's methods
/// (`section.documentation-section > section.constants-list > header > h3`) are a
/// subsection of the page the module's `<h1>` titles, so the title and the description
/// before them (mostly code, so no lead) stay with them.
#[test]
fn a_section_opens_with_the_heading_of_the_section_it_wraps() {
    let method = |n: &str| {
        format!(
            "<div id='method-c-{n}' class='method-detail'><div class='method-heading'>\
             <span class='method-name'>{n}</span><span class='method-args'>(src, dest)</span>\
             </div><div class='method-description'><p>Copies or moves the file <code>src</code> \
             to <code>dest</code>, as {n} does, and reports what it did when asked to be \
             verbose about it.</p><pre class='ruby'>FileUtils.{n}('a', 'b')\nFileUtils.{n}('c', 'd', verbose: true)</pre></div></div>"
        )
    };
    let code = "FileUtils.cd(dir, **options)\nFileUtils.pwd()\n".repeat(12);
    let html = format!(
        "<body><main role='main'><h1 id='module-FileUtils' class='module'>module FileUtils</h1>\
         <section class='description'><h1>fileutils.rb</h1><p>Copyright © 2000-2007 Minero \
         Aoki</p><h2>module FileUtils</h2><p>Namespace for several file \
         utility methods for copying, moving, removing, etc.</p><h3>Module Functions</h3>\
         <pre class='ruby'>{code}</pre><p>Possible options are listed with each method.</p>\
         </section><section id='5Buntitled-5D' class='documentation-section'>\
         <section class='constants-list'><header><h3>Constants</h3></header><dl>\
         <dt id='VERSION'>VERSION</dt><dd></dd></dl></section>\
         <section id='public-class-5Buntitled-5D-method-details' class='method-section'>\
         <header><h3>Public Class Methods</h3></header>{}</section></section></main></body>",
        [
            "cd",
            "chmod",
            "chown",
            "copy_entry",
            "cp",
            "cp_r",
            "install",
            "ln",
            "ln_s",
            "mkdir",
            "mv",
            "rm"
        ]
        .map(method)
        .concat()
        .repeat(3),
    );
    let m = md(&html);
    assert!(m.contains("# module FileUtils\n"), "{m}");
    assert!(
        m.contains("Namespace for several file utility methods"),
        "{m}"
    );
    assert!(m.contains("### Public Class Methods"), "{m}");
}

/// A titled section whose definition list holds most of it (DocBook's `div.variablelist`
/// between a section's introduction and its notes: PostgreSQL's "Role Attributes") is not
/// entered: its title, introduction and closing paragraphs are the section's text too.
#[test]
fn a_titled_sections_definition_list_keeps_the_prose_around_it() {
    let entry = |t: &str| {
        format!(
            "<dt><span class='term'>{t} privilege</span></dt><dd><p>Only roles that have the \
             {t} attribute can do what it allows, and a role is given it with a clause of \
             CREATE ROLE naming {t}, or later with ALTER ROLE and the same clause.</p></dd>"
        )
    };
    let html = format!(
        "<body><div class='navheader'><table width='100%'><tr><td><a href='p.html'>Prev</a></td>\
         <td><a href='u.html'>Up</a></td><td><a href='n.html'>Next</a></td></tr></table></div>\
         <div class='sect1' id='ROLE-ATTRIBUTES'><div class='titlepage'><div><div>\
         <h2 class='title'>22.2. Role Attributes</h2></div></div></div><p>A database role can \
         have a number of attributes that define its privileges and interact with the client \
         authentication system.</p><div class='variablelist'><dl class='variablelist'>{}</dl>\
         </div><p>A role's attributes can be modified after creation with ALTER ROLE. See the \
         reference pages for the CREATE ROLE and ALTER ROLE commands for details.</p>\
         <pre class='programlisting'>ALTER ROLE myname SET enable_indexscan TO off;</pre>\
         <p>This will save the setting (but not set it immediately). In subsequent \
         connections by this role it will appear as though it had been executed first.</p>\
         </div></body>",
        [
            "LOGIN",
            "SUPERUSER",
            "CREATEDB",
            "CREATEROLE",
            "REPLICATION",
            "BYPASSRLS",
            "PASSWORD",
            "INHERIT"
        ]
        .map(entry)
        .concat(),
    );
    let m = md(&html);
    assert!(m.contains("## 22.2. Role Attributes"), "{m}");
    assert!(m.contains("A database role can have"), "{m}");
    assert!(
        m.contains("can be modified after creation") && m.contains("This will save"),
        "{m}"
    );
    assert!(!m.contains("Prev"), "{m}");
}

/// A title block beside the chosen child inside `<main>` (Javadoc's `div.header`: the
/// package's name over the class's `<h1>`) holds the page's title as an `<h1>` standing
/// there would: the descent stays, so the class's description and summaries stay with the
/// member details that outweigh them (commons-lang3's NumberUtils, FieldUtils, ...).
#[test]
fn a_title_block_in_main_keeps_the_document_whole() {
    let detail = |n: &str| {
        format!(
            "<li><section class='detail' id='{n}(java.lang.String)'><h3>{n}</h3>\
             <div class='member-signature'>public static int {n}(String str)</div>\
             <div class='block'><p>Converts a String to the number {n} reads, returning \
             zero if the conversion fails; if the string is null, zero is returned, and \
             the default value is used whenever the text cannot be parsed at all.</p></div>\
             </section></li>"
        )
    };
    let names = [
        "toInt",
        "toLong",
        "toFloat",
        "toDouble",
        "toByte",
        "toShort",
        "createNumber",
        "createInteger",
        "createLong",
        "createFloat",
        "isDigits",
        "isCreatable",
    ];
    let rows: String = names
        .iter()
        .map(|n| format!("<div class='col-first'>static int</div><div class='col-second'><a href='#{n}'>{n}</a>(String str)</div><div class='col-last'>Converts.</div>"))
        .collect();
    let html = format!(
        "<body><header role='banner'><nav><a href='index.html'>Overview</a></nav></header>\
         <main role='main'><div class='header'><div class='sub-title'><span>Package</span>&nbsp;\
         <a href='package-summary.html'>org.apache.commons.lang3.math</a></div>\
         <h1 title='Class NumberUtils' class='title'>Class NumberUtils</h1></div>\
         <div class='inheritance'>java.lang.Object</div>\
         <section class='class-description' id='class-description'><div class='block'><p>\
         Provides extra functionality for Java Number classes.</p></div></section>\
         <section class='summary'><ul class='summary-list'><li><section class='method-summary' \
         id='method-summary'><h2>Method Summary</h2><div class='summary-table'>{rows}</div>\
         </section></li></ul></section><section class='details'><ul class='details-list'><li>\
         <section class='method-details' id='method-detail'><h2>Method Details</h2>\
         <ul class='member-list'>{}</ul></section></li></ul></section></main></body>",
        names.map(detail).concat().repeat(2),
    );
    let m = md(&html);
    assert!(m.contains("# Class NumberUtils"), "{m}");
    assert!(
        m.contains("Provides extra functionality for Java Number classes."),
        "{m}"
    );
    assert!(
        m.contains("## Method Summary") && m.contains("## Method Details"),
        "{m}"
    );
    assert!(!m.contains("Overview"), "{m}");
}

/// A block classed `header` inside `<main>` that opens with the page's heading heads the
/// document, as a `<header>` there does (Javadoc's `div.header` over a package's class
/// hierarchy). The site's own `div.header` outside `<main>` is still chrome.
#[test]
fn a_header_block_inside_main_heads_the_document() {
    let item = |c: &str| {
        format!(
            "<li class='circle'>org.apache.commons.lang3.tuple.<a href='{c}.html' \
             class='type-name-link'>{c}</a>&lt;L,R&gt; (implements java.lang.Comparable&lt;T&gt;, \
             java.util.Map.Entry&lt;K,V&gt;, java.io.Serializable)</li>"
        )
    };
    let html =
        format!(
        "<body><div class='header'><a href='index.html'>Overview</a> <a href='tree.html'>Tree</a> \
         <a href='help.html'>Help</a></div><main role='main'><div class='header'>\
         <h1 class='title'>Hierarchy For Package org.apache.commons.lang3.tuple</h1>\
         <span class='package-hierarchy-label'>Package Hierarchies:</span>\
         <ul class='horizontal'><li><a href='../overview-tree.html'>All Packages</a></li></ul>\
         </div><section class='hierarchy'><h2>Class Hierarchy</h2><ul>\
         <li class='circle'>java.lang.Object<ul>{}</ul></li></ul></section></main></body>",
        ["ImmutablePair", "MutablePair", "ImmutableTriple", "MutableTriple", "Pair", "Triple"]
            .map(item)
            .concat(),
    );
    let m = md(&html);
    assert!(
        m.contains("# Hierarchy For Package org.apache.commons.lang3.tuple"),
        "{m}"
    );
    assert!(m.contains("## Class Hierarchy"), "{m}");
    assert!(!m.contains("Overview") && !m.contains("Help"), "{m}");
}

/// A class built from its box's title names the box's subject (docutils' admonitions:
/// `admonition-you-can-t-share-pickles-between-versions` in Django's model reference). A
/// sharing box whose class spells its title, "Share this post", holds no prose and goes.
#[test]
fn a_class_built_from_its_title_is_its_subject() {
    let html = format!(
        "<body><div class='body' role='main'><section id='pickling-objects'>\
         <h2>Pickling objects</h2>{}<div class='admonition-you-can-t-share-pickles-between-versions admonition'>\
         <p class='first admonition-title'>You can’t share pickles between versions</p>\
         <p>Pickles of models are only valid for the version of Django that was used to \
         generate them. If you generate a pickle using Django version N, there is no \
         guarantee that pickle will be readable with Django version N+1.</p></div>{}\
         <div class='box-share-this-post'><p>Share this post</p><a href='https://x.invalid/s'>X</a>\
         <a href='https://m.invalid/s'>Mastodon</a></div></section></div></body>",
        para("When you pickle a model, its current state is pickled, rather than the data that is currently in the database.", 3),
        para("Other ways of serializing a model keep working across versions, as the documentation on serialization explains.", 3),
    );
    let m = md(&html);
    assert!(
        m.contains("> You can’t share pickles between versions\n>\n> Pickles of models"),
        "{m}"
    );
    assert!(
        !m.contains("Share this post") && !m.contains("Mastodon"),
        "{m}"
    );
}

/// docutils' topic directive (`<aside class="topic">`) is the text's own box: the
/// "Abstract" that opens each of Python's HOWTOs, after the title and the author's field
/// list. A page's aside of links beside the text still goes.
#[test]
fn a_docutils_topic_is_the_texts() {
    let section = |id: &str, h: &str, w: &str| {
        format!("<section id='{id}'><h2>{h}</h2>{}</section>", para(w, 3))
    };
    let html = format!(
        "<body><div class='document'><div class='body' role='main'>\
         <section id='annotations-best-practices'><h1>Annotations Best Practices</h1>\
         <dl class='field-list simple'><dt class='field-odd'>author</dt>\
         <dd class='field-odd'><p>Larry Hastings</p></dd></dl>\
         <aside class='topic'><p class='topic-title'>Abstract</p><p>This document is \
         designed to encapsulate the best practices for working with annotations dicts. If \
         you write Python code that examines annotations, read it.</p></aside>{}{}</section>\
         </div></div><aside class='related'><p>Related pages</p><ul>\
         <li><a href='a.html'>Argument Clinic How-To</a></li>\
         <li><a href='b.html'>Curses Programming with Python</a></li></ul></aside></body>",
        section("newer", "Accessing The Annotations Dict", "Python 3.10 adds a new function to the standard library, the best practice for getting annotations."),
        section("older", "Accessing The Annotations Dict In Older Versions", "In Python 3.9 and older, accessing the annotations dict of an object is much more complicated."),
    );
    let m = md(&html);
    assert!(m.contains("Abstract\n\nThis document is designed"), "{m}");
    assert!(m.contains("## Accessing The Annotations Dict"), "{m}");
    assert!(
        !m.contains("Curses Programming") && !m.contains("Related pages"),
        "{m}"
    );
}

/// A link that is a name in code (`<a><code>encode64</code></a>`) in a paragraph is a
/// cross-reference, and weighs as the paragraph's words: a class's description that names
/// its methods is the lead of its page (RDoc's `section.description` before the methods,
/// whose first paragraph is a third links to them), not a block of links.
#[test]
fn code_links_in_a_paragraph_are_its_words() {
    let code = |n: &str| format!("<a href='Base64.html#method-i-{n}'><code>{n}</code></a>");
    let method = |n: &str| {
        format!(
            "<div id='method-i-{n}' class='method-detail'><div class='method-heading'>\
             <span class='method-name'>{n}</span><span class='method-args'>(str)</span></div>\
             <div class='method-description'><p>Returns the version of <code>str</code> that \
             {n} makes, complying with RFC 2045; characters outside the alphabet are \
             ignored, and line feeds are added every 60 encoded characters.</p>\
             <pre class='ruby'>require 'base64'\n{n}(str)</pre></div></div>"
        )
    };
    let html = format!(
        "<body><nav id='navigation'><a href='index.html'>Home</a></nav>\
         <main role='main'><h1 id='module-Base64' class='module'>module Base64</h1>\
         <section class='description'><p>The <a href='Base64.html'><code>Base64</code></a> \
         module provides for the encoding ({}, {}, {}) and decoding ({}, {}, {}) of binary \
         data using a <a href='Base64.html'><code>Base64</code></a> representation.</p>\
         <h2>Example</h2><p>A simple encoding and decoding.</p>\
         <pre class='ruby'>enc = Base64.encode64('Send reinforcements')</pre>\
         <p>The purpose of using base64 is that it makes any binary data printable.</p>\
         </section><section class='documentation-section'><section class='method-section'>\
         <header><h3>Public Instance Methods</h3></header>{}</section></section></main></body>",
        code("encode64"),
        code("strict_encode64"),
        code("urlsafe_encode64"),
        code("decode64"),
        code("strict_decode64"),
        code("urlsafe_decode64"),
        [
            "decode64",
            "encode64",
            "strict_decode64",
            "strict_encode64",
            "urlsafe_decode64",
            "urlsafe_encode64"
        ]
        .map(method)
        .concat(),
    );
    let m = md(&html);
    assert!(
        m.contains("module provides for the encoding ([`encode64`]"),
        "{m}"
    );
    assert!(m.contains("## Example\n\nA simple encoding"), "{m}");
    assert!(m.contains("### Public Instance Methods"), "{m}");
}

/// An API's signature under its member's heading stays, however link-dense
/// (Javadoc's `<h3>getTimeZone</h3><div class="member-signature"><a>TimeZone</a>
/// <a>getTimeZone</a>()</div>`, its return type and its source each a link).
#[test]
fn a_signature_under_its_heading_stays() {
    let html = "<body><main><h1>Interface DateParser</h1><ul class='member-list'><li>\
         <section class='detail' id='getTimeZone()'><h3>getTimeZone</h3>\
         <div class='member-signature'><span class='return-type'><a href='https://docs.oracle.com/TimeZone.html'>TimeZone</a></span>&nbsp;\
         <span class='element-name'><a href='src/DateParser.html#line-99'>getTimeZone</a></span>()</div>\
         <div class='block'><p>Gets the time zone used by this parser, the default one used to \
         create a date when the time zone is not specified by the format pattern.</p></div>\
         <dl class='notes'><dt>Returns:</dt><dd>the time zone</dd></dl></section></li></ul>\
         </main></body>";
    let m = md(html);
    assert!(m.contains("### getTimeZone\n\n[TimeZone]("), "{m}");
    assert!(
        m.contains("[getTimeZone](") && m.contains("Gets the time zone"),
        "{m}"
    );
}

/// A method's id is its name and then its parameters (Javadoc:
/// `overlay(java.lang.String,java.lang.String,int,int)` under the heading "overlay"): the
/// name spells the heading, so the word read as chrome names the method. An overlay whose
/// id spells no heading is still chrome.
#[test]
fn a_method_id_with_its_parameters_is_its_subject() {
    let method = |name: &str, params: &str, text: &str| {
        format!(
            "<li><section class='detail' id='{name}({params})'><h3>{name}</h3>\
             <div class='member-signature'>public static String {name}(String str)</div>\
             <div class='block'><p>{text}</p></div></section></li>"
        )
    };
    let html = format!(
        "<body><main><section class='method-details' id='method-detail'><h2>Method Details</h2>\
         <ul class='member-list'>{}{}{}</ul></section>\
         <div id='overlay(1)'><h3>Join the mailing list</h3><p>Sign up to hear about new \
         releases of the library before anyone else does, every month.</p></div></main></body>",
        method("normalizeSpace", "java.lang.String", &"Removes leading and trailing whitespace and then collapses runs of whitespace into one space. ".repeat(3)),
        method("overlay", "java.lang.String,java.lang.String,int,int", &"Overlays part of a String with another String, from the start index to the end index. ".repeat(3)),
        method("prependIfMissing", "java.lang.String,java.lang.CharSequence", &"Prepends the prefix to the start of the string if the string does not already start with it. ".repeat(3)),
    );
    let m = md(&html);
    assert!(
        m.contains("### overlay\n\npublic static String overlay"),
        "{m}"
    );
    assert!(m.contains("Overlays part of a String"), "{m}");
    assert!(!m.contains("mailing list") && !m.contains("Sign up"), "{m}");
}

/// A section under its own heading whose id opens with the word its like siblings' ids open
/// with is one of a series, whatever word follows (PostgreSQL's `SQL-FOR-UPDATE-SHARE`, "The
/// Locking Clause", among `SQL-WITH`, `SQL-FROM`, all `div.refsect2`; Django's
/// `module-django.db.models.fields.related` among its other `module-` sections). A sharing
/// box whose id shares the first word of no like sibling, or whose first word is chrome
/// itself, is still chrome.
#[test]
fn a_section_id_of_its_siblings_series_is_its_subject() {
    let words = |w: &str| para(w, 3);
    let html = format!(
        "<body><div class='refentry' id='SQL-SELECT'><h2>SELECT</h2>\
         <div class='refsect2' id='SQL-WITH'><h3>WITH Clause</h3>{}</div>\
         <div class='refsect2' id='SQL-FOR-UPDATE-SHARE'><h3>The Locking Clause</h3>{}</div>\
         <div class='refsect2' id='SQL-TABLE'><h3>TABLE Command</h3>{}</div>\
         <div class='box' id='post-share'><h3>Tell your friends</h3><p>Post this page to \
         your timeline and let your friends know what you are reading today.</p></div>\
         <div class='refsect2' id='share-sql-select'><h3>Spread the word</h3><p>Send this \
         page to a colleague who writes queries by hand every day.</p></div>\
         </div></body>",
        words("The WITH clause allows you to specify one or more subqueries that can be referenced by name in the primary query."),
        words("Locking clauses affect how SELECT locks rows as they are obtained from the table, waiting for other transactions."),
        words("The command TABLE name is equivalent to SELECT * FROM name and can be used as a top-level command."),
    );
    let m = md(&html);
    assert!(
        m.contains("### The Locking Clause\n\nLocking clauses affect"),
        "{m}"
    );
    assert!(m.contains("### TABLE Command"), "{m}");
    assert!(
        !m.contains("Tell your friends") && !m.contains("timeline"),
        "{m}"
    );
    assert!(
        !m.contains("Spread the word") && !m.contains("colleague"),
        "{m}"
    );
}

/// A section whose id holds, between separators, the id of an enclosing section that
/// carries the hint word keeps it (RDoc's
/// `public-instance-Recommended+gemspec+attributes-method-details` inside
/// `section#Recommended+gemspec+attributes`: "recommended" is the section title's word).
/// Another chrome word outside the enclosing id still counts.
#[test]
fn a_section_id_holding_its_parents_is_its_subject() {
    let method = |n: &str| {
        format!(
            "<div id='method-i-{n}' class='method-detail'><div class='method-heading'>\
             <span class='method-name'>{n}=</span><span class='method-args'>(o)</span></div>\
             <div class='method-description'><p>The {n} for this gem, which should just be \
             the name of your {n}; the full text should be inside the gem when you build it.\
             </p></div></div>"
        )
    };
    let html = format!(
        "<body><main role='main'><h1 class='class'>class Gem::Specification</h1>\
         <section id='5Buntitled-5D' class='documentation-section'>\
         <section id='public-instance-5Buntitled-5D-method-details' class='method-section'>\
         <header><h3>Public Instance Methods</h3></header>{}</section></section>\
         <section id='Recommended+gemspec+attributes' class='documentation-section'>\
         <div class='documentation-section-title'><h2>Recommended gemspec attributes</h2></div>\
         <section id='public-instance-Recommended+gemspec+attributes-method-details' \
         class='method-section'><header><h3>Public Instance Methods</h3></header>{}{}</section>\
         <section id='share-Recommended+gemspec+attributes' class='method-section'>\
         <header><h3>Tell a friend</h3></header><p>Post this page to your timeline so that \
         your friends know which gem attributes are worth setting.</p></section>\
         </section></main></body>",
        [
            "author",
            "bindir",
            "cert_chain",
            "email",
            "executables",
            "extensions",
            "files",
            "homepage",
            "metadata",
            "platform"
        ]
        .map(method)
        .concat(),
        method("license"),
        method("licenses"),
    );
    let m = md(&html);
    assert!(
        m.contains("### Public Instance Methods") && m.contains("The license for this gem"),
        "{m}"
    );
    assert!(
        !m.contains("Tell a friend") && !m.contains("timeline"),
        "{m}"
    );
}

/// An id built from its section's heading counts as the section's subject even when a
/// navigation bar opens the section before its heading (texi2any writes `table.header`,
/// some seventy nodes, at the top of each section: zsh's "Menu selection", R's
/// "Comments" and "Feedback").
#[test]
fn a_section_id_from_a_heading_after_a_navigation_bar_is_its_subject() {
    let nav: String = ["<<", "<", "Up", ">", ">>", "Top", "Contents", "Index", "?"]
        .iter()
        .map(|t| {
            format!(
                "<td valign='middle' align='left'>[<a href='x.html' title='go'> {} </a>]</td>\n",
                t.replace('<', "&lt;").replace('>', "&gt;")
            )
        })
        .collect::<String>()
        + &"<td valign='middle' align='left'> &nbsp; </td>\n".repeat(4);
    let section = |id: &str, h: &str, body: &str| {
        format!(
            "<div class='subsection' id='{id}'><table class='header'><tr>{nav}</tr></table>\
             <h3 class='subsection'>{h}</h3><p>{body}</p><hr></div>"
        )
    };
    let html = format!(
        "<body lang='en'><div class='section' id='The-zsh_002fcomplist-Module'>\
         <table class='header'><tr>{nav}</tr></table><h2 class='section'>22.7 The \
         zsh/complist Module</h2><p>{}</p>{}{}</div></body>",
        "The zsh/complist module offers three extensions to completion listings: the ability \
         to highlight matches in such a list, the ability to scroll through long lists and a \
         different style of menu completion.",
        section(
            "Scrolling-in-completion-listings",
            "22.7.2 Scrolling in completion listings",
            "To enable scrolling through a completion list, the LISTPROMPT parameter must be \
             set. Its value will be used as the prompt."
        ),
        section(
            "Menu-selection",
            "22.7.3 Menu selection",
            "The zsh/complist module also offers an alternative style of selecting matches \
             from a list, called menu selection, which can be used if the shell is set up."
        ),
    );
    let m = md(&html);
    assert!(m.contains("### 22.7.3 Menu selection"), "{m}");
    assert!(m.contains("called menu selection"), "{m}");
}

/// A type signature's inline parts named after it (TypeDoc's `span.tsd-signature-type`,
/// `-symbol`, `-keyword`, `tsd-kind-call-signature`) are the signature's text, not a
/// forum poster's signature: `amount: number` keeps `number`. A post's signature block
/// still goes.
#[test]
fn a_type_signatures_inline_parts_are_kept() {
    let html = "<body><header class='tsd-page-toolbar'><a href='index.html'>date-fns</a></header>\
        <div class='col-content'><div class='tsd-page-title'><ul class='tsd-breadcrumb'>\
        <li><a href='modules.html'>date-fns</a></li><li><a href='addDays.html'>addDays</a></li>\
        </ul><h1>Function addDays</h1></div><section class='tsd-panel'>\
        <ul class='tsd-signatures'><li><div class='tsd-signature'>\
        <span class='tsd-kind-call-signature'>addDays</span><span class='tsd-signature-symbol'>(\
        </span><br/>    <span class='tsd-kind-parameter'>date</span>\
        <span class='tsd-signature-symbol'>:</span> <span class='tsd-signature-type'>Date\
        </span><span class='tsd-signature-symbol'>,</span><br/>    \
        <span class='tsd-kind-parameter'>amount</span><span class='tsd-signature-symbol'>:\
        </span> <span class='tsd-signature-type'>number</span><br/>\
        <span class='tsd-signature-symbol'>)</span><span class='tsd-signature-symbol'>:</span> \
        <span class='tsd-signature-type'>Date</span></div>\
        <div class='tsd-description'><div class='tsd-comment tsd-typography'><p>Add the \
        specified number of days to the given date. The result is a new date; the given one \
        is not changed, and a negative amount subtracts the days.</p></div></div></li></ul>\
        </section></div></body>";
    let m = md(html);
    assert!(m.contains("addDays("), "{m}");
    assert!(m.contains("amount: number"), "{m}");
    assert!(m.contains("): Date"), "{m}");
    let post = "<body><article><h1>Re: printing dates</h1><p>Use the format function with a \
        pattern string; it takes the date and the pattern and returns the formatted text for \
        any locale you pass in its options.</p><div class='post-signature'>Sent from my phone \
        by a happy user of the forum</div></article></body>";
    assert!(!md(post).contains("Sent from my phone"), "{}", md(post));
}

/// A disclosure whose body went, all of it, goes with its `<summary>`: TypeDoc's "Index"
/// over its list of the page's own anchors, a "Table of contents" toggle. One whose body
/// stays (a FAQ's answer) keeps its summary.
#[test]
fn a_disclosure_whose_body_went_goes_with_its_summary() {
    let words = para(
        "The function that localizes the day of the week takes the day's number and the \
         options of the locale, and returns the day's name in the width asked for.",
        2,
    );
    let html = format!(
        "<body><div class='col-content'><h1>Interface Localize</h1>{words}\
         <section class='tsd-panel-group tsd-index-group'><details class='tsd-index-content' \
         open><summary><h5 class='tsd-index-heading'>Index</h5></summary>\
         <div class='tsd-accordion-details'><section class='tsd-index-section'>\
         <div class='tsd-index-list'><a href='#day'><span>day</span></a>\n\
         <a href='#era'><span>era</span></a>\n<a href='#month'><span>month</span></a>\n\
         <a href='#quarter'><span>quarter</span></a></div></section></div></details></section>\
         <h3 id='day'>day</h3><p>day: LocalizeFn, the function that localizes the day of the \
         week.</p><details><summary>Why a function?</summary><p>Because each locale spells \
         the names of the days in its own way, sometimes with grammatical cases.</p>\
         </details></div></body>"
    );
    let m = md(&html);
    assert!(!m.contains("Index"), "{m}");
    assert!(
        m.contains("Why a function?") && m.contains("grammatical cases"),
        "{m}"
    );
    assert!(m.contains("### day"), "{m}");
}
