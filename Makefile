# magicarp_nb: every command a developer or CI needs. `make help` lists them.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# The CPU build of torch on disk. Any install that lets pip choose torch pulls a multi-GB CUDA build.
TORCH  := torch==2.13.0
SEED   ?= 12
RUN    ?= runs/clm-tiny/02x0128_s$(SEED)
export PATH := $(abspath $(BIN)):$(PATH)

PORTABLE := 08_trainer or 09_collapse or 09b_measures or 10c_objective_base or 11_objectives or 11c_distillation or 12_gradcache or 14_carp or 20_clm or 21_collect

.PHONY: help setup lab train test pytest test-portable test-all time-suite export check-export clean check-clean outputs docs docs-check readme style layout

help:  ## list the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

# pip compiles the environment's 20,000 files one at a time (77 s of a 2-core install); compileall on every core
# (43 s). Compiled they must be: where PYTHONDONTWRITEBYTECODE=1 (CI's machines) nothing imported is ever cached
$(BIN)/.installed: settings.ini setup.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --no-compile $(PIP_ARGS) "$(TORCH)" -e ".[dev]"
	$(BIN)/python -m compileall -q -j 0 $(VENV)/lib > /dev/null 2>&1 || true  # as pip: a file of Python 3.12 syntax fails
	@touch $@

setup: $(BIN)/.installed  ## create .venv with the package (editable), torch pinned to the CPU build

# JupyterLab on the notebooks, with .venv's kernel; as root (a container) it needs --allow-root
LAB_ARGS ?=
lab: setup  ## open the notebooks in JupyterLab (.venv's python3 kernel); LAB_ARGS="--no-browser --port 8890" for a remote machine
	$(BIN)/jupyter lab --ServerApp.root_dir=nbs $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

train: setup  ## the main job: train the clm-tiny preset with SEED (default 12) into runs/clm-tiny/02x0128_s$(SEED)
	mkdir -p $(RUN)
	$(BIN)/papermill nbs/run_train.ipynb $(RUN)/run_train.ipynb -p seed $(SEED) -p run_dir $(RUN)

# Tests run two notebooks at a time, one torch thread each: two OpenMP teams on two cores stall on each other.
TEST_ENV := OMP_NUM_THREADS=1 MKL_NUM_THREADS=1

test: setup  ## run every notebook as a test with nbdev's runner (nbdev_test, 2 workers; cells flagged slow skipped)
	$(TEST_ENV) $(BIN)/nbdev_test --n_workers 2 --timing --skip_file_re '^([_.]|run_)'

pytest: setup  ## the same notebooks as pytest cases (a summary line; select with ARGS="-k 20_clm")
	$(BIN)/pytest -n 2 -q tests/ $(ARGS)

test-portable: setup  ## the numerics-sensitive notebooks again on torch's portable kernels (a tolerance that holds on one CPU only fails here), but the cells flagged exact
	$(TEST_ENV) ATEN_CPU_CAPABILITY=default MAGICARP_SKIP_FLAGS=exact $(BIN)/pytest -n 2 -q tests/test_notebooks.py -k "$(PORTABLE)"

test-all: setup  ## the tests including cells flagged slow
	$(TEST_ENV) $(BIN)/nbdev_test --n_workers 2 --timing --flags slow --skip_file_re '^([_.]|run_)'

time-suite: setup  ## time every cell of the suite as `make test` runs it (FLAGS=slow for test-all's cells): notebooks, then the slowest cells; all cells in build/suite-cells.csv
	$(TEST_ENV) $(BIN)/python tools/time_suite.py --workers 2 $(if $(FLAGS),--flags $(FLAGS))

export: setup  ## regenerate magicarp_nb/*.py from the notebooks
	$(BIN)/nbdev_export

check-export: setup  ## fail if the modules are not what nbdev_export makes of the notebooks
	$(BIN)/nbdev_export
	git diff --exit-code -- magicarp_nb pyproject.toml settings.ini
	@test -z "$$(git status --porcelain -- magicarp_nb)" || (git status --porcelain -- magicarp_nb; echo "untracked modules"; exit 1)

clean: setup  ## strip notebook metadata that should not be committed (nbdev_clean)
	$(BIN)/nbdev_clean

check-clean: setup  ## fail if any notebook is not clean
	$(BIN)/nbdev_clean
	git diff --exit-code -- nbs

outputs: setup  ## re-execute the numbered notebooks and index in place so their saved outputs (docs) are current; machine paths in them made relative
	cd nbs && export PYTHONWARNINGS="ignore:IProgress not found"; for nb in index.ipynb [0-9]*.ipynb; do \
	  ../$(BIN)/jupyter nbconvert --to notebook --execute --inplace --ExecutePreprocessor.timeout=1800 $$nb || exit 1; done
	$(BIN)/nbdev_clean
	$(BIN)/python tools/check_layout.py --fix-paths nbs/index.ipynb nbs/[0-9]*.ipynb

docs: setup  ## render the notebooks to the site in _docs/ without Quarto (index.html is the landing page; search index; and README.md)
	$(BIN)/python tools/render_docs.py --check

docs-check: setup  ## open every page of _docs/ in headless Chromium (apt-get install -y chromium) at 1280 and 390 px, search it, check README.md; fail on what looks broken; screenshots in build/docs-shots/ (SHOTS=no: none, as CI does)
	$(BIN)/python tools/check_docs.py $(if $(filter no,$(SHOTS)),--no-shots)

readme: setup  ## regenerate README.md from nbs/index.ipynb
	$(BIN)/python tools/render_docs.py --readme

layout: setup  ## fail if an import points to a higher-numbered notebook, exported code imports inside a function, a module or cell is too long, or a tracked file names a folder outside the repository or a path of the machine it was made on
	$(BIN)/python tools/check_layout.py --self-test
	$(BIN)/python tools/check_layout.py

style: setup  ## format and lint notebooks, tools and tests with ruff, then re-export
	$(BIN)/ruff format nbs tools tests benchmarks
	$(BIN)/ruff check --fix nbs tools tests benchmarks
	$(BIN)/nbdev_export
