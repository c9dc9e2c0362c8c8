"""Both sides in one pass against one pass per side, with CARP's shared tower, in the cached contrastive step.

One step's forward and backward (no optimiser update) of `gradcache.contrastive_step` on all-MiniLM-L6-v2 (the
shared tower of `carp.build_carp(load_config("carp-minilm"))`, mean pooling, dropout off) with its InfoNCE, each
forward in one backbone call (`encoder.chunk_size=None`), on the same --batch stdlib (function source, docstring)
pairs cut at --max-length tokens, for each microbatch size m:

* two passes m - `one_pass=False`: the passages length-sorted into microbatches of m, then the reviews
* one pass m   - `one_pass=True`: passages and reviews length-sorted together into microbatches of m

Columns: seconds per step (the median of --reps after one untimed warm-up step, the contenders interleaved so that
they share the machine's drift), the padded tokens encoded per step (every forward's texts × its padded length,
both passes of the cached step), the padded tokens of the largest forward (the step holds one forward's
activations at a time), the forwards per step, and the relative gradient difference from the first row (float32
rounding only: every row is the full batch's gradient).

    nice -n 10 env OMP_NUM_THREADS=2 .venv/bin/python benchmarks/one_pass.py   # the quoted table
    .venv/bin/python benchmarks/one_pass.py --batch 16 --reps 1 --sizes 4        # a quick look
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


def one_step(model, batch: dict, m: int, one_pass: bool) -> dict:
    "Time one cached step; its forwards and its gradient (then cleared)."
    forwards = []

    def encode(b: dict) -> torch.Tensor:
        forwards.append(tuple(b["input_ids"].shape))
        return model.passage_encoder(b)

    loss_fn = lambda P, R: model.objective(P, R, batch["duplicates"])  # noqa: E731
    start = time.perf_counter()
    contrastive_step(encode, encode, loss_fn, [batch["passage"], batch["review"]], StepSettings(m, one_pass=one_pass))
    seconds = time.perf_counter() - start
    grad = torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])
    model.zero_grad(set_to_none=True)
    return {"seconds": seconds, "forwards": forwards, "grad": grad}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", type=int, default=64, help="pairs per contrastive batch")
    ap.add_argument("--max-length", type=int, default=128, help="tokens per text at most")
    ap.add_argument("--sizes", default="8,16", help="comma-separated microbatch sizes m")
    ap.add_argument("--reps", type=int, default=3, help="steps per contender (the median is reported)")
    args = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    overrides = f"encoder.dropout=0.0 encoder.chunk_size=None encoder.max_length={args.max_length}"
    cfg = load_config("carp-minilm", overrides)
    torch.manual_seed(0)
    model, tok, max_length = build_carp(cfg)
    model.train()
    pairs = load_pairs(PairDataConfig(max_pairs=args.batch, max_val_pairs=1)).train
    batch = TokenizedPairs(pairs["passage"], pairs["review"], tok, max_length).collate(range(len(pairs)))
    lengths = {side: batch[side]["attention_mask"].sum(1).float() for side in ("passage", "review")}
    contenders = {}
    for m in (int(s) for s in args.sizes.split(",")):
        contenders[f"two passes {m}"] = (m, False)
        contenders[f"one pass {m}"] = (m, True)
    print(
        f"MiniLM (carp-minilm's shared tower), B = {len(pairs)} stdlib pairs, texts cut at {max_length} tokens "
        f"(mean length: passages {float(lengths['passage'].mean()):.0f}, reviews "
        f"{float(lengths['review'].mean()):.0f}), {torch.get_num_threads()} torch thread(s)"
    )
    one_step(model, batch, *next(iter(contenders.values())))  # a warm-up step, not timed
    runs = {name: [] for name in contenders}
    for _ in range(args.reps):
        for name, (m, one) in contenders.items():
            runs[name].append(one_step(model, batch, m, one))
            print(f"{name}: {runs[name][-1]['seconds']:.2f} s", flush=True)
    ref = runs[next(iter(runs))][0]["grad"]
    print("\n| passes, microbatch | s/step (median) | padded tokens encoded | largest forward (padded tokens) "
          "| forwards | grad diff vs first row |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for name, steps in runs.items():
        tokens = [n * width for n, width in steps[0]["forwards"]]
        diff = float((steps[0]["grad"] - ref).norm() / ref.norm())
        seconds = statistics.median(s["seconds"] for s in steps)
        print(f"| {name} | {seconds:.2f} | {sum(tokens):,} | {max(tokens):,} | {len(tokens)} | {diff:.1e} |")


if __name__ == "__main__":
    main()
