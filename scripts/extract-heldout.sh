#!/usr/bin/env bash
# Converts each group's pages with the model trained without them, into one folder, for
# the held-out evaluations of scripts/train-extract.py (`--loso DIR`, `--cv-sites DIR`):
#
#     bash scripts/extract-heldout.sh PAGES MODELS OUT
#
# PAGES holds the quality set's `<id>.html`; MODELS holds `ids-NAME.txt` (one id a line)
# and `model-NAME.txt` for every group NAME. Every page ends up in OUT as `<id>.md`,
# converted by the model that did not see it; score OUT with `score.py`.
set -euo pipefail
pages=$(realpath "$1")
models=$(realpath "$2")
out=$3
mkdir -p "$out"
for ids in "$models"/ids-*.txt; do
    name=$(basename "$ids" .txt)
    name=${name#ids-}
    tmp=$(mktemp -d)
    while read -r id; do
        ln -s "$pages/$id.html" "$tmp/$id.html"
    done <"$ids"
    cargo run --release -q -p kb-crawl --example extract -- --in "$tmp" --out "$out" \
        --model "$models/model-$name.txt"
    rm -r "$tmp"
done
