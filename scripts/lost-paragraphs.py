#!/usr/bin/env python3
"""Which paragraphs and headings of a documentation site's main content are missing from
its markdown? For each page, every `<p>` of 120 characters or more and every heading of
the elements an XPath selects (the main content, as `md_fidelity.py` scores it) is looked
for in the page's markdown: a probe of its text, lower-cased with everything but letters
and digits left out (characters 20 to 80 of a paragraph, the first 60 of a heading), in
the markdown read the same way with link targets, images and `<sup>`/`<sub>` tags left
out. Prints one line per missing block, then a count per site on stderr.

needs:  python3 -m venv /tmp/fid && /tmp/fid/bin/pip install lxml
usage:  /tmp/fid/bin/python scripts/lost-paragraphs.py NAME HTML_DIR MD_DIR XPATH [SCORE_DIR]
        (the arguments of a `score` line of scripts/doc-fidelity.sh, whose markdown is in
        WORK_DIR/md/NAME: e.g. `python /tmp/doc-fidelity/python /tmp/doc-fidelity/md/python
        "//div[@role='main']"`; SCORE_DIR: the copy of the pages scored instead, when the
        site has one)
"""
import os
import re
import sys

from lxml import html as lxml_html


def norm(s):
    return re.sub(r"[^a-z0-9]", "", s.lower())


def md_norm(md):
    md = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", md)
    md = re.sub(r"\]\([^)]*\)", "]", md)
    md = re.sub(r"</?su[pb]>", "", md)
    return norm(md)


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    site, html_dir, md_dir, xpath = sys.argv[1:5]
    score_dir = sys.argv[5] if len(sys.argv) > 5 else html_dir
    lost = total = lost_h = total_h = 0
    for f in sorted(os.listdir(score_dir)):
        md_file = os.path.join(md_dir, f[:-5] + ".md")
        if not f.endswith(".html") or not os.path.exists(md_file):
            continue
        with open(md_file, errors="replace") as fh:
            md = md_norm(fh.read())
        try:
            doc = lxml_html.parse(os.path.join(score_dir, f)).getroot()
        except Exception:
            continue
        if doc is None:
            continue
        for root in doc.xpath(xpath):
            for el in root.iter("p", "h1", "h2", "h3", "h4", "h5", "h6"):
                text = el.text_content()
                n = norm(text)
                para = el.tag == "p"
                if len(n) < (120 if para else 4):
                    continue
                probe = n[20:80] if para else n[:60]
                found = probe in md
                if para:
                    total += 1
                    lost += not found
                else:
                    total_h += 1
                    lost_h += not found
                if not found:
                    print(site, f, el.tag, "|", " ".join(text.split())[:150])
    print(f"{site} lost {lost}/{total} paragraphs, {lost_h}/{total_h} headings", file=sys.stderr)


if __name__ == "__main__":
    main()
