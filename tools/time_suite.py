"""Time the test suite cell by cell, and count the assertions it runs.

Runs the notebooks the way `nbdev_test` does (same skipped cells: `#| eval: false`, `nbdev_export()` calls and
cells flagged with a `tst_flags` word unless `--flags` names it; same worker pool), but records the seconds of
every executed cell and how many assertions ran: calls of fastcore's `test_*` helpers plus `assert` statements
executed in notebook cells (counted as run, not as written; asserts inside the package's own modules are not
counted). Prints the notebooks by time, then the slowest cells, and writes every cell to a CSV.

    python tools/time_suite.py                          # the default suite, 2 workers
    python tools/time_suite.py --flags slow             # what `make test-all` runs
    python tools/time_suite.py nbs/14_carp.ipynb --top 10
    make time-suite                                     # the same as the first line, CSV in build/suite-cells.csv
"""

import argparse
import ast
import csv
import os
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NBS = ROOT / "nbs"
SKIP_FILE = re.compile(r"^([_.]|run_)")
COUNTED = ("test_eq", "test_ne", "test_close", "test_fail", "test_is", "test_eq_type", "test_warns", "test_stdout")


class _CountAsserts(ast.NodeTransformer):
    "Put a counter call before every `assert` of a cell (functions defined in the cell included)."

    def visit_Assert(self, node):
        bump = ast.parse("__suite_count__()").body[0]
        return [ast.copy_location(bump, node), node]


TALLY = [0]  # assertions run by the notebook this worker process runs now


def _counting(fn):
    def wrapper(*args, **kwargs):
        TALLY[0] += 1
        return fn(*args, **kwargs)

    wrapper.__wrapped__, wrapper.__name__, wrapper.__doc__ = fn, fn.__name__, fn.__doc__
    return wrapper


def run_notebook(path, flags):
    "Run one notebook as nbdev_test does; (name, passed, [(cell index, first line, seconds)], assertions run)."
    import fastcore.test as ft
    from execnb.shell import CaptureShell
    from fastcore.xtras import working_directory
    from nbdev.config import get_config
    from nbdev.frontmatter import FrontmatterProc
    from nbdev.process import NBProcessor

    TALLY[0] = 0
    for name in COUNTED:  # notebooks import these names after this point, so they get the counting versions
        if not hasattr(getattr(ft, name), "__wrapped__"):
            setattr(ft, name, _counting(getattr(ft, name)))
    skip = set(get_config().tst_flags.split()) - set(flags)
    os.environ["IN_TEST"] = "1"
    sys.path.insert(0, str(ROOT))
    nb = NBProcessor(path, procs=FrontmatterProc, process=True).nb
    cells, start = [], {}

    def pre(cell):
        if cell.cell_type != "code" or "nbdev_export" + "(" in cell.source:
            return True
        direc = getattr(cell, "directives_", {}) or {}
        if direc.get("eval:", [""])[0].lower() == "false" or skip & direc.keys():
            return True
        start[cell.idx_] = time.perf_counter()
        return False

    def post(cell):
        first = next((ln for ln in cell.source.splitlines() if ln.strip() and not ln.startswith("#|")), "")
        cells.append((cell.idx_, first[:70], time.perf_counter() - start[cell.idx_]))

    main_module = sys.modules["__main__"]  # IPython's shell puts its own in its place; the pool needs this one back
    shell = CaptureShell(path)
    shell.user_ns["__suite_count__"] = lambda: TALLY.__setitem__(0, TALLY[0] + 1)
    shell.ast_transformers.append(_CountAsserts())
    ok = True
    try:
        with working_directory(path.parent):
            shell.run_all(nb, exc_stop=True, preproc=pre, postproc=post)
    except BaseException:
        sys.stderr.write(shell.prettytb(fname=path) + "\n")
        ok = False
    sys.modules["__main__"] = main_module
    return path.name, ok, cells, TALLY[0]


def _job(args):
    t0 = time.perf_counter()
    name, ok, cells, asserts = run_notebook(*args)
    return name, ok, cells, asserts, time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("notebooks", nargs="*", type=Path, help="notebooks to run (default: what make test runs)")
    ap.add_argument("--flags", nargs="*", default=[], help="tst_flags to run, e.g. slow")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--top", type=int, default=25, help="how many of the slowest cells to list")
    ap.add_argument("--csv", type=Path, default=ROOT / "build" / "suite-cells.csv")
    a = ap.parse_args(argv)
    paths = [p.resolve() for p in a.notebooks] or sorted(p for p in NBS.glob("*.ipynb") if not SKIP_FILE.match(p.name))
    t0 = time.perf_counter()
    with ProcessPoolExecutor(a.workers) as pool:
        results = list(pool.map(_job, [(p, a.flags) for p in paths]))
    wall = time.perf_counter() - t0
    rows = [(name, i, first, secs) for name, _, cells, _, _ in results for i, first, secs in cells]
    a.csv.parent.mkdir(parents=True, exist_ok=True)
    with open(a.csv, "w", newline="") as f:
        csv.writer(f).writerows(
            [("notebook", "cell", "first line", "seconds")] + [r[:3] + (f"{r[3]:.2f}",) for r in rows]
        )
    print(f"{'notebook':<28} {'s':>7} {'cells':>6} {'asserts':>8}")
    for name, ok, cells, asserts, secs in sorted(results, key=lambda r: -r[4]):
        print(f"{name:<28} {secs:7.1f} {len(cells):6d} {asserts:8d}{'' if ok else '  FAILED'}")
    total_asserts = sum(r[3] for r in results)
    print(f"{'all (wall, ' + str(a.workers) + ' workers)':<28} {wall:7.1f} {len(rows):6d} {total_asserts:8d}")
    print(f"\nslowest cells (every cell in {a.csv.relative_to(ROOT) if a.csv.is_relative_to(ROOT) else a.csv}):")
    for name, i, first, secs in sorted(rows, key=lambda r: -r[3])[: a.top]:
        print(f"{secs:7.1f}  {name}[{i}]  {first}")
    failed = [r[0] for r in results if not r[1]]
    if failed:
        print("failed: " + " ".join(failed), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
