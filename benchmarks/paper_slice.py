"""A slice of Linguistic Collapse's grid on a CPU, named the paper's way and set beside its published table.

    nice -n 10 env OMP_NUM_THREADS=1 .venv/bin/python benchmarks/paper_slice.py
        # the run of nbs/study/slice: depth {1, 2} x width {64, 128} x weight decay {0 (n), 0.1 (L)}, one epoch

Each run is the `clm-study` preset (GPT-Neo with the paper's alternating global and local attention, window 256)
on the TinyStories sample shipped with the package (`data.corpus=tinystories-sample`), in blocks of 2,048 tokens
(the paper's: its `run_clm.py` leaves the block at the tokenizer's 2,048), batches of 4 blocks, one epoch, the
weight decay of its name, and a learning rate of 3e-3 * 128 / width. Runs are named by
`run_names.paper_run_name` (`01x0064_01L`: depth 1, width 64, 1 epoch, weight decay 0.1), trained by
`magicarp train`, collected by `magicarp collect RUN` (their last checkpoint; the checkpoint index `@0` is the
paper's for a one-epoch run) and analysed by `magicarp analyze`, each as a subprocess, one at a time. A run that
has finished (`summary.json`) is not trained again, nor a collected one collected again.

Writes into `--out`: `slice.csv` (one row per run: axes, parameters, loss and the study's measures), `deltas.csv`
(each run beside the published row of the same name, where the paper has one: `figures.reference_deltas`),
`correlations.csv` (Spearman's, ours and the paper's 230 models: `study.scale_correlations`), `nc_vs_loss.png`
(our runs over the paper's grey cloud) and `slice.json` (the command, the settings, the seconds of each step this
invocation ran; a run's training seconds are also in `slice.csv`, from its `summary.json`).
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from magicarp_nb.figures import FigureLabels, final_rows, load_reference, plot_nc_vs_loss, reference_deltas  # noqa: E402
from magicarp_nb.figures import reference_path, save_figure  # noqa: E402
from magicarp_nb.core.run_names import paper_axes, paper_run_name  # noqa: E402
from magicarp_nb.collapse.analyze import find_stats  # noqa: E402
from magicarp_nb.study import STUDY_COLUMNS, scale_correlations  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def timed(cmd: list, log: Path) -> float:
    "Run `cmd` with its output appended to `log`; its wall seconds (a failure stops the study, naming the log)."
    t0 = time.time()
    with open(log, "a") as f:
        f.write(f"\n$ {shlex.join(cmd)}\n")
        f.flush()
        rc = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT)
    if rc != 0:
        raise SystemExit(f"failed ({rc}): {shlex.join(cmd)}; see {log}")
    return round(time.time() - t0, 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depths", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--widths", type=int, nargs="+", default=[64, 128])
    ap.add_argument("--decays", type=float, nargs="+", default=[0.0, 0.1])
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--block-size", type=int, default=2048)
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument(
        "--lr", type=float, default=3e-3, help="learning rate at width --lr-width (rate = lr * lr_width / width)"
    )
    ap.add_argument("--lr-width", type=int, default=128)
    ap.add_argument("--experiment", default=str(ROOT / "runs" / "paper-slice"))
    ap.add_argument("--out", default=str(ROOT / "nbs" / "study" / "slice"))
    a = ap.parse_args()
    exp, out = Path(a.experiment), Path(a.out)
    exp.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    seconds = {}
    for w in a.widths:
        for d in a.depths:
            for wd in a.decays:
                name = paper_run_name(d, w, a.epochs, wd)
                run, log = exp / name, exp / f"{name}.log"
                overrides = [
                    "data.corpus=tinystories-sample", f"data.block_size={a.block_size}",
                    f"train.batch_size={a.batch_size}", f"train.epochs={a.epochs}", f"train.weight_decay={wd:g}",
                    f"model.n_layer={d}", f"model.width={w}", f"train.lr={a.lr * a.lr_width / w:.6g}",
                    f"experiment={exp.name}", f"run_name={name}", "train.num_threads=1",
                ]  # fmt: skip
                if not (run / "summary.json").exists():
                    print(f"[{time.strftime('%H:%M:%S')}] training {name}", flush=True)
                    cmd = [str(BIN / "magicarp"), "train", "clm-study", *overrides, "--run-dir", str(run)]
                    seconds[f"{name} train"] = timed(cmd, log)
                if not find_stats(run):
                    print(f"[{time.strftime('%H:%M:%S')}] collecting {name}", flush=True)
                    seconds[f"{name} collect"] = timed(
                        [str(BIN / "magicarp"), "collect", str(run), "--no-progress"], log
                    )
    timed([str(BIN / "magicarp"), "analyze", str(exp)], exp / "analyze.log")
    analysis = pd.read_csv(exp / "analysis.csv")
    final = final_rows(analysis)
    axes = pd.DataFrame([paper_axes(r) for r in final["run"]])
    cols = ["model", "depth", "width", "n_params", "val_loss", "val_acc", *[c for c in STUDY_COLUMNS if c in final]]
    table = pd.concat([final[cols], axes], axis=1)
    table = table[["model", "depth", "width", "weight_decay", "epochs", *cols[3:]]]
    summaries = [json.loads((exp / r / "summary.json").read_text()) for r in final["run"]]
    table["steps"] = [s["step"] for s in summaries]
    table["train_s"] = [round(s["seconds"]) for s in summaries]  # the training's wall seconds, as its run recorded
    paper = load_reference(reference_path("paper"))
    deltas = reference_deltas(analysis, paper)
    corr = scale_correlations({"ours": table, "paper": paper})
    table.to_csv(out / "slice.csv", index=False)
    deltas.to_csv(out / "deltas.csv", index=False)
    corr.to_csv(out / "correlations.csv")
    axes_said = " x ".join(f"{k} {{{', '.join(f'{v:g}' for v in vs)}}}" for k, vs in
                           (("depth", a.depths), ("width", a.widths), ("weight decay", a.decays)))  # fmt: skip
    title = f"the paper's recipe on a CPU: {axes_said}, {a.epochs} epoch(s)"
    fig = plot_nc_vs_loss(final, columns=STUDY_COLUMNS, reference=paper, labels=FigureLabels(title))
    save_figure(fig, out / "nc_vs_loss.png")
    plt.close(fig)
    old = json.loads((out / "slice.json").read_text()) if (out / "slice.json").exists() else {}
    meta = {
        "command": f"nice -n {os.nice(0)} env OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')} .venv/bin/python "
        + "benchmarks/paper_slice.py "
        + shlex.join(sys.argv[1:]),
        "preset": "clm-study",
        "block_size": a.block_size,
        "batch_size": a.batch_size,
        "lr_rule": f"lr = {a.lr} * {a.lr_width} / width",
        "seconds": {**old.get("seconds", {}), **seconds},
    }
    (out / "slice.json").write_text(json.dumps(meta, indent=1))
    with pd.option_context("display.width", 200, "display.max_columns", 30, "display.precision", 4):
        print(table.to_string(index=False))
        print(deltas.to_string(index=False))
        print(corr.round(2).to_string())


if __name__ == "__main__":
    main()
