"""A CPU-sized Linguistic Collapse study: does validation loss fall with size, and do the collapse measures follow?

    nice -n 19 env OMP_NUM_THREADS=1 .venv/bin/python benchmarks/scale_study.py --depths 1 2 --widths 64 128 256 \
        --steps 1200 --eval-every 100 --parallel 1 --experiment scale-study-long --out nbs/study/scale
        # the run of nbs/study/scale: 6 models, 1,200 steps each, one job of one thread at a time

A grid of GPT-Neo models (depths x widths, one seed) on real text (default: `tinystories-sample`, the 2 MiB
TinyStories sample shipped with the package) goes through the package's own grid
(`launch.submit_grid`, local executor, `parallel` jobs of one thread): training for `--steps` optimiser steps with
an evaluation every `--eval-every` steps and the best checkpoint by validation loss kept (`train.save_best`),
collection of that checkpoint, and the analysis. The learning rate follows a 1/width rule (`--lr` is the rate at
width `--lr-width`; `lr_width` of `submit_grid`). Then the Spearman correlation of every measure with the
validation loss and with the parameter count, for these runs and, with the same function
(`study.scale_correlations`), for the paper's published table (`--paper`: `paper`, the table shipped with the
package, or a CSV; `none` leaves it out). `nbs/33_study.ipynb` shows
the outputs.

Writes into `--out`: `study.csv` (one row per run), `correlations.csv` (ours and the paper's),
`nc_vs_loss.png` (measures against validation loss over the paper's grey cloud), `loss_vs_params.png`,
`study.json` (the command, the settings and the wall time).
"""

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import submitit  # noqa: E402
import torch  # noqa: E402

from magicarp_nb.figures import FigureLabels, final_rows, load_reference, plot_nc_vs_loss  # noqa: E402
from magicarp_nb.figures import reference_path, save_figure  # noqa: E402
from magicarp_nb.launch import GridSettings, analyze_stage, collect_stage, grid, grid_specs, submit_grid  # noqa: E402
from magicarp_nb.study import STUDY_COLUMNS, plot_loss_vs_params, scale_correlations, study_table  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def cost(run, vocab):
    "Rough compute of one step: the blocks' weights plus the LM head (to balance the waves of parallel jobs)."
    depth, width, _ = run
    return depth * 12 * width * width + 2 * vocab * width


def collect_stopped(a, runs, overrides) -> Path:
    "A grid stopped before its last step: collect every run at `--collect-step` (else its best), then analyse."
    exp = Path(a.runs_root) / a.experiment
    which = str(a.collect_step) if a.collect_step else "best"
    settings = GridSettings(preset="clm-study", overrides=overrides, experiment=a.experiment, runs_root=a.runs_root,
                            checkpoints=which, records=False, threads=1, lr_width=a.lr_width)  # fmt: skip
    specs = grid_specs(runs, settings)
    executor = submitit.AutoExecutor(folder=str(exp / "submitit"), cluster="local")
    executor.update_parameters(timeout_min=120)
    for job in executor.map_array(collect_stage, specs):
        job.result()
    return Path(analyze_stage({"experiment_dir": str(exp.absolute()), "records": False}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="tinystories-sample", help="any value of data.corpus")
    ap.add_argument("--paper", default="paper", help="'paper' (the shipped table), a CSV, or 'none'")
    ap.add_argument("--depths", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--widths", type=int, nargs="+", default=[64, 128, 256])
    ap.add_argument("--exclude", nargs="*", default=[], help="architectures DxW of the product grid to leave out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=1200, help="optimiser steps per run")
    ap.add_argument("--eval-every", type=int, default=100)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--block-size", type=int, default=128)
    ap.add_argument("--vocab-size", type=int, default=4096)
    ap.add_argument("--lr", type=float, default=3e-3, help="learning rate at width --lr-width")
    ap.add_argument("--lr-width", type=int, default=128)
    ap.add_argument("--parallel", type=int, default=2, help="runs trained (and collected) at once, one thread each")
    ap.add_argument("--runs-root", default=str(ROOT / "runs"))
    ap.add_argument("--experiment", default="scale-study")
    ap.add_argument("--out", default=str(ROOT / "nbs" / "study" / "scale"))
    ap.add_argument("--no-train", action="store_true", help="collect and analyse the runs as they are (a stopped grid)")
    ap.add_argument(
        "--collect-step", type=int, default=None, help="with --no-train: the step every run is collected at"
    )
    ap.add_argument("--started", type=float, default=None, help="with --no-train: when the grid began (epoch seconds)")
    a = ap.parse_args()
    torch.set_num_threads(1)
    t0 = time.time()
    overrides = (
        f"data.corpus={a.corpus} data.vocab_size={a.vocab_size} data.block_size={a.block_size} "
        f"train.batch_size={a.batch_size} train.max_steps={a.steps} train.epochs=1000 train.lr={a.lr} "
        f"train.eval_every={a.eval_every} train.save_best=true train.log_every=20 "
        "train.num_threads=1"
    )
    runs = [r for r in grid(a.depths, a.widths, [a.seed]) if f"{r[0]}x{r[1]}" not in a.exclude]
    runs = sorted(runs, key=lambda r: -cost(r, a.vocab_size))
    if a.no_train:  # the time of a grid trained before: from --started to its analysis.csv, as last written
        done = Path(a.runs_root) / a.experiment / "analysis.csv"
        finished = done.stat().st_mtime if a.started and done.exists() else None
        exp = collect_stopped(a, runs, overrides)
        t0 = a.started or t0
    else:
        settings = GridSettings(
            preset="clm-study",
            overrides=overrides,
            experiment=a.experiment,
            runs_root=a.runs_root,
            cluster="local",
            checkpoints="best",
            records=False,
            parallel=a.parallel,
            threads=1,
            lr_width=a.lr_width,
        )
        jobs = submit_grid(runs, settings, timeout_min=120)
        exp = Path(jobs["analyze"][0].result())
    wall = (finished if a.no_train and finished else time.time()) - t0
    table = study_table(exp, final_rows(pd.read_csv(exp / "analysis.csv")))
    paper = load_reference(reference_path(a.paper)) if a.paper != "none" else None
    corr = scale_correlations({"ours": table, **({"paper": paper} if paper is not None else {})})
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "study.csv", index=False)
    corr.to_csv(out / "correlations.csv")
    fig = plot_nc_vs_loss(
        table, columns=STUDY_COLUMNS, reference=paper, labels=FigureLabels("TinyStories sample, CPU grid")
    )
    save_figure(fig, out / "nc_vs_loss.png")
    plt.close(fig)
    plt.close(plot_loss_vs_params(table, out / "loss_vs_params.png"))
    command = f"nice -n {os.nice(0)} env OMP_NUM_THREADS=1 .venv/bin/python benchmarks/scale_study.py " + shlex.join(
        sys.argv[1:]
    )
    meta = {
        "command": command.strip(),
        "overrides": overrides,
        "collected": a.collect_step or "best",
        "wall_seconds": round(wall),
        "runs": len(runs),
        "parallel": a.parallel,
        "threads_per_run": 1,
        "lr_rule": f"lr = {a.lr} * {a.lr_width} / width",
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "niceness": os.nice(0),
    }
    (out / "study.json").write_text(json.dumps(meta, indent=1))
    with pd.option_context("display.width", 200, "display.max_columns", 30, "display.precision", 4):
        print(table.drop(columns=["run"]).to_string(index=False))
        print(corr.round(2).to_string())
    print(f"wall time {wall / 60:.1f} min; outputs in {out}")


if __name__ == "__main__":
    main()
