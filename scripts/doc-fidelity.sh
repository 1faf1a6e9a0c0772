#!/usr/bin/env bash
# Documentation fidelity on fifty-six real documentation sites (forty-one generators), from Debian's
# packages and, for fifteen, from PyPI and the npm registry: markdown/HTML of the main content per construct (`md_fidelity.py`, beside the
# project in ../shared/tools), one line per site.
#
# needs:  apt-get install -y python3.11-doc nodejs-doc apache2-doc cmake-doc sphinx-doc \
#             mkdocs-doc python-django-doc libsdl2-doc libcommons-lang3-java-doc gettext-doc \
#             libgtk-4-doc libglib2.0-doc python-scipy-doc erlang-doc ruby3.1 \
#             qtbase5-doc-html sqlite3-doc golang-1.19-doc libghc-cpphs-doc libcalendar-ocaml-doc \
#             racket-doc libboost1.81-doc tcl8.6-doc mandoc scala-doc libstdc++-12-doc \
#             vim-doc r-doc-html linux-doc pandoc libcurl4-doc git-doc debian-handbook \
#             postgresql-doc-15 kicad-doc-en zsh-doc debian-reference-en doxygen-doc \
#             jekyll jekyll-theme-minima &&
#             apt-get install -y --no-install-recommends r-base-core
#         (libgtk-4-doc to ruby3.1 for the five generators measured in session 16: gi-docgen,
#         gtk-doc, Sphinx with the pydata theme, erl_docgen, and RDoc's darkfish pages, which
#         `rdoc` writes from Ruby's standard library into WORK_DIR/rdoc-html once; the last
#         five for session 17's: QDoc, SQLite's own pages, Go's, Haddock and odoc)
#         python3 -m venv /tmp/fid && /tmp/fid/bin/pip install lxml markdown-it-py
#         (session 19's four sites, Sphinx's Furo and sphinx-book-theme and two MkDocs Material
#         sites, are built once into WORK_DIR/doc-sites with python3's venv and pip, and npm for
#         `npm pack`: PyPI and the npm registry must be reachable then; so are session 34's
#         JSDoc and mkdocstrings sites, with npm and python3's venv, and session 35's Read the
#         Docs theme, pydoctor and Pelican, into the same venv)
# usage:  [ONLY="site site"] bash scripts/doc-fidelity.sh [EXTRACT_BINARY] [WORK_DIR]
#         (ONLY: score just those sites, by the names the lines end with)
#         (default: the release `extract` example, built if missing; /tmp/doc-fidelity)
# The Rust book comes from the toolchain's docs (`rustup doc --path`).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/target/release/examples/extract}
work=${2:-/tmp/doc-fidelity}
fid=${FIDELITY:-$root/../shared/tools/md_fidelity.py}
py=${FIDELITY_PYTHON:-/tmp/fid/bin/python}
if [ ! -x "$bin" ]; then
    (cd "$root" && cargo build --release -p kb-crawl --example extract)
fi
[ -f "$fid" ] || { echo "md_fidelity.py not found at $fid (set FIDELITY)" >&2; exit 1; }

# Copies every page under $1 into the flat folder $2, named by its path ('/' -> '__'),
# following symlinks; skips Sphinx's _static/_sources/_modules/_images/_downloads and its
# generated genindex/search/py-modindex pages.
flatten() {
    local src=$1 dst=$2
    rm -rf "$dst"; mkdir -p "$dst"
    [ -d "$src" ] || { echo "missing $src (install its package)" >&2; return 1; }
    (cd "$src" && find -L . \( -path './_*' -prune \) -o -name '*.html' -print | sed 's|^\./||' |
        while read -r f; do
            case "$(basename "$f")" in genindex*|search.html|py-modindex*|404.html) continue;; esac
            cp -L "$f" "$dst/$(echo "$f" | sed 's|/|__|g')"
        done)
}

# Runs the extractor on the flat folder $2 and scores it against the element $3 (of the
# same pages in folder $4, when given: a copy for scoring only).
score() {
    local name=$1 html=$2 xpath=$3 out=$work/md/$1
    case " ${ONLY:-$1} " in *" $1 "*) ;; *) return 0;; esac
    rm -rf "$out"
    "$bin" --in "$html" --out "$out" --threads 2 > /dev/null 2>&1
    "$py" "$fid" "${4:-$html}" "$out" "$xpath" "$work/$name.csv" |
        awk -v s="$name" '/^(headings|code_blocks|table_rows|list_items|words) /{printf "%s %s  ", $1, $4} END{print "<- " s}'
}

mkdir -p "$work"
d=/usr/share/doc
# Python's docs as docs/extraction.md copies them: every page, its index pages too.
rm -rf "$work/python"; mkdir -p "$work/python"
(cd $d/python3.11/html && find . -name '*.html' | while read -r f; do
    cp -L "$f" "$work/python/$(echo "${f#./}" | tr / _)"
done)
flatten $d/nodejs/api "$work/node"
# Apache's English pages only (six files under en/ are Portuguese), and not the two
# directive indexes, which have no div#page-content.
rm -rf "$work/apache"; mkdir -p "$work/apache"
(cd $d/apache2-doc/manual/en && find . -name '*.html' | sed 's|^\./||' | while read -r f; do
    grep -q -m1 '<html[^>]*lang="en"' "$f" || continue
    n=$(echo "$f" | tr / _)
    case "$n" in mod_directives.html|mod_quickreference.html) continue;; esac
    cp "$f" "$work/apache/$n"
done)
flatten $d/cmake-data/html "$work/cmake"
flatten $d/python-django-doc/html "$work/django"
flatten $d/sphinx-doc/html "$work/sphinx"
flatten $d/mkdocs/html "$work/mkdocs"
# MkDocs' three "Redirecting..." stubs have no content.
rm -f "$work"/mkdocs/user-guide__{custom-themes,plugins,styling-your-docs}.html
flatten $d/libsdl2-doc/html "$work/sdl"
flatten $d/libcommons-lang3-java/api "$work/javadoc"
rm -rf "$work/texi"; mkdir -p "$work/texi"
cp -L $d/gettext/gettext_*.html $d/gettext/index.html "$work/texi/"
rm -rf "$work/rbook"; mkdir -p "$work/rbook"
for f in "$(dirname "$(rustup doc --path)")"/book/*.html; do
    grep -q '<main' "$f" && cp "$f" "$work/rbook/"
done

score python "$work/python" "//div[@role='main']"
score rust-book "$work/rbook" "//main"
score node "$work/node" "//div[@id='apicontent']"
score apache "$work/apache" "//div[@id='page-content']"
score cmake "$work/cmake" "//div[@role='main']"
score django "$work/django" "//div[contains(@class,'yui-g')]"
score sphinx "$work/sphinx" "//div[@role='main']"
score mkdocs "$work/mkdocs" "//div[@role='main']"
score doxygen-sdl2 "$work/sdl" "//div[@id='doc-content']"
score javadoc-lang3 "$work/javadoc" "//main"
score texinfo-gettext "$work/texi" "//body"

# Session 16's five: gi-docgen (GTK 4), gtk-doc (GLib), pydata-sphinx-theme (SciPy),
# erl_docgen (Erlang/OTP), RDoc darkfish (Ruby's standard library: its class and module
# pages, not the pages of source files, whose names start with `_`).
rm -rf "$work/gtk"; mkdir -p "$work/gtk"
for f in $d/libgtk-4-doc/gtk4/*.html; do
    grep -q '<section id="main"' "$f" && cp -L "$f" "$work/gtk/"
done
rm -rf "$work/glib"; mkdir -p "$work/glib"
cp -L /usr/share/gtk-doc/html/glib/*.html "$work/glib/"
rm -rf "$work/scipy"; mkdir -p "$work/scipy"
(cd $d/python-scipy-doc/html && find -L reference tutorial -name '*.html' | grep -v '/_' |
    while read -r f; do cp -L "$f" "$work/scipy/$(echo "$f" | sed 's|/|__|g')"; done)
rm -rf "$work/erlang"; mkdir -p "$work/erlang"
(cd $d/erlang-doc && find -L doc lib/stdlib-* lib/kernel-* erts-* lib/common_test-* lib/ssh-* \
    lib/ssl-* lib/crypto-* lib/mnesia-* lib/tools-* lib/inets-* lib/sasl-* lib/runtime_tools-* \
    -name '*.html' | while read -r f; do
        grep -q 'id="content"' "$f" && cp -L "$f" "$work/erlang/$(echo "$f" | sed 's|/|__|g')"
    done)
[ -d "$work/rdoc-html" ] || rdoc --format=darkfish --op "$work/rdoc-html" --quiet /usr/lib/ruby/3.1.0 > /dev/null 2>&1
rm -rf "$work/rdoc"; mkdir -p "$work/rdoc"
(cd "$work/rdoc-html" && find . -path './_*' -prune -o -name '*.html' ! -name 'table_of_contents.html' ! -name 'index.html' \
    ! -name '*_rb.html' ! -name '*_rdoc.html' ! -name '*_md.html' -print | sed 's|^\./||' | while read -r f; do
        grep -q '<main' "$f" && cp "$f" "$work/rdoc/$(echo "$f" | sed 's|/|__|g')"
    done)

score gtk "$work/gtk" "//section[@id='main']"
score glib "$work/glib" "//body/div[@class!='footer'][1]"
score scipy "$work/scipy" "//main[@role='main']/div[1]"
score erlang "$work/erlang" "//div[@id='content']"
score rdoc "$work/rdoc" "//main"

# Session 17's five: QDoc (Qt 5's pages of nine modules), SQLite's own pages (no content
# wrapper: scored on a copy without scripts, styles and the site header, `body >
# div.nosearch` with the logo), Go's (template fragments: lxml's `body`), Haddock (cpphs,
# with its hyperlinked source pages, which have no `div#content`) and odoc (calendar;
# `__` in its folder names becomes `--` so that paths stay apart).
rm -rf "$work/qdoc"; mkdir -p "$work/qdoc"
for m in qtcore qmake qtnetwork qtsql qtxml qtdbus qttestlib qtgui qtwidgets; do
    for f in /usr/share/qt5/doc/$m/*.html; do
        grep -q 'content mainContent' "$f" && cp -L "$f" "$work/qdoc/${m}__$(basename "$f")"
    done
done
rm -rf "$work/sqlite" "$work/sqlite-score"; mkdir -p "$work/sqlite"
(cd $d/sqlite3 && find -L . -name '*.html' | sed 's|^\./||' | while read -r f; do
    cp -L "$f" "$work/sqlite/$(echo "$f" | sed 's|/|__|g')"
done)
"$py" - "$work/sqlite" "$work/sqlite-score" <<'PY'
import os, sys
import lxml.html
src, dst = sys.argv[1:3]
os.makedirs(dst, exist_ok=True)
for n in os.listdir(src):
    t = lxml.html.parse(os.path.join(src, n))
    for e in t.getroot().xpath('//script|//style|/html/body/div[@class="nosearch"][.//img[@class="logo"]]'):
        e.drop_tree()
    t.write(os.path.join(dst, n), method="html", encoding="utf-8")
PY
rm -rf "$work/go"; mkdir -p "$work/go"
cp -L $d/golang-1.19-doc/html/*.html "$work/go/"
rm -rf "$work/haddock"; mkdir -p "$work/haddock"
(cd $d/libghc-cpphs-doc/html && find -L . -name '*.html' | sed 's|^\./||' | while read -r f; do
    cp -L "$f" "$work/haddock/$(echo "$f" | sed 's|/|__|g')"
done)
rm -rf "$work/odoc"; mkdir -p "$work/odoc"
(cd $d/libcalendar-ocaml/_html && find -L . -name '*.html' | sed 's|^\./||' | while read -r f; do
    cp -L "$f" "$work/odoc/$(echo "$f" | sed 's|__|--|g; s|/|__|g')"
done)

score qdoc "$work/qdoc" "//div[@class='content mainContent']"
score sqlite "$work/sqlite" "//body" "$work/sqlite-score"
score go "$work/go" "//body"
score haddock "$work/haddock" "//div[@id='content'] | /html/body[not(.//div[@id='content'])]"
score odoc "$work/odoc" "//body"

# Session 18's seven: rustdoc (the toolchain's std docs, every 4th page with a main-content
# section) and Scribble (Racket's reference and guide whole, every 6th page of its other
# manuals; `racket-doc`). Both are scored on copies without scripts and the site's own
# navigation bars, with a space at each block's edges (rustdoc keeps JSON in a <script>
# inside its main section, and lxml glues `<dt>a</dt><dd>b</dd>` into one word).
cleaned() {
    "$py" - "$1" "$2" "$3" <<'PY'
import os, sys
import lxml.html
src, dst, drop = sys.argv[1:4]
BLOCK = {"p", "div", "dt", "dd", "li", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "tr", "td",
         "th", "section", "details", "summary", "table", "br", "ul", "ol", "dl", "blockquote",
         "main", "article", "header", "footer", "nav", "aside"}
os.makedirs(dst, exist_ok=True)
for n in os.listdir(src):
    t = lxml.html.parse(os.path.join(src, n))
    for e in t.getroot().xpath(drop):
        e.drop_tree()
    for e in t.getroot().iter():
        if isinstance(e.tag, str) and e.tag in BLOCK:
            e.tail = " " + (e.tail or "")
            e.text = " " + (e.text or "")
    t.write(os.path.join(dst, n), method="html", encoding="utf-8")
PY
}
std="$(dirname "$(rustup doc --path)")/std"
rm -rf "$work/rustdoc" "$work/rustdoc-score"; mkdir -p "$work/rustdoc"
(cd "$std" && find . -name '*.html' ! -name all.html | LC_ALL=C sort | while read -r f; do
    grep -q 'id="main-content"' "$f" && echo "${f#./}"; done | awk 'NR%4==1' | while read -r f; do
    cp -L "$f" "$work/rustdoc/$(echo "$f" | sed 's|/|__|g')"; done)
cleaned "$work/rustdoc" "$work/rustdoc-score" '//script|//style|//template'
rm -rf "$work/scribble" "$work/scribble-score"; mkdir -p "$work/scribble"
(cd $d/racket && find -L . -name '*.html' | sed 's|^\./||' | LC_ALL=C sort | grep / |
    grep -v '/doc-index\.html$' | while read -r f; do
        grep -q 'class="maincolumn"' "$f" && echo "$f"; done > "$work/scribble.list")
{ grep -E '^(reference|guide)/' "$work/scribble.list"
  grep -vE '^(reference|guide)/' "$work/scribble.list" | awk 'NR%6==1'; } | while read -r f; do
    cp -L "$d/racket/$f" "$work/scribble/$(echo "$f" | sed 's|/|__|g')"; done
cleaned "$work/scribble" "$work/scribble-score" \
    '//script|//style|//div[@class="navsettop"]|//div[@class="navsetbottom"]|//div[@class="versionbox"]'

# Boost (BoostBook / DocBook XSL; every 6th page of libboost1.81-doc) and Tcl's manual pages
# written as HTML by mandoc, the generator of manpages.debian.org (tcl8.6-doc ships roff).
rm -rf "$work/boost"; mkdir -p "$work/boost"
(cd $d/libboost1.81-doc/doc/html && find -L . -name '*.html' | sed 's|^\./||' | LC_ALL=C sort |
    awk 'NR%6==1' | while read -r f; do cp -L "$f" "$work/boost/$(echo "$f" | sed 's|/|__|g')"; done)
rm -rf "$work/tcl"; mkdir -p "$work/tcl"
dpkg -L tcl8.6-doc | grep '/man3/.*\.3tcl\.gz$' | LC_ALL=C sort | while read -r f; do
    [ -L "$f" ] && continue
    zcat "$f" | head -c 300 | grep -q '^\.so ' && continue
    mandoc -Thtml -Ostyle=mandoc.css "$f" > "$work/tcl/$(basename "$f" .3tcl.gz).html" 2>/dev/null
done

# Scaladoc 2.11 (every second page under scala/; scored on a copy without the member filter,
# tooltips, footer, empty inherited-member headings, permalinks and the short comments a
# full comment repeats), libstdc++'s Doxygen API pages (all namespaces and groups, every 4th
# class and file page, every 20th source page) and its DocBook manual (all 109 pages).
rm -rf "$work/scaladoc" "$work/scaladoc-score"; mkdir -p "$work/scaladoc"
(cd $d/scala-doc/html && find -L scala package.html -name '*.html' | LC_ALL=C sort | awk 'NR % 2 == 1' |
    while read -r f; do cp -L "$f" "$work/scaladoc/$(echo "$f" | sed 's|/|__|g')"; done)
cleaned "$work/scaladoc" "$work/scaladoc-score" \
    '//script|//style|//div[@id="mbrsel"]|//div[@id="tooltip"]|//div[@id="footer"]|//div[@id="inheritedMembers"]|//div[@id="groupedMembers"]|//span[@class="permalink"]|//p[contains(@class,"shortcomment")][following-sibling::div[@class="fullcomment"]]'
rm -rf "$work/stdcxx"; mkdir -p "$work/stdcxx"
(cd $d/libstdc++-12-doc/libstdc++/user && for f in $(ls a*.html | LC_ALL=C sort); do
    t=$(grep -m1 -o '<title>[^<]*' "$f")
    case "$f" in
        *_source.html) k=source;;
        *) case "$t" in
            *"Member List"|*"Todo List"|*"Deprecated List"|*"Class List") continue;;
            *"Namespace Reference") k=ns;; *"File Reference") k=file;;
            *" Reference") k=class;; *) k=group;; esac;;
    esac
    echo "$k $f"
done | awk '{n[$1]++} $1=="ns"||$1=="group"||($1=="class"&&n[$1]%4==1)||($1=="file"&&n[$1]%4==1)||($1=="source"&&n[$1]%20==1){print $2}' |
    while read -r f; do cp -L "$f" "$work/stdcxx/$f"; done)
rm -rf "$work/docbook"; mkdir -p "$work/docbook"
(cd $d/libstdc++-12-doc/libstdc++ && find -L . -maxdepth 2 -name '*.html' ! -path './user/*' | sed 's|^\./||' |
    while read -r f; do cp -L "$f" "$work/docbook/$(echo "$f" | sed 's|/|__|g')"; done)

score rustdoc "$work/rustdoc" "//section[@id='main-content']" "$work/rustdoc-score"
score scribble "$work/scribble" "//div[@class='main']" "$work/scribble-score"
score boost "$work/boost" "/html/body/div[@class!='spirit-nav']"
score tcl-mandoc "$work/tcl" "//div[@class='manual-text']"
score scaladoc "$work/scaladoc" "//body" "$work/scaladoc-score"
score doxygen-stdcxx "$work/stdcxx" "//div[@id='doc-content']"
score docbook-stdcxx "$work/docbook" "/html/body/div[not(contains(@class,'nav'))]"

# Session 18's last five: Vim's help (vim-doc: vim2html, each page one <pre>), R's manuals
# (r-doc-html: texi2any 6.8, one page a manual; scored on a copy without the node headers,
# tables of contents, node menus and the title Texinfo 6.8 hides), R's help pages (Rd2HTML,
# written by `Rscript` from the installed base packages of r-base-core into WORK_DIR/rd-all
# once; every 3rd page), the kernel's (linux-doc: Sphinx, Read the Docs theme, kernel-doc;
# every 6th page) and Pandoc's own HTML (`pandoc -s` on its manual and libcurl4's 42
# markdown docs; scored without the empty line anchors in its highlighted code).
rm -rf "$work/vim"; mkdir -p "$work/vim"
cp -L $d/vim/html/*.html "$work/vim/"
rm -rf "$work/rman" "$work/rman-score"; mkdir -p "$work/rman"
cp -L /usr/share/R/doc/manual/*.html "$work/rman/"
cleaned "$work/rman" "$work/rman-score" \
    '//style|//script|//div[@class="header"]|//div[@class="contents"]|//h2[@class="contents-heading"]|//div[@class="shortcontents"]|//h2[@class="shortcontents-heading"]|//ul[@class="section-toc"]|//h1[@class="top"]'
if [ ! -d "$work/rd-all" ]; then
    mkdir -p "$work/rd-all"
    Rscript -e 'out <- commandArgs(TRUE)[1]
        for (p in c("base", "stats", "utils", "graphics", "grDevices", "methods", "tools",
                    "datasets", "grid", "parallel", "splines", "stats4", "tcltk", "compiler")) {
            db <- tools::Rd_db(p)
            for (n in names(db)) try(tools::Rd2HTML(db[[n]], file.path(out, paste0(p, "__",
                gsub("/", "__", sub("\\.Rd$", ".html", n)))), package = p,
                Links = tools::findHTMLlinks()), silent = TRUE)
        }' "$work/rd-all" > /dev/null 2>&1
fi
rm -rf "$work/rd" "$work/rd-score"; mkdir -p "$work/rd"
ls "$work/rd-all" | LC_ALL=C sort | awk 'NR%3==1' | while read -r f; do cp "$work/rd-all/$f" "$work/rd/"; done
cleaned "$work/rd" "$work/rd-score" '//script|//style'
rm -rf "$work/kernel" "$work/kernel-score"; mkdir -p "$work/kernel"
(cd $d/linux-doc/html && find -L . \( -path './_*' -prune \) -o -name '*.html' -print | sed 's|^\./||' |
    LC_ALL=C sort | grep -vE '(^|/)(genindex|search|py-modindex|404)\.html$' | awk 'NR%6==1' |
    while read -r f; do cp -L "$f" "$work/kernel/$(echo "$f" | sed 's|/|__|g')"; done)
cleaned "$work/kernel" "$work/kernel-score" '//script|//style'
rm -rf "$work/pandoc" "$work/pandoc-score"; mkdir -p "$work/pandoc"
zcat $d/pandoc/README.md.gz | pandoc -s -f markdown -t html5 --metadata pagetitle="Pandoc User's Guide" \
    -o "$work/pandoc/pandoc-MANUAL.html"
for f in $(ls $d/libcurl4/*.md $d/libcurl4/*.md.gz | LC_ALL=C sort); do
    b=$(basename "$f"); b=${b%.gz}; b=${b%.md}
    zcat -f "$f" | pandoc -s -f gfm -t html5 --metadata pagetitle="$b" -o "$work/pandoc/curl-$b.html"
done
cleaned "$work/pandoc" "$work/pandoc-score" '//style|//script|//pre//a[not(normalize-space())]'

score vim "$work/vim" "//pre"
score r-manuals "$work/rman" "//body" "$work/rman-score"
score rd "$work/rd" "//div[@class='container']" "$work/rd-score"
score kernel "$work/kernel" "//div[@role='main']" "$work/kernel-score"
score pandoc "$work/pandoc" "//body" "$work/pandoc-score"

# Session 29's: git's manual pages and guides (asciidoc's xhtml11 backend, `git-doc`), not
# its one-page user manual (DocBook's, no div#content).
rm -rf "$work/git"; mkdir -p "$work/git"
for f in $d/git-doc/*.html; do
    grep -q 'id="content"' "$f" && cp "$f" "$work/git/"
done
score git-asciidoc "$work/git" "//div[@id='content']"
# and the Debian Administrator's Handbook in English (Publican, DocBook's XSL with
# `div.para` for paragraphs and `div.sidebar` for its boxed notes).
rm -rf "$work/publican"; mkdir -p "$work/publican"
cp $d/debian-handbook/html/en-US/*.html "$work/publican/"
score publican-handbook "$work/publican" \
    "//div[@class='chapter' or @class='section' or @class='preface' or @class='appendix' or @class='book' or @class='index' or @class='glossary' or @class='part'][1]"
# Session 30's: PostgreSQL 15's documentation (DocBook XSL, `postgresql-doc-15`, 1,173
# pages: navigation tables above and below the page's one content div).
rm -rf "$work/postgres"; mkdir -p "$work/postgres"
cp $d/postgresql-doc-15/html/*.html "$work/postgres/"
score postgresql "$work/postgres" "//body/div[@class!='navheader' and @class!='navfooter'][1]"
# and four more: KiCad's manuals (Asciidoctor, `kicad-doc-en`, 8 long pages), zsh's manual
# (texi2any, one page a section, each opening with a navigation table; redirect stubs left
# out; scored without its navigation and menu tables), the Debian Reference (DocBook XSL,
# `debian-reference-en`) and Doxygen's own manual (`doxygen-doc`).
rm -rf "$work/kicad"; mkdir -p "$work/kicad"
cp /usr/share/doc/kicad/help/en/*.html "$work/kicad/"
score asciidoctor-kicad "$work/kicad" "//div[@id='content']"
rm -rf "$work/zsh"; mkdir -p "$work/zsh"
for f in $d/zsh-common/html/*.html; do
    grep -q 'class="header"' "$f" && cp "$f" "$work/zsh/"
done
cleaned "$work/zsh" "$work/zsh-score" "//table[@class='header']|//table[@class='menu']|//script|//style"
score texi2any-zsh "$work/zsh" "//body" "$work/zsh-score"
rm -rf "$work/debref"; mkdir -p "$work/debref"
cp /usr/share/debian-reference/*.en.html "$work/debref/"
score docbook-debian-reference "$work/debref" "//body/div[@class!='navheader' and @class!='navfooter'][1]"
rm -rf "$work/doxydoc"; mkdir -p "$work/doxydoc"
cp $d/doxygen/html/*.html "$work/doxydoc/"
score doxygen-manual "$work/doxydoc" "//div[@id='doc-content']"

# Session 19's four: Sphinx's own documentation (the sphinx 9.0.4 sdist's doc/) built with
# Furo and with sphinx-book-theme, and two MkDocs Material sites: npm's CLI docs (the
# npm 11.19.1 package's docs/content, 91 pages, front matter titles) with the extensions a
# Material site has (admonition, superfences, tabbed, details, tables, toc permalinks), and
# pymdown-extensions' own docs (13.1.2 sdist) with its own Material configuration
# (zensical.yml, less the lucide icons and the code-collapse module the sdist lacks). Built
# once into WORK_DIR/doc-sites from PyPI and the npm registry; Sphinx's redirect stubs are
# left out, and under Furo its contents.html (the doc's own template, no article).
sites=$work/doc-sites
if [ ! -f "$sites/built" ]; then
    rm -rf "$sites"; mkdir -p "$sites/src"
    python3 -m venv "$sites/venv"
    "$sites/venv/bin/pip" install -q sphinx==9.0.4 furo==2025.12.19 sphinx-book-theme==1.4.0 \
        mkdocs==1.6.1 mkdocs-material==9.8.2 pymdown-extensions==13.1.2
    (cd "$sites/src" &&
        "$sites/venv/bin/pip" download -q --no-binary :all: --no-deps sphinx==9.0.4 pymdown-extensions==13.1.2 &&
        tar xzf sphinx-9.0.4.tar.gz && tar xzf pymdown_extensions-13.1.2.tar.gz &&
        npm pack -q npm@11.19.1 > /dev/null && mkdir npm && tar xzf npm-11.19.1.tgz -C npm)
    for t in furo sphinx_book_theme; do
        "$sites/venv/bin/sphinx-build" -q -b html -D html_theme=$t -D intersphinx_timeout=1 \
            "$sites/src/sphinx-9.0.4/doc" "$sites/$t" > "$sites/$t.log" 2>&1
    done
    mkdir -p "$sites/src/npm-site"
    cat > "$sites/src/npm-site/mkdocs.yml" <<'YML'
site_name: npm Docs
docs_dir: ../npm/package/docs/content
theme:
  name: material
  features: [navigation.tabs, navigation.sections, content.code.copy]
markdown_extensions:
  - admonition
  - attr_list
  - def_list
  - tables
  - toc:
      permalink: true
  - pymdownx.highlight
  - pymdownx.superfences
  - pymdownx.details
  - pymdownx.tabbed:
      alternate_style: true
YML
    (cd "$sites/src/npm-site" && NO_MKDOCS_2_WARNING=1 "$sites/venv/bin/mkdocs" build -q -d "$sites/material-npm" > "$sites/material-npm.log" 2>&1)
    (cd "$sites/src/pymdown_extensions-13.1.2" &&
        sed -e '/tools.collapse_code/,/collapse_text/d' -e 's|lucide/sun|material/weather-sunny|' \
            -e 's|lucide/moon|material/weather-night|' -e 's/check_paths: true/check_paths: false/' zensical.yml > mkdocs.yml &&
        grep -rl '^icon: lucide' docs/src/markdown | xargs -r sed -i '/^icon: lucide/d' &&
        PYTHONPATH=. NO_MKDOCS_2_WARNING=1 "$sites/venv/bin/mkdocs" build -q -d "$sites/material-pymdownx" > "$sites/material-pymdownx.log" 2>&1)
    touch "$sites/built"
fi
# Session 35: the same Sphinx docs under the Read the Docs theme (sphinx_rtd_theme 3.0.2, the
# theme of most readthedocs.io sites), built into the venv above when missing.
if [ ! -d "$sites/sphinx_rtd_theme" ]; then
    "$sites/venv/bin/pip" install -q sphinx-rtd-theme==3.0.2
    "$sites/venv/bin/sphinx-build" -q -b html -D html_theme=sphinx_rtd_theme -D intersphinx_timeout=1 \
        "$sites/src/sphinx-9.0.4/doc" "$sites/sphinx_rtd_theme.tmp" > "$sites/sphinx_rtd_theme.log" 2>&1
    mv "$sites/sphinx_rtd_theme.tmp" "$sites/sphinx_rtd_theme"
fi
for s in furo:sphinx-furo sphinx_book_theme:sphinx-book sphinx_rtd_theme:sphinx-rtd material-npm:material-npm material-pymdownx:material-pymdownx; do
    flatten "$sites/${s%%:*}" "$work/${s#*:}"
    { grep -l 'You should have been redirected' "$work/${s#*:}"/*.html || true; } | xargs -r rm -f
done
rm -f "$work/sphinx-furo/contents.html"

score sphinx-furo "$work/sphinx-furo" "//article[@role='main']"
score sphinx-book "$work/sphinx-book" "//article[contains(@class,'bd-article')]"
score sphinx-rtd "$work/sphinx-rtd" "//div[@itemprop='articleBody']"

# Session 35: pydoctor 24.11.2 (Twisted's API documentation generator) on the standard
# library's email and json packages (python3.11's own sources), into the venv above; its
# index pages (no div#main) are left out.
if [ ! -d "$sites/pydoctor" ]; then
    "$sites/venv/bin/pip" install -q pydoctor==24.11.2
    rm -rf "$sites/pydoctor-src" && mkdir -p "$sites/pydoctor-src"
    cp -r /usr/lib/python3.11/email /usr/lib/python3.11/json "$sites/pydoctor-src/"
    # pydoctor exits 2 when a docstring does not parse; the pages are written all the same.
    "$sites/venv/bin/pydoctor" --html-output="$sites/pydoctor.tmp" --project-name=stdlib -q \
        "$sites/pydoctor-src/email" "$sites/pydoctor-src/json" > "$sites/pydoctor.log" 2>&1 || true
    [ -f "$sites/pydoctor.tmp/email.html" ] || { tail -20 "$sites/pydoctor.log" >&2; exit 1; }
    mv "$sites/pydoctor.tmp" "$sites/pydoctor"
fi
rm -rf "$work/pydoctor" && mkdir -p "$work/pydoctor"
grep -l 'id="main"' "$sites/pydoctor"/*.html | xargs -I{} cp {} "$work/pydoctor/"
score pydoctor "$work/pydoctor" "//div[@id='main']"

# Session 35: Pelican 4.11.0, a static site generator for blogs and small sites, with its
# default theme (notmyidea): npm's CLI docs (the pages the Material site above is built
# from) as 91 articles, their YAML front matter turned into Pelican's metadata lines.
# Scored in the article's div.entry-content (the title and the date line are outside it).
if [ ! -d "$sites/pelican" ]; then
    # Its own venv: Pelican pins older Markdown and Pygments than MkDocs Material's.
    python3 -m venv "$sites/pelican-venv"
    "$sites/pelican-venv/bin/pip" install -q pelican==4.11.0 markdown==3.8
    rm -rf "$sites/pelican-src" && mkdir -p "$sites/pelican-src/content"
    python3 - "$sites/src/npm/package/docs/content" "$sites/pelican-src/content" <<'PY'
import os, re, sys
src, dst = sys.argv[1:3]
for n, rel in enumerate(sorted(os.path.relpath(os.path.join(d, f), src)
                               for d, _, fs in os.walk(src) for f in fs if f.endswith(".md"))):
    text = open(os.path.join(src, rel), encoding="utf-8").read()
    title = os.path.basename(rel)[:-3]
    m = re.match(r"^---\n(.*?)\n---\n", text, re.S)
    if m:
        t = re.search(r"^title:\s*(.*)$", m.group(1), re.M)
        title = t.group(1).strip().strip('"') if t else title
        text = text[m.end():]
    slug = rel[:-3].replace("/", "-")
    meta = f"Title: {title}\nDate: 2024-01-{n % 28 + 1:02d} 10:00\nCategory: {rel.split('/')[0]}\nSlug: {slug}\n\n"
    open(os.path.join(dst, slug + ".md"), "w", encoding="utf-8").write(meta + text)
PY
    cat > "$sites/pelican-src/pelicanconf.py" <<'PY'
SITENAME = "npm Docs"
PATH = "content"
TIMEZONE = "UTC"
DEFAULT_LANG = "en"
FEED_ALL_ATOM = None
CATEGORY_FEED_ATOM = None
PY
    (cd "$sites/pelican-src" && "$sites/pelican-venv/bin/pelican" content -s pelicanconf.py -o "$sites/pelican.tmp" -q > "$sites/pelican.log" 2>&1)
    mv "$sites/pelican.tmp" "$sites/pelican"
fi
rm -rf "$work/pelican" && mkdir -p "$work/pelican"
# The articles (index.html lists their summaries, each in a div.entry-content).
grep -l 'class="entry-content"' "$sites/pelican"/*.html | grep -v '/index\.html$' | xargs -I{} cp {} "$work/pelican/"
score pelican "$work/pelican" "//div[@class='entry-content']"
score material-npm "$work/material-npm" "//article[contains(@class,'md-content__inner')]"
score material-pymdownx "$work/material-pymdownx" "//article[contains(@class,'md-content__inner')]"

# Session 30's TypeDoc site: date-fns 4.4.0's API (its .d.ts with their TSDoc comments,
# 526 pages) built by TypeDoc 0.27.9 with the default theme, once, from the npm registry.
tsite=$work/typedoc-site
if [ ! -f "$tsite/built" ]; then
    rm -rf "$tsite"; mkdir -p "$tsite"
    (cd "$tsite" && npm init -y > /dev/null &&
        npm install -q --no-audit --no-fund typedoc@0.27.9 typescript@5.6.3 date-fns@4.4.0 > /dev/null &&
        printf '%s\n' '{ "compilerOptions": { "module": "nodenext", "moduleResolution": "nodenext",' \
            '  "target": "es2022", "skipLibCheck": true }, "files": ["node_modules/date-fns/index.d.ts"] }' > tsconfig.json &&
        npx typedoc --entryPoints node_modules/date-fns/index.d.ts --tsconfig tsconfig.json \
            --skipErrorChecking --name date-fns --out site > typedoc.log 2>&1)
    touch "$tsite/built"
fi
flatten "$tsite/site" "$work/typedoc"
score typedoc-date-fns "$work/typedoc" "//div[@class='col-content']"

# Session 34's JSDoc: JSDoc 4.0.5's default template over its own sources and three of its
# dependencies' (catharsis 0.9.0, requizzle 0.2.4, js2xmlparser 4.0.2: 98 pages, their
# source listings included), built once from the npm registry.
jsite=$work/jsdoc-site
if [ ! -f "$jsite/built" ]; then
    rm -rf "$jsite"; mkdir -p "$jsite"
    (cd "$jsite" && npm init -y > /dev/null &&
        npm install -q --no-audit --no-fund jsdoc@4.0.5 catharsis@0.9.0 requizzle@0.2.4 \
            js2xmlparser@4.0.2 > /dev/null &&
        printf '%s\n' '{"source": {"includePattern": ".+\\.m?js$"}, "plugins": ["plugins/markdown"],' \
            '  "opts": {"recurse": true}}' > conf.json &&
        npx jsdoc -c conf.json node_modules/jsdoc/lib node_modules/catharsis node_modules/requizzle \
            node_modules/js2xmlparser/lib node_modules/jsdoc/README.md -d site > jsdoc.log 2>&1)
    touch "$jsite/built"
fi
flatten "$jsite/site" "$work/jsdoc"
score jsdoc "$work/jsdoc" "//div[@id='main']"

# Session 31's pod2html: Perl's own modules (every .pm of perl's privlib over 12 KB with a
# `=head1`, 161 pages on Debian 12's perl 5.36) written by pod2html, the generator of
# perldoc.perl.org's pages; scored on a copy without the local table of contents
# (`ul#index`), which the markdown leaves out.
rm -rf "$work/pod" "$work/pod-score" "$work/pod-cache"; mkdir -p "$work/pod" "$work/pod-cache"
privlib=$(perl -MConfig -e 'print $Config{privlib}')
(cd "$privlib" && find -L . -name '*.pm' -size +12k | sed 's|^\./||' | LC_ALL=C sort | while read -r f; do
    grep -q '^=head1' "$f" || continue
    pod2html --infile="$f" --outfile="$work/pod/$(echo "${f%.pm}" | tr / _).html" --quiet \
        --cachedir="$work/pod-cache" 2> /dev/null || true
done)
cleaned "$work/pod" "$work/pod-score" '//ul[@id="index"]'
score pod2html "$work/pod" "//body" "$work/pod-score"

# Session 31's site generators of one markdown source each: the README.md files of 72 pinned
# npm packages (scripts/js-doc-sites.sh fetches and sanitizes them once, with Node 22 from the
# npm registry) built by Docusaurus 3.10.2, VitePress 1.6.4 and Astro Starlight 0.42.9, and by
# Jekyll 4.3 with its default theme, minima (Debian's `jekyll jekyll-theme-minima`; a front
# matter title from the first heading, as GitHub Pages sites have).
case " ${ONLY:-docusaurus} " in *" docusaurus "*|*" vitepress "*|*" starlight "*|*" jekyll-minima "*)
    bash "$root/scripts/js-doc-sites.sh" "$work" > "$work/js-doc-sites.out" 2>&1 ||
        { tail -20 "$work/js-doc-sites.out" >&2; exit 1; }
    jk=$work/jekyll-site
    rm -rf "$jk"; mkdir -p "$jk/docs"
    printf 'title: Docs\ntheme: minima\nmarkdown: kramdown\nkramdown:\n  input: GFM\n' > "$jk/_config.yml"
    for f in "$work"/js-sites/content/*.md; do
        t=$(grep -m1 '^# ' "$f" | sed -e 's/^# //' -e 's/\\/\\\\/g' -e 's/"/\\"/g')
        { printf -- '---\nlayout: page\ntitle: "%s"\n---\n\n' "$t"; cat "$f"; } > "$jk/docs/$(basename "$f")"
    done
    (cd "$jk" && jekyll build -q -d "$jk/out" > "$jk.log" 2>&1)
    flatten "$jk/out/docs" "$work/jekyll";;
esac
score docusaurus "$work/docusaurus" "//div[contains(concat(' ',normalize-space(@class),' '),' theme-doc-markdown ')]"
score vitepress "$work/vitepress" "//div[contains(concat(' ',normalize-space(@class),' '),' vp-doc ')]"
score starlight "$work/starlight" "//main"
score jekyll-minima "$work/jekyll" "//article"

# Session 31's pdoc 16 (PyPI): twenty standard-library modules' API pages, each with its
# module's source behind a "View Source" toggle; built once in a venv of its own.
pv=$work/pdoc-venv
if [ ! -x "$pv/bin/pdoc" ]; then
    python3 -m venv "$pv" && "$pv/bin/pip" install -q pdoc==16.0.0
fi
rm -rf "$work/pdoc-site"
"$pv/bin/pdoc" -o "$work/pdoc-site" json argparse pathlib textwrap shutil csv logging dataclasses \
    enum functools itertools collections heapq statistics fractions decimal difflib string re \
    > "$work/pdoc.log" 2>&1
flatten "$work/pdoc-site" "$work/pdoc"
rm -f "$work/pdoc/index.html"
score pdoc "$work/pdoc" "//main"

# Session 34's mkdocstrings: MkDocs Material 9.6.14 with mkdocstrings 0.29.1 (its Python
# handler 1.16.12, griffe 2.4.1) over seven standard-library modules and three of Jinja2's
# and Python-Markdown's (one page each, sources shown), built once in a venv of its own.
mk=$work/mkdocstrings-site
if [ ! -f "$mk/built" ]; then
    rm -rf "$mk"; mkdir -p "$mk/docs"
    python3 -m venv "$mk/venv" && "$mk/venv/bin/pip" install -q mkdocs==1.6.1 \
        mkdocs-material==9.6.14 mkdocstrings==0.29.1 mkdocstrings-python==1.16.12 griffe==2.4.1
    for m in json textwrap statistics fractions pathlib shlex heapq jinja2.environment \
        jinja2.filters markdown.core; do
        printf '# %s\n\n::: %s\n' "$m" "$m" > "$mk/docs/$m.md"
    done
    printf '# API\n\nReference pages for a few modules.\n' > "$mk/docs/index.md"
    printf '%s\n' 'site_name: API reference' 'theme:' '  name: material' 'plugins:' '  - search' \
        '  - mkdocstrings:' '      handlers:' '        python:' '          options:' \
        '            show_source: true' '            docstring_style: google' > "$mk/mkdocs.yml"
    (cd "$mk" && NO_MKDOCS_2_WARNING=1 venv/bin/mkdocs build -q -d site > build.log 2>&1)
    touch "$mk/built"
fi
rm -rf "$work/mkdocstrings"; mkdir -p "$work/mkdocstrings"
(cd "$mk/site" && for d in */; do
    [ -f "$d/index.html" ] && [ "$d" != "search/" ] && cp "$d/index.html" "$work/mkdocstrings/${d%/}.html"
done)
# Scored on a copy without the line-number gutters of the 265 source listings
# (`td.linenos`, left out of the markdown): each listing's one-row layout table
# (`table.highlighttable`) still counts as a table row there, which the markdown, one code
# block a listing, does not have (53 of 318 rows: all the others).
rm -rf "$work/mkdocstrings-score"
cleaned "$work/mkdocstrings" "$work/mkdocstrings-score" "//td[contains(@class,'linenos')]"
score mkdocstrings "$work/mkdocstrings" "//article[contains(@class,'md-content__inner')]" \
    "$work/mkdocstrings-score"
