#!/usr/bin/env python3
"""Builds the crawl benchmark sites under OUT:
  pydocs/     N linked copies of Debian's python3.11-doc HTML (index.html links to each copy)
  gen/        a generated site of G pages (tree with fan-out 10, ~6 KB of prose each)
"""
import argparse, os, random, shutil

ap = argparse.ArgumentParser()
ap.add_argument("--python-docs", default="/usr/share/doc/python3.11/html")
ap.add_argument("--copies", type=int, default=10)
ap.add_argument("--generated", type=int, default=10000)
ap.add_argument("--out", required=True)
a = ap.parse_args()

py = os.path.join(a.out, "pydocs")
if a.copies and not os.path.exists(os.path.join(py, "index.html")):
    os.makedirs(py, exist_ok=True)
    for i in range(a.copies):
        dst = os.path.join(py, f"copy{i}")
        if not os.path.exists(dst):
            shutil.copytree(os.path.realpath(a.python_docs), dst, symlinks=False,
                            ignore=shutil.ignore_patterns("_sources", "*.txt", "*.zip"))
    with open(os.path.join(py, "index.html"), "w") as f:
        f.write("<!doctype html><title>Python docs x%d</title><ul>" % a.copies)
        for i in range(a.copies):
            f.write(f'<li><a href="copy{i}/index.html">copy {i}</a></li>'
                    f'<li><a href="copy{i}/genindex-all.html">index {i}</a></li>'
                    f'<li><a href="copy{i}/py-modindex.html">modules {i}</a></li>')
        f.write("</ul>")

gen = os.path.join(a.out, "gen")
if a.generated and not os.path.exists(os.path.join(gen, "p0.html")):
    os.makedirs(gen, exist_ok=True)
    rnd = random.Random(42)
    words = ("registrar course catalog policy student faculty admission deadline tuition "
             "semester credit transcript advising graduate program department campus library "
             "research scholarship housing enrollment schedule exam grade degree").split()
    def para(n):
        return " ".join(rnd.choice(words) for _ in range(n)).capitalize() + "."
    for i in range(a.generated):
        kids = [c for c in range(10 * i + 1, 10 * i + 11) if c < a.generated]
        links = "".join(f'<li><a href="p{c}.html">Page {c}</a></li>' for c in kids)
        body = "".join(f"<h2>Section {s}</h2><p>{para(60)}</p><p>{para(40)}</p>" for s in range(4))
        with open(os.path.join(gen, f"p{i}.html"), "w") as f:
            f.write(f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Generated page {i}</title></head>
<body><nav><a href="p0.html">Home</a> | <a href="p1.html">About</a></nav>
<main><article><h1>Generated page {i}</h1>{body}<ul>{links}</ul></article></main>
<footer>Generated site footer</footer></body></html>""")
    os.symlink("p0.html", os.path.join(gen, "index.html"))
print("sites ready in", a.out)
