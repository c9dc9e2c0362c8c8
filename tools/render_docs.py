"""Render the documentation site without Quarto, and README.md from nbs/index.ipynb.

nbdev's notebook processing (`nbdev-proc-nbs`: frontmatter, hidden export cells, show_doc) writes _proc/. Each
processed notebook is then cleaned the way Quarto would (cell directives, attribute syntax, links) and converted
with nbconvert's HTMLExporter; a Jinja page template (tools/docs_page.html.j2) adds the sidebar (grouped by part),
the page's table of contents and previous/next links. Pages keep nbdev's names (`output-file`, e.g.
figures.html), so nbdev's doc links to the published site become relative links. Figures are embedded as data
URIs. Maths: MathJax 3 from the npm package, unpacked into _docs/mathjax/ at build time (never committed), with
the CDN as fallback.

Quarto cell directives honoured: `hide`, `include: false` (cell dropped), `echo: false` (output only),
`output: false` (source only), `output: asis` (the markdown output rendered as markdown), `fig-alt` (alt text of
the cell's images); every other `#|` line is dropped from the shown source. Removed from outputs (and counted):
stderr streams (tqdm bars, library warnings, the kernel's warnings), error outputs (tracebacks) and widget
outputs (tqdm's notebook bars).

    python tools/render_docs.py            # _docs/*.html
    python tools/render_docs.py --readme   # README.md only
    python tools/render_docs.py --check    # render, then fail unless every page exists and figures are embedded
    python tools/render_docs.py --no-proc  # reuse _proc/ from the last run
"""

import argparse
import html
import re
import shutil
import subprocess
import sys
import tarfile
from collections import Counter
from pathlib import Path
from urllib.parse import unquote

import jinja2
import nbformat
import yaml
from nbconvert import HTMLExporter, MarkdownExporter

ROOT = Path(__file__).resolve().parent.parent
NBS, PROC, DOCS = ROOT / "nbs", ROOT / "_proc", ROOT / "_docs"
TEMPLATE = Path(__file__).resolve().parent / "docs_page.html.j2"
# nbdev writes doc links to the published site (pyproject.toml's Documentation URL, when one is set); locally they are
# relative.
PUBLISHED = re.compile(
    r"https?://magicarp-nb\.github\.io/magicarp_nb/|(?<=\]\()/(?=[\w-]+\.html)|(?<=href=\")/(?=[\w-]+\.html)"
)
# without a published site (no Documentation URL) nbdev 3 writes them root-relative (/page.html#name); the README,
# read on a code host, keeps the names as code rather than links that lead nowhere there
SITE_LINK = re.compile(r"\[(`[^`\]]+`)\]\(/[\w-]+\.html(?:#[^)\s]*)?\)")
MATHJAX_NPM = "mathjax@3.2.2"
MATHJAX_CDN = "https://cdn.jsdelivr.net/npm/mathjax@3.2.2/es5/tex-svg.js"
PARTS = [  # (sidebar heading, which notebooks)
    ("Foundation", lambda s: s[:1] == "0"),
    ("CARP", lambda s: s[:1] == "1"),
    ("Collapse", lambda s: s[:1] == "2"),
    ("Outputs", lambda s: s[:1] == "3"),
    ("Runners", lambda s: s.startswith("run_")),
]


def sanitize(nb):
    "Drop what nbformat's schema rejects in nbdev's processed notebooks (cell keys such as has_sd, non-tag metadata)."
    allowed = {
        "code": {"id", "cell_type", "metadata", "source", "outputs", "execution_count"},
        "markdown": {"id", "cell_type", "metadata", "source", "attachments"},
        "raw": {"id", "cell_type", "metadata", "source", "attachments"},
    }
    cells = []
    for c in nb.cells:
        if c.get("source") is None:
            continue
        for k in list(c.keys()):
            if k not in allowed[c.cell_type]:
                del c[k]
        c.metadata = {k: v for k, v in c.get("metadata", {}).items() if k == "tags"}
        if c.cell_type == "code":
            c.setdefault("outputs", [])
            c.setdefault("execution_count", None)
        cells.append(c)
    nb.cells = cells
    return nb


def frontmatter(nb):
    "Title and description from the raw YAML cell nbdev inserts, removed from the notebook."
    fm = {}
    for c in list(nb.cells):
        if c.cell_type == "raw" and c.source.lstrip().startswith("---"):
            fm = yaml.safe_load(c.source.strip().strip("-")) or {}
            nb.cells.remove(c)
            break
    return fm


def header(fm):
    md = f"# {fm.get('title', '')}\n" if fm.get("title") else ""
    if fm.get("description"):
        md += f"\n> {fm['description']}\n"
    return nbformat.v4.new_markdown_cell(md) if md else None


def process():
    # nbdev's processing executes the cells it needs for the docs (exports, show_doc and imports), so a cell that
    # mixes imports with code depending on earlier test cells fails here: keep imports in cells of their own.
    exe = Path(sys.executable).parent / "nbdev-proc-nbs"
    r = subprocess.run(
        [str(exe) if exe.exists() else "nbdev-proc-nbs", "--force"], cwd=ROOT, capture_output=True, text=True
    )
    if r.returncode:
        sys.exit(f"nbdev-proc-nbs failed:\n{r.stdout[-3000:]}{r.stderr[-6000:]}")


# ---------------------------------------------------------------- Quarto's cell processing, done here
def directives(src):
    "The `#| key: value` lines at the top of a code cell as a dict (`#| hide` → {'hide': True}), and the rest."
    opts, lines = {}, src.splitlines()
    i = 0
    while i < len(lines) and (lines[i].startswith("#|") or not lines[i].strip()):
        m = re.match(r"#\|\s*([\w-]+)\s*(?::\s*(.*))?$", lines[i])
        if m:
            v = (m.group(2) or "").strip()
            opts[m.group(1)] = True if m.group(2) is None else yaml.safe_load(v) if v else ""
        i += 1
    return opts, "\n".join(lines[i:]).strip("\n")


def clean_markdown(md, pages):
    "Quarto attribute syntax stripped, links to the published site made relative, signatures with links as HTML."
    md = re.sub(r"(\]\([^)\s]*\))\{[^}\n]*\}", r"\1", md)  # [text](url){target="_blank" ...}
    md = PUBLISHED.sub("", md)
    md = re.sub(r"```python\n(.*?)```", lambda m: _code_with_links(m.group(0), m.group(1)), md, flags=re.S)
    return md


def _code_with_links(block, code):
    "A fenced signature whose docments contain markdown links, as a <pre> with real links (else unchanged)."
    link = re.compile(r"\[`?([^\]`]+)`?\]\(([^)\s]+)\)")
    if not link.search(code):
        return block
    out, last = [], 0
    for m in link.finditer(code):
        out.append(html.escape(code[last : m.start()]))
        out.append(f'<a href="{html.escape(m.group(2))}"><code>{html.escape(m.group(1))}</code></a>')
        last = m.end()
    out.append(html.escape(code[last:]))
    return f'<pre class="signature"><code class="language-python">{"".join(out).rstrip()}</code></pre>\n'


def _stderr_kind(text):
    if not text.strip():
        return "empty stderr"
    if "IPKernelApp" in text:
        return "kernel warning"
    if "\r" in text or re.search(r"\d+%\|", text) or "it/s]" in text or "s/it]" in text:
        return "progress bar (tqdm)"
    if "Warning" in text or "warn" in text.lower() or text.startswith("[transformers]"):
        return "library warning"
    return "other stderr"


def clean_outputs(outputs, opts, stripped: Counter):
    "Outputs without stderr, tracebacks and widgets (counted in `stripped`); images get the cell's `fig-alt`."
    outs = []
    for o in outputs:
        if o.output_type == "stream" and o.name == "stderr":
            stripped[_stderr_kind(o.text)] += 1
        elif o.output_type == "error":
            stripped["error (traceback)"] += 1
        elif "application/vnd.jupyter.widget-view+json" in o.get("data", {}):
            stripped["widget (notebook progress bar)"] += 1
        else:
            if o.output_type == "execute_result":
                o.execution_count = None
            if "fig-alt" in opts and "image/png" in o.get("data", {}):  # nbconvert ignores alt metadata
                alt = html.escape(str(opts["fig-alt"]))
                img = f'<img src="data:image/png;base64,{o.data["image/png"].strip()}" alt="{alt}">'
                o = nbformat.v4.new_output("display_data", data={"text/html": img})
            outs.append(o)
    return outs


def quarto_cells(nb, stripped: Counter):
    "Apply the cell directives Quarto would, and remove noise from outputs (counted in `stripped`)."
    cells = []
    for c in nb.cells:
        if c.cell_type == "markdown":
            c.source = clean_markdown(c.source, None)
            cells.append(c)
            continue
        if c.cell_type != "code":
            continue
        opts, src = directives(c.source)
        if opts.get("hide") or opts.get("include") is False or "hide_input" in c.metadata.get("tags", []):
            continue
        outs = clean_outputs(c.outputs, opts, stripped)
        if opts.get("output") == "asis":
            for o in outs:
                md = o.get("data", {}).get("text/markdown") or (o.text if o.output_type == "stream" else "")
                if md:
                    cells.append(nbformat.v4.new_markdown_cell(clean_markdown(md, None)))
            continue
        c.outputs = [] if opts.get("output") is False else outs
        c.execution_count = None
        c.source = "" if opts.get("echo") is False else src
        if c.source or c.outputs:
            cells.append(c)
    nb.cells = cells
    return nb


# ---------------------------------------------------------------- the site
def vendor_mathjax():
    "MathJax 3 (tex-svg, one file, no fonts to fetch) from the npm package into _docs/mathjax/; None if npm fails."
    dest = DOCS / "mathjax" / "tex-svg.js"
    if dest.exists():
        return "mathjax/tex-svg.js"
    cache = ROOT / "build" / "npm"
    tgz = next(iter(sorted(cache.glob("mathjax-*.tgz"))), None)
    if tgz is None and shutil.which("npm"):
        cache.mkdir(parents=True, exist_ok=True)
        r = subprocess.run(["npm", "pack", MATHJAX_NPM, "--silent"], cwd=cache, capture_output=True, text=True)
        tgz = next(iter(sorted(cache.glob("mathjax-*.tgz"))), None) if r.returncode == 0 else None
    if tgz is None:
        print("docs: npm mathjax unavailable, pages load MathJax from the CDN", file=sys.stderr)
        return None
    with tarfile.open(tgz) as t:
        f = t.extractfile("package/es5/tex-svg.js")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(f.read())
    return "mathjax/tex-svg.js"


def page_name(src, fm):
    return fm.get("output-file") or f"{src.stem}.html"


def site_order(srcs):
    "index first, then the numbered notebooks by part, then the runners."
    key = {s: next((i for i, (_, f) in enumerate(PARTS) if f(s.stem)), len(PARTS)) for s in srcs}
    return [s for s in srcs if s.stem == "index"] + sorted(
        (s for s in srcs if s.stem != "index"), key=lambda s: (key[s], s.stem)
    )


def toc(body):
    "(level, id, text) of the h2/h3 headings in a rendered body."
    out = []
    for lvl, hid, inner in re.findall(r'<h([23])[^>]*\sid="([^"]+)"[^>]*>(.*?)</h\1>', body, flags=re.S):
        text = re.sub(r"<[^>]+>", "", inner).replace("¶", "").strip()
        out.append((int(lvl), hid, html.unescape(text)))
    return out


def anchors(body):
    "Heading ids, plus their lower-case forms: nbdev links to `page.html#symbol` in lower case."
    return re.sub(
        r'(<h[1-6][^>]*\sid="([^"]+)"[^>]*>)',
        lambda m: m.group(1) + (f'<a id="{m.group(2).lower()}"></a>' if m.group(2).lower() != m.group(2) else ""),
        body,
    )


def unlink_missing(pages):
    "Links to an anchor no page has (nbdev links every backticked name, documented or not) become plain text."
    ids = {p["file"]: set(re.findall(r'\sid="([^"]+)"', p["body"])) for p in pages}
    n = 0

    def fix(m, page):
        nonlocal n
        target, frag = m.group(2) or page, m.group(3)
        if target in ids and frag not in ids[target] and unquote(frag) not in ids[target]:
            n += 1
            return m.group(4)
        return m.group(0)

    for p in pages:
        p["body"] = re.sub(
            r'<a href="(([\w.-]+\.html)?#([^"]+))"[^>]*>(.*?)</a>',
            lambda m, page=p["file"]: fix(m, page),
            p["body"],
            flags=re.S,
        )
    return n


def render_html():
    DOCS.mkdir(exist_ok=True)
    for old in DOCS.glob("*.html"):
        old.unlink()
    if (NBS / "images").is_dir():
        shutil.copytree(NBS / "images", DOCS / "images", dirs_exist_ok=True)
    shutil.copy(Path(__file__).resolve().parent / "docs_site.css", DOCS / "site.css")
    mathjax = vendor_mathjax()
    exporter = HTMLExporter(template_name="lab", exclude_input_prompt=True, exclude_output_prompt=True)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATE.parent), autoescape=True)
    page_tpl = env.get_template(TEMPLATE.name)

    pages, stripped = [], Counter()
    for src in site_order(sorted(PROC.glob("*.ipynb"))):
        nb = sanitize(nbformat.read(src, as_version=4))
        fm = frontmatter(nb)
        quarto_cells(nb, stripped)
        h = header(fm)
        if h is not None:
            nb.cells.insert(0, h)
        nbformat.validate(nb)
        full, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": fm.get("title", src.stem)}})
        style = "\n".join(re.findall(r"<style[^>]*>.*?</style>", full.split("</head>")[0], flags=re.S))
        body = re.search(r"<body[^>]*>(.*)</body>", full, flags=re.S).group(1)
        body = anchors(re.sub(r"<script[^>]*>.*?</script>", "", body, flags=re.S))
        # a `|` escaped inside a table's code span (`<\|endoftext\|>`) keeps its backslash in nbconvert's markdown
        body = re.sub(r"<code>[^<]*</code>", lambda m: m.group(0).replace("\\|", "|"), body)
        part = next((p for p, f in PARTS if f(src.stem)), "")
        pages.append(
            dict(
                file=page_name(src, fm),
                nb=src.stem,
                title=fm.get("title", src.stem),
                description=fm.get("description", ""),
                part=part,
                body=body,
                style=style,
            )
        )
    stripped["links to undocumented names (kept as text)"] += unlink_missing(pages)
    sidebar = [("", [p for p in pages if not p["part"]])] + [
        (n, [p for p in pages if p["part"] == n]) for n, _ in PARTS
    ]
    for i, p in enumerate(pages):
        out = page_tpl.render(
            page=p,
            body=jinja2.utils.markupsafe.Markup(p["body"]),
            style=jinja2.utils.markupsafe.Markup(p["style"]),
            toc=toc(p["body"]),
            sidebar=[(n, ps) for n, ps in sidebar if ps],
            prev=pages[i - 1] if i else None,
            next=pages[i + 1] if i + 1 < len(pages) else None,
            mathjax=mathjax,
            mathjax_cdn=MATHJAX_CDN,
        )
        (DOCS / p["file"]).write_text(out, encoding="utf-8")
    if stripped:
        print("docs: removed: " + ", ".join(f"{n} × {k}" for k, n in sorted(stripped.items())))
    return pages


def render_readme():
    nb = sanitize(nbformat.read(PROC / "index.ipynb", as_version=4))
    fm = frontmatter(nb)
    h = header(fm)
    if h is not None:
        nb.cells.insert(0, h)
    body, _ = MarkdownExporter().from_notebook_node(nb)
    body = re.sub(r"\]\((images/)", r"](nbs/\1", body)
    body = SITE_LINK.sub(r"\1", body)
    body = re.sub(r"\n{3,}", "\n\n", body).strip() + "\n"
    (ROOT / "README.md").write_text(body, encoding="utf-8")


def check(pages):
    names = {p["nb"] for p in pages}
    expected = {p.stem for p in NBS.glob("*.ipynb") if not p.name.startswith("_")}
    missing = expected - names
    if missing:
        sys.exit(f"docs: pages missing: {sorted(missing)}")
    figs = {p["file"]: (DOCS / p["file"]).read_text().count('src="data:image/png;base64') for p in pages}
    if sum(figs.values()) == 0:
        sys.exit("docs: no embedded figures in any page")
    print(
        f"docs: {len(pages)} pages in {DOCS.relative_to(ROOT)}/ (landing page index.html), "
        f"{sum(figs.values())} embedded figures ({', '.join(f'{n}: {k}' for n, k in figs.items() if k)})"
    )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--readme", action="store_true", help="only regenerate README.md")
    ap.add_argument("--check", action="store_true", help="verify pages and embedded figures after rendering")
    ap.add_argument(
        "--no-proc", action="store_true", help="reuse _proc/ (skip nbdev-proc-nbs) when only rendering changed"
    )
    a = ap.parse_args()
    if not a.no_proc:
        process()
    if a.readme:
        render_readme()
    else:
        pages = render_html()
        render_readme()
        if a.check:
            check(pages)
