#!/usr/bin/env python3
"""Does the tree the extractor builds hold the words a browser's would, in the same order?
Random malformed pages (misnested, unclosed and stray tags, cells outside rows, `</br>`),
converted whole by the `extract` example (`--no-main-content`), and their words compared
with those of html5lib's tree (the HTML parsing algorithm of the spec). Markdown syntax
(link URLs, list markers, `<sup>`) is left out of the comparison. A page differs when the
words or their order do.

needs:  python3 -m venv /tmp/fid && /tmp/fid/bin/pip install html5lib markdown-it-py
usage:  /tmp/fid/bin/python scripts/tree-vs-html5.py [--bin EXTRACT] [--seed S] [--pages N]
            [--tags a,div,...] [--show K] [--links] [--md-words] [--keep DIR]
        then, for markdown a parser misreads: scripts/md-readback.py DIR
        (defaults: the release `extract` example, built first; seed 1, 3,000 pages, 33 tags)
Text written straight in a table or a row, outside its cells, is written before the table,
as a browser moves it ("foster parenting"). Left out on purpose, so not in the default tags:
form controls (`select`, `option`, `button`, `textarea`), `object` fallbacks, `iframe` and
`noscript` text.
"""
import argparse, random, re, shutil, subprocess, tempfile
from pathlib import Path

import html5lib
from markdown_it import MarkdownIt

MD = MarkdownIt("commonmark").enable("table").enable("strikethrough")

ROOT = Path(__file__).resolve().parent.parent
TAGS = ("p,div,span,a,b,i,em,strong,code,ul,ol,li,table,tr,td,th,tbody,h2,h3,blockquote,pre,"
        "dl,dt,dd,section,font,u,small,label,center,nobr,q,sup")
WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa",
         "lam", "mu"]
# Words that mean something to markdown (`--md-words`), written as the page's text.
MD_WORDS = ["alpha", "beta", "x*y", "a_b", "[z]", "#1", "&lt;tag&gt;", "`q`", "|",
            "&gt; q", "**s**", "http://e.com"]
SKIP = {"script", "style", "template", "head"}


def h5words(h, links=False):
    """The words of html5lib's tree, in document order; with `links`, each paired with
    the link (`<a href>`) it is in: 0 for none, then 1, 2, ... in order of first word."""
    doc = html5lib.parse(h, treebuilder="etree", namespaceHTMLElements=False)
    out, count = [], [0]

    def walk(e, ctx):
        tag = e.tag if isinstance(e.tag, str) else ""
        inner = ctx
        if tag == "a" and e.get("href") is not None:
            count[0] += 1
            inner = count[0]
        if tag not in SKIP:
            out.extend((w, inner) for w in re.findall(r"\w+", e.text or ""))
            for c in e:
                walk(c, inner)
        out.extend((w, ctx) for w in re.findall(r"\w+", e.tail or ""))

    walk(doc, 0)
    if not links:
        return [w for w, _ in out]
    ids = {0: 0}
    return [(w, ids.setdefault(l, len(ids))) for w, l in out]


def page(rnd, tags, words):
    out = []
    for _ in range(rnd.randint(3, 14)):
        r, t = rnd.random(), rnd.choice(tags)
        if r < 0.35:
            out.append(rnd.choice(words) + " ")
        elif r < 0.7:
            out.append(f"<{t}" + (' href="/x"' if t == "a" else "") + ">")
        elif r < 0.95:
            out.append(f"</{t}>")
        else:
            out.append("<br>" if rnd.random() < 0.5 else "</br>")
    return "".join(out)


def strip_markers(md):
    """The markdown without list markers (their numbers are not the page's words)."""
    return re.sub(r"(?m)^[ \t>]*(?:(?:[-*+]|\d+[.)])[ \t]+)+", " ", md)


def our_words(md):
    md = re.sub(r"\]\([^)]*\)", "]", md)
    md = re.sub(r"</?(sup|sub|br)>", " ", md)
    md = re.sub(r"(?m)^[ \t>]*(?:(?:[-*+]|\d+[.)])[ \t]+)+", " ", md)
    return re.findall(r"\w+", md)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=str(ROOT / "target/release/examples/extract"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pages", type=int, default=3000)
    ap.add_argument("--tags", default=TAGS)
    ap.add_argument("--show", type=int, default=5)
    ap.add_argument("--md-words", action="store_true",
                    help="text of words that mean something to markdown (`*`, `_`, `#`, ...)")
    ap.add_argument("--keep", help="keep the markdown, and the pages beside it, in this folder (for md-readback.py)")
    ap.add_argument("--links", action="store_true",
                    help="also compare which words are in which link (the markdown read "
                         "back by markdown-it-py)")
    a = ap.parse_args()
    if a.bin == str(ROOT / "target/release/examples/extract"):
        subprocess.run(["cargo", "build", "-q", "--release", "--example", "extract"],
                       cwd=ROOT, check=True)
    rnd, tags = random.Random(a.seed), a.tags.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "in", Path(tmp) / "out"
        src.mkdir()
        words = MD_WORDS if a.md_words else WORDS
        pages = [page(rnd, tags, words) for _ in range(a.pages)]
        for i, h in enumerate(pages):
            (src / f"p{i}.html").write_text(f"<html><body>{h}</body></html>")
        subprocess.run([a.bin, "--in", str(src), "--out", str(out), "--no-main-content"],
                       check=True, capture_output=True)
        bad = 0
        for i, h in enumerate(pages):
            md = (out / f"p{i}.md").read_text()
            ref = h5words(f"<html><body>{h}</body></html>", a.links)
            if a.links:
                ours = h5words(MD.render(strip_markers(md)), True)
            else:
                ours = our_words(md)
            if ours != ref:
                bad += 1
                show = lambda ws: " ".join(w if isinstance(w, str) else f"{w[0]}@{w[1]}"
                                           for w in ws)
                if bad <= a.show:
                    print(f"--- p{i}\nHTML: {h}\nhtml5lib: {show(ref)}\nours:     "
                          f"{show(ours)}\nMD:   {md!r}")
        print(f"seed {a.seed}: {bad} of {a.pages} pages differ from html5lib's words")
        if a.keep:
            shutil.copytree(out, a.keep, dirs_exist_ok=True)
            shutil.copytree(src, a.keep, dirs_exist_ok=True)


main()
