#!/usr/bin/env python3
"""Reads a folder of markdown (the `extract` example's output) back with a CommonMark parser
and counts what a reader would see other than the page: syntax the writer did not mean.

- indented code: a block indented four spaces that is not in a list (spaces left at a
  line's start turn text into code);
- raw HTML: a block of HTML, or an inline tag other than `<sup>`, `<sub>` and `<br>`
  (text such as `<E extends Throwable>` left unescaped is a tag the reader hides);
- link syntax in text: `](http…`, `](/…` or `](#…` in the rendered text (a link that did
  not parse: `[[x](u)](u)`, an image whose alt text escaped its own `]`), which may also
  be the page's own text written literally;
- setext headings: a line of text over `---` or `===` read as a heading;
- empty items: a list item with nothing in it (the writer leaves none out of the page's
  own: a marker over a blank line is an empty item, and what follows is outside the list);
- empty quotes: a `>` with nothing in it (a quote marker left where a line's prefix was
  taken for text).

needs:  python3 -m venv /tmp/fid && /tmp/fid/bin/pip install lxml markdown-it-py
usage:  /tmp/fid/bin/python scripts/md-readback.py MD_DIR [--show K]
        (MD_DIR is searched recursively for *.md; --show prints K examples of each kind)
"""
import argparse
import collections
import os
import re
import sys

from markdown_it import MarkdownIt

MD = MarkdownIt("commonmark").enable("table").enable("strikethrough")
ALLOWED_TAG = re.compile(r"</?(sup|sub|br)\s*/?>")
LINK_IN_TEXT = re.compile(r"\]\((https?:|/|#)")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("md_dir")
    p.add_argument("--show", type=int, default=0)
    a = p.parse_args()
    counts = collections.Counter()
    files = collections.defaultdict(set)
    examples = collections.defaultdict(list)

    def found(kind, path, text):
        counts[kind] += 1
        files[kind].add(path)
        if len(examples[kind]) < a.show:
            examples[kind].append((os.path.relpath(path, a.md_dir), text[:100]))

    total = 0
    for root, _, names in os.walk(a.md_dir):
        for name in sorted(names):
            if not name.endswith(".md"):
                continue
            total += 1
            path = os.path.join(root, name)
            md = open(path, encoding="utf-8").read()
            toks = MD.parse(md)
            for i, t in enumerate(toks):
                if (t.type == "list_item_open" and i + 1 < len(toks)
                        and toks[i + 1].type == "list_item_close"):
                    found("empty item", path, md.split("\n")[t.map[0]])
                elif (t.type == "blockquote_open" and i + 1 < len(toks)
                        and toks[i + 1].type == "blockquote_close"):
                    found("empty quote", path, md.split("\n")[t.map[0]])
                elif t.type == "code_block":
                    found("indented code", path, t.content)
                elif t.type == "html_block":
                    found("raw HTML", path, t.content)
                elif t.type == "heading_open" and not t.markup.startswith("#"):
                    found("setext heading", path, md.split("\n")[t.map[0]])
                elif t.type == "inline":
                    for c in t.children or []:
                        if c.type == "html_inline" and not ALLOWED_TAG.fullmatch(c.content):
                            found("raw HTML", path, c.content)
                        elif c.type == "text" and LINK_IN_TEXT.search(c.content):
                            found("link syntax in text", path, c.content)
    for kind in ("indented code", "raw HTML", "link syntax in text", "setext heading",
                 "empty item", "empty quote"):
        print(f"{kind}: {counts[kind]} in {len(files[kind])} files")
        for f, text in examples[kind]:
            print(f"    {f}: {text!r}")
    print(f"{total} files, {sum(counts.values())} found")


if __name__ == "__main__":
    sys.exit(main())
