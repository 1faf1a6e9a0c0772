#!/usr/bin/env python3
"""trafilatura's markdown-less text for every *.html of a folder, to score beside ours.

needs: python3 -m venv /tmp/traf && /tmp/traf/bin/pip install trafilatura==2.3.1 lxml_html_clean
run:   /tmp/traf/bin/python scripts/trafilatura-baseline.py /tmp/kb-quality/pages /tmp/traf-md
       python3 ../shared/quality/score.py /tmp/traf-md --per-type --per-page /tmp/traf.tsv
       python3 scripts/compare-scores.py /tmp/kb.tsv /tmp/traf.tsv
The call is the quality set README's baseline: extract(bytes, include_comments=False).
"""
import os
import sys
from concurrent.futures import ProcessPoolExecutor

import trafilatura


def one(job):
    src, dst, name = job
    with open(os.path.join(src, name), "rb") as f:
        data = f.read()
    try:
        text = trafilatura.extract(data, include_comments=False) or ""
    except Exception as e:  # one bad page must not stop the run
        print(f"{name}: {e}", file=sys.stderr)
        text = ""
    with open(os.path.join(dst, name[: -len(".html")] + ".md"), "w", encoding="utf-8") as f:
        f.write(text)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: trafilatura-baseline.py HTML_DIR OUT_DIR")
    src, dst = sys.argv[1], sys.argv[2]
    os.makedirs(dst, exist_ok=True)
    jobs = [(src, dst, n) for n in sorted(os.listdir(src)) if n.endswith(".html")]
    with ProcessPoolExecutor(os.cpu_count() or 1) as ex:
        list(ex.map(one, jobs, chunksize=8))


if __name__ == "__main__":
    main()
