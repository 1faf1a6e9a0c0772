//! Heading-aware markdown splitting for RAG chunks: split at ATX headings, then by size at
//! paragraph boundaries, never inside a fenced code block.

/// One piece of a markdown body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// The headings above this piece, outermost first (without `#`).
    pub heading_path: Vec<String>,
    /// The markdown text (the section's heading line included in its first piece).
    pub text: String,
}

/// A document file split into its front matter title and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileParts<'a> {
    /// `title` from the front matter, if any.
    pub title: Option<String>,
    /// The markdown after the front matter.
    pub body: &'a str,
}

/// Splits a stored document (`---` front matter, then markdown) into its title and body. A
/// file without front matter is all body.
pub fn split_front_matter(file: &str) -> FileParts<'_> {
    let Some(rest) = file.strip_prefix("---\n") else {
        return FileParts {
            title: None,
            body: file,
        };
    };
    let Some(end) = rest.find("\n---\n") else {
        return FileParts {
            title: None,
            body: file,
        };
    };
    let title = rest[..end].lines().find_map(|l| {
        let v = l.strip_prefix("title:")?.trim();
        serde_json::from_str::<String>(v)
            .ok()
            .or_else(|| Some(v.to_owned()))
    });
    FileParts {
        title,
        body: rest[end + 5..].trim_start_matches('\n'),
    }
}

/// The fence a line opens (its character and length), if it is a fence line.
fn fence_of(line: &str) -> Option<(char, usize)> {
    let t = line.trim_start_matches(' ');
    if line.len() - t.len() > 3 {
        return None;
    }
    let c = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = t.chars().take_while(|x| *x == c).count();
    (n >= 3).then_some((c, n))
}

/// An ATX heading's level and text.
fn heading_of(line: &str) -> Option<(usize, String)> {
    let t = line.trim_start_matches(' ');
    if line.len() - t.len() > 3 {
        return None;
    }
    let level = t.chars().take_while(|c| *c == '#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &t[level..];
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let text = rest.trim().trim_end_matches('#').trim_end().to_owned();
    Some((level, text))
}

/// A block: paragraph-like text between blank lines, or a whole fenced code block.
#[derive(Debug)]
struct Block {
    text: String,
    code: bool,
}

/// Sections (heading path + blocks) of a markdown body.
fn sections(body: &str) -> Vec<(Vec<String>, Vec<Block>)> {
    let mut out: Vec<(Vec<String>, Vec<Block>)> = vec![(Vec::new(), Vec::new())];
    let mut stack: Vec<(usize, String)> = Vec::new();
    let mut current = String::new();
    let mut fence: Option<(char, usize)> = None;
    let flush = |out: &mut Vec<(Vec<String>, Vec<Block>)>, current: &mut String, code: bool| {
        if !current.trim().is_empty() {
            if let Some(last) = out.last_mut() {
                last.1.push(Block {
                    text: current.trim_end().to_owned(),
                    code,
                });
            }
        }
        current.clear();
    };
    for line in body.lines() {
        if let Some((c, n)) = fence {
            current.push_str(line);
            current.push('\n');
            if fence_of(line).is_some_and(|(c2, n2)| c2 == c && n2 >= n)
                && line.trim().chars().all(|x| x == c)
            {
                fence = None;
                flush(&mut out, &mut current, true);
            }
            continue;
        }
        if let Some(f) = fence_of(line) {
            flush(&mut out, &mut current, false);
            fence = Some(f);
            current.push_str(line);
            current.push('\n');
            continue;
        }
        if let Some((level, text)) = heading_of(line) {
            flush(&mut out, &mut current, false);
            while stack.last().is_some_and(|(l, _)| *l >= level) {
                stack.pop();
            }
            stack.push((level, text));
            out.push((stack.iter().map(|(_, t)| t.clone()).collect(), Vec::new()));
            current.push_str(line.trim());
            current.push('\n');
            flush(&mut out, &mut current, false);
            continue;
        }
        if line.trim().is_empty() {
            flush(&mut out, &mut current, false);
        } else {
            current.push_str(line);
            current.push('\n');
        }
    }
    // An unclosed fence runs to the end of the body, as in CommonMark.
    let code = fence.is_some();
    flush(&mut out, &mut current, code);
    out
}

/// Cuts a long prose block at line, then word boundaries, into parts of at most `max`
/// bytes (a single longer word stays whole).
fn cut_prose(text: &str, max: usize) -> Vec<String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    for word in text.split_inclusive([' ', '\n']) {
        if !cur.is_empty() && cur.len() + word.len() > max {
            parts.push(cur.trim_end().to_owned());
            cur.clear();
        }
        cur.push_str(word);
    }
    if !cur.trim().is_empty() {
        parts.push(cur.trim_end().to_owned());
    }
    parts
}

/// Splits `body` into pieces: a new piece at every heading, and within a section a new piece
/// before a paragraph that would take it over `max_chars` bytes. A code block is never cut
/// (it may make one piece longer than `max_chars`); a prose paragraph longer than
/// `max_chars` is cut at word boundaries. Pieces holding only a heading are dropped (the
/// heading stays in the heading path of what follows).
pub fn split_markdown(body: &str, max_chars: usize) -> Vec<Piece> {
    let max = max_chars.max(1);
    let mut pieces = Vec::new();
    for (path, blocks) in sections(body) {
        let mut cur = String::new();
        let mut has_body = false;
        let push = |cur: &mut String, has_body: &mut bool, pieces: &mut Vec<Piece>| {
            if *has_body {
                pieces.push(Piece {
                    heading_path: path.clone(),
                    text: cur.trim_end().to_owned(),
                });
            }
            cur.clear();
            *has_body = false;
        };
        let mut units: Vec<(String, bool)> = Vec::new();
        for (i, b) in blocks.into_iter().enumerate() {
            let is_heading = i == 0 && !path.is_empty() && heading_of(&b.text).is_some();
            if !b.code && b.text.len() > max {
                units.extend(cut_prose(&b.text, max).into_iter().map(|t| (t, true)));
            } else {
                units.push((b.text, !is_heading));
            }
        }
        for (text, is_body) in units {
            if has_body && cur.len() + 2 + text.len() > max {
                push(&mut cur, &mut has_body, &mut pieces);
            }
            if !cur.is_empty() {
                cur.push_str("\n\n");
            }
            cur.push_str(&text);
            has_body |= is_body;
        }
        push(&mut cur, &mut has_body, &mut pieces);
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_headings_with_their_path() {
        let md = "Intro text.\n\n# Guide\n\nStart here.\n\n## Install\n\nRun it.\n\n## Use\n\n### Flags\n\nPass --x.\n\n# Other\n\nEnd.\n";
        let p = split_markdown(md, 1500);
        let paths: Vec<Vec<String>> = p.iter().map(|p| p.heading_path.clone()).collect();
        assert_eq!(
            paths,
            vec![
                vec![],
                vec!["Guide".to_owned()],
                vec!["Guide".to_owned(), "Install".to_owned()],
                vec!["Guide".to_owned(), "Use".to_owned(), "Flags".to_owned()],
                vec!["Other".to_owned()],
            ]
        );
        assert_eq!(p[2].text, "## Install\n\nRun it.");
        assert_eq!(p[0].text, "Intro text.");
    }

    #[test]
    fn size_splits_fall_on_paragraphs_and_never_inside_code() {
        let para = "word ".repeat(60); // 300 bytes
        let code = format!(
            "```rust\n{}\n\n# not a heading\n```",
            "let x = 1;\n".repeat(40)
        );
        let md = format!("# T\n\n{para}\n\n{para}\n\n{code}\n\n{para}\n");
        let p = split_markdown(&md, 700);
        assert!(p.len() >= 2, "{p:#?}");
        for piece in &p {
            assert_eq!(piece.heading_path, vec!["T".to_owned()], "{piece:?}");
            let fences = piece.text.matches("```").count();
            assert_eq!(fences % 2, 0, "a code block was cut: {}", piece.text);
        }
        assert!(p.iter().any(|x| x.text.contains("# not a heading")));
        let joined: String = p
            .iter()
            .map(|x| x.text.as_str())
            .collect::<Vec<_>>()
            .join("\n\n");
        assert_eq!(joined.matches("let x = 1;").count(), 40);
        assert_eq!(joined.matches("word").count(), 180);
        for piece in p.iter().filter(|x| !x.text.contains("```")) {
            assert!(piece.text.len() <= 700, "{}", piece.text.len());
        }
    }

    #[test]
    fn a_giant_paragraph_is_cut_at_words() {
        let md = "w ".repeat(2000);
        let p = split_markdown(&md, 1500);
        assert!(p.len() >= 3);
        assert!(p.iter().all(|x| x.text.len() <= 1500 && !x.text.is_empty()));
    }

    #[test]
    fn front_matter_gives_title_and_body() {
        let f = "---\nurl: \"https://x.test/\"\ntitle: \"A \\\"quoted\\\" title\"\ncontent_hash: \"sha256:ab\"\n---\n\n# Hi\n\nText\n";
        let parts = split_front_matter(f);
        assert_eq!(parts.title.as_deref(), Some("A \"quoted\" title"));
        assert_eq!(parts.body, "# Hi\n\nText\n");
        assert_eq!(split_front_matter("plain").body, "plain");
    }
}
