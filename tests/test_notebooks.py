"""Every notebook is a test: its cells run top to bottom and its assertions must hold.

Each numbered notebook (and index.ipynb) is one pytest case, executed with nbdev's test runner (`make test` runs
them all with `nbdev_test`), so the suite ends with pytest's summary (`make pytest`). Runner notebooks
(run_*.ipynb) are exercised through papermill inside 31_launch.ipynb instead. Cells flagged `slow` are skipped
unless MAGICARP_TEST_FLAGS lists that flag; MAGICARP_SKIP_FLAGS names more flags to skip (`make test-portable`
skips the cells flagged `exact`: a run compared with itself, killed and resumed, is equal to the bit on any kernels).
"""

import os
from pathlib import Path

import pytest
from nbdev.test import test_nb as run_notebook_cells

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted(p for p in (ROOT / "nbs").glob("*.ipynb") if not p.name.startswith(("_", "run_")))


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook(nb):
    force = os.environ.get("MAGICARP_TEST_FLAGS", "").split()
    skip = ["slow", *os.environ.get("MAGICARP_SKIP_FLAGS", "").split()]
    ok, secs = run_notebook_cells(nb, skip_flags=skip, force_flags=force, basepath=str(ROOT))
    assert ok, f"{nb.name} failed (see the traceback above)"
