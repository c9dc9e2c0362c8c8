"""Microbatches of a fixed number of pairs against a token budget, in the cached contrastive step.

One step's forward and backward (no optimiser update) of `gradcache.contrastive_step` on all-MiniLM-L6-v2 (the
tower of `carp.build_carp(load_config("carp-minilm"))`: one shared tower, mean pooling, dropout off) with its
InfoNCE, each forward in one backbone call (`encoder.chunk_size=None`), on the same --batch stdlib (function
source, docstring) pairs cut at --max-length tokens, for:

* size m       - `microbatch_size=m`: m length-sorted texts per forward, on each side
* tokens m×L   - `microbatch_tokens=m×L`, L the longest text of the batch: as many length-sorted texts per
                 forward as fit in m×L padded tokens, the same peak as `size m` (whose first microbatch holds
                 m of the longest texts)

Columns: seconds per step (the median of --reps after one untimed warm-up step, the contenders interleaved so
that they share the machine's drift), the padded tokens encoded per step (every forward's texts × its padded
length, both passes of the cached step, both sides), the padded tokens of the largest forward (a proxy for the
activation memory of the step: the encoder holds one forward's activations at a time), the forwards per step,
and the relative gradient difference from the first row (float32 rounding only: every row is the full batch's
gradient).

    nice -n 10 env OMP_NUM_THREADS=1 .venv/bin/python benchmarks/microbatch_tokens.py   # the quoted table
    .venv/bin/python benchmarks/microbatch_tokens.py --batch 16 --reps 1 --sizes 4       # a quick look
"""

import argparse
import os
import statistics
import time

import torch

from magicarp_nb.carp.train import build_carp
from magicarp_nb.core.config import PairDataConfig, load_config
from magicarp_nb.carp.gradcache import StepSettings, contrastive_step
from magicarp_nb.data.pairs import TokenizedPairs, load_pairs


def counted(encoder, forwards: list):
    "`encoder`, recording each forward's (texts, padded length)."

    def encode(batch: dict) -> torch.Tensor:
        forwards.append(tuple(batch["input_ids"].shape))
        return encoder(batch)

    return encode


def one_step(model, batch: dict, cut: dict) -> dict:
    "Time one cached step cut as `cut` says; its forwards and its gradient (then cleared)."
    forwards = []
    encode = counted(model.passage_encoder, forwards)
    loss_fn = lambda P, R: model.objective(P, R, batch["duplicates"])  # noqa: E731
    start = time.perf_counter()
    contrastive_step(encode, encode, loss_fn, [batch["passage"], batch["review"]], StepSettings(**cut))
    seconds = time.perf_counter() - start
    grad = torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])
    model.zero_grad(set_to_none=True)
    return {"seconds": seconds, "forwards": forwards, "grad": grad}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", type=int, default=64, help="pairs per contrastive batch")
    ap.add_argument("--max-length", type=int, default=128, help="tokens per text at most")
    ap.add_argument("--sizes", default="8,16", help="comma-separated microbatch sizes m (each also as m×L tokens)")
    ap.add_argument("--reps", type=int, default=3, help="steps per contender (the median is reported)")
    args = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    overrides = f"encoder.dropout=0.0 encoder.chunk_size=None encoder.max_length={args.max_length}"
    cfg = load_config("carp-minilm", overrides)  # one backbone call per forward: the rows compare microbatches only
    torch.manual_seed(0)
    model, tok, max_length = build_carp(cfg)
    model.train()
    pairs = load_pairs(PairDataConfig(max_pairs=args.batch, max_val_pairs=1)).train
    batch = TokenizedPairs(pairs["passage"], pairs["review"], tok, max_length).collate(range(len(pairs)))
    lengths = {side: batch[side]["attention_mask"].sum(1) for side in ("passage", "review")}
    longest = max(int(x.max()) for x in lengths.values())
    contenders = {}
    for m in (int(s) for s in args.sizes.split(",")):
        contenders[f"size {m}"] = dict(microbatch_size=m)
        contenders[f"tokens {m}×{longest} = {m * longest}"] = dict(microbatch_tokens=m * longest)
    print(
        f"MiniLM (carp-minilm's tower), B = {len(pairs)} stdlib pairs, texts cut at {max_length} tokens "
        f"(mean length: passages {float(lengths['passage'].float().mean()):.0f}, reviews "
        f"{float(lengths['review'].float().mean()):.0f}; longest {longest}), {torch.get_num_threads()} torch thread(s)"
    )
    one_step(model, batch, next(iter(contenders.values())))  # a warm-up step, not timed (first calls are slower)
    runs = {name: [] for name in contenders}
    for _ in range(args.reps):
        for name, cut in contenders.items():
            runs[name].append(one_step(model, batch, cut))
            print(f"{name}: {runs[name][-1]['seconds']:.2f} s", flush=True)
    ref = runs[next(iter(runs))][0]["grad"]
    print("\n| microbatches | s/step (median) | padded tokens encoded | largest forward (padded tokens) | forwards "
          "| grad diff vs first row |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for name, steps in runs.items():
        forwards = steps[0]["forwards"]
        tokens = [n * width for n, width in forwards]
        diff = float((steps[0]["grad"] - ref).norm() / ref.norm())
        seconds = statistics.median(s["seconds"] for s in steps)
        print(f"| {name} | {seconds:.2f} | {sum(tokens):,} | {max(tokens):,} | {len(forwards)} | {diff:.1e} |")


if __name__ == "__main__":
    main()
