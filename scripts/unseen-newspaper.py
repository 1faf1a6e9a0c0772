#!/usr/bin/env python3
"""Scores the extractor on pages it was never tuned on: newspaper4k's test articles
(its sdist's tests/data/html/NAME.html with the expected text tests/data/txt/NAME.txt,
23 pages in 12 languages, MIT licence), fetched from PyPI and never copied into the repo.

Bag-of-words F1 per page, averaged over pages, as `score.py` of the quality set counts it
(lower-cased `\\w+` tokens, link and image URLs left out); Chinese, Japanese, Korean, Thai
and Burmese, written without spaces between words, are counted by character.

needs:  a Python with pip (python3 -m venv /tmp/fid), network to PyPI
usage:  /tmp/fid/bin/python scripts/unseen-newspaper.py [--bin EXTRACT] [--sdist FILE]
        (defaults: the release `extract` example, built first; newspaper4k 0.9.6 from PyPI)
"""
import argparse, re, subprocess, sys, tarfile, tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERSION = "0.9.6"
UNSPACED = re.compile(r"[\u0e00-\u0e7f\u1000-\u109f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
LINK_URL = re.compile(r"\]\([^)]*\)")


def tokens(text):
    out = Counter()
    for w in re.findall(r"\w+", text.lower()):
        if UNSPACED.search(w):
            out.update(w)
        else:
            out[w] += 1
    return out


def f1(pred, truth):
    tp = sum((pred & truth).values())
    if tp == 0:
        return 0.0, 0.0, 0.0
    p, r = tp / sum(pred.values()), tp / sum(truth.values())
    return p, r, 2 * p * r / (p + r)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=str(ROOT / "target/release/examples/extract"))
    ap.add_argument("--sdist")
    a = ap.parse_args()
    if a.bin == str(ROOT / "target/release/examples/extract"):
        subprocess.run(["cargo", "build", "-q", "--release", "--example", "extract"],
                       cwd=ROOT, check=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        sdist = a.sdist
        if not sdist:
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                            "--no-binary", ":all:", f"newspaper4k=={VERSION}", "-d", str(tmp)],
                           check=True)
            sdist = next(tmp.glob("newspaper4k-*.tar.gz"))
        pages, truth = tmp / "pages", {}
        pages.mkdir()
        with tarfile.open(sdist) as t:
            members = {m.name.split("/tests/data/", 1)[-1]: m for m in t.getmembers()
                       if "/tests/data/" in m.name and m.isfile()}
            for name, m in members.items():
                if name.startswith("txt/") and f"html/{name[4:-4]}.html" in members:
                    stem = name[4:-4]
                    truth[stem] = tokens(t.extractfile(m).read().decode("utf-8", "replace"))
                    html = t.extractfile(members[f"html/{stem}.html"]).read()
                    (pages / f"{stem}.html").write_bytes(html)
        out = tmp / "md"
        subprocess.run([a.bin, "--in", str(pages), "--out", str(out)], check=True,
                       stdout=subprocess.DEVNULL)
        total = 0.0
        for stem in sorted(truth):
            md = (out / f"{stem}.md").read_text(encoding="utf-8")
            md = LINK_URL.sub("]", IMAGE.sub(" ", md))
            p, r, f = f1(tokens(md), truth[stem])
            total += f
            print(f"{stem:<22} P {p:.2f}  R {r:.2f}  F1 {f:.2f}")
        print(f"{len(truth)} pages, mean F1 {total / len(truth):.3f}")


main()
