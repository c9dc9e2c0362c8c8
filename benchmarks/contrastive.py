"""Microbatched contrastive steps side by side: time per step, peak memory and gradient error.

One optimiser step's forward and backward (no optimiser update) of all-MiniLM-L6-v2 (one shared tower, mean
pooling, normalised, dropout off) on the same stdlib (code, docstring) pairs truncated to 128 tokens, with the
same loss (symmetric InfoNCE at logit scale 20), for each contrastive batch size B and microbatch size m:

* full batch      - one forward and backward of the whole batch (`contrastive_step` without microbatches)
* ours            - `gradcache.contrastive_step`: length-sorted microbatches, loss once, RNG replay
* ours, in order  - the same step with microbatches in batch order (the effect of sorting by length)
* magiCARP        - `gradcache.recompute_step`: the whole loss recomputed and backpropagated per microbatch, with
                    every microbatch padded to the longest text of the batch, as magiCARP's tokenizer call does
* magiCARP, trimmed - the same, but each microbatch drops the padding columns it does not need
* ST cached       - sentence-transformers' CachedMultipleNegativesRankingLoss, both directions (it trims too)

The tower encodes each microbatch (or the full batch) in one backbone call (`encoder.chunk_size=None`), so
that the rows compare ways of microbatching only. Each (method, B) runs in its own process, so that the peak
resident memory (ru_maxrss) is its own. The gradient error is ||g - g_ref|| / ||g_ref|| over the encoder's
parameters, against the full batch of the same B; where the full batch does not fit (B > --full-max), against
sentence-transformers' cached loss, an implementation independent of this package (column `grad_ref`).

    .venv/bin/python benchmarks/contrastive.py                       # B = 64, 256, 1024; m = 32; 1 thread
    .venv/bin/python benchmarks/contrastive.py --sizes 64 --steps 2  # a quick look
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

METHODS = ["full batch", "ours", "ours, in order", "magiCARP", "magiCARP, trimmed", "ST cached"]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def st_cached_step(m: int, max_length: int):
    "sentence-transformers' CachedMultipleNegativesRankingLoss on MiniLM: (step, backbone)."
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.losses import CachedMultipleNegativesRankingLoss

    from magicarp_nb.carp.encoders import minilm_path

    st = SentenceTransformer(
        str(minilm_path()),
        device="cpu",
        config_kwargs={"hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0},
    )
    st.max_seq_length = max_length
    st.train()
    st_loss = CachedMultipleNegativesRankingLoss(
        st,
        scale=20.0,
        mini_batch_size=m,
        directions=("query_to_doc", "doc_to_query"),
        partition_mode="per_direction",
    )

    def step(b):
        loss = st_loss([b["passage"], b["review"]], None)
        loss.backward()
        return loss.detach()

    return step, st[0].auto_model


def package_step(method: str, enc, obj, m: int):
    "One of this package's steps (or magiCARP's recomputation) on the encoder `enc`: (step, backbone)."
    import torch

    from magicarp_nb.carp.encoders import POOLINGS
    from magicarp_nb.carp.gradcache import StepSettings, contrastive_step, recompute_step

    enc.train()

    def loss_fn(P, R):
        return obj(P, R)

    def untrimmed(b):
        "The tower without `trim_padding`: every microbatch as wide as the batch."
        hidden = enc.backbone(**b).last_hidden_state
        return torch.nn.functional.normalize(POOLINGS["mean"](hidden, b["attention_mask"]), dim=-1)

    steps = {
        "full batch": lambda args: contrastive_step(*args[:3], list(args[3:]), StepSettings()).loss,
        "ours": lambda args: contrastive_step(*args[:3], list(args[3:]), StepSettings(m)).loss,
        "ours, in order": lambda args: (
            contrastive_step(*args[:3], list(args[3:]), StepSettings(m, sort_by_length=False)).loss
        ),
        "magiCARP": lambda args: recompute_step(untrimmed, untrimmed, loss_fn, *args[3:], m),
        "magiCARP, trimmed": lambda args: recompute_step(*args, m),
    }
    if method not in steps:
        raise ValueError(f"unknown method {method!r}")
    return lambda b: steps[method]((enc, enc, loss_fn, b["passage"], b["review"])), enc.backbone


def run_one(method: str, B: int, m: int, max_length: int, steps: int, grad_path: str) -> dict:
    "Time `steps` steps of `method` at batch size B in this process; save the last step's encoder gradients."
    import torch

    from magicarp_nb.core.config import EncoderConfig, PairDataConfig
    from magicarp_nb.data.pairs import TokenizedPairs, load_pairs
    from magicarp_nb.carp.encoders import build_encoder
    from magicarp_nb.carp.objectives import InfoNCE

    torch.manual_seed(0)
    train = load_pairs(PairDataConfig()).train.shuffle(seed=0)
    enc, tok, _ = build_encoder(EncoderConfig(dropout=0.0, max_length=max_length, chunk_size=None))
    pairs = TokenizedPairs(train["passage"][:B], train["review"][:B], tok, max_length)
    batch = pairs.collate(range(B))
    warm = pairs.collate(range(4))
    obj = InfoNCE(temperature=0.05)  # logit scale 20, sentence-transformers' default

    step, backbone = st_cached_step(m, max_length) if method == "ST cached" else package_step(method, enc, obj, m)
    params = list(backbone.parameters())
    rss_before = peak_rss_mb()
    step(warm)  # first calls allocate and initialise; not timed
    times = []
    for _ in range(steps):
        for p in params:
            p.grad = None
        t0 = time.perf_counter()
        loss = step(batch)
        times.append(time.perf_counter() - t0)
    torch.save([p.grad if p.grad is not None else torch.zeros_like(p) for p in params], grad_path)
    tokens = int(batch["passage"]["attention_mask"].sum() + batch["review"]["attention_mask"].sum())
    return {
        "method": method,
        "B": B,
        "s_per_step": min(times),
        "peak_rss_mb": peak_rss_mb(),
        "rss_after_load_mb": rss_before,
        "loss": float(loss),
        "tokens": tokens,
        "threads": torch.get_num_threads(),
    }


def rel_error(a_path: str, b_path: str) -> float:
    import torch

    a, b = torch.load(a_path), torch.load(b_path)
    fa, fb = torch.cat([x.flatten() for x in a]), torch.cat([x.flatten() for x in b])
    return float((fa - fb).norm() / fb.norm())


def run_in_process(method: str, B: int, args, tmp: str) -> dict:
    "One method at batch size B in a process of its own: its result row (with the path of its gradients)."
    if method == "full batch" and B > args.full_max:
        return {"method": method, "B": B, "note": f"not run (B > --full-max {args.full_max})"}
    grad = str(Path(tmp) / f"{method.replace(' ', '_').replace(',', '')}_{B}.pt")
    cmd = [sys.executable, __file__, "--one", method, str(B), "--grad", grad]
    cmd += ["--microbatch", str(args.microbatch), "--max-length", str(args.max_length)]
    cmd += ["--steps", str(args.steps), "--threads", str(args.threads)]
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "PYTHONWARNINGS": "ignore"}
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    line = [x for x in out.stdout.splitlines() if x.startswith("RESULT ")]
    if out.returncode != 0 or not line:
        return {"method": method, "B": B, "note": f"failed: {out.stderr.strip()[-300:]}"}
    row = {**json.loads(line[0][len("RESULT ") :]), "grad": grad}
    print(f"{method:>18} B={B:5d}: {row['s_per_step']:8.2f} s/step, peak RSS {row['peak_rss_mb']:7.0f} MB", flush=True)
    return row


def print_table(table, args) -> None:
    "The results, then how our step compares with each other method at each B."
    import pandas as pd

    cols = [
        c
        for c in ("B", "method", "s_per_step", "peak_rss_mb", "grad_rel_error", "grad_ref", "loss", "tokens", "note")
        if c in table
    ]
    with pd.option_context("display.width", 200, "display.max_colwidth", 60):
        fmt = {
            c: (lambda x: x if isinstance(x, str) else f"{x:.4g}") for c in cols if c not in ("B", "method", "grad_ref")
        }
        print(table[cols].to_string(index=False, formatters=fmt))
    ours = table[table["method"] == "ours"].set_index("B")
    summary = []
    for other in ("magiCARP", "magiCARP, trimmed", "ST cached", "ours, in order"):
        o = table[table["method"] == other].set_index("B")
        for B in ours.index.intersection(o.index):
            if isinstance(o.loc[B, "s_per_step"], str):  # that run failed
                continue
            summary.append(
                f"B={B}: ours is {o.loc[B, 's_per_step'] / ours.loc[B, 's_per_step']:.2f}x faster than {other}"
            )
    if len(ours) > 1:
        lo, hi = ours.index.min(), ours.index.max()
        growth = ours.loc[hi, "peak_rss_mb"] / ours.loc[lo, "peak_rss_mb"] - 1
        summary.append(f"ours: peak RSS grows {100 * growth:.1f}% from B={lo} to B={hi}")
    print("\n" + "\n".join(summary))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[64, 256, 1024], help="contrastive batch sizes B")
    ap.add_argument("--microbatch", type=int, default=32, help="microbatch size m")
    ap.add_argument("--max-length", type=int, default=128, help="tokens per text")
    ap.add_argument("--steps", type=int, default=1, help="timed steps per run (the fastest is reported)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads")
    ap.add_argument("--full-max", type=int, default=256, help="largest B run as a full batch (memory)")
    ap.add_argument("--methods", nargs="+", default=METHODS, help="subset of the methods")
    ap.add_argument("--one", nargs=2, metavar=("METHOD", "B"), help=argparse.SUPPRESS)
    ap.add_argument("--grad", help=argparse.SUPPRESS)
    args = ap.parse_args()

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if args.one:
        import torch

        torch.set_num_threads(args.threads)
        res = run_one(args.one[0], int(args.one[1]), args.microbatch, args.max_length, args.steps, args.grad)
        print("RESULT " + json.dumps(res))
        return

    import pandas as pd

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for B in args.sizes:
            done = {}
            for method in args.methods:
                rows.append(run_in_process(method, B, args, tmp))
                if "grad" in rows[-1]:
                    done[method] = rows[-1]
            ref = done.get("full batch") or done.get("ST cached")
            for r in done.values():
                if ref is not None and r is not ref:
                    r["grad_rel_error"] = rel_error(r["grad"], ref["grad"])
                    r["grad_ref"] = ref["method"]
    table = pd.DataFrame(rows)
    threads = sorted({int(t) for t in table["threads"].dropna()})
    for col in ("s_per_step", "peak_rss_mb", "grad_rel_error", "grad_ref", "loss", "tokens", "note"):
        if col in table:  # blank, not NaN, where a run has no value
            table[col] = table[col].map(lambda x: "" if pd.isna(x) else x)
    print(
        f"\ntorch threads: {threads}, m = {args.microbatch}, max length {args.max_length} tokens, "
        f"fastest of {args.steps} step(s)\n"
    )
    print_table(table, args)


if __name__ == "__main__":
    main()
