#!/usr/bin/env python3
"""Trains the block scorer of crawl-extract (crawl-extract/src/model.txt).

    cargo run --release -p kb-crawl --example extract -- --in /tmp/kbq/pages \
        --out /tmp/kbq-md --model none --dump-features /tmp/kbq-features.jsonl
    python3 scripts/train-extract.py --features /tmp/kbq-features.jsonl \
        [--quality ../shared/quality] [--holdout SOURCE] [--out crawl-extract/src/model.txt]
    python3 scripts/train-extract.py --features ... --cv-sites DIR   (or --loso DIR)
    bash scripts/extract-heldout.sh /tmp/kbq/pages DIR /tmp/kbq-heldout-md

The features are those the Rust extractor computes (`crawl-extract/src/learn.rs`), dumped
by `examples/extract.rs --dump-features` with the rules alone (`--model none`), so training
and inference see the same numbers. A block's label is whether most of its word trigrams
(lower-cased `\\w+` tokens, as `score.py` counts them) occur in the page's reference text
(`data/truth/<id>.txt` of the quality set); its weight is its share of the page's words, so
every page counts the same, as in the per-page mean F1.

The model is gradient-boosted regression trees on the logistic loss (quantile bins, a
leaf holding at least `--min-leaf` pages' worth of weight), written in numpy; no
randomness, so the same input gives the same file. By default it only drops blocks the
rules keep: it is trained on those blocks, and its threshold and its cap (the largest share
of a page's kept text it may drop) are chosen on out-of-fold logits of the training pages
(sites split into `--inner-folds`), as the pair that gains most while no (source, page
type) group loses more than `--max-group-loss`. `--with-add` is round 3's model (a second
threshold adds blocks the rules left out; in-sample thresholds; round 3 used `--depth 4
--trees 100 --min-leaf 0`).

Held-out evaluations: `--holdout SOURCE` leaves a source out; `--loso DIR` writes one
model per held-out source, `--cv-sites DIR` one per fold of sites (`--folds`, each site's
pages in one fold by the md5 of its host without `www.`), each with `ids-NAME.txt`, the
pages it must convert, and `pages.tsv`, the simulated per-page F1 of the rules and of the
held-out models; `scripts/extract-heldout.sh` then writes the real markdown of every page
by the model that did not see it.

numpy is the only dependency: when it is missing the script makes `.venv/` at the
repository root, installs the pinned numpy there and runs itself again with it.
"""

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

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


def load(features, quality, holdout, paths=None, sizes=None):
    """Rows of the dump with labels, weights and page index, split into train/held (and
    each row's ancestry `path` appended to `paths` when given)."""
    manifest = {}
    for line in (quality / "data" / "manifest.tsv").read_text().splitlines()[1:]:
        c = line.split("\t")
        manifest[c[0]] = (c[2], c[3], site(c[1]))
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
                pages.append((pid, *manifest[pid][:2], len(tt), manifest[pid][2]))
            toks = WORD.findall(r["text"].lower())
            if not toks:
                continue
            m = len(toks) * in_truth(toks, *truths[pid])
            X.append(r["f"])
            if paths is not None:
                paths.append(r.get("path", ""))
            y.append(1.0 if m * 2 >= len(toks) else 0.0)
            ntok.append(len(toks))
            if sizes is not None:
                # Non-space bytes, as the extractor weighs a block's text (`learn::weight`).
                sizes.append(sum(1 for b in r["text"].encode() if b not in b" \t\n\r\x0c"))
            match.append(m)
            page.append(index[pid])
    X = np.array(X, dtype=np.float64)
    X[:, WITHOUT] = 0.0
    y = np.array(y)
    ntok = np.array(ntok, dtype=np.float64)
    match = np.array(match, dtype=np.float64)
    page = np.array(page)
    per_page = np.bincount(page, weights=ntok, minlength=len(pages))
    w = ntok / np.maximum(per_page[page], 1.0)
    source = np.array([p[1] for p in pages])
    train = source[page] != holdout if holdout else np.ones(len(y), bool)
    return X, y, w, page, ntok, match, pages, train


def site(url):
    """The host of a page's URL without a leading `www.`: the unit of the grouped folds."""
    host = (urlsplit(url).hostname or "").lower()
    return host[4:] if host.startswith("www.") else host


def fold_of(host, k):
    """Deterministic fold of a site (md5 of its host; Python's `hash` is salted)."""
    return int(hashlib.md5(host.encode()).hexdigest(), 16) % k


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

    def __init__(self, depth=4, trees=150, rate=0.1, bins=48, min_leaf=0.0, l2=1.0):
        self.depth, self.n, self.rate = depth, trees, rate
        self.bins, self.min_leaf, self.l2 = bins, min_leaf, l2

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
            tree = self._grow(B, g, h, w)
            self.trees.append(tree)
            z += self._apply(tree, B)
        return self

    def _grow(self, B, g, h, w):
        # A leaf holds at least `min_leaf` pages' worth of block weight (a page's blocks
        # weigh 1 in all), so no leaf is fitted to one page's or one site's blocks.
        # Nodes: [feature, cut index, left, right, value]; built breadth-first.
        nodes = [[-1, 0, 0, 0, 0.0]]
        members = [np.arange(len(g))]
        frontier = [0]
        for _ in range(self.depth):
            nxt = []
            for k in frontier:
                idx = members[k]
                gi, hi, wi = g[idx], h[idx], w[idx]
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
                    wb = np.bincount(col, weights=wi, minlength=nb)
                    gl, hl = np.cumsum(gb)[:-1], np.cumsum(hb)[:-1]
                    wl = np.cumsum(wb)[:-1]
                    gr, hr, wr = G - gl, H - hl, wi.sum() - wl
                    ok = (hl >= 5e-4) & (hr >= 5e-4)
                    ok &= (wl >= self.min_leaf) & (wr >= self.min_leaf)
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

    def write(self, path, names, drop, add, note, cap=1.0):
        lines = ["kb-extract-gbdt 1", f"# {note}", "features " + " ".join(names)]
        lines += [f"base {self.base!r}", f"drop {drop!r}", f"add {add!r}"]
        if cap < 1.0:
            lines.append(f"cap {cap!r}")
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
    ap.add_argument(
        "--cv-sites",
        type=Path,
        help="write one model per fold of sites here (each site's pages in one fold, by the "
        "md5 of its host), with the ids of the fold's pages",
    )
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument(
        "--caps",
        default="0.05,0.1,0.15,0.2",
        help="drop-only: the caps tried (largest share of a page's kept text dropped)",
    )
    ap.add_argument(
        "--inner-folds",
        type=int,
        default=4,
        help="drop-only: site-grouped folds of the training pages whose out-of-fold logits "
        "choose the threshold and the cap",
    )
    ap.add_argument(
        "--with-add",
        action="store_true",
        help="also add blocks the rules left out (round 3's two thresholds); default: the "
        "model only drops blocks the rules keep",
    )
    ap.add_argument(
        "--max-group-loss",
        type=float,
        default=0.002,
        help="drop-only: a threshold is allowed only when no (source, page type) group of "
        "the training pages loses more than this (mean per-page F1 of the block words)",
    )
    ap.add_argument(
        "--without",
        help="comma-separated feature names (or name prefixes ending in `*`) held constant, "
        "for an ablation",
    )
    ap.add_argument("--trees", type=int, default=60)
    ap.add_argument("--rate", type=float, default=0.15)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument(
        "--min-leaf",
        type=float,
        default=5.0,
        help="pages' worth of block weight a tree leaf must hold at least",
    )
    ap.add_argument(
        "--chrome-words",
        help="comma-separated class/id words: print, per source, what dropping the kept "
        "blocks under an ancestor with each word does (pages changed, sum of F1 changes)",
    )
    a = ap.parse_args()
    if a.chrome_words:
        chrome_words(a)
        return
    fit = fit_add if a.with_add else fit_drop
    if a.without:
        global WITHOUT
        WITHOUT = [
            k
            for k, n in enumerate(FEATURES)
            for p in a.without.split(",")
            if n == p or p.endswith("*") and n.startswith(p[:-1])
        ]
    if a.loso or a.cv_sites:
        X, y, w, page, ntok, match, pages, _ = load(a.features, a.quality, None, sizes=SIZES)
        if a.loso:
            out, key = a.loso, np.array([p[1] for p in pages])
            groups = [(s, key == s) for s in sorted(set(key))]
        else:
            out = a.cv_sites
            fold = np.array([fold_of(p[4], a.folds) for p in pages])
            groups = [(f"fold{k}", fold == k) for k in range(a.folds)]
        out.mkdir(parents=True, exist_ok=True)
        everyone = manifest_pages(a.quality)
        pooled = np.zeros(len(pages))
        dropped = np.zeros(len(pages))
        for name, held in groups:
            ids = {p[0] for p, h in zip(pages, held) if h}
            # Pages without a block (no text) follow their site or source too.
            ids |= {
                pid
                for pid, (src, _, host) in everyone.items()
                if pid not in {p[0] for p in pages}
                and (src == name if a.loso else f"fold{fold_of(host, a.folds)}" == name)
            }
            (out / f"ids-{name}.txt").write_text("".join(i + "\n" for i in sorted(ids)))
            r = fit(a, X, y, w, page, ntok, match, pages, ~held[page], name, out / f"model-{name}.txt")
            pooled[held] = r[1][held]
            dropped[held] = r[2][held]
            rules = r[0]
        report(pages, rules, pooled)
        with open(out / "pages.tsv", "w") as fh:
            fh.write("id\tsource\ttype\tsite\trules\tmodel\tdropped_share\n")
            for k, p in enumerate(pages):
                fh.write(f"{p[0]}\t{p[1]}\t{p[2]}\t{p[4]}\t{rules[k]:.4f}\t{pooled[k]:.4f}\t{dropped[k]:.3f}\n")
        return
    X, y, w, page, ntok, match, pages, train = load(a.features, a.quality, a.holdout, sizes=SIZES)
    fit(a, X, y, w, page, ntok, match, pages, train, a.holdout, a.out)


def manifest_pages(quality):
    """id -> (source, page type, site) of every page of the quality set."""
    out = {}
    for line in (quality / "data" / "manifest.tsv").read_text().splitlines()[1:]:
        c = line.split("\t")
        out[c[0]] = (c[2], c[3], site(c[1]))
    return out


def report(pages, rules, model):
    """Simulated per-page F1 (block words), rules vs held-out model, by type and source."""
    src = np.array([p[1] for p in pages])
    typ = np.array([p[2] for p in pages])
    rows = [("all", np.ones(len(pages), bool))]
    rows += [(t, typ == t) for t in sorted(set(typ))]
    rows += [(s, src == s) for s in sorted(set(src))]
    for name, m in rows:
        d = model[m] - rules[m]
        print(
            f"  {name:20s} {int(m.sum()):5d}  {rules[m].mean():.4f} -> {model[m].mean():.4f} "
            f"({d.mean():+.4f}; {int((d > 1e-9).sum())} up, {int((d < -1e-9).sum())} down)",
            file=sys.stderr,
        )


def inside_rules(X):
    """Blocks the rules keep: inside their root and not removed."""
    return (X[:, FEATURES.index("in_rule_root")] > 0.5) & (
        X[:, FEATURES.index("rule_removed")] < 0.5
    )


def fit_drop(a, X, y, w, page, ntok, match, pages, train, holdout, out):
    """Trees trained on the blocks the rules keep, and two settings chosen on the training
    pages from out-of-fold logits (an inner site-grouped cross-validation, so the choice
    sees what the trees do on sites they were not fitted to): the logit below which a
    block is dropped, and the largest share of a page's kept text the model may drop (a
    page where it would drop more keeps the rules' choice). The pair chosen gains most on
    the training pages among those that cost no (source, type) group more than
    `--max-group-loss`."""
    inside = inside_rules(X)
    size = np.array(SIZES, dtype=np.float64)
    truth_len = np.array([p[3] for p in pages], dtype=np.float64)
    tr_pages = np.zeros(len(pages), bool)
    tr_pages[page[train]] = True
    inner = np.array([fold_of("inner " + p[4], a.inner_folds) for p in pages])[page]
    z_oof = np.full(len(y), np.inf)
    for k in range(a.inner_folds):
        fit_rows = train & inside & (inner != k)
        pred = train & inside & (inner == k)
        m = Trees(depth=a.depth, trees=a.trees, rate=a.rate, min_leaf=a.min_leaf)
        m.fit(X[fit_rows], y[fit_rows], w[fit_rows])
        z_oof[pred] = m.logit(X[pred])
    rows = train & inside
    print(f"{holdout or 'all'}: {int(rows.sum())} training blocks", file=sys.stderr)
    model = Trees(depth=a.depth, trees=a.trees, rate=a.rate, min_leaf=a.min_leaf)
    model.fit(X[rows], y[rows], w[rows])
    z = np.full(len(y), np.inf)
    z[inside] = model.logit(X[inside])
    npg = len(pages)
    kept = np.bincount(page, weights=size * inside, minlength=npg)

    def keep_of(zz, drop, cap):
        gone = np.bincount(page, weights=size * (inside & (zz < drop)), minlength=npg)
        # Over the cap, or dropping everything, the page keeps the rules' choice.
        over = (gone > cap * kept) | ((gone >= kept) & (kept > 0))
        return inside & ((zz >= drop) | over[page]), np.where(over, 0.0, gone / np.maximum(kept, 1))

    rules = page_f1(inside.astype(float), page, ntok, match, truth_len, npg)
    group = np.array([f"{p[1]}/{p[2]}" for p in pages])
    tr_groups = [g for g in sorted(set(group[tr_pages])) if (tr_pages & (group == g)).sum() >= 5]
    best = (0.0, -np.inf, 0.0)
    for drop in [x / 4 for x in range(-24, 9)]:
        for cap in [float(c) for c in a.caps.split(",")]:
            keep, _ = keep_of(z_oof, drop, cap)
            d = page_f1(keep.astype(float), page, ntok, match, truth_len, npg) - rules
            worst = min(d[tr_pages & (group == g)].mean() for g in tr_groups)
            gain = d[tr_pages].mean()
            if worst >= -a.max_group_loss and gain > best[0] + 1e-9:
                best = (gain, drop, cap)
    gain, drop, cap = best
    keep, dropped = keep_of(z, drop, cap)
    fall = page_f1(keep.astype(float), page, ntok, match, truth_len, npg)
    print(
        f"  drop {drop}, cap {cap}: training pages, out-of-fold {rules[tr_pages].mean():.4f} "
        f"(rules) -> {rules[tr_pages].mean() + gain:.4f}; in-sample -> {fall[tr_pages].mean():.4f}",
        file=sys.stderr,
    )
    held = ~tr_pages
    if held.any():
        print(
            f"  held out ({int(held.sum())} pages): {rules[held].mean():.4f} (rules) -> "
            f"{fall[held].mean():.4f}",
            file=sys.stderr,
        )
    note = f"drop only; trained on {int(tr_pages.sum())} pages of the quality set" + (
        f" without {holdout}" if holdout else ""
    )
    model.write(out, FEATURES, drop, np.inf, note, cap)
    return rules, fall, dropped


def fit_add(a, X, y, w, page, ntok, match, pages, train, holdout, out):
    print(f"{len(y)} blocks, {len(pages)} pages, {int(train.sum())} training blocks", file=sys.stderr)
    model = Trees(depth=a.depth, trees=a.trees, rate=a.rate, min_leaf=a.min_leaf).fit(X[train], y[train], w[train])
    z = model.logit(X)
    truth_len = np.array([p[3] for p in pages], dtype=np.float64)
    inside = inside_rules(X)
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
    inside = inside_rules(X)
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
WITHOUT = []  # columns held at 0 (`--without`)
SIZES = []  # non-space bytes of each block, filled by `load`


if __name__ == "__main__":
    src = (ROOT / "crawl-extract" / "src" / "learn.rs").read_text()
    body = src[src.index("pub(crate) const FEATURES"):]
    body = body[: body.index("];")]
    FEATURES = re.findall(r'"(\w+)"', body)
    main()
