#!/usr/bin/env python3
"""Trains the block scorer of crawl-extract (crawl-extract/src/model.txt).

    cargo run --release -p kb-crawl --example extract -- --in /tmp/kbq/pages \
        --out /tmp/kbq-md --model none --dump-features /tmp/kbq-features.jsonl
    python3 scripts/train-extract.py --features /tmp/kbq-features.jsonl \
        [--quality ../shared/quality] [--holdout SOURCE] [--out crawl-extract/src/model.txt]

The features are those the Rust extractor computes (`crawl-extract/src/learn.rs`), dumped
by `examples/extract.rs --dump-features` with the rules alone (`--model none`), so training
and inference see the same numbers. A block's label is whether most of its word trigrams
(lower-cased `\\w+` tokens, as `score.py` counts them) occur in the page's reference text
(`data/truth/<id>.txt` of the quality set); its weight is its share of the page's words, so
every page counts the same, as in the per-page mean F1.

The model is gradient-boosted regression trees on the logistic loss (depth 3, quantile
bins), written in numpy; no randomness, so the same input gives the same file. The two
thresholds (drop a block the rules kept, add one they left out) are chosen on the
training pages by the per-page F1 of the kept blocks' words. `--holdout SOURCE` leaves a
source out of training (the leave-one-source-out evaluation).

numpy is the only dependency: when it is missing the script makes `.venv/` at the
repository root, installs the pinned numpy there and runs itself again with it.
"""

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NUMPY = "numpy==2.4.6"

try:
    import numpy as np
except ImportError:  # make the venv and run again inside it
    venv = ROOT / ".venv"
    py = venv / "bin" / "python"
    if os.environ.get("KB_TRAIN_IN_VENV"):
        sys.exit("numpy is still missing inside .venv")
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(py), "-m", "pip", "install", "-q", NUMPY], check=True)
    os.environ["KB_TRAIN_IN_VENV"] = "1"
    os.execv(str(py), [str(py), __file__, *sys.argv[1:]])

WORD = re.compile(r"\w+")


def load(features, quality, holdout, paths=None):
    """Rows of the dump with labels, weights and page index, split into train/held (and
    each row's ancestry `path` appended to `paths` when given)."""
    manifest = {}
    for line in (quality / "data" / "manifest.tsv").read_text().splitlines()[1:]:
        c = line.split("\t")
        manifest[c[0]] = (c[2], c[3])
    truths = {}
    X, y, w, page, ntok, match = [], [], [], [], [], []
    pages = []  # (id, source, type, truth tokens)
    index = {}
    with open(features, encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            pid = r["id"]
            if pid not in manifest:
                continue
            if pid not in truths:
                t = (quality / "data" / "truth" / f"{pid}.txt").read_text(encoding="utf-8")
                tt = WORD.findall(t.lower())
                truths[pid] = (set(zip(tt, tt[1:], tt[2:])), " " + " ".join(tt) + " ")
                index[pid] = len(pages)
                pages.append((pid, *manifest[pid], len(tt)))
            toks = WORD.findall(r["text"].lower())
            if not toks:
                continue
            m = len(toks) * in_truth(toks, *truths[pid])
            X.append(r["f"])
            if paths is not None:
                paths.append(r.get("path", ""))
            y.append(1.0 if m * 2 >= len(toks) else 0.0)
            ntok.append(len(toks))
            match.append(m)
            page.append(index[pid])
    X = np.array(X, dtype=np.float64)
    y = np.array(y)
    ntok = np.array(ntok, dtype=np.float64)
    match = np.array(match, dtype=np.float64)
    page = np.array(page)
    per_page = np.bincount(page, weights=ntok, minlength=len(pages))
    w = ntok / np.maximum(per_page[page], 1.0)
    source = np.array([p[1] for p in pages])
    train = source[page] != holdout if holdout else np.ones(len(y), bool)
    return X, y, w, page, ntok, match, pages, train


def in_truth(toks, trigrams, joined):
    """Share of a block's word trigrams found in the reference text (a block of one or
    two words: whether it occurs there as a phrase). Single words are not evidence:
    the reference of a long page holds every common word."""
    if len(toks) < 3:
        return 1.0 if f" {' '.join(toks)} " in joined else 0.0
    grams = list(zip(toks, toks[1:], toks[2:]))
    return sum(1 for g in grams if g in trigrams) / len(grams)


class Trees:
    """Gradient-boosted regression trees on the logistic loss, histogram splits."""

    def __init__(self, depth=4, trees=150, rate=0.1, bins=48, min_weight=0.5, l2=1.0):
        self.depth, self.n, self.rate = depth, trees, rate
        self.bins, self.min_weight, self.l2 = bins, min_weight, l2

    def fit(self, X, y, w):
        n, f = X.shape
        # Candidate thresholds: midpoints between distinct quantile values.
        self.edges = []
        B = np.zeros((f, n), dtype=np.int32)  # feature-major: a column is contiguous
        for j in range(f):
            q = np.unique(np.quantile(X[:, j], np.linspace(0, 1, self.bins + 1)[1:-1]))
            v = np.unique(X[:, j])
            cuts = []
            for t in q:
                hi = v[v > t]
                if len(hi):
                    cuts.append((t + hi[0]) / 2)
            cuts = np.unique(np.array(cuts))
            self.edges.append(cuts)
            B[j] = np.searchsorted(cuts, X[:, j], side="left")
        wsum = w.sum()
        p0 = np.clip((w * y).sum() / wsum, 1e-6, 1 - 1e-6)
        self.base = float(np.log(p0 / (1 - p0)))
        z = np.full(n, self.base)
        self.trees = []
        for _ in range(self.n):
            p = 1 / (1 + np.exp(-z))
            g = w * (p - y)
            h = w * p * (1 - p)
            tree = self._grow(B, g, h)
            self.trees.append(tree)
            z += self._apply(tree, B)
        return self

    def _grow(self, B, g, h):
        # Nodes: [feature, cut index, left, right, value]; built breadth-first.
        nodes = [[-1, 0, 0, 0, 0.0]]
        members = [np.arange(len(g))]
        frontier = [0]
        for _ in range(self.depth):
            nxt = []
            for k in frontier:
                idx = members[k]
                gi, hi = g[idx], h[idx]
                G, H = gi.sum(), hi.sum()
                best = (0.0, None)
                base_gain = G * G / (H + self.l2)
                for j in range(B.shape[0]):
                    nb = len(self.edges[j]) + 1
                    if nb < 2:
                        continue
                    col = B[j][idx]
                    gb = np.bincount(col, weights=gi, minlength=nb)
                    hb = np.bincount(col, weights=hi, minlength=nb)
                    gl, hl = np.cumsum(gb)[:-1], np.cumsum(hb)[:-1]
                    gr, hr = G - gl, H - hl
                    ok = (hl >= self.min_weight * 1e-3) & (hr >= self.min_weight * 1e-3)
                    gain = np.where(
                        ok, gl * gl / (hl + self.l2) + gr * gr / (hr + self.l2) - base_gain, 0.0
                    )
                    c = int(np.argmax(gain))
                    if gain[c] > best[0] + 1e-12:
                        best = (float(gain[c]), (j, c))
                if best[1] is None:
                    continue
                j, c = best[1]
                go_left = B[j][idx] <= c
                for part in (idx[go_left], idx[~go_left]):
                    nodes.append([-1, 0, 0, 0, 0.0])
                    members.append(part)
                nodes[k][:4] = [j, c, len(nodes) - 2, len(nodes) - 1]
                nxt += [len(nodes) - 2, len(nodes) - 1]
            frontier = nxt
        for k, node in enumerate(nodes):
            if node[0] < 0:
                idx = members[k]
                node[4] = float(-self.rate * g[idx].sum() / (h[idx].sum() + self.l2))
        return nodes

    def _apply(self, tree, B):
        out = np.zeros(B.shape[1])
        stack = [(0, np.arange(B.shape[1]))]
        while stack:
            k, idx = stack.pop()
            f, c, l, r, v = tree[k]
            if f < 0:
                out[idx] = v
                continue
            left = B[f][idx] <= c
            stack += [(l, idx[left]), (r, idx[~left])]
        return out

    def logit(self, X):
        B = np.zeros(X.shape[::-1], dtype=np.int32)
        for j in range(X.shape[1]):
            B[j] = np.searchsorted(self.edges[j], X[:, j], side="left")
        return self.base + sum(self._apply(t, B) for t in self.trees)

    def write(self, path, names, drop, add, note):
        lines = ["kb-extract-gbdt 1", f"# {note}", "features " + " ".join(names)]
        lines += [f"base {self.base!r}", f"drop {drop!r}", f"add {add!r}"]
        for t in self.trees:
            lines.append(f"tree {len(t)}")
            for f, c, l, r, v in t:
                thr = float(self.edges[f][c]) if f >= 0 else 0.0
                lines.append(f"{f} {thr!r} {l} {r} {round(v, 6)!r}")
        Path(path).write_text("\n".join(lines) + "\n")


def page_f1(keep, page, ntok, match, truth_len, npages):
    """Mean per-page F1 of the kept blocks' words (overlap approximated by matches)."""
    n = np.bincount(page, weights=ntok * keep, minlength=npages)
    m = np.bincount(page, weights=match * keep, minlength=npages)
    m = np.minimum(m, truth_len)
    p = np.where(n > 0, m / np.maximum(n, 1), 0.0)
    r = np.where(truth_len > 0, m / np.maximum(truth_len, 1), 0.0)
    f = np.where(p + r > 0, 2 * p * r / np.maximum(p + r, 1e-12), 0.0)
    return f


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--features", type=Path, required=True)
    ap.add_argument("--quality", type=Path, default=ROOT.parent / "shared" / "quality")
    ap.add_argument("--holdout", help="source left out of training")
    ap.add_argument("--out", type=Path, default=ROOT / "crawl-extract" / "src" / "model.txt")
    ap.add_argument("--loso", type=Path, help="write one model per held-out source here")
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--rate", type=float, default=0.15)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument(
        "--chrome-words",
        help="comma-separated class/id words: print, per source, what dropping the kept "
        "blocks under an ancestor with each word does (pages changed, sum of F1 changes)",
    )
    a = ap.parse_args()
    if a.chrome_words:
        chrome_words(a)
        return
    if a.loso:
        a.loso.mkdir(parents=True, exist_ok=True)
        X, y, w, page, ntok, match, pages, _ = load(a.features, a.quality, None)
        sources = sorted({p[1] for p in pages})
        for s in sources:
            src = np.array([p[1] for p in pages])[page]
            fit(a, X, y, w, page, ntok, match, pages, src != s, s, a.loso / f"model-{s}.txt")
        return
    X, y, w, page, ntok, match, pages, train = load(a.features, a.quality, a.holdout)
    fit(a, X, y, w, page, ntok, match, pages, train, a.holdout, a.out)


def fit(a, X, y, w, page, ntok, match, pages, train, holdout, out):
    print(f"{len(y)} blocks, {len(pages)} pages, {int(train.sum())} training blocks", file=sys.stderr)
    model = Trees(depth=a.depth, trees=a.trees, rate=a.rate).fit(X[train], y[train], w[train])
    z = model.logit(X)
    truth_len = np.array([p[3] for p in pages], dtype=np.float64)
    inside = (X[:, FEATURES.index("in_rule_root")] > 0.5) & (
        X[:, FEATURES.index("rule_removed")] < 0.5
    )
    tr_pages = np.zeros(len(pages), bool)
    tr_pages[page[train]] = True
    rules = page_f1(inside.astype(float), page, ntok, match, truth_len, len(pages))
    best = (-1.0, 0.0, 0.0)
    grid = [-1e9] + [x / 2 for x in range(-12, 13)]
    for drop in grid:
        for add in [x / 2 for x in range(-6, 13)] + [1e9]:
            keep = np.where(inside, z >= drop, z > add).astype(float)
            f = page_f1(keep, page, ntok, match, truth_len, len(pages))[tr_pages].mean()
            if f > best[0] + 1e-9:
                best = (f, drop, add)
    f, drop, add = best
    keep = np.where(inside, z >= drop, z > add).astype(float)
    fall = page_f1(keep, page, ntok, match, truth_len, len(pages))
    print(
        f"thresholds drop {drop} add {add}: training pages F1 (block words) "
        f"{rules[tr_pages].mean():.4f} (rules) -> {f:.4f}",
        file=sys.stderr,
    )
    if holdout:
        held = ~tr_pages
        print(
            f"held-out {holdout}: {rules[held].mean():.4f} (rules) -> {fall[held].mean():.4f}",
            file=sys.stderr,
        )
    note = f"trained on {int(tr_pages.sum())} pages of the quality set" + (
        f" without {holdout}" if holdout else ""
    )
    model.write(out, FEATURES, drop, add, note)


def class_words(path):
    """The class/id words (split at `-`, `_`, `.`, digits and camelCase, lower-cased) of
    a block's ancestors inside the rules' root (the last element of `path` is the root)."""
    out = set()
    for part in path.split(" < ")[:-1]:
        for tok in re.split(r"[.#]", part)[1:]:
            for piece in re.split(r"[-_:\d]+", tok):
                out.update(w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", piece))
    return out


def chrome_words(a):
    """Per source: the pages and F1 that dropping the kept blocks under each word changes."""
    paths = []
    X, y, w, page, ntok, match, pages, _ = load(a.features, a.quality, None, paths)
    words = [class_words(p) for p in paths]
    truth_len = np.array([p[3] for p in pages], dtype=np.float64)
    inside = (X[:, FEATURES.index("in_rule_root")] > 0.5) & (
        X[:, FEATURES.index("rule_removed")] < 0.5
    )
    base = page_f1(inside.astype(float), page, ntok, match, truth_len, len(pages))
    source = np.array([p[1] for p in pages])
    for word in a.chrome_words.split(","):
        hit = np.array([word in ws for ws in words])
        d = page_f1((inside & ~hit).astype(float), page, ntok, match, truth_len, len(pages)) - base
        cols = [
            f"{s}: {int((np.abs(d[source == s]) > 1e-9).sum())} pages {d[source == s].sum():+.2f}"
            for s in sorted(set(source))
        ]
        print(f"{word:16s} all {d.sum():+.2f} | " + " | ".join(cols))


FEATURES = []


if __name__ == "__main__":
    src = (ROOT / "crawl-extract" / "src" / "learn.rs").read_text()
    body = src[src.index("pub(crate) const FEATURES"):]
    body = body[: body.index("];")]
    FEATURES = re.findall(r'"(\w+)"', body)
    main()
