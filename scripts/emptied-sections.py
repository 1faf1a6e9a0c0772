#!/usr/bin/env python3
"""Lists what the main-content markdown of a site left standing over nothing that the
whole page's markdown does not: a heading followed at once by a heading of its level or
higher (its section's body went), and a sentence ending with a colon followed at once by
a heading or another such line (what it introduced went). A place that is empty in the
whole page too (an empty class page, a version line) is not listed.

Both folders are `examples/extract` output over the same pages, with and without
`--no-main-content`; code blocks count as content.

usage:  python3 scripts/emptied-sections.py MAIN_MD_DIR WHOLE_MD_DIR [N]
        prints one line of counts (places, pages), then the first N places (default 20)
"""
import os
import re
import sys
from pathlib import Path

HEADING = re.compile(r"(#{1,6}) ")


def blocks(path):
    """The non-blank lines of a markdown file, each code block as one `CODE` line."""
    out, fence = [], False
    for line in Path(path).read_text(encoding="utf-8").split("\n"):
        if not line.strip():
            continue
        if line.lstrip().startswith("```"):
            fence = not fence
            if fence:
                out.append("CODE")
            continue
        if not fence:
            out.append(line)
    return out


def label(line):
    s = line.rstrip()
    return s.endswith(":") and not s.startswith("#") and len(s) < 200


def emptied(path):
    lines = blocks(path)
    found = set()
    for a, b in zip(lines, lines[1:] + ["# END"]):
        h, n = HEADING.match(a), HEADING.match(b)
        if h and n and len(n.group(1)) <= len(h.group(1)):
            found.add(("heading", a))
        elif label(a) and (n or label(b)):
            found.add(("label", a))
    return found


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main_dir, whole_dir = sys.argv[1], sys.argv[2]
    show = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    places = []
    for f in sorted(Path(main_dir).glob("*.md")):
        w = Path(whole_dir) / f.name
        if w.exists():
            places += [(f.name, k, t) for k, t in sorted(emptied(f) - emptied(w))]
    pages = len({p for p, _, _ in places})
    heads = sum(1 for _, k, _ in places if k == "heading")
    print(f"{os.path.basename(main_dir.rstrip('/'))}: {heads} headings and "
          f"{len(places) - heads} labels over nothing, on {pages} pages")
    for page, kind, text in places[:show]:
        print(f"  {page} {kind} | {text[:100]}")


if __name__ == "__main__":
    main()
