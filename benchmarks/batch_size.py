"""CARP's batch-size study: does a larger contrastive batch pay, at one epoch of the `carp-minilm` preset?

    nice -n 5 env OMP_NUM_THREADS=1 .venv/bin/python benchmarks/batch_size.py
        # the run of nbs/study/batch: B = 256 under both learning-rate rules, then the winner at every B

Every run is the `carp-minilm` preset (MiniLM fine-tuned one epoch on the stdlib (function, docstring) pairs)
with `seed`, `train.batch_size=B` and `train.lr` set, trained by `magicarp train` and evaluated by
`magicarp eval` (`carp_eval.evaluate_run`: in-batch retrieval and BEIR-style IR on the 974 held-out pairs, for
the zero-shot and the fine-tuned tower), each as a subprocess, one at a time. B > 32 goes through the exact
GradCache step with `microbatch_size=32` (the memory of B = 32, the gradient of the whole batch); B <= 32 needs
no microbatches. The learning rate is the preset's 2e-5 at B = 32 scaled by a rule: first B = 256 is trained
with the square-root rule (lr = 2e-5 * sqrt(B / 32)) and with the linear rule (lr = 2e-5 * B / 32), and the rule
with the better mean of the two held-out R@1s is used for every other B (its B = 256 run is reused).

With `--reuse-saved`, a run whose folder is absent (a fresh clone, a cleaned machine) but whose row is in the
saved `batch.csv` is taken from that row, and `study.json` lists it under `rows_from_saved_table`.

Resumes: a run whose last checkpoint has finished the epoch and whose `eval/summary.json` exists is not trained
or evaluated again (an interrupted `magicarp train` resumes from its last checkpoint). Each run's wall and CPU
seconds (`getrusage(RUSAGE_CHILDREN)` deltas, user + system) of training and of evaluation are kept in
`<run>/study_timing.json`, one entry per attempt.

Writes into `--out`: `batch.csv` (one row per run, plus the zero-shot row), `study.json` (the command, its paths
relative to the repository where they lie inside it; machine facts, the rule comparison, wall time) and
`batch_size.png`. `nbs/14b_batch_size.ipynb` shows them.
"""

import argparse
import json
import os
import platform
import resource
import shlex
import subprocess
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402

from magicarp_nb.carp.batch_study import (  # noqa: E402
    LR_RULES,
    command_line,
    lr_for,
    plot_batch_size,
    repo_path,
    rule_comparison,
    run_name,
    saved_records,
    summary_rows,
)
from magicarp_nb.core.checkpoints import latest_checkpoint, read_train_state  # noqa: E402
from magicarp_nb.core.config import load_config  # noqa: E402
from magicarp_nb.figures import save_figure  # noqa: E402
from magicarp_nb.core.runtime import cpu_has_bf16  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def cpu_model() -> str:
    "The CPU's model name from /proc/cpuinfo (else platform.processor())."
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def timed(cmd: list, log: Path) -> dict:
    "Run `cmd` with its output appended to `log`; its wall seconds and the CPU seconds (user + system) it used."
    before, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.time()
    with open(log, "a") as f:
        f.write(f"\n$ {shlex.join(cmd)}\n")
        f.flush()
        rc = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT)
    after, wall = resource.getrusage(resource.RUSAGE_CHILDREN), time.time() - t0
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if rc != 0:
        raise SystemExit(f"failed ({rc}): {shlex.join(cmd)}; see {log}")
    return {"started": round(t0), "wall_s": round(wall, 1), "cpu_s": round(cpu, 1)}


def trained(run: Path) -> int | None:
    "The optimiser steps of a run whose last checkpoint has finished its epochs; None while it has not."
    ck = latest_checkpoint(run) if run.exists() else None
    if ck is None:
        return None
    state, epochs = read_train_state(ck), load_config(str(run / "config.yaml")).train.epochs
    return state.global_step if state.epoch >= epochs else None


def do_run(a, B: int, rule: str, seed: int) -> dict:
    "Train (unless finished) and evaluate (unless evaluated) one run; its record for the table."
    lr = lr_for(rule, B)
    micro = a.microbatch_size if B > a.microbatch_size else None
    run = Path(a.runs_root) / run_name(B, lr, seed)
    if run.name in a.saved and not run.exists():
        saved_micro = a.saved[run.name]["facts"]["microbatch_size"]
        if saved_micro != (micro or B):
            raise SystemExit(f"--reuse-saved: {run.name} in {Path(a.out) / 'batch.csv'} has microbatch_size="
                             f"{saved_micro}, this sweep {micro or B}: train it without --reuse-saved")  # fmt: skip
        print(f"[{time.strftime('%H:%M:%S')}] {run.name}: its row of the saved table (no run folder here)", flush=True)
        a.reused.append(run.name)
        return a.saved[run.name]
    timing_file = run / "study_timing.json"
    overrides = [f"seed={seed}", f"train.batch_size={B}", f"train.lr={lr:.6g}"]
    overrides += [f"microbatch_size={micro}"] if micro else []
    timing = json.loads(timing_file.read_text()) if timing_file.exists() else {"train": [], "eval": []}
    if trained(run) is None:
        run.mkdir(parents=True, exist_ok=True)
        print(f"[{time.strftime('%H:%M:%S')}] training {run.name} (B={B}, lr={lr:.4g}, microbatch={micro})", flush=True)
        cmd = [str(BIN / "magicarp"), "train", a.preset, *overrides, "--run-dir", str(run)]
        resumed = latest_checkpoint(run)
        timing["train"].append({**timed(cmd, run / "study_train.log"), "resumed_from": resumed and resumed.name})
        timing_file.write_text(json.dumps(timing, indent=1))
    if not (run / "eval" / "summary.json").exists():
        print(f"[{time.strftime('%H:%M:%S')}] evaluating {run.name}", flush=True)
        timing["eval"].append(timed([str(BIN / "magicarp"), "eval", str(run)], run / "study_eval.log"))
        timing_file.write_text(json.dumps(timing, indent=1))
    summary = json.loads((run / "eval" / "summary.json").read_text())
    cfg = load_config(str(run / "config.yaml"))
    attempts = timing["train"] + timing["eval"]
    facts = {
        "run": run.name,
        "rule": rule,
        "batch_size": B,
        "microbatch_size": cfg.microbatch_size or B,
        "lr": cfg.train.lr,
        "seed": cfg.seed,
        "steps": trained(run),
        "train_wall_s": sum(t["wall_s"] for t in timing["train"]),
        "train_cpu_s": sum(t["cpu_s"] for t in timing["train"]),
        "train_attempts": len(timing["train"]),
        "eval_wall_s": sum(t["wall_s"] for t in timing["eval"]),
        "eval_cpu_s": sum(t["cpu_s"] for t in timing["eval"]),
        "started": min((t["started"] for t in attempts), default=None),
        "finished": max((t["started"] + t["wall_s"] for t in attempts), default=None),
    }
    print(f"[{time.strftime('%H:%M:%S')}] {run.name}: {json.dumps(facts)}", flush=True)
    return {"facts": facts, "summary": summary}


def saved_rows(a, table: Path, meta_file: Path, old: dict) -> dict:
    "`--reuse-saved`: the saved table's records by run name, refused unless it is this preset's study table."
    if not table.exists():
        raise SystemExit(f"--reuse-saved: no saved table {table}")
    if old.get("preset", a.preset) != a.preset:
        raise SystemExit(f"--reuse-saved: {meta_file} records preset {old['preset']}, not --preset {a.preset}")
    try:
        return saved_records(pd.read_csv(table))
    except (KeyError, ValueError) as e:
        raise SystemExit(f"--reuse-saved: {table} is not a study table: {e}") from None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="carp-minilm")
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--trial-batch-size", type=int, default=256, help="the B at which the two lr rules are compared")
    ap.add_argument("--rules", nargs="+", default=["sqrt", "linear"], choices=sorted(LR_RULES))
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[32, 512, 64, 16, 128],
                    help="the sweep's other batch sizes, in the order trained (the trial B is in it)")  # fmt: skip
    ap.add_argument("--extra-seeds", type=int, nargs="*", default=[], help="after the sweep: these seeds too ...")
    ap.add_argument("--extra-batch-sizes", type=int, nargs="*", default=[32, 256], help="... at these batch sizes")
    ap.add_argument("--microbatch-size", type=int, default=32, help="pairs per encoder forward when B exceeds it")
    ap.add_argument("--runs-root", default=str(ROOT / "runs" / "batch-size"))
    ap.add_argument("--out", default=str(ROOT / "nbs" / "study" / "batch"))
    ap.add_argument("--reuse-saved", action="store_true",
                    help="a run with no folder here is taken from the saved batch.csv in --out")  # fmt: skip
    ap.add_argument("--note", default=None, help="a note kept in study.json (default: the note saved there before)")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    meta_file = out / "study.json"
    old = json.loads(meta_file.read_text()) if meta_file.exists() else {}
    a.saved = saved_rows(a, out / "batch.csv", meta_file, old) if a.reuse_saved else {}
    a.reused = []
    t0 = time.time()
    records = []

    def write_outputs(winner=None, comparison=None):
        rows = summary_rows(records, winner)
        table = pd.DataFrame(rows)
        if rows:  # a run's columns in its order (facts, then measures), then the zero-shot row's own
            table = table[list(rows[-1]) + [c for c in table if c not in rows[-1]]]
        table.to_csv(out / "batch.csv", index=False)
        if winner is not None and len(table):
            fig = plot_batch_size(table)
            save_figure(fig, out / "batch_size.png")
            plt.close(fig)
        invocations = old.get("invocations", []) + [{"started": round(t0), "wall_s": round(time.time() - t0)}]
        cfg = load_config(a.preset)
        started, finished = ([r["facts"][k] for r in records if r["facts"][k]] for k in ("started", "finished"))
        command = f"nice -n {os.nice(0)} env OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')} .venv/bin/python "
        trained_here = {r["facts"]["run"] for r in records if r["facts"]["run"] not in a.reused}
        meta = {
            "command": command + "benchmarks/batch_size.py " + command_line(sys.argv[1:], ROOT),
            "preset": a.preset,
            "seed": a.seed,
            "microbatch_size": a.microbatch_size,
            "lr_rules": {k: v[1] for k, v in LR_RULES.items()},
            "rule_comparison": comparison,
            "winner": winner,
            "machine": {
                "cpu_model": cpu_model(),
                "cpus": os.cpu_count(),
                "torch": torch.__version__,
                "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
                "torch_num_threads_driver": torch.get_num_threads(),
                "train_num_threads": cfg.train.num_threads,
                "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
                "niceness": os.nice(0),
                "bf16_asked": cfg.train.bf16,
                "bf16_used": cpu_has_bf16(),
                "python": platform.python_version(),
            },
            "invocations": invocations,
            "wall_seconds_total": sum(i["wall_s"] for i in invocations),
            # from the first run's start to the last run's end, whichever invocations (an interrupted one included)
            "wall_seconds_span": round(max(finished) - min(started)) if started else None,
            "train_cpu_seconds_total": round(sum(r["facts"]["train_cpu_s"] for r in records), 1),
            "rows_from_saved_table": sorted(set(a.reused) | set(old.get("rows_from_saved_table", [])) - trained_here),
            "note": a.note if a.note is not None else old.get("note", ""),
        }
        meta_file.write_text(json.dumps(meta, indent=1))

    trials = {rule: do_run(a, a.trial_batch_size, rule, a.seed) for rule in a.rules}
    records += list(trials.values())
    write_outputs()
    comparison = rule_comparison({rule: r["summary"] for rule, r in trials.items()})
    winner = comparison["winner"]
    print(f"rule comparison at B={a.trial_batch_size}: {json.dumps(comparison)}", flush=True)
    write_outputs(winner, comparison)
    for B in a.batch_sizes:
        if B != a.trial_batch_size:
            records.append(do_run(a, B, winner, a.seed))
            write_outputs(winner, comparison)
    for seed in a.extra_seeds:
        for B in a.extra_batch_sizes:
            records.append(do_run(a, B, winner, seed))
            write_outputs(winner, comparison)
    table = pd.read_csv(out / "batch.csv")
    with pd.option_context("display.width", 220, "display.max_columns", 40, "display.precision", 4):
        print(table.to_string(index=False))
    total = json.loads(meta_file.read_text())["wall_seconds_total"]
    print(f"wall time {total / 60:.1f} min over all invocations; outputs in {repo_path(out, ROOT)}")


if __name__ == "__main__":
    main()
