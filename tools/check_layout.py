"""Check the notebook layout: numbered notebooks form layers, and the modules they export stay small and flat.

Numbered notebooks `nbs/NN_name.ipynb` each open with a `#| default_exp <module>` cell, which maps the module
`magicarp_nb/<part>/<module>.py` (`part.module`, or a top-level `module`) to the number NN. The ranges are the
package's parts: 00-02 `core`, 03-05 `data`, 06-08 `training`, 09 `geometry`, 1x `carp`, 2x `collapse`, 3x the
top-level outputs and commands; modules are named by their dotted path below the package (`carp.objectives`).
`nbs/index.ipynb` and the runner notebooks `nbs/run_*.ipynb` are exempt from rules 1 and 5.

1. Imports point down: any code cell of a numbered notebook, exported or not, may import a package module only
   from a notebook with a lower number (or its own). An import of a module no notebook exports is a violation,
   and so is a cell that does not parse once `#|` directives and `%`/`!` lines are removed.
2. No imports inside functions in the exported modules. The one exception is an optional, heavy third-party
   dependency imported where it is needed, marked on the import line or the line above it:

       # late import: <reason>

   A package module imported inside a function is always a violation: it is how a cycle or an upward import
   hides, and rule 1 already lets every notebook import what lies below it at module level.
3. No import cycles among the exported modules (module-level imports).
4. At most 400 lines of logic per exported module: lines holding code, except docstrings, the generated
   `__all__`, and declarative lines: module- and class-level assignments of literals (word lists, tables,
   `"a b c".split()`) and annotated assignments in class bodies (dataclass fields). A module-level import counts
   as one line, however the formatter wraps its names.
5. At most 60 lines per code cell of a numbered notebook (non-blank lines, `#|` directives excluded).
6. No tracked file names the folder `shared` beside the repository, that its data were first copied from (a
   path of `../` steps, any number, then `shared`): a clone has nothing beside it, so what the project needs
   is committed in it.
7. Every printed result is shown: a code cell of a numbered notebook or `index.ipynb` that prints (a `print(` or
   `display(` call outside a function body) or ends in an expression whose value the notebook displays (a name,
   an attribute, a subscript, a comparison...) has saved outputs, which the docs show. Exported and hidden cells
   and cells not run (`#| eval: false`) are exempt. `make outputs` (or one notebook through `jupyter nbconvert
   --execute --inplace`) saves them.
8. A cell flagged `#| slow` (skipped by `make test`, run by `make test-all`) says why on the line after its
   directives: `# slow: <reason>`.
9. No tracked file holds a path of the machine it was made on: a home folder (`/home/<user>/`, `/Users/<user>/`,
   `C:\\Users\\<user>`, `/root/`), a folder under `/work/`, or the checkout's own absolute path wherever it lies.
   Such a path comes from a saved output (a warning names its module by absolute path, a recorded command keeps
   the paths it was given) and means nothing in a clone. A path that is part of a longer one or of an address
   (`~/work/x`, `https://host/home/...`) is not one. Not flagged, on purpose: `/tmp/...`. Prose and tests name
   scratch folders (`--shots-dir /tmp/shots`), and the temporary folders in saved outputs (`/tmp/tmp04qth44m`,
   a warning's `/tmp/ipykernel_14035/...py`) are made fresh for each run and name no user or checkout.
   `--fix-paths FILE...` rewrites the machine prefix in front of a repository path to nothing
   (`/work/main/.venv/lib/...` -> `.venv/lib/...`): in a notebook's saved outputs only, in any other file
   everywhere; `make outputs` runs it on the notebooks it executes.

    python tools/check_layout.py             # module-size table, then violations; exit 1 if any
    python tools/check_layout.py --quiet     # violations only
    python tools/check_layout.py --self-test # check each rule on a small made-up repository
    python tools/check_layout.py --fix-paths nbs/05_data.ipynb  # rule 9's repository paths made relative
"""

import argparse
import ast
import io
import json
import re
import subprocess
import sys
import tempfile
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = "magicarp_nb"
MAX_LOGIC, MAX_CELL = 400, 60
NUMBERED = re.compile(r"^(\d+)([a-z]*)_\w+\.ipynb$")
DEFAULT_EXP = re.compile(r"^#\|\s*default_exp\s+(\S+)", re.M)
GENERATED = re.compile(r"^# %% \.\./(nbs/\S+) #(\S+)")
OUTSIDE = re.compile(r"(?:\.\./)+shared\b")
# rule 9: a home folder or a folder under /work/ (its root), not inside a longer path or an address (see the docstring)
MACHINE_ROOT = r"(?<![\w.:~-])(?:/home/[\w.-]+(?=/)|/Users/[\w.-]+(?=/)|/root(?=/)|/work/[\w.-]+)"
MACHINE_PATH = re.compile(MACHINE_ROOT + r"|(?<![\w.:~-])[A-Za-z]:\\{1,2}Users\\{1,2}[\w.-]+")
# a machine root and the folders after it, up to a top-level folder of the repository: what --fix-paths removes
REPO_DIRS = r"(?:\.venv|magicarp_nb|nbs|runs|benchmarks|tools|tests|build|_docs|_proc)"
MACHINE_PREFIX = re.compile(r"(?<!://)" + MACHINE_ROOT + r"(?:/[\w.-]+)*?/(?=" + REPO_DIRS + r"/)")
NOT_CODE = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}


def code_cells(path):
    "(index, id, source) of each code cell."
    cells = json.loads(path.read_text())["cells"]
    return [(i, c.get("id", "?"), "".join(c["source"])) for i, c in enumerate(cells) if c["cell_type"] == "code"]


DIRECTIVE = re.compile(r"^#\|\s*([\w-]+):?\s*(.*)$")
SHOWN = (ast.Name, ast.Attribute, ast.Subscript, ast.Compare, ast.BinOp, ast.Tuple, ast.JoinedStr, ast.List, ast.Dict)


def directives(src):
    "The cell's `#|` directives, name -> value, and the index of its first other line."
    found, lines = {}, src.splitlines()
    i = 0
    while i < len(lines) and (DIRECTIVE.match(lines[i].strip()) or not lines[i].strip()):
        if m := DIRECTIVE.match(lines[i].strip()):
            found[m[1]] = m[2].strip()
        i += 1
    return found, lines[i:]


def top_level(tree):
    "The nodes of a cell outside function and class bodies."
    todo = list(ast.iter_child_nodes(tree))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))


def prints(tree):
    "Whether a cell prints or displays a value when run."
    calls = {n.func.id for n in top_level(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    last = tree.body[-1] if tree.body else None
    return bool(calls & {"print", "display"}) or (isinstance(last, ast.Expr) and isinstance(last.value, SHOWN))


def check_shown(path, problems):
    "Rules 7 and 8 for one notebook."
    for i, c in enumerate(json.loads(path.read_text())["cells"]):
        if c["cell_type"] != "code":
            continue
        src, where = "".join(c["source"]), f"nbs/{path.name} cell {i} ({c.get('id', '?')})"
        flags, rest = directives(src)
        if "slow" in flags and not (rest and rest[0].startswith("# slow: ") and len(rest[0]) > 12):
            problems.append(f"{where}: flagged slow without its reason on the next line (# slow: <reason>)")
        if {"export", "exports", "exporti", "hide"} & set(flags) or flags.get("eval") == "false":
            continue
        try:
            tree = parse_cell(src)
        except SyntaxError:
            continue  # rule 1 reports it
        if prints(tree) and not c.get("outputs"):
            problems.append(f"{where}: prints but has no saved output, so the docs show none (make outputs)")


def parse_cell(src):
    "The cell's syntax tree without directives and IPython lines (kept as blank lines so line numbers hold)."
    lines = ["" if ln.lstrip().startswith(("#|", "%", "!")) else ln for ln in src.splitlines()]
    return ast.parse("\n".join(lines))


def imports(tree, in_func=False, func=None):
    "Each (import node, inside a function?, innermost function name) in the tree."
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, in_func, func
        nested = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        name = getattr(node, "name", "<lambda>") if nested else func
        yield from imports(node, in_func or nested, name)


def package_modules(node, here: str = "", known=()):
    """The package modules an import names, dotted below the package (`carp.objectives`): `magicarp_nb.x.y`,
    `from magicarp_nb.x import y` (the module `x.y` when `known` holds it, else `x`), and relative imports from a
    module of the package `here` (`from ..core.config import X` in `carp/...`)."""
    if isinstance(node, ast.Import):
        return [a.name[len(PKG) + 1 :] for a in node.names if a.name.startswith(PKG + ".")]
    if node.level:
        parts = [PKG, *filter(None, here.split("."))]
        base = parts[: len(parts) - node.level + 1]
        full = ".".join(base + ([node.module] if node.module else []))
    else:
        full = node.module or ""
    if not (full == PKG or full.startswith(PKG + ".")):
        return []
    below = full[len(PKG) + 1 :]
    names = [a.name for a in node.names if not a.name.startswith("__")]
    found = [f"{below}.{n}" if below else n for n in names if (f"{below}.{n}" if below else n) in known or not below]
    return sorted(set(found)) if found else [below]


def number(path):
    "Sort key of a numbered notebook: 08 < 08b < 09."
    m = NUMBERED.match(path.name)
    return (int(m[1]), m[2])


def layers(root, problems):
    "module -> (number key, notebook) for each numbered notebook; its code cells alongside."
    owner, cells = {}, {}
    for nb in sorted((root / "nbs").glob("*.ipynb")):
        if not NUMBERED.match(nb.name):
            continue
        cells[nb] = code_cells(nb)
        found = [m for _, _, src in cells[nb] for m in DEFAULT_EXP.findall(src)]
        if not found:
            problems.append(f"nbs/{nb.name}: numbered notebook without a `#| default_exp` cell")
        for mod in found:
            if mod in owner:
                problems.append(f"nbs/{nb.name}: exports {mod}, already exported by nbs/{owner[mod][1].name}")
            owner.setdefault(mod, (number(nb), nb))
    return owner, cells


def check_notebooks(owner, cells, problems):
    "Rules 1 and 5."
    for nb, nb_cells in cells.items():
        mine = number(nb)
        for i, cid, src in nb_cells:
            where = f"nbs/{nb.name} cell {i} ({cid})"
            size = sum(1 for ln in src.splitlines() if ln.strip() and not ln.lstrip().startswith("#|"))
            if size > MAX_CELL:
                problems.append(f"{where}: {size} lines (limit {MAX_CELL}); split the cell")
            try:
                tree = parse_cell(src)
            except SyntaxError as e:
                problems.append(f"{where}: does not parse ({e.msg}, line {e.lineno}); imports not checked")
                continue
            for node, _, _ in imports(tree):
                for mod in package_modules(node, known=owner):
                    if mod not in owner:
                        problems.append(f"{where}: imports {mod}, which no numbered notebook exports")
                    elif owner[mod][0] >= mine and owner[mod][1] != nb:
                        problems.append(f"{where}: imports {mod} from nbs/{owner[mod][1].name}; imports point down")


def source_of(lines, lineno):
    "The notebook cell a line of a generated module comes from."
    for ln in reversed(lines[:lineno]):
        if m := GENERATED.match(ln):
            return f" ({m[1]} {m[2]})"
    return ""


def module_name(root, path) -> str:
    "The dotted name below the package of a module file: `magicarp_nb/carp/objectives.py` -> `carp.objectives`."
    return ".".join(path.relative_to(root / PKG).with_suffix("").parts)


def rel(root, path) -> str:
    "A file's path from the repository's root."
    return path.relative_to(root).as_posix()


def check_function_imports(root, path, tree, lines, problems):
    "Rule 2."
    for node, in_func, func in imports(tree):
        if not in_func:
            continue
        where = f"{rel(root, path)}:{node.lineno}{source_of(lines, node.lineno)} in {func}()"
        text = lines[node.lineno - 1].strip()
        if package_modules(node, module_name(root, path).rpartition(".")[0]):
            problems.append(f"{where}: package import inside a function: {text}")
        elif not any("late import:" in ln.partition("#")[2] for ln in lines[max(node.lineno - 2, 0) : node.lineno]):
            problems.append(f"{where}: import inside a function without `# late import: <reason>`: {text}")


def check_cycles(graph, problems):
    "Rule 3: one line per cycle (per set of modules), found by depth-first search."
    done, seen = set(), set()

    def visit(path):
        for dep in sorted(graph.get(path[-1], ())):
            if dep in path and frozenset(path[path.index(dep) :]) not in seen:
                seen.add(frozenset(path[path.index(dep) :]))
                problems.append("import cycle: " + " -> ".join(path[path.index(dep) :] + [dep]))
            elif dep not in path and dep not in done:
                visit(path + [dep])
        done.add(path[-1])

    for mod in sorted(graph):
        if mod not in done:
            visit([mod])


def is_literal(node):
    "A constant, or a tuple/list/set/dict of literals, or `'...'.split()` on a constant."
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return isinstance(node.operand, ast.Constant)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(map(is_literal, node.elts))
    if isinstance(node, ast.Dict):
        return all(k is not None and is_literal(k) for k in node.keys) and all(map(is_literal, node.values))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "split":
        return isinstance(node.func.value, ast.Constant) and all(map(is_literal, node.args)) and not node.keywords
    return False


def logic_lines(source, tree):
    "Rule 4: lines holding code, less docstrings, `__all__` and declarative lines."
    code = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in NOT_CODE:
            code.update(range(tok.start[0], tok.end[0] + 1))
    skip = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        body = node.body
        if isinstance(body[0], ast.Expr) and isinstance(getattr(body[0].value, "value", None), str):
            skip.append(body[0])
        if isinstance(node, (ast.Module, ast.ClassDef)):
            for st in body:
                named_all = isinstance(st, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in st.targets)
                in_class = isinstance(node, ast.ClassDef) and isinstance(st, ast.AnnAssign)
                literal = isinstance(st, (ast.Assign, ast.AnnAssign)) and st.value is not None and is_literal(st.value)
                if named_all or in_class or literal:
                    skip.append(st)
    for st in skip:
        code.difference_update(range(st.lineno, st.end_lineno + 1))
    return len(code - import_tails(tree))


def import_tails(tree) -> set:
    "The lines after the first of each module-level import: one counts as one line however the formatter wraps it."
    imports = [st for st in tree.body if isinstance(st, (ast.Import, ast.ImportFrom))]
    return {n for st in imports for n in range(st.lineno + 1, st.end_lineno + 1)}


def tracked_files(root):
    "The files git tracks under `root` (every file, in a folder that is not a git checkout)."
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout
        return [root / name for name in out.decode().split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        return [p for p in root.rglob("*") if p.is_file()]


def tracked_texts(root):
    "Each tracked file but this checker (it defines the patterns of rules 6 and 9) with its text (bad bytes replaced)."
    for path in tracked_files(root):
        if path.resolve() != Path(__file__).resolve() and path.is_file():
            yield path, path.read_bytes().decode("utf-8", errors="replace")


def check_outside(root, problems):
    "Rule 6: no tracked file names the folder beside the repository (this checker, which defines the pattern, aside)."
    for path, text in tracked_texts(root):
        for m in OUTSIDE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            problems.append(f"{path.relative_to(root)}:{line}: names {m[0]}, outside the repository; commit the data")


def machine_paths(text, root):
    "Each (offset, path) of rule 9 in `text`: a home or /work/ folder, or the checkout's own absolute path."
    found = [(m.start(), m[0]) for m in MACHINE_PATH.finditer(text)]
    here = str(root.resolve())
    if len(Path(here).parts) > 2:  # a checkout at /x is too short to tell from prose
        for m in re.finditer(r"(?<![\w.:~/-])" + re.escape(here) + r"(?![\w.-])", text):
            if not any(start <= m.start() < start + len(p) for start, p in found):
                found.append((m.start(), m[0]))
    return sorted(found)


def check_machine_paths(root, problems):
    "Rule 9: no tracked file names a path of the machine it was made on (this checker, which defines them, aside)."
    for path, text in tracked_texts(root):
        for start, found in machine_paths(text, root):
            line = text.count("\n", 0, start) + 1
            problems.append(
                f"{path.relative_to(root)}:{line}: names {found}, a path of the machine it was made on; "
                "make it relative to the repository (tools/check_layout.py --fix-paths FILE)"
            )


def fix_paths(path):
    "Rule 9's machine prefix before a repository folder removed: in a notebook's outputs, else anywhere; how many."
    if path.suffix != ".ipynb":
        text = path.read_text(encoding="utf-8")
        fixed, n = MACHINE_PREFIX.subn("", text)
        if n:
            path.write_text(fixed, encoding="utf-8")
        return n
    nb, n = json.loads(path.read_text(encoding="utf-8")), 0

    def fix(value):
        nonlocal n
        if isinstance(value, str):
            value, k = MACHINE_PREFIX.subn("", value)
            n += k
            return value
        if isinstance(value, list):
            return [fix(v) for v in value]
        if isinstance(value, dict):
            return {k: fix(v) for k, v in value.items()}
        return value

    for c in nb["cells"]:
        if "outputs" in c:
            c["outputs"] = fix(c["outputs"])
    if n:  # written as nbdev_clean writes a notebook: indent 1, non-ASCII kept, a final newline
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return n


def run_checks(root):
    "All violations, and (module, notebook, logic lines) for each exported module."
    problems = []
    check_outside(root, problems)
    check_machine_paths(root, problems)
    owner, cells = layers(root, problems)
    check_notebooks(owner, cells, problems)
    for nb in sorted((root / "nbs").glob("*.ipynb")):
        if NUMBERED.match(nb.name) or nb.name == "index.ipynb":
            check_shown(nb, problems)
    graph, sizes = {}, []
    modules = {module_name(root, p): p for p in sorted((root / PKG).rglob("*.py")) if not p.name.startswith("_")}
    for mod, path in modules.items():
        source = path.read_text()
        tree, lines = ast.parse(source), source.splitlines()
        check_function_imports(root, path, tree, lines, problems)
        here = mod.rpartition(".")[0]
        graph[mod] = {
            m for node, in_func, _ in imports(tree) if not in_func for m in package_modules(node, here, modules)
        }
        size = logic_lines(source, tree)
        if size > MAX_LOGIC:
            problems.append(f"{rel(root, path)}: {size} lines of logic (limit {MAX_LOGIC}); split the notebook")
        sizes.append((mod, owner[mod][1].name if mod in owner else "-", size))
    check_cycles(graph, problems)
    sizes.sort(key=lambda s: (number(owner[s[0]][1]) if s[0] in owner else (10**6, ""), s[0]))
    return problems, sizes


def self_test():
    "Check each rule on a small made-up repository: every violation expected, none other, and the sizes."

    def cells(*srcs):
        made = [s if isinstance(s, dict) else {"source": s} for s in srcs]
        return json.dumps({"cells": [{"cell_type": "code", "id": f"c{i}", **s} for i, s in enumerate(made)]})

    files = {
        "nbs/00_base.ipynb": cells("#| default_exp base", "#| export\nfrom magicarp_nb.top import f", "x = 1\n" * 61),
        "nbs/01_mid.ipynb": cells("#|default_exp mid", "from magicarp_nb.base import g\nimport magicarp_nb.mid as M"),
        "nbs/02_top.ipynb": cells("#| default_exp top", "%%time\n!ls\nfrom magicarp_nb import mid, ghost", "def f(:"),
        "nbs/03_end.ipynb": cells("#| default_exp end", "#| hide\n" + "y = 2\n" * 59 + "from . import top"),
        "nbs/04_show.ipynb": cells(
            "#| default_exp show",
            "for i in range(2):\n    print(i)",
            "def f():\n    print(1)\n\nf",
            {"source": "print(2)", "outputs": [{"output_type": "stream", "text": "2"}]},
            "#| hide\nprint(3)",
            "#| slow\nx = 1",
            "#| slow\n# slow: a whole epoch of a real model\ny = 1\ny == 1 or print(y)",
            "#| export\ndef g():\n    print(4)",
        ),
        "nbs/run_all.ipynb": cells("from magicarp_nb.end import f\n" + "z = 3\n" * 61),
        # subpackages: modules named by their dotted path below the package, relative imports resolved from theirs
        "nbs/04b_up.ipynb": cells("#| default_exp part.up", "from magicarp_nb.part import deep"),
        "nbs/05_deep.ipynb": cells(
            "#| default_exp part.deep", "from magicarp_nb.part import deep\nfrom magicarp_nb.part.deep import q"
        ),
        "magicarp_nb/part/__init__.py": "",
        "magicarp_nb/part/deep.py": "from ..top import f\nfrom . import up\n\n"
        "def q():\n    from ..end import e  # late import: no\n",
        "magicarp_nb/part/up.py": "from .deep import (\n    q,\n)\n",
        "magicarp_nb/base.py": "from .top import f\n\ndef g():\n    # late import: heavy\n    import numpy\n",
        "magicarp_nb/mid.py": "def h():\n    import json\n    from magicarp_nb.base import g  # late import: no\n",
        "magicarp_nb/top.py": '"Doc."\nfrom .base import g\n__all__ = ["f"]\nWORDS = "a b".split()\n'
        'T = {"a": (1, -2)}\nN = len(WORDS)\nclass C:\n    x: int = opt(1)\n    y = [1]\n\n'
        "def f():\n    'Doc.'\n    return [g()]\n",
        "magicarp_nb/end.py": "import pandas\n\ndef e():\n    import torch  # late import: heavy\n",
        "README.md": "Read\n`../../" + "shared/data/x.csv`.\n",  # split: this file is tracked too
        # rule 9: a home folder and a /work/ folder are flagged, an address, ~/..., /tmp/... and bare /work/ are not
        "records/out.json": '{"cmd": "x --runs-root /home/ann/proj/runs/x"}\nhttps://host.org/home/ann/x ~/work/x\n'
        "--shots-dir /tmp/shots /tmp/tmpab12cd/x the /work/ folder\n/Users/ann/data/y.csv\n",
        "nbs/run_paths.ipynb": cells(
            {"source": "x = 1", "outputs": [{"output_type": "stream", "text": ["/work/main/.venv/lib/t.py:1: W\n"]}]},
            {
                "source": "open('/root/data.csv')",
                "outputs": [{"output_type": "stream", "text": "file:///work/m/nbs/a"}],
            },
        ),
    }
    expected = [
        "nbs/00_base.ipynb cell 1 (c1): imports top from nbs/02_top.ipynb",
        "nbs/00_base.ipynb cell 2 (c2): 61 lines",
        "nbs/02_top.ipynb cell 1 (c1): imports ghost, which no numbered notebook exports",
        "nbs/02_top.ipynb cell 2 (c2): does not parse",
        "magicarp_nb/mid.py:2 in h(): import inside a function without",
        "magicarp_nb/mid.py:3 in h(): package import inside a function",
        "import cycle: base -> top -> base",
        "nbs/04b_up.ipynb cell 1 (c1): imports part.deep from nbs/05_deep.ipynb; imports point down",
        "magicarp_nb/part/deep.py:5 in q(): package import inside a function",
        "import cycle: part.deep -> part.up -> part.deep",
        "README.md:2: names ../../" + "shared, outside the repository",
        "nbs/04_show.ipynb cell 1 (c1): prints but has no saved output",
        "nbs/04_show.ipynb cell 2 (c2): prints but has no saved output",
        "nbs/04_show.ipynb cell 5 (c5): flagged slow without its reason",
        "nbs/04_show.ipynb cell 6 (c6): prints but has no saved output",
        "records/out.json:1: names /home/ann, a path of the machine",
        "records/out.json:4: names /Users/ann, a path of the machine",
        "nbs/run_paths.ipynb:",  # three times, below
    ]
    with tempfile.TemporaryDirectory() as tmp:
        files["notes.txt"] = f"made in\n{tmp}/runs/a\n"  # the checkout's own path, wherever it lies
        expected.append(f"notes.txt:2: names {Path(tmp).resolve()}, a path of the machine")
        for name, text in files.items():
            (Path(tmp) / name).parent.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / name).write_text(text)
        problems, sizes = run_checks(Path(tmp))
        in_nb = sorted(p.split(": names ")[1].split(",")[0] for p in problems if p.startswith("nbs/run_paths"))
        fixed = [fix_paths(Path(tmp) / name) for name in ("nbs/run_paths.ipynb", "records/out.json")]
        after = []
        check_machine_paths(Path(tmp), after)
        outputs = json.loads((Path(tmp) / "nbs/run_paths.ipynb").read_text())["cells"][0]["outputs"]
    unmatched = [p for p in problems if not any(p.startswith(e) for e in expected)]
    missing = [e for e in expected if not any(p.startswith(e) for p in problems)]
    if in_nb != ["/root", "/work/m", "/work/main"]:
        missing.append(f"rule 9 in nbs/run_paths.ipynb: /root, /work/m, /work/main; found {in_nb}")
    # --fix-paths: a repository path in an output made relative; the file:// address, the source and a path
    # outside the repository (/Users/ann/data) kept, so still flagged
    left = sorted(p.split(": names ")[0] for p in after)  # the notebook rewritten: its line numbers changed
    left = [x.split(":")[0] if x.startswith("nbs/") else x for x in left]
    if fixed != [1, 1] or outputs[0]["text"] != [".venv/lib/t.py:1: W\n"]:
        missing.append(f"--fix-paths: 1 path in each file, .venv/lib/t.py; got {fixed}, {outputs[0]['text']}")
    if left != ["nbs/run_paths.ipynb", "nbs/run_paths.ipynb", "notes.txt:2", "records/out.json:4"]:
        missing.append(f"after --fix-paths: the source, the address, notes.txt and /Users/ann left; got {left}")
    counts = {mod: size for mod, _, size in sizes}
    ok = (
        not unmatched
        and not missing
        and counts == {"base": 3, "mid": 3, "top": 5, "end": 3, "part.deep": 4, "part.up": 1}
    )
    for line in [f"unexpected: {p}" for p in unmatched] + [f"missing: {e}" for e in missing]:
        print(f"self-test {line}")
    print(f"self-test: logic lines {counts}; " + ("all rules behave as expected" if ok else "FAILED"))
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--quiet", action="store_true", help="print violations only")
    parser.add_argument("--self-test", action="store_true", help="check the rules on a small made-up repository")
    parser.add_argument("--fix-paths", nargs="+", metavar="FILE", type=Path,
                        help="rule 9: make machine paths before a repository folder relative")  # fmt: skip
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    if args.fix_paths:
        missing = [p for p in args.fix_paths if not p.is_file()]
        if missing:
            print(f"error: --fix-paths: no file {missing[0]}", file=sys.stderr)
            return 1
        fixed = {path: fix_paths(path) for path in args.fix_paths}
        for path, n in fixed.items():
            if n:
                print(f"{path}: {n} machine path(s) made relative")
        files = sum(1 for n in fixed.values() if n)
        print(f"--fix-paths: {sum(fixed.values())} machine path(s) made relative in {files} file(s)")
        return 0
    problems, sizes = run_checks(ROOT)
    if not args.quiet:
        print(f"{'module':<22}{'notebook':<30}logic lines (limit {MAX_LOGIC})")
        for mod, nb, size in sizes:
            print(f"{mod:<22}{nb:<30}{size:>5}{'  over' if size > MAX_LOGIC else ''}")
        print()
    for line in problems:
        print(line)
    if not args.quiet:
        print(f"{len(problems)} violation(s)" if problems else f"layout ok: {len(sizes)} modules checked")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
