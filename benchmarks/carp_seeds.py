"""Is the batch-size effect of CARP more than noise? A second seed and a paired bootstrap over the held-out queries.

    nice -n 5 env OMP_NUM_THREADS=1 .venv/bin/python benchmarks/batch_size.py --seed 13 --rules linear \\
        --batch-sizes 32 --extra-seeds 12 --runs-root runs/batch-size --out nbs/study/seeds   # trains and evaluates
    .venv/bin/python benchmarks/carp_seeds.py      # then this: reads the four evaluated runs, writes the tables

The batch-size study (nbs/study/batch) trained one seed per B; from B = 32 to B = 256 held-out R@1 rose by about
0.013 each way, while one R@1 over 974 queries has a standard error near 0.016. This script takes the two ends of
that effect, B = 32 (lr 2e-5) and B = 256 (lr 1.6e-4, the linear rule) of the `carp-minilm` preset, each trained
with seed 12 and with seed 13 by `benchmarks/batch_size.py` (the command above), and reads each run's fine-tuned
embeddings of the held-out pairs from its `eval/embeddings/` (written by `magicarp eval`). From them it takes every
query's rank (`retrieval.query_ranks`, the ranks `magicarp eval`'s R@k and MRR average; checked here against each
run's `eval/summary.json`), and resamples the queries with replacement (a paired bootstrap: both runs of a pair are
scored on the same resampled queries) to give the B = 256 − B = 32 difference of R@1 and MRR, each way, with a 95%
percentile interval, for each seed and for the mean of the two seeds.

Writes `seeds.csv` (one row per run: R@1 and MRR both ways from its ranks, CPU seconds of training and evaluation),
`bootstrap.csv` (one row per seed, and `both`, per measure: the observed difference, the bootstrap's mean, 2.5% and
97.5% quantiles, and the share of resamples where B = 256 is not better) and `bootstrap.json` into --out.
"""

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from magicarp_nb.carp.batch_study import lr_for, run_name
from magicarp_nb.carp.train import load_carp
from magicarp_nb.core.checkpoints import latest_checkpoint
from magicarp_nb.core.config import load_config
from magicarp_nb.carp.embeddings import load_embeddings
from magicarp_nb.data.mixing import load_pairs_of
from magicarp_nb.data.pairs import TokenizedPairs
from magicarp_nb.carp.retrieval import query_ranks
from magicarp_nb.data.sources import column_list

ROOT = Path(__file__).resolve().parent.parent
RUNS = {(B, s): run_name(B, lr_for("linear", B), s) for B in (32, 256) for s in (12, 13)}  # the study's folder names
MEASURES = {  # name -> what it averages over the queries' ranks of one direction
    "p2r_r1": ("p2r", lambda r: (r == 1).astype(float)),
    "r2p_r1": ("r2p", lambda r: (r == 1).astype(float)),
    "p2r_mrr": ("p2r", lambda r: 1.0 / r),
    "r2p_mrr": ("r2p", lambda r: 1.0 / r),
}


def run_ranks(run: Path) -> dict:
    "Each held-out query's rank, both ways, from the run's saved fine-tuned embeddings; checked against its summary."
    cfg, ck = load_config(str(run / "config.yaml")), latest_checkpoint(run)
    model, tok, max_length = load_carp(ck)
    ds = load_pairs_of(cfg.data).validation
    prompts = dict(passage_prompt=model.tower("passage")[1], review_prompt=model.tower("review")[1])
    pairs = TokenizedPairs(column_list(ds, "passage"), column_list(ds, "review"), tok, max_length, **prompts)
    P, Ip, _ = load_embeddings(run / "eval" / "embeddings" / "fine-tuned" / "validation.passage")
    R, Ir, _ = load_embeddings(run / "eval" / "embeddings" / "fine-tuned" / "validation.review")
    if not Ip.tolist() == Ir.tolist() == list(range(len(ds))):
        raise SystemExit(f"{run}: the saved embeddings are not the {len(ds)} held-out pairs in order")
    ranks = {k: v.numpy() for k, v in query_ranks(P, R, pairs.passage_keys, pairs.review_keys).items()}
    said = json.loads((run / "eval" / "summary.json").read_text())["models"]["fine-tuned"]["retrieval"]
    for name, (side, f) in MEASURES.items():
        if abs(f(ranks[side]).mean() - said[name]) > 1e-6:
            raise SystemExit(f"{run}: {name} from the ranks {f(ranks[side]).mean()} is not the summary's {said[name]}")
    return ranks


def cpu_seconds(run: Path) -> dict:
    "CPU seconds of the run's training and evaluation, as `benchmarks/batch_size.py` recorded them (every attempt)."
    timing = json.loads((run / "study_timing.json").read_text())
    return {f"{k}_cpu_s": round(sum(t["cpu_s"] for t in timing[k]), 1) for k in ("train", "eval")}


def interval(observed: float, draws: np.ndarray) -> dict:
    "A difference and its resamples' mean, 95% percentile interval and share not above zero (not better)."
    lo, hi = np.quantile(draws, [0.025, 0.975])
    return {"difference": observed, "bootstrap_mean": draws.mean(), "ci_low": lo, "ci_high": hi,
            "share_not_better": float((draws <= 0).mean())}  # fmt: skip


def bootstrap(ranks: dict, seeds: list, n: int, seed: int) -> pd.DataFrame:
    "The paired bootstrap of B = 256 − B = 32 per seed and for the seeds' mean, per measure."
    queries = len(next(iter(ranks.values()))["p2r"])
    idx = np.random.default_rng(seed).integers(0, queries, size=(n, queries))  # the same resamples for every row
    rows = []
    for name, (side, f) in MEASURES.items():
        per_seed = {s: f(ranks[(256, s)][side]) - f(ranks[(32, s)][side]) for s in seeds}  # per query
        draws = {s: d[idx].mean(1) for s, d in per_seed.items()}
        observed = {s: d.mean() for s, d in per_seed.items()}
        if len(seeds) > 1:  # the seeds' mean difference, its resamples the mean of theirs
            draws["both"], observed["both"] = np.mean([draws[s] for s in seeds], 0), np.mean(list(observed.values()))
        rows += [{"measure": name, "seed": s, **interval(observed[s], d)} for s, d in draws.items()]
    return pd.DataFrame(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs-root", default=str(ROOT / "runs" / "batch-size"))
    ap.add_argument("--out", default=str(ROOT / "nbs" / "study" / "seeds"))
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--bootstrap-seed", type=int, default=0)
    a = ap.parse_args()
    t0, torch_threads = time.time(), torch.get_num_threads()
    found = {key: Path(a.runs_root) / name for key, name in RUNS.items()}
    missing = [key for key, p in found.items() if not (p / "eval" / "summary.json").exists()]
    seeds = sorted({s for _, s in found} - {s for _, s in missing})  # the seeds with both ends evaluated
    if not seeds:
        raise SystemExit(f"no seed has both runs evaluated under {a.runs_root} (the first command of --help)")
    for key in missing:
        print(f"not evaluated yet, left out: {found[key]}")
    found = {key: run for key, run in found.items() if key[1] in seeds}
    ranks = {key: run_ranks(run) for key, run in found.items()}
    table = pd.DataFrame([{"run": found[(B, s)].name, "batch_size": B, "seed": s, "queries": len(ranks[(B, s)]["p2r"]),
                           **{m: f(ranks[(B, s)][side]).mean() for m, (side, f) in MEASURES.items()},
                           **cpu_seconds(found[(B, s)])} for B, s in sorted(ranks)])  # fmt: skip
    boot = bootstrap(ranks, seeds, a.resamples, a.bootstrap_seed)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "seeds.csv", index=False)
    boot.to_csv(out / "bootstrap.csv", index=False)
    meta_file = out / "bootstrap.json"  # what this script does not write (how the runs were trained) is kept
    meta = json.loads(meta_file.read_text()) if meta_file.exists() else {}
    meta |= {"command": ".venv/bin/python benchmarks/carp_seeds.py", "resamples": a.resamples,
            "bootstrap_seed": a.bootstrap_seed, "torch_threads": torch_threads,
            "seconds": round(time.time() - t0)}  # fmt: skip
    meta_file.write_text(json.dumps(meta, indent=1))
    with pd.option_context("display.width", 200, "display.precision", 4):
        print(table.to_string(index=False))
        queries = len(next(iter(ranks.values()))["p2r"])
        print(f"\npaired bootstrap, B = 256 - B = 32, {a.resamples} resamples of {queries} queries")
        print(boot.to_string(index=False))
    print(f"{torch_threads} torch thread(s); {time.time() - t0:.0f} s; tables in {out}")


if __name__ == "__main__":
    main()
