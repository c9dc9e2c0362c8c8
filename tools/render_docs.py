"""Render the documentation site without Quarto, and README.md from nbs/index.ipynb.

nbdev's notebook processing (`nbdev_proc_nbs`: frontmatter, hidden export cells, show_doc) writes _proc/. Each
processed notebook is then cleaned the way Quarto would (cell directives, attribute syntax, links) and converted
with nbconvert's HTMLExporter; a Jinja page template (tools/docs_page.html.j2) adds the sidebar (grouped by part,
with the notebooks' numbers), the page's table of contents and previous/next links. Pages keep nbdev's names
(`output-file`, e.g. figures.html), so nbdev's doc links become relative links, and a notebook named in the prose
(`21_collect`) links to its page. Figures are embedded as data URIs. One stylesheet for all pages: nbconvert's
JupyterLab CSS, written once to notebook.css, then tools/docs_site.css and nbs/styles.css as site.css (the latter:
signatures' wrapping, the hint on a table that scrolls sideways); tools/docs_site.js (figure zoom,
search box) as site.js. Maths: MathJax 3 from the npm package, unpacked into _docs/mathjax/ at build time (never
committed, the CDN as fallback), loaded only by pages with maths. Search: Pagefind (`pagefind[bin]`, a dev extra)
indexes the pages into _docs/pagefind/.

show_doc's entries are rewritten from the objects themselves: the signature as written in the source (`int | None`,
`dict` for a NamedTuple's field rather than `ForwardRef('dict')`, with the field's comment, the real value of a
`default_factory`, `class Name(...)` for classes, a `**kwargs` comment on its own line), the help of a config
dataclass's fields as their comments, and the module's file instead of a source link to a code host nothing
publishes; nbdev's "Call self as a function." under a function without a docstring is dropped. A property reads
as one (`property scale: torch.Tensor | None`), not as a function. Every signature is a `<pre class="signature">`
of highlighted lines, one parameter a line past 88 characters; a line too long for the box wraps with its
continuation indented (nbs/styles.css), so nothing is cut or scrolled out of sight; `code` in a parameter's comment
is code, not backticks. nbdev links every backticked name it has indexed to the first module defining it: such a
link is kept only when the name has one definition, the link goes to it, and the name is not also an option's
value (a `Literal[...]` or `choices=` string of the package, e.g. `hard_negatives`, `linear`) named on another
page; else it stays as code. Heading ids are made unique on a page (`-2`, `-3`, the table of contents follows);
their `¶` links are left out of the search index (`data-pagefind-ignore`).

Quarto cell directives honoured: `hide`, `include: false` (cell dropped), `echo: false` (output only),
`output: false` (source only), `output: asis` (the markdown output rendered as markdown), `fig-alt` (alt text of
the cell's images); every other `#|` line is dropped from the shown source. Removed from outputs (and counted):
stderr streams (tqdm bars, library warnings, the kernel's warnings), error outputs (tracebacks), widget
outputs (tqdm's notebook bars), and the second copy of a figure a cell both returned and left open (its value and
matplotlib's inline display, byte for byte the same image).

Runners (`run_*`, papermill notebooks never executed in nbs/) show an executed record when one is committed as
nbs/records/<runner>.ipynb (the executed copy papermill writes into a run folder): each code cell gets the outputs of
the record's code cell with the same source (white space ignored), papermill's injected parameters follow the
`parameters` cell, and a note under the title names the record and its papermill command, followed by the record's
markdown cells tagged `record-note` (which run it is, when that is not the run the runner describes). Records are
read as data (nbformat, nothing runs) and cleaned like every page's outputs; their images get the runner's title and
a number as alt text. A runner cell the record lacks is shown without outputs (a warning); with more than half of
them missing the record is stale and `--check` fails.

    python tools/render_docs.py            # _docs/*.html
    python tools/render_docs.py --readme   # README.md only
    python tools/render_docs.py --check    # render, then fail unless every page exists and figures are embedded
    python tools/render_docs.py --no-proc  # reuse _proc/ from the last run
"""

import argparse
import ast
import copy
import dataclasses
import functools
import html
import importlib.util
import inspect
import json
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import typing
from collections import Counter
from functools import lru_cache
from pathlib import Path
from urllib.parse import unquote

import jinja2
import nbformat
import yaml
from nbconvert import HTMLExporter, MarkdownExporter
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

ROOT = Path(__file__).resolve().parent.parent
NBS, PROC, DOCS = ROOT / "nbs", ROOT / "_proc", ROOT / "_docs"
RECORDS = NBS / "records"  # executed papermill copies of the runners: nbs/records/run_train.ipynb, ...
RECORD_PARAMS = "# parameters of this record (papermill -p)"
RECORD_NOTE_TAG = "record-note"  # a markdown cell of a record with this tag is shown in the note under the title
TEMPLATE = Path(__file__).resolve().parent / "docs_page.html.j2"
# nbdev writes doc links to the published site (settings.ini's doc_host + doc_baseurl); locally they are relative.
PUBLISHED = re.compile(
    r"https?://magicarp-nb\.github\.io/magicarp_nb/|(?<=\]\()/(?=[\w-]+\.html)|(?<=href=\")/(?=[\w-]+\.html)"
)
# the README, read on a code host where no site is published, keeps documented names as code rather than links that
# lead nowhere there
SITE_LINK = re.compile(
    r"\[(`[^`\]]+`)\]\((?:https?://magicarp-nb\.github\.io/magicarp_nb)?/[\w-]+\.html(?:#[^)\s]*)?\)"
)
MATHJAX_NPM = "mathjax@3.2.2"
MATHJAX_CDN = "https://cdn.jsdelivr.net/npm/mathjax@3.2.2/es5/tex-svg.js"
PARTS = [  # (sidebar heading, which notebooks)
    ("Foundation", lambda s: s[:1] == "0"),
    ("CARP", lambda s: s[:1] == "1"),
    ("Collapse", lambda s: s[:1] == "2" and not s.startswith("29")),
    ("Plugins", lambda s: s.startswith("29")),  # every built-in task, objective, source: above both workflows
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
    exe = Path(sys.executable).parent / "nbdev_proc_nbs"
    r = subprocess.run(
        [str(exe) if exe.exists() else "nbdev_proc_nbs", "--force"], cwd=ROOT, capture_output=True, text=True
    )
    if r.returncode:
        sys.exit(f"nbdev_proc_nbs failed:\n{r.stdout[-3000:]}{r.stderr[-6000:]}")


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


def clean_markdown(md, page=None, counts=None):
    """Quarto attribute syntax stripped, nbdev's links checked (`resolve_links`), links to the published site made
    relative, signatures with links as HTML."""
    md = re.sub(r"(\]\([^)\s]*\))\{[^}\n]*\}", r"\1", md)  # [text](url){target="_blank" ...}
    md = resolve_links(md, page, Counter() if counts is None else counts)
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


def _output_alt(o, mime):
    "The alt text an output carries itself (`metadata.alt`, or `metadata[mime].alt`), else None."
    meta = o.get("metadata", {})
    alt = meta.get(mime, {}).get("alt") if isinstance(meta.get(mime), dict) else None
    alt = alt or meta.get("alt")
    return str(alt) if isinstance(alt, (str, int, float)) and str(alt).strip() else None


def _with_alt(o, opts, default_alt):
    "An image output as an <img> with alt text (the cell's `fig-alt`, the output's, else `default_alt()`)."
    mime = next((m for m in ("image/png", "image/jpeg") if m in o.get("data", {})), None)
    if mime is None or ("fig-alt" not in opts and default_alt is None):
        return o
    alt = str(opts["fig-alt"]) if "fig-alt" in opts else _output_alt(o, mime) or default_alt()
    data = "".join(o.data[mime].split())  # nbconvert ignores alt metadata
    img = f'<img src="data:{mime};base64,{html.escape(data)}" alt="{html.escape(alt)}">'
    return nbformat.v4.new_output("display_data", data={"text/html": img})


def _image(o):
    "The base64 PNG or JPEG of an output, without white space, or None."
    data = o.get("data", {})
    img = data.get("image/png") or data.get("image/jpeg")
    return "".join(img.split()) if isinstance(img, str) else None


def clean_outputs(outputs, opts, stripped: Counter, default_alt=None):
    """Outputs without stderr, tracebacks and widgets (counted in `stripped`); images get the cell's `fig-alt`. A
    figure a cell both returned and left open comes twice, byte for byte (its value, then matplotlib's inline
    display at the cell's end): it is shown once."""
    shown = {_image(o) for o in outputs if o.output_type == "display_data"} - {None}
    outs = []
    for o in outputs:
        if o.output_type == "execute_result" and _image(o) in shown:
            stripped["figure returned and displayed (shown once)"] += 1
        elif o.output_type == "stream" and o.name == "stderr":
            stripped[_stderr_kind(o.text)] += 1
        elif o.output_type == "error":
            stripped["error (traceback)"] += 1
        elif "application/vnd.jupyter.widget-view+json" in o.get("data", {}):
            stripped["widget (notebook progress bar)"] += 1
        else:
            if o.output_type == "execute_result":
                o.execution_count = None
            if "application/javascript" in o.get("data", {}):  # never run on a page (nor in nbs/)
                stripped["javascript output"] += 1
                del o.data["application/javascript"]
                if not o.data:
                    continue
            outs.append(_with_alt(o, opts, default_alt))
    return outs


def quarto_cells(nb, stripped: Counter, page=None, default_alt=None):
    "Apply the cell directives Quarto would, and remove noise from outputs (counted in `stripped`)."
    cells = []
    for c in nb.cells:
        if c.cell_type == "markdown":
            c.source = clean_markdown(c.source, page, stripped)
            cells.append(c)
            continue
        if c.cell_type != "code":
            continue
        opts, src = directives(c.source)
        if opts.get("hide") or opts.get("include") is False or "hide_input" in c.metadata.get("tags", []):
            continue
        outs = [] if opts.get("output") is False else clean_outputs(c.outputs, opts, stripped, default_alt)
        if opts.get("output") == "asis":
            for o in outs:
                md = o.get("data", {}).get("text/markdown") or (o.text if o.output_type == "stream" else "")
                if md:
                    cells.append(
                        nbformat.v4.new_markdown_cell(clean_markdown(fix_showdoc(md, page, stripped), page, stripped))
                    )
            continue
        c.outputs = [] if opts.get("output") is False else outs
        c.execution_count = None
        c.source = "" if opts.get("echo") is False else src
        if c.source or c.outputs:
            cells.append(c)
    nb.cells = cells
    return nb


# ---------------------------------------------------------------- executed records of the runners
def rel(path):
    path = Path(path)
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def read_record(path):
    "A runner's executed record, read as data (nbformat: nothing in it runs); exits naming the file if not a notebook."
    try:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        if not all(isinstance(c.get("source"), str) for c in nb.cells):
            raise ValueError("a cell without source")
    except Exception as e:  # not JSON, not a notebook, or not one nbformat 4 validates
        why = (str(e).strip().splitlines() or [""])[0][:200]
        sys.exit(
            f"docs: {rel(path)} is not a valid notebook ({type(e).__name__}: {why}); a record is the executed copy "
            f"papermill writes (papermill nbs/<runner>.ipynb <run folder>/<runner>.ipynb -p ...)"
        )
    return nb


def _same(src):
    "A code cell's source as compared with a record's: without white space."
    return re.sub(r"\s+", "", src)


def _shown_path(p):
    "A path of the record's metadata as the note shows it: relative to the repository (no local folder names)."
    p = Path(str(p))
    if not p.is_absolute():
        return str(p)
    if p.is_relative_to(ROOT):
        return str(p.relative_to(ROOT))
    top = max((i for i, part in enumerate(p.parts) if part in ("nbs", "runs")), default=None)
    return str(Path(*p.parts[top:])) if top is not None else p.name


def _injected_parameters(record):
    "The parameters papermill injected, read from the `injected-parameters` cell's literals (nothing runs), or {}."
    cell = next((c for c in record.cells if "injected-parameters" in c.metadata.get("tags", [])), None)
    out = {}
    try:
        tree = ast.parse(cell.source) if cell is not None else None
    except SyntaxError:
        return out
    for node in tree.body if tree is not None else []:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
    return out


def _one_line(text):
    text = " ".join(str(text).replace("`", "'").split())  # one code span on one line
    return text if len(text) <= 300 else text[:299] + "…"


def _papermill_args(params):
    args = []
    for k, v in params.items():
        scalar = v is None or isinstance(v, (str, int, float, bool))
        args += ["-p", str(k), str(v)] if scalar else ["-y", str(k), json.dumps(v)]
    return args


def record_command(record):
    "The papermill command that wrote the record, from its metadata.papermill, as one line; None without it."
    pm = record.metadata.get("papermill")
    if not isinstance(pm, dict) or not (pm.get("input_path") and pm.get("output_path")):
        return None
    params = pm.get("parameters") if isinstance(pm.get("parameters"), dict) else _injected_parameters(record)
    cmd = ["papermill", _shown_path(pm["input_path"]), _shown_path(pm["output_path"])] + _papermill_args(params)
    return _one_line(shlex.join(cmd))


def record_made(record):
    """How the record was made, for its note: the papermill command (metadata.papermill), else its run folder, else
    the parameters of its injected cell (nbdev_clean removes metadata.papermill); '' if nothing says."""
    pm = record.metadata.get("papermill")
    pm = pm if isinstance(pm, dict) else {}
    params = pm.get("parameters") if isinstance(pm.get("parameters"), dict) else _injected_parameters(record)
    if record_command(record):
        return f": `{record_command(record)}`"
    if pm.get("output_path"):
        return f" of the run folder `{_one_line(Path(_shown_path(pm['output_path'])).parent)}`"
    if params:
        return f" made with `{_one_line(shlex.join(_papermill_args(params)))}`"
    return ""


def record_note(record, path):
    """The markdown note under a runner's title: what the page shows and where the record is, then the text of the
    record's markdown cells tagged `record-note` (what a reader should know about this record, e.g. which run)."""
    notes = [
        c.source.strip()
        for c in record.cells
        if c.cell_type == "markdown" and RECORD_NOTE_TAG in c.metadata.get("tags", [])
    ]
    return nbformat.v4.new_markdown_cell(
        "\n\n".join([f"This page shows an executed record{record_made(record)}, saved in `{rel(path)}`."] + notes)
    )


def _injected_cell(cell):
    src = f"{RECORD_PARAMS}\n{cell.source.strip()}"
    return nbformat.v4.new_code_cell(src, outputs=copy.deepcopy(cell.outputs))


def apply_record(nb, record, runner, path):
    "Each code cell of the runner with the outputs of the record's cell of the same source; what was (not) matched."
    by_source, injected = {}, None
    for c in record.cells:
        if c.cell_type != "code":
            continue
        if "injected-parameters" in c.metadata.get("tags", []):
            injected = c
        else:
            by_source.setdefault(_same(c.source), []).append(c)
    cells, missing, total = [], [], 0
    for c in nb.cells:
        cells.append(c)
        if c.cell_type != "code":
            continue
        total += 1
        hits = by_source.get(_same(c.source))
        if hits:
            c.outputs = copy.deepcopy(hits.pop(0).outputs)
        else:
            c.outputs = []
            first = next((line for line in c.source.splitlines() if line.strip()), "")
            missing.append(first)
            print(
                f"docs: warning: {runner}: no cell of {rel(path)} has the source of the cell {first[:80]!r} "
                "(the runner changed after the record was made): shown without outputs",
                file=sys.stderr,
            )
        if injected is not None and "parameters" in c.metadata.get("tags", []):
            cells.append(_injected_cell(injected))
            injected = None
    if injected is not None:  # a runner without a `parameters` cell: its parameters before its first code cell
        first = next((i for i, c in enumerate(cells) if c.cell_type == "code"), len(cells))
        cells.insert(first, _injected_cell(injected))
    nb.cells = cells
    return dict(file=str(rel(path)), total=total, missing=missing)


def runner_record(nb, src, fm):
    "The record of a runner applied to its processed notebook: (what was matched, alt text maker, note) or Nones."
    path = RECORDS / src.name
    if not src.stem.startswith("run_") or not path.is_file():
        return None, None, None
    record = read_record(path)
    info = apply_record(nb, record, src.stem, path)
    info["command"] = record_command(record) or f"papermill nbs/{src.name} <run folder>/{src.name} -p ..."
    if 2 * len(info["missing"]) > info["total"]:
        print(
            f"docs: warning: {rel(path)} is stale: {len(info['missing'])} of the {info['total']} code cells of "
            f"{src.stem} have no match in it; re-run it ({info['command']}) and save the executed copy there",
            file=sys.stderr,
        )
    n = 0

    def alt():
        nonlocal n
        n += 1
        return f"{fm.get('title', src.stem)}, figure {n}"

    pm = record.metadata.get("papermill")
    if isinstance(pm, dict) and pm.get("exception"):
        print(f"docs: warning: {rel(path)} records a run that failed (metadata.papermill.exception)", file=sys.stderr)
    return info, alt, record_note(record, path)


# ---------------------------------------------------------------- show_doc's entries, from the objects
SOURCE_LINK = re.compile(r"\[source\]\([^)\s]*\)(\{[^}\n]*\})?\n*")
SHOWDOC_HEAD = re.compile(r"^(#{2,4}) (.+?)\s*$", re.M)
SIG_BLOCK = re.compile(r"```python\n(.*?)```", re.S)
NO_DOC = "*Call self as a function.*"
ANNO_PREFIX = re.compile(r"\b(?:magicarp_nb\.(?:\w+\.)*|pathlib\.|typing\.|collections\.abc\.)(?=[A-Za-z_])")


@lru_cache(None)
def modidx_syms() -> dict:
    "module → {qualified name: (page#anchor, file)}: nbdev's index of every symbol, magicarp_nb/_modidx.py, read once."
    spec = importlib.util.spec_from_file_location("_modidx", ROOT / "magicarp_nb" / "_modidx.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.d["syms"]


@lru_cache(None)
def definitions():
    "A documented name (`final_rows`, `Trainer.fit`, `magicarp_nb.figures.final_rows`) → its definitions' page#anchor."
    out = {}
    for module, syms in modidx_syms().items():
        for full, (doc, _) in syms.items():
            for name in (full, full[len(module) + 1 :]):
                out.setdefault(name, set()).add(doc.lower())
    return out


@lru_cache(None)
def option_values():
    """The strings a config option or command flag takes (`Literal[...]` choices, `choices=[...]`) in the package:
    a backticked `hard_negatives` or `linear` in the prose names such a value, not the function of that name."""
    out = set()
    for py in sorted((ROOT / "magicarp_nb").rglob("*.py")):
        for node in ast.walk(ast.parse(py.read_text(encoding="utf-8"))):
            found = _choices(node)
            out |= {c.value for c in ast.walk(found) if isinstance(c, ast.Constant) and isinstance(c.value, str)}
    return out


def _choices(node):
    "The part of a syntax node that lists an option's values: `Literal[...]`'s, `choices=`'s, `{'choices': ...}`'s."
    if isinstance(node, ast.Subscript) and getattr(node.value, "id", getattr(node.value, "attr", "")) == "Literal":
        return node.slice
    if isinstance(node, ast.keyword) and node.arg == "choices":
        return node.value
    if isinstance(node, ast.Dict):
        return next((v for k, v in zip(node.keys, node.values) if getattr(k, "value", None) == "choices"), ast.Tuple())
    return ast.Tuple()


NBDEV_LINK = re.compile(r"\[`([^`\]]+)`\]\(https?://magicarp-nb\.github\.io/magicarp_nb/([\w.-]+\.html)#([^)\s]+)\)")


def resolve_links(md, page, counts: Counter):
    """nbdev links every backticked name it finds in its index, to the first module that defines it, whatever the
    prose means: a link is kept only when the name has one definition, the link goes to it, and the name is not
    also a value of an option (`hard_negatives`, a `hardness` mode; `linear`, a projection) on another page.
    Dropped links stay as code."""

    def fix(m):
        name, target = m.group(1), f"{m.group(2)}#{m.group(3)}".lower()
        bare = name.replace("\\_", "_").removesuffix("()")
        defs = definitions().get(bare)
        if not defs:
            return m.group(0)
        value_elsewhere = bare in option_values() and m.group(2) != page
        why = ("ambiguous (defined more than once)" if len(defs) > 1
               else "pointing elsewhere than its definition" if target not in defs
               else "an option's value, linked off its definition's page" if value_elsewhere
               else None)  # fmt: skip
        if why is None:
            return m.group(0)
        counts[f"links of names {why} kept as code"] += 1
        return f"`{name}`"

    return NBDEV_LINK.sub(fix, md)


@lru_cache(None)
def symbols():
    "(page, qualified name) → (module, file) of every symbol nbdev indexed in magicarp_nb/_modidx.py."
    out = {}
    for module, syms in modidx_syms().items():
        for full, (doc, py) in syms.items():
            out[(doc.split("#")[0], full[len(module) + 1 :])] = (module, py)
    return out


def lookup(page, name):
    "The object documented as `name` on `page` (its module from nbdev's index), or None."
    name = name.replace("\\_", "_").strip("`")
    hit = symbols().get((page, name))
    if hit is None:
        hits = [v for (_, q), v in symbols().items() if q == name]
        hit = hits[0] if len(set(hits)) == 1 else None
    if hit is None:
        return None, None
    try:
        obj = importlib.import_module(hit[0])
        for part in name.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        return None, None
    return obj, hit[1]


def _anno(a):
    if a is inspect.Parameter.empty:
        return ""
    if isinstance(a, typing.ForwardRef):  # a NamedTuple's field under `from __future__ import annotations`
        a = a.__forward_arg__
    text = a if isinstance(a, str) else inspect.formatannotation(a)
    return ANNO_PREFIX.sub("", text).replace("NoneType", "None")


def _default(v):
    if isinstance(v, type) or inspect.isfunction(v) or inspect.isbuiltin(v):
        return v.__qualname__
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        try:
            same = v == type(v)()
        except TypeError:
            same = False
        return f"{type(v).__name__}()" if same else f"{type(v).__name__}(…)"
    r = repr(v)
    return r if len(r) <= 80 else r[:77] + "…"


def _nbdev_comments(sig, names):
    "Parameter → comment in nbdev's rendering of a signature (the comment of a line is its last parameter's)."
    out, ret = {}, ""
    for line in sig.splitlines():
        code, sep, comment = line.partition(" # ")
        if not sep:
            continue
        if code.lstrip().startswith(")"):
            ret = comment.strip()
            continue
        found = [(m.start(), n) for n in names for m in re.finditer(rf"(?<![\w.]){re.escape(n)}\s*(?=[:=,]|$)", code)]
        if found:
            out[max(found)[1]] = comment.strip()
    return out, ret


def _field_help(cls):
    "Field → its help text and range (`opt(..., help=…, ge=…)` metadata) of a dataclass."
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        return {}
    try:
        from magicarp_nb.core.settings import range_text
    except ImportError:
        range_text = None
    out = {}
    for f in dataclasses.fields(cls):
        text = f.metadata.get("help", "")
        rng = range_text(f.metadata.get("bounds", {})) if range_text else ""
        out[f.name] = f"{text} ({rng})" if text and rng else text or rng
    return out


def _namedtuple_help(cls):
    "Field → the comment after it in the class's source, for a NamedTuple (what docments would give a function)."
    if not (isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")):
        return {}
    try:
        src = inspect.getsource(cls)
    except (OSError, TypeError):
        return {}
    fields = re.finditer(r"^    (\w+)\s*:[^\n#]*#\s*(.+)$", src, re.M)
    return {m.group(1): m.group(2).strip() for m in fields if m.group(1) in cls._fields}


def _factory_defaults(cls):
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        return {}
    out = {}
    for f in dataclasses.fields(cls):
        if f.default_factory is not dataclasses.MISSING:
            try:
                out[f.name] = _default(f.default_factory())
            except Exception:
                out[f.name] = f"{getattr(f.default_factory, '__qualname__', 'factory')}()"
    return out


SIG_WIDTH = 88  # characters of code that fit the signature box at 1280 px; a longer signature takes a line a parameter


def property_signature(obj, name):
    "`property name: type` for a property (its getter's return annotation), as a reader of the class uses it."
    fget = obj.fget if isinstance(obj, property) else obj.func
    try:
        ret = inspect.signature(fget).return_annotation
    except (TypeError, ValueError):
        ret = inspect.Signature.empty
    short = name.rsplit(".", 1)[-1]
    return f"property {short}" + ("" if ret is inspect.Signature.empty else f": {_anno(ret)}")


def signature(obj, name, nbdev_sig):
    "The signature of `obj` as written in its source, with nbdev's parameter comments; None if inspect cannot."
    is_class = isinstance(obj, type)
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        if is_class:  # an exception class with the constructor of a builtin base: its bases say what it is
            return f"class {obj.__name__}({', '.join(b.__qualname__ for b in obj.__bases__)})"
        return None
    params = list(sig.parameters.values())
    if not is_class and "." in name and params and params[0].name in ("self", "cls"):
        params = params[1:]
    names = [("**" if p.kind is p.VAR_KEYWORD else "*" if p.kind is p.VAR_POSITIONAL else "") + p.name for p in params]
    comments, ret_comment = _nbdev_comments(nbdev_sig, names)
    var_kw = next((n for n in names if n.startswith("**")), None)
    if ret_comment and var_kw and var_kw not in comments:  # nbdev puts a trailing `**kwargs  # …` comment here
        comments[var_kw], ret_comment = ret_comment, ""
    helps, factories = _field_help(obj) | _namedtuple_help(obj), _factory_defaults(obj)
    items = []
    for i, (p, n) in enumerate(zip(params, names)):
        if p.kind is p.KEYWORD_ONLY and not any(q.kind in (q.VAR_POSITIONAL, q.KEYWORD_ONLY) for q in params[:i]):
            items.append(("*", ""))
        text = n + (f": {_anno(p.annotation)}" if p.annotation is not p.empty else "")
        if p.default is not p.empty:
            d = factories.get(p.name) or _default(p.default)
            text += f" = {d}" if p.annotation is not p.empty else f"={d}"
        items.append((text, comments.get(n) or helps.get(p.name, "")))
        if p.kind is p.POSITIONAL_ONLY and (i + 1 == len(params) or params[i + 1].kind is not p.POSITIONAL_ONLY):
            items.append(("/", ""))
    ret = "" if is_class or sig.return_annotation is sig.empty else f" -> {_anno(sig.return_annotation)}"
    kw = "class" if is_class else "async def" if inspect.iscoroutinefunction(obj) else "def"
    short = name.rsplit(".", 1)[-1]
    one_line = f"{kw} {short}({', '.join(t for t, _ in items)}){ret}"
    if not any(c for _, c in items) and len(one_line) <= SIG_WIDTH:
        return one_line + ("  # " + ret_comment if ret_comment else "")
    lines = [f"{kw} {short}("]
    lines += [f"    {t},{'  # ' + c if c else ''}" for t, c in items]
    lines.append(f"){ret}" + ("  # " + ret_comment if ret_comment else ""))
    return "\n".join(lines)


MD_LINK = re.compile(r"\[`?([^\]`]+)`?\]\(([^)\s]+)\)")


def _comment_html(text):
    "A signature's comment as HTML: markdown links as links, `code` as code (never raw backticks)."
    out, last = [], 0
    for m in re.finditer(r"\[`?([^\]`]+)`?\]\(([^)\s]+)\)|`([^`]+)`", text):
        out.append(html.escape(text[last : m.start()]))
        if m.group(3) is not None:
            out.append(f"<code>{html.escape(m.group(3))}</code>")
        else:
            out.append(f'<a href="{html.escape(m.group(2))}"><code>{html.escape(m.group(1))}</code></a>')
        last = m.end()
    return "".join(out) + html.escape(text[last:])


def signature_html(sig):
    """A signature as one `<pre class="signature">`, a block per line, highlighted: a line too long for the box
    wraps (site.css) with its continuation indented under the line's code, so nothing is cut or scrolled away."""
    lines = []
    for line in sig.strip("\n").splitlines():
        code, sep, comment = line.partition("  # ")
        if not sep:  # nbdev's own rendering: `name:type=x, # comment`
            code, sep, comment = line.partition(" # ")
        indent = len(code) - len(code.lstrip(" "))
        parts = [highlight(code, PythonLexer(), HtmlFormatter(nowrap=True)).rstrip("\n")]
        if code.startswith("property "):  # what the name is, coloured as `def` and `class` are
            parts[0] = parts[0].replace('<span class="nb">property</span>', '<span class="k">property</span>', 1)
        if sep:
            parts.append(f'  <span class="c1"># {_comment_html(comment)}</span>')
        lines.append(f'<span class="sig-line" style="--sig-indent: {indent}ch">{"".join(parts)}</span>')
    return f'<pre class="signature highlight"><code class="language-python">{"".join(lines)}</code></pre>\n'


def fix_showdoc(md, page, counts: Counter):
    "A show_doc entry with its signature from the object and its module file instead of a dead source link."
    if not md.startswith("---") or not SHOWDOC_HEAD.search(md):
        return md
    md = resolve_links(SOURCE_LINK.sub("", md), page, counts)
    head = SHOWDOC_HEAD.search(md)
    obj, py = lookup(page, head.group(2)) if page else (None, None)
    if py:
        md = md[: head.start()] + f'<span class="site-src">{py}</span>\n\n' + md[head.start() :]
    if obj is not None and not getattr(obj, "__doc__", None) and NO_DOC in md:
        md = md.replace(NO_DOC, "")  # nbdev's text for a function without a docstring (inspect's inherited doc)
        counts["entries without a docstring (no 'Call self as a function.')"] += 1
    block = SIG_BLOCK.search(md)
    if block is None:
        return md
    if obj is None:
        print(f"docs: {page}: no object for show_doc entry {head.group(2)!r}", file=sys.stderr)
    name = head.group(2).replace("\\_", "_")
    if isinstance(obj, (property, functools.cached_property)):
        new = property_signature(obj, name)
    else:
        new = None if obj is None else signature(obj, name, block.group(1))
    if new is None:
        counts["entries whose signature stays nbdev's"] += 1
    else:
        counts["properties shown as properties" if new.startswith("property ") else "signatures from the source"] += 1
    return md[: block.start()] + signature_html(new or block.group(1)) + md[block.end() :]


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


def unique_ids(body):
    "Every id on the page unique: a repeated heading gets `-2`, `-3` (its ¶ link follows); a repeated anchor goes."
    seen = Counter()

    def heading(m):
        hid = m.group(3)
        seen[hid] += 1
        if seen[hid] == 1:
            return m.group(0)
        new = f"{hid}-{seen[hid]}"
        while new in seen:
            new += "-2"
        seen[new] += 1
        inner = m.group(5).replace(f'href="#{hid}"', f'href="#{new}"')
        return f'<h{m.group(1)}{m.group(2)} id="{new}"{m.group(4)}>{inner}</h{m.group(1)}>'

    body = re.sub(r'<h([1-6])([^>]*?)\sid="([^"]+)"([^>]*)>(.*?)</h\1>', heading, body, flags=re.S)
    heading_ids, kept = set(re.findall(r'<h[1-6][^>]*\sid="([^"]+)"', body)), set()

    def anchor(m):  # the lower-case anchors of `anchors`: dropped where a heading or an earlier anchor has the id
        if m.group(1) in heading_ids or m.group(1) in kept:
            return ""
        kept.add(m.group(1))
        return m.group(0)

    return re.sub(r'<a id="([^"]+)"></a>', anchor, body)


NB_REF = re.compile(r"(?<![\w/.-])(?:nbs/)?((?:\d\d[a-z]?|run)_[a-z][a-z0-9_]*)(?:\.ipynb)?(?![\w-])")


def link_notebooks(body, files, here):
    "Notebook names in the prose (`21_collect`, 12_gradcache, nbs/08_trainer.ipynb) as links to their pages."
    tokens = re.split(r"(<[^>]+>)", body)
    out, skip, n, i = [], 0, 0, 0

    def target(text):
        m = NB_REF.fullmatch(text.strip())
        return files.get(m.group(1)) if m else None

    while i < len(tokens):
        t = tokens[i]
        tag = re.match(r"<(/?)(\w+)", t)
        if tag and tag.group(2) in ("a", "pre", "script", "style", "h1", "h2", "h3", "h4", "h5", "h6", "svg"):
            skip += -1 if tag.group(1) else (0 if t.endswith("/>") else 1)
            out.append(t)
        elif not skip and t == "<code>" and i + 2 < len(tokens) and tokens[i + 2] == "</code>":
            f = target(html.unescape(tokens[i + 1]))
            if f and f != here:
                out.append(f'<a href="{f}"><code>{tokens[i + 1]}</code></a>')
                n += 1
            else:
                out.append(t + tokens[i + 1] + tokens[i + 2])
            i += 3
            continue
        elif not skip and not t.startswith("<") and NB_REF.search(t):

            def sub(m):
                nonlocal n
                f = files.get(m.group(1))
                if not f or f == here:
                    return m.group(0)
                n += 1
                return f'<a href="{f}">{m.group(0)}</a>'

            out.append(NB_REF.sub(sub, t))
        elif tag and tag.group(2) == "code" and not tag.group(1):
            # a code span that is not a notebook name: keep it and what is inside as they are
            j = tokens.index("</code>", i) if "</code>" in tokens[i:] else i
            out.extend(tokens[i : j + 1])
            i = j + 1
            continue
        else:
            out.append(t)
        i += 1
    return "".join(out), n


def unlink_commands(body):
    "A `magicarp` subcommand named in a list of commands is not the Python function of that name: no link."
    cli = (ROOT / "magicarp_nb" / "cli.py").read_text(encoding="utf-8")
    commands = set(re.findall(r'add_parser\("([\w-]+)"', cli))
    n = 0

    def fix(m):
        nonlocal n
        before = re.sub(r"<[^>]+>", "", body[max(0, m.start() - 400) : m.start()])
        if m.group(1) in commands and re.search(r"command", before.rsplit(".", 1)[-1]):
            n += 1
            return f"<code>{m.group(1)}</code>"
        return m.group(0)

    return re.sub(r'<a href="[^"]*"><code>([\w-]+)</code></a>', fix, body), n


MATHS = re.compile(r"\$\$|\\\(|\\\[|(?<![\w$\\])\$[^$\s][^$\n]*?\$(?![\w$])")


def has_maths(body):
    "Whether the page's text (outside code, styles and scripts) has TeX for MathJax to typeset."
    text = re.sub(r"<(pre|code|style|script)[^>]*>.*?</\1>", "", body, flags=re.S)
    return bool(MATHS.search(re.sub(r"<[^>]+>", "", text)))


def search_index(required: bool):
    "Pagefind's index of the rendered pages in _docs/pagefind/ (its UI and data); False if pagefind is missing."
    try:
        import pagefind  # noqa: F401
    except ImportError:
        msg = "docs: pagefind not installed (pip install 'pagefind[bin]'): no search index"
        if required:
            sys.exit(msg)
        print(msg, file=sys.stderr)
        return False
    shutil.rmtree(DOCS / "pagefind", ignore_errors=True)
    r = subprocess.run(
        [sys.executable, "-m", "pagefind", "--site", str(DOCS), "--include-characters", "_", "--quiet"],
        capture_output=True,
        text=True,
    )
    if r.returncode or not (DOCS / "pagefind" / "pagefind-ui.js").exists():
        sys.exit(f"docs: pagefind failed on {DOCS}:\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
    return True


def page_notebook(src, stripped: Counter):
    "A processed notebook as its page shows it (a runner with its record's outputs), its frontmatter and record."
    nb = sanitize(nbformat.read(src, as_version=4))
    fm = frontmatter(nb)
    record, default_alt, note = runner_record(nb, src, fm)
    quarto_cells(nb, stripped, page_name(src, fm), default_alt)
    h = header(fm)
    if h is not None:
        nb.cells.insert(0, h)
    if note is not None:  # right under the title and summary
        nb.cells.insert(0 if h is None else 1, note)
    try:
        nbformat.validate(nb)
    except nbformat.ValidationError as e:
        where = f" (with the outputs of {record['file']})" if record else ""
        sys.exit(f"docs: {src.relative_to(ROOT)}{where} is not a valid notebook: {str(e).splitlines()[0]}")
    return nb, fm, record


def render_html(required_search=False):
    DOCS.mkdir(exist_ok=True)
    for old in DOCS.glob("*.html"):
        old.unlink()
    shutil.rmtree(DOCS / "shots", ignore_errors=True)  # screenshots of older checks; they go to build/docs-shots/
    for folder in ("images", "study"):  # figures that markdown cells show by relative path
        if (NBS / folder).is_dir():
            shutil.copytree(
                NBS / folder, DOCS / folder, dirs_exist_ok=True, ignore=shutil.ignore_patterns("*.csv", "*.json")
            )
    site_css = (Path(__file__).resolve().parent / "docs_site.css").read_text(encoding="utf-8")
    (DOCS / "site.css").write_text(
        f"{site_css}\n/* nbs/styles.css */\n{(NBS / 'styles.css').read_text(encoding='utf-8')}"
    )
    shutil.copy(Path(__file__).resolve().parent / "docs_site.js", DOCS / "site.js")
    mathjax = vendor_mathjax()
    exporter = HTMLExporter(template_name="lab", exclude_input_prompt=True, exclude_output_prompt=True)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATE.parent), autoescape=True)
    page_tpl = env.get_template(TEMPLATE.name)

    pages, stripped, styles = [], Counter(), []
    for src in site_order(sorted(PROC.glob("*.ipynb"))):
        nb, fm, record = page_notebook(src, stripped)
        full, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": fm.get("title", src.stem)}})
        style = "\n".join(re.findall(r"<style[^>]*>(.*?)</style>", full.split("</head>")[0], flags=re.S))
        if style not in styles:
            styles.append(style)
        body = re.search(r"<body[^>]*>(.*)</body>", full, flags=re.S).group(1)
        body = anchors(re.sub(r"<script[^>]*>.*?</script>", "", body, flags=re.S))
        # a heading's ¶ link is for clicking, not reading: search results would show `Figures¶`
        body = body.replace('<a class="anchor-link" href=', '<a class="anchor-link" data-pagefind-ignore href=')
        # a `|` escaped inside a table's code span (`<\|endoftext\|>`) keeps its backslash in nbconvert's markdown
        body = re.sub(r"<code>[^<]*</code>", lambda m: m.group(0).replace("\\|", "|"), body)
        body = unique_ids(body)
        part = next((p for p, f in PARTS if f(src.stem)), "")
        num = re.match(r"(\d+[a-z]?)_", src.stem)
        pages.append(
            dict(
                file=page_name(src, fm),
                nb=src.stem,
                num=num.group(1) if num else "",
                title=fm.get("title", src.stem),
                description=fm.get("description", ""),
                part=part,
                body=body,
                record=record,
            )
        )
    if len(styles) > 1:  # every page gets the same nbconvert template; one differing would be styled wrongly
        sys.exit(f"docs: nbconvert wrote {len(styles)} different stylesheets; expected one for all pages")
    (DOCS / "notebook.css").write_text(styles[0] if styles else "", encoding="utf-8")
    stripped["links to undocumented names (kept as text)"] += unlink_missing(pages)
    files = {p["nb"]: p["file"] for p in pages}
    for p in pages:
        p["body"], n = link_notebooks(p["body"], files, p["file"])
        stripped["notebook names linked to their page"] += n
        p["body"], n = unlink_commands(p["body"])
        stripped["command names unlinked from functions of the same name"] += n
        p["maths"] = has_maths(p["body"])
    sidebar = [("", [p for p in pages if not p["part"]])] + [
        (n, [p for p in pages if p["part"] == n]) for n, _ in PARTS
    ]
    for i, p in enumerate(pages):
        out = page_tpl.render(
            page=p,
            body=jinja2.utils.markupsafe.Markup(p["body"]),
            toc=toc(p["body"]),
            sidebar=[(n, ps) for n, ps in sidebar if ps],
            prev=pages[i - 1] if i else None,
            next=pages[i + 1] if i + 1 < len(pages) else None,
            mathjax=mathjax,
            mathjax_cdn=MATHJAX_CDN,
        )
        (DOCS / p["file"]).write_text(out, encoding="utf-8")
    if stripped:
        print("docs: " + ", ".join(f"{n} × {k}" for k, n in sorted(stripped.items())))
    search_index(required_search)
    return pages


def html_table_as_markdown(page):
    "A DataFrame's HTML output (its `<style>` and `<table>`) as a markdown table, which a code host renders."
    table = re.search(r"<table.*?</table>", page, flags=re.S)
    if table is None:
        return page

    def cells(row):
        found = re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, flags=re.S)
        return [html.unescape(re.sub(r"<[^>]+>", "", c)).strip().replace("|", "\\|") for c in found]

    rows = [cells(r) for r in re.findall(r"<tr[^>]*>(.*?)</tr>", table.group(0), flags=re.S)]
    rows = [r for r in rows if any(r)]
    if not rows:
        return page
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    if not rows[0][0]:  # the DataFrame's index: row numbers say nothing here
        rows, width = [r[1:] for r in rows], width - 1
    md = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * width]
    md += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(md) + "\n"


def render_readme():
    nb = sanitize(nbformat.read(PROC / "index.ipynb", as_version=4))
    fm = frontmatter(nb)
    h = header(fm)
    if h is not None:
        nb.cells.insert(0, h)
    for c in nb.cells:  # a DataFrame's HTML (77 lines with its <style>) as a short markdown table
        for o in c.get("outputs", []):
            data = o.get("data", {})
            if "text/html" in data and "<table" in data["text/html"]:
                data["text/markdown"] = html_table_as_markdown(data.pop("text/html"))
                data.pop("text/plain", None)
    body, _ = MarkdownExporter().from_notebook_node(nb)
    body = re.sub(r"\]\(((?:images|study)/)", r"](nbs/\1", body)
    body = SITE_LINK.sub(r"\1", body)
    # a notebook named in the prose links to its file, which a reader of the repository can open
    stems = {p.stem for p in NBS.glob("*.ipynb")}
    body = re.sub(
        r"(?<!\[)`((?:\d\d[a-z]?|run)_[a-z][a-z0-9_]*)`(?!\]|\()",
        lambda m: f"[`{m.group(1)}`](nbs/{m.group(1)}.ipynb)" if m.group(1) in stems else m.group(0),
        body,
    )
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
    maths = [p["file"] for p in pages if p["maths"]]
    print(
        f"docs: {len(pages)} pages in {DOCS.relative_to(ROOT)}/ (landing page index.html), "
        f"{sum(figs.values())} embedded figures ({', '.join(f'{n}: {k}' for n, k in figs.items() if k)}); "
        f"MathJax on {len(maths)} pages with maths ({', '.join(maths)})"
    )
    if not (DOCS / "pagefind" / "pagefind.js").exists():
        sys.exit("docs: no search index in _docs/pagefind/")
    check_records(pages)


def check_records(pages):
    "Every record in nbs/records/ shown on its runner's page, and none stale (more than half its cells unmatched)."
    used = {p["record"]["file"]: p for p in pages if p.get("record")}
    problems = []
    for path in sorted(RECORDS.glob("*.ipynb")) if RECORDS.is_dir() else []:
        p = used.get(str(rel(path)))
        if p is None:
            problems.append(
                f"{rel(path)} is the record of no runner: a record is named after its runner (nbs/run_*.ipynb), "
                "e.g. nbs/records/run_train.ipynb"
            )
            continue
        info = p["record"]
        if 2 * len(info["missing"]) > info["total"]:
            problems.append(
                f"{info['file']} is stale: {len(info['missing'])} of the {info['total']} code cells of {p['nb']} "
                f"have no match in it (first: {info['missing'][0][:60]!r}): the runner changed since the record "
                f"was made; re-run it ({info['command']}) and save the executed copy as {info['file']}"
            )
        elif f"saved in <code>{info['file']}</code>" not in (DOCS / p["file"]).read_text(encoding="utf-8"):
            problems.append(f"{p['file']} does not show its record {info['file']} (no note under the title)")
    if problems:
        sys.exit("docs: executed records:\n  " + "\n  ".join(problems))
    if used:
        shown = ", ".join(f"{p['file']} ← {f} ({p['record']['total'] - len(p['record']['missing'])}/"
                          f"{p['record']['total']} cells)" for f, p in used.items())  # fmt: skip
        print(f"docs: executed records shown: {shown}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--readme", action="store_true", help="only regenerate README.md")
    ap.add_argument("--check", action="store_true", help="verify pages and embedded figures after rendering")
    ap.add_argument(
        "--no-proc", action="store_true", help="reuse _proc/ (skip nbdev_proc_nbs) when only rendering changed"
    )
    a = ap.parse_args()
    if not a.no_proc:
        process()
    if a.readme:
        render_readme()
    else:
        pages = render_html(required_search=a.check)
        render_readme()
        if a.check:
            check(pages)
