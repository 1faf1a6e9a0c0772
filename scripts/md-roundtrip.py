#!/usr/bin/env python3
"""Does the markdown read back as the page? Random pages of inline markup and blocks,
converted by the `extract` example (`--no-main-content`: the whole body), the markdown
parsed again by a CommonMark parser (markdown-it-py, GFM tables), and the visible text and
the count of list items, headings, code blocks, links, quotes and table rows compared
with the HTML's. A page differs when its text or a count does.

needs:  python3 -m venv /tmp/fid && /tmp/fid/bin/pip install lxml markdown-it-py
usage:  /tmp/fid/bin/python scripts/md-roundtrip.py [--bin EXTRACT] [--seed S] [--pages N]
            [--words W] [--pieces P] [--depth D] [--blocks B] [--show K]
        (defaults: the release `extract` example, built first; seed 3, 3,000 pages of one block with
        up to 2 inline pieces of at most 1 word, nested 1 deep; --show prints K that differ not only by the chosen differences)
Known differences that are chosen, not bugs: a link whose text is only `#` is a
permalink and left out; an empty item, heading, link or quote is left out; a heading
inside a list item makes the item a section (no marker). The last line counts the pages
that differ, and apart those that differ by something else than these choices (the
HTML's counts taken without the elements they leave out).
"""
import argparse, html as H, os, random, re, shutil, subprocess, sys, tempfile
from pathlib import Path

import lxml.html
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parent.parent
MD = MarkdownIt("commonmark").enable("table")
# Words that mean something to a markdown reader, and some that do not.
WORDS = ["alpha", "beta", "x", "1.", "2)", "-", "+", "*", "_", "__init__", "a*b", "`", "``",
         "[x]", "]", "[", "(y)", "<b>", "&amp;", "&lt;tag&gt;", "#", "##", "|", "\\", "!",
         "~~", "~", ">", "=", "===", "---", "***", "http://e.com", "a_b_c", "*x*", "1\\.",
         "&#42;", "&copy;", "10.", "#hash", "'q'", '"dq"', "::", "{", "}", "$", "%", "^", "@",
         "a<b", "c>d", "<!--", "-->", "<", ">=", "!["]
BLOCK_TAGS = {"br", "p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "td", "th", "tr",
              "blockquote", "div", "table", "ul", "ol"}


def pages(a):
    rnd = random.Random(a.seed)

    def text():
        return " ".join(H.escape(rnd.choice(WORDS), quote=False)
                        for _ in range(rnd.randint(1, a.words)))

    def inline(depth=0, in_link=False):
        out = []
        for _ in range(rnd.randint(1, a.pieces)):
            r = rnd.random()
            if depth > a.depth or r < .45:
                t = text()
                t = (" " if rnd.random() < .3 else "") + t + (" " if rnd.random() < .3 else "")
                out.append(t)
            elif r < .55:
                out.append(f"<em>{inline(depth + 1, in_link)}</em>")
            elif r < .65:
                out.append(f"<strong>{inline(depth + 1, in_link)}</strong>")
            elif r < .72:
                out.append(f"<code>{text()}</code>")
            elif r < .80 and not in_link:
                out.append(f'<a href="http://e.com/{rnd.randint(0, 9)}">{inline(depth + 1, True)}</a>')
            elif r < .84:
                out.append("<br>")
            elif r < .91:
                out.append(f"<span>{inline(depth + 1, in_link)}</span>")
            elif r < .94:
                out.append(f"<sub>{text()}</sub>")
            else:
                out.append(f"<i>{inline(depth + 1, in_link)}</i>")
        return "".join(out)

    def block(depth=0):
        r = rnd.random()
        if depth > 2 or r < .35:
            return f"<p>{inline()}</p>"
        if r < .45:
            lv = rnd.randint(2, 4)
            return f"<h{lv}>{inline()}</h{lv}>"
        if r < .60:
            tag = rnd.choice(["ul", "ol"])
            items = "".join(f"<li>{inline() if rnd.random() < .6 else block(depth + 1)}</li>"
                            for _ in range(rnd.randint(1, 3)))
            return f"<{tag}>{items}</{tag}>"
        if r < .70:
            return "<blockquote>" + "".join(block(depth + 1) for _ in range(rnd.randint(1, 2))) + "</blockquote>"
        if r < .78:
            return "<div>" + "".join(block(depth + 1) for _ in range(rnd.randint(1, 3))) + "</div>"
        if r < .85:
            return "<pre>" + "\n".join(text() for _ in range(rnd.randint(1, 3))) + "</pre>"
        if r < .92:
            rows, cols = rnd.randint(2, 3), rnd.randint(2, 3)
            head = "".join(f"<th>{text()}</th>" for _ in range(cols))
            body = "".join("<tr>" + "".join(f"<td>{inline()}</td>" for _ in range(cols)) + "</tr>"
                           for _ in range(rows - 1))
            return f"<table><tr>{head}</tr>{body}</table>"
        return f"<p>{inline()}</p>"

    return ["".join(block() for _ in range(rnd.randint(1, a.blocks))) for _ in range(a.pages)]


def visible(el):
    """Visible text, blocks apart, whitespace removed (markdown moves spaces around)."""
    out = []

    def walk(e):
        if isinstance(e.tag, str):
            if e.tag in BLOCK_TAGS:
                out.append(" ")
            out.append(e.text or "")
            for c in e:
                walk(c)
            if e.tag in BLOCK_TAGS:
                out.append(" ")
        out.append(e.tail or "")

    walk(el)
    return re.sub(r"\s+", "", "".join(out))


def counts(el):
    c = {t: len(el.findall(".//" + t)) for t in ["li", "pre", "a", "blockquote", "tr"]}
    c["headings"] = sum(len(el.findall(f".//h{i}")) for i in range(1, 7))
    return c


HEADING = re.compile(r"h[1-6]")


def chosen_counts(el):
    """`counts` without what the markdown leaves out on purpose: empty items, headings,
    links and quotes, `#` permalinks, and items made sections by a heading inside."""
    c = counts(el)
    sections = set()  # items a heading makes sections: the nearest item around it
    for h in el.iter():
        if isinstance(h.tag, str) and HEADING.fullmatch(h.tag):
            li = next((a for a in h.iterancestors() if a.tag == "li"), None)
            if li is not None:
                sections.add(li)
    for e in el.iter():
        if not isinstance(e.tag, str):
            continue
        text = (e.text_content() or "").strip()
        if e.tag == "li" and (not text or e in sections):
            c["li"] -= 1
        elif HEADING.fullmatch(e.tag) and not text:
            c["headings"] -= 1
        elif e.tag == "a" and text in ("", "#"):
            c["a"] -= 1
        elif e.tag == "blockquote" and not text:
            c["blockquote"] -= 1
    return c


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", default=None,
                   help="extract binary (default: the release example, built first)")
    p.add_argument("--seed", type=int, default=3)
    p.add_argument("--pages", type=int, default=3000)
    p.add_argument("--words", type=int, default=1)
    p.add_argument("--pieces", type=int, default=2)
    p.add_argument("--depth", type=int, default=1)
    p.add_argument("--blocks", type=int, default=1)
    p.add_argument("--show", type=int, default=0)
    a = p.parse_args()
    if a.bin is None:
        # Built (or found up to date) every time: a stale binary would measure old code.
        subprocess.run(["cargo", "build", "--release", "-p", "kb-crawl", "--example", "extract"],
                       cwd=ROOT, check=True)
        a.bin = str(ROOT / "target/release/examples/extract")
    bodies = pages(a)
    work = Path(tempfile.mkdtemp(prefix="md-roundtrip-"))
    try:
        (work / "in").mkdir()
        for i, body in enumerate(bodies):
            (work / "in" / f"p{i}.html").write_text(
                f"<html><head><title>t</title></head><body>{body}</body></html>")
        subprocess.run([a.bin, "--in", str(work / "in"), "--out", str(work / "out"),
                        "--no-main-content"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
        differ = other = 0
        for i, body in enumerate(bodies):
            src = lxml.html.fromstring(f"<div>{body}</div>")
            md_path = work / "out" / f"p{i}.md"
            md = md_path.read_text() if md_path.exists() else ""
            back = lxml.html.fromstring("<div>" + MD.render(md) + "</div>")
            if visible(src) != visible(back) or counts(src) != counts(back):
                differ += 1
                # A permalink `#` left out is a difference of the text too.
                text_ok = visible(src).replace("#", "") == visible(back).replace("#", "")
                if not text_ok or chosen_counts(src) != counts(back):
                    other += 1
                    if other <= a.show:
                        print(f"--- p{i}\nHTML: {body}\nMD:   {md!r}")
        print(f"seed {a.seed}: {differ} of {len(bodies)} pages read back differently, "
              f"{other} of them not only by the chosen differences")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
