#!/usr/bin/env python3
"""Compares per-page scores of the quality set, four decimals, by page type and source.

    python3 ../shared/quality/score.py DIR --per-page A.tsv   (once per output folder)
    python3 scripts/compare-scores.py [--quality ../shared/quality] [--oracle] RULES.tsv A.tsv [B.tsv ...]

Prints one markdown table: the mean per-page bag-of-words F1 of every file (the first one is
the baseline) for all pages, the mean of the seven page types (macro), each type and each
source, with the change from the baseline and how many pages rose / fell by more than 0.001.
`--oracle` adds a last column: the better of the files on every page (what a perfect choice
between them per page would score).
"""

import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def read(path):
    rows = Path(path).read_text().splitlines()
    head = rows[0].split("\t")
    k = head.index("F1_bow")
    return {r.split("\t")[0]: float(r.split("\t")[k]) for r in rows[1:]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quality", type=Path, default=ROOT.parent / "shared" / "quality")
    ap.add_argument("--oracle", action="store_true", help="add the per-page best of the files")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    meta = {}
    for line in (a.quality / "data" / "manifest.tsv").read_text().splitlines()[1:]:
        c = line.split("\t")
        meta[c[0]] = (c[2], c[3])
    runs = [read(f) for f in a.files]
    ids = sorted(meta)
    types = sorted({t for _, t in meta.values()})
    sources = sorted({s for s, _ in meta.values()})
    groups = [("**all**", ids)]
    groups += [(t, [i for i in ids if meta[i][1] == t]) for t in types]
    groups += [(f"source {s}", [i for i in ids if meta[i][0] == s]) for s in sources]
    names = [Path(f).stem for f in a.files]
    if a.oracle:
        runs.append({i: max(r.get(i, 0.0) for r in runs) for i in ids})
        names.append("oracle")
    print("| | pages | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))

    def mean(run, g):
        return sum(run.get(i, 0.0) for i in g) / len(g)

    def cell(run, g):
        base = mean(runs[0], g)
        m = mean(run, g)
        if run is runs[0]:
            return f"{m:.4f}"
        up = sum(1 for i in g if run.get(i, 0.0) > runs[0].get(i, 0.0) + 1e-3)
        down = sum(1 for i in g if run.get(i, 0.0) < runs[0].get(i, 0.0) - 1e-3)
        return f"{m:.4f} ({m - base:+.4f}; {up}↑ {down}↓)"

    for name, g in groups[:1]:
        print(f"| {name} | {len(g)} | " + " | ".join(cell(r, g) for r in runs) + " |")
    macro = [sum(mean(r, g) for _, g in groups[1 : 1 + len(types)]) / len(types) for r in runs]
    print("| macro (mean of the types) | | " + " | ".join(f"{m:.4f}" for m in macro) + " |")
    for name, g in groups[1:]:
        print(f"| {name} | {len(g)} | " + " | ".join(cell(r, g) for r in runs) + " |")


if __name__ == "__main__":
    main()
