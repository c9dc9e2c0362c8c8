"""CARP's levers toward R@1 >= 0.62 both ways on the held-out stdlib pairs, beside the batch-size study's runs.

    nice -n 5 env OMP_NUM_THREADS=1 .venv/bin/python benchmarks/carp_levers.py --levers mined-passage mined-both
        # the run of nbs/study/levers (rows of levers not named are kept from its levers.csv)

Every lever is the `carp-minilm` preset at the batch-size study's best setting (seed 12, B = 256 through the exact
step in microbatches of 32, the linear rule's lr 1.6e-4) with its own overrides, trained by `magicarp train` and
evaluated by `magicarp eval` one at a time, as `benchmarks/batch_size.py` does (its `timed` and `trained`: a
finished run is not trained or evaluated again, an interrupted one resumes).

Every lever trains two epochs (`train.epochs=2`); `two-epochs` is that alone. The others add a mined table:
- `mined`: one hard review (docstring) per pair, mined by the study's B = 256 run (`magicarp mine RUN`, the
  hardest below 0.95 x the positive's cosine), InfoNCE over the batch and the negatives. `--teacher-run zero-shot`
  mines with the untrained tower instead (`magicarp mine zero-shot carp-minilm`), as `14_carp` did at B = 32.
- `mined-passage`: one hard passage (function) per review, by the same rules (`magicarp mine RUN --side passage`),
  candidates of the review -> passage direction.
- `mined-both`: one of each (`--side both`).
- `mined-mse`: the `mined` table's cosines (`positive_score`, `negative_scores`) as a teacher: Margin-MSE
  (`objective.name=margin_mse data.score_columns=[positive_score,negative_scores]`), distilling the fine-tuned
  run into zero-shot MiniLM (refused with `--teacher-run zero-shot`: the student would start as its teacher).

Writes `levers.csv` into `--out`: the study's B = 32 and B = 256 rows (from its `batch.csv`) and one row per lever,
with the number of held-out queries (974 for the study's runs, 970 since the dedup on canonical text), the
held-out R@1 both ways, MRR, nDCG@10 and the CPU seconds of mining, training and evaluation. Then, once `two-epochs`
is evaluated, `bootstrap.csv`: each evaluated lever minus `two-epochs`, R@1 and MRR both ways, over the same held-out
queries resampled with replacement (a paired bootstrap, as `benchmarks/carp_seeds.py`'s), with 95% intervals.
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from batch_size import BIN, ROOT, timed, trained  # noqa: E402
from carp_seeds import MEASURES, interval, run_ranks  # noqa: E402

from magicarp_nb.carp.batch_study import model_metrics  # noqa: E402

BASE = ["seed=12", "train.batch_size=256", "train.lr=0.00016", "microbatch_size=32"]
MINED = ["data.score_columns=[positive_score,negative_scores]"]  # with the table's own overrides
EPOCHS = ["train.epochs=2"]
LEVERS = {  # name -> (overrides, the side of the mined table it reads, or None)
    "two-epochs": (EPOCHS, None),
    "mined": (EPOCHS, "review"),
    "mined-passage": (EPOCHS, "passage"),
    "mined-both": (EPOCHS, "both"),
    "mined-mse": (["objective.name=margin_mse", *MINED, *EPOCHS], "review"),
}
STUDY_QUERIES = 974  # held-out pairs of the study's runs; the dedup on canonical text (8cee5d2) left 970 since
COLUMNS = ["p2r_r1", "r2p_r1", "p2r_r10", "r2p_r10", "mrr", "reviews_ask_ndcg@10", "passages_ask_ndcg@10"]


def miner(a) -> str:
    "Who mined the table: `zero-shot` or the teacher run's folder name."
    return "zero-shot" if a.teacher_run == "zero-shot" else Path(a.teacher_run).name


def mine(a, side: str) -> tuple[list, dict]:
    "The `side` mined table's overrides (mining it first, unless done) and the mining's wall and CPU seconds."
    name = f"mined-{miner(a)}" if side == "review" else f"mined-{side}-{miner(a)}"
    table, timing_file = Path(a.runs_root) / name, Path(a.runs_root) / f"{name}.timing.json"
    if not (table / "mining.json").exists():
        print(f"[{time.strftime('%H:%M:%S')}] mining {table} with {a.teacher_run}", flush=True)
        source = ["zero-shot", "carp-minilm"] if miner(a) == "zero-shot" else [a.teacher_run]
        cmd = [
            str(BIN / "magicarp"),
            "mine",
            *source,
            "--out",
            str(table),
            "--relative-margin",
            "0.05",
            "--side",
            side,
            "--force",
        ]
        timing_file.write_text(json.dumps(timed(cmd, Path(a.runs_root) / f"{name}.log")))
    record = json.loads((table / "mining.json").read_text())
    return record["overrides"], json.loads(timing_file.read_text()) if timing_file.exists() else {}


def lever(a, name: str) -> dict:
    "Train (unless finished) and evaluate (unless evaluated) one lever's run; its row of the table."
    extra, side = LEVERS[name]
    reads_table = side is not None
    table_overrides, mining = mine(a, side) if reads_table else ([], {})
    label = f"{name}-zero-shot" if reads_table and miner(a) == "zero-shot" else name
    run = Path(a.runs_root) / label
    timing_file = run / "study_timing.json"
    timing = json.loads(timing_file.read_text()) if timing_file.exists() else {"train": [], "eval": []}
    if trained(run) is None:
        run.mkdir(parents=True, exist_ok=True)
        print(f"[{time.strftime('%H:%M:%S')}] training {label}", flush=True)
        cmd = [str(BIN / "magicarp"), "train", "carp-minilm", *BASE, *table_overrides, *extra, "--run-dir", str(run)]
        timing["train"].append(timed(cmd, run / "study_train.log"))
        timing_file.write_text(json.dumps(timing, indent=1))
    if not (run / "eval" / "summary.json").exists():
        print(f"[{time.strftime('%H:%M:%S')}] evaluating {label}", flush=True)
        timing["eval"].append(timed([str(BIN / "magicarp"), "eval", str(run)], run / "study_eval.log"))
        timing_file.write_text(json.dumps(timing, indent=1))
    summary = json.loads((run / "eval" / "summary.json").read_text())
    got = model_metrics(summary, "fine-tuned")
    return {
        "lever": label,
        "overrides": " ".join([*BASE, *extra] + ([f"<table mined by {miner(a)}>"] if reads_table else [])),
        "steps": trained(run),
        "queries": summary["pairs"],
        "mine_cpu_s": mining.get("cpu_s", 0.0),
        "train_cpu_s": round(sum(t["cpu_s"] for t in timing["train"]), 1),
        "eval_cpu_s": round(sum(t["cpu_s"] for t in timing["eval"]), 1),
        **{k: got[k] for k in COLUMNS},
    }


def lever_bootstrap(a, names: list) -> pd.DataFrame:
    """The paired bootstrap of each lever minus `two-epochs` over their common held-out queries (every query's rank
    from the run's saved embeddings, `carp_seeds.run_ranks`): R@1 and MRR both ways, with 95% percentile intervals."""
    root = Path(a.runs_root)
    base = run_ranks(root / "two-epochs")
    queries = len(base["p2r"])
    idx = np.random.default_rng(a.bootstrap_seed).integers(0, queries, size=(a.resamples, queries))  # one set for all
    rows = []
    for name in names:
        ranks = run_ranks(root / name)
        if len(ranks["p2r"]) != queries:
            raise SystemExit(f"{root / name}: {len(ranks['p2r'])} held-out queries, two-epochs {queries}: not paired")
        for measure, (side, f) in MEASURES.items():
            d = f(ranks[side]) - f(base[side])  # per query
            rows.append({"lever": name, "measure": measure, **interval(d.mean(), d[idx].mean(1))})
    return pd.DataFrame(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--levers", nargs="+", default=list(LEVERS), choices=list(LEVERS))
    ap.add_argument("--runs-root", default=str(ROOT / "runs" / "carp-levers"))
    ap.add_argument("--teacher-run", default=str(ROOT / "runs" / "batch-size" / "b0256_lr0.00016_s12"),
                    help="the run that mines the negatives, or zero-shot")  # fmt: skip
    ap.add_argument("--study", default=str(ROOT / "nbs" / "study" / "batch" / "batch.csv"))
    ap.add_argument("--out", default=str(ROOT / "nbs" / "study" / "levers"))
    ap.add_argument("--resamples", type=int, default=10_000, help="of the paired bootstrap against two-epochs")
    ap.add_argument("--bootstrap-seed", type=int, default=0)
    a = ap.parse_args()
    if miner(a) == "zero-shot" and "mined-mse" in a.levers:
        raise SystemExit("--levers mined-mse: a zero-shot --teacher-run would distil MiniLM into itself")
    Path(a.runs_root).mkdir(parents=True, exist_ok=True)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    study = pd.read_csv(a.study)
    keep = (study["model"] == "fine-tuned") & (study["in_sweep"].astype(str) == "True")
    rows = [
        {
            "lever": f"study B={int(r['batch_size'])}",
            "overrides": f"seed=12 train.batch_size={int(r['batch_size'])} train.lr={r['lr']:g}"
            + (f" microbatch_size={int(r['microbatch_size'])}" if r["microbatch_size"] < r["batch_size"] else ""),
            "steps": int(r["steps"]),
            "queries": STUDY_QUERIES,
            "mine_cpu_s": 0.0,
            "train_cpu_s": r["train_cpu_s"],
            "eval_cpu_s": r["eval_cpu_s"],
            **{k: r[k] for k in COLUMNS},
        }  # fmt: skip
        for _, r in study[keep & study["batch_size"].isin([32, 256])].iterrows()
    ]
    if (out / "levers.csv").exists():  # the levers not run now keep their rows
        kept = pd.read_csv(out / "levers.csv")
        kept["queries"] = kept["queries"].fillna(STUDY_QUERIES) if "queries" in kept else STUDY_QUERIES
        rows += [
            r for r in kept.to_dict("records") if not r["lever"].startswith("study ") and r["lever"] not in a.levers
        ]
    for name in a.levers:
        rows.append(lever(a, name))
        pd.DataFrame(rows).to_csv(out / "levers.csv", index=False)
    table = pd.DataFrame(rows)
    table.to_csv(out / "levers.csv", index=False)
    with pd.option_context("display.width", 220, "display.max_columns", 20, "display.precision", 4):
        print(table.drop(columns="overrides").to_string(index=False))
    paired = [r["lever"] for r in rows if not r["lever"].startswith("study ") and r["lever"] != "two-epochs"]
    paired = [n for n in paired if (Path(a.runs_root) / n / "eval" / "embeddings").is_dir()]
    if (Path(a.runs_root) / "two-epochs" / "eval" / "embeddings").is_dir() and paired:
        boot = lever_bootstrap(a, paired)
        boot.to_csv(out / "bootstrap.csv", index=False)
        with pd.option_context("display.width", 200, "display.precision", 4):
            print(f"\npaired bootstrap, lever - two-epochs, {a.resamples} resamples of the held-out queries")
            print(boot.to_string(index=False))
    print(f"threads: OMP_NUM_THREADS={__import__('os').environ.get('OMP_NUM_THREADS')}; outputs in {out}")


if __name__ == "__main__":
    main()
