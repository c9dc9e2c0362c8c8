"""Render the documentation without Quarto, and README.md from nbs/index.ipynb.

nbdev's notebook processing (`nbdev_proc_nbs`: frontmatter, hidden export cells, show_doc) writes _proc/;
each processed notebook is then converted with nbconvert's HTMLExporter into _docs/<name>.html (figures are
embedded as data URIs, so each page stands alone), with an index page linking them.

    python tools/render_docs.py            # _docs/*.html
    python tools/render_docs.py --readme   # README.md only
    python tools/render_docs.py --check    # render, then fail unless every page exists and figures are embedded
"""

import argparse
import html
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter, MarkdownExporter

ROOT = Path(__file__).resolve().parent.parent
NBS, PROC, DOCS = ROOT / "nbs", ROOT / "_proc", ROOT / "_docs"


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
    import yaml

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
    exe = Path(sys.executable).parent / "nbdev_proc_nbs"
    r = subprocess.run(
        [str(exe) if exe.exists() else "nbdev_proc_nbs", "--force"], cwd=ROOT, capture_output=True, text=True
    )
    if r.returncode:
        sys.exit(f"nbdev_proc_nbs failed:\n{r.stdout[-3000:]}{r.stderr[-6000:]}")


def render_html():
    DOCS.mkdir(exist_ok=True)
    if (NBS / "images").is_dir():
        shutil.copytree(NBS / "images", DOCS / "images", dirs_exist_ok=True)
    exporter = HTMLExporter(template_name="lab")
    pages = []
    for src in sorted(PROC.glob("*.ipynb")):
        nb = sanitize(nbformat.read(src, as_version=4))
        fm = frontmatter(nb)
        h = header(fm)
        if h is not None:
            nb.cells.insert(0, h)
        nbformat.validate(nb)
        body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": fm.get("title", src.stem)}})
        name = "home" if src.stem == "index" else src.stem
        (DOCS / f"{name}.html").write_text(body, encoding="utf-8")
        pages.append((name, fm.get("title", src.stem), fm.get("description", "")))
    items = "\n".join(f'<li><a href="{n}.html">{html.escape(t)}</a> — {html.escape(d)}</li>' for n, t, d in pages)
    (DOCS / "index.html").write_text(
        f"<!doctype html><html><head><meta charset='utf-8'><title>magicarp_nb</title>"
        f"</head><body><h1>magicarp_nb</h1><ul>{items}</ul></body></html>",
        encoding="utf-8",
    )
    return pages


def render_readme():
    nb = sanitize(nbformat.read(PROC / "index.ipynb", as_version=4))
    fm = frontmatter(nb)
    h = header(fm)
    if h is not None:
        nb.cells.insert(0, h)
    body, _ = MarkdownExporter().from_notebook_node(nb)
    body = re.sub(r"\]\((images/)", r"](nbs/\1", body)
    body = re.sub(r"\n{3,}", "\n\n", body).strip() + "\n"
    (ROOT / "README.md").write_text(body, encoding="utf-8")


def check(pages):
    names = {p[0] for p in pages}
    expected = {("home" if p.stem == "index" else p.stem) for p in NBS.glob("*.ipynb") if not p.name.startswith("_")}
    missing = expected - names
    if missing:
        sys.exit(f"docs: pages missing: {sorted(missing)}")
    figs = {n: (DOCS / f"{n}.html").read_text().count('src="data:image/png;base64') for n in names}
    if sum(figs.values()) == 0:
        sys.exit("docs: no embedded figures in any page")
    print(
        f"docs: {len(pages)} pages in {DOCS.relative_to(ROOT)}/, "
        f"{sum(figs.values())} embedded figures ({', '.join(f'{n}: {k}' for n, k in figs.items() if k)})"
    )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--readme", action="store_true", help="only regenerate README.md")
    ap.add_argument("--check", action="store_true", help="verify pages and embedded figures after rendering")
    a = ap.parse_args()
    process()
    if a.readme:
        render_readme()
    else:
        pages = render_html()
        render_readme()
        if a.check:
            check(pages)
