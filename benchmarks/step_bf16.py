"""The cached contrastive step in float32 and under bfloat16 autocast: loss, gradient, seconds and peak memory.

`gradcache.contrastive_step` on all-MiniLM-L6-v2 (carp-minilm's shared tower, dropout off) with its InfoNCE, on
--batch stdlib pairs in microbatches of --microbatch, for:

* float32      - no autocast
* bf16 plain   - bfloat16 autocast, the whole batch in one forward per side (no cache): the reference for bf16
* bf16 cached  - bfloat16 autocast, microbatched: the leaf embeddings and the loss stay in float32

Columns: the loss, its relative difference from float32, the gradient's relative difference from float32 and
from the plain bf16 step, seconds per step (the median of --reps after a warm-up), and peak memory (CUDA:
`torch.cuda.max_memory_allocated` per contender; CPU: not measured, "-").

    bash benchmarks/gpu.sh                                          # on a GPU machine, among the GPU checks
    .venv/bin/python benchmarks/step_bf16.py --device cpu --batch 16 --microbatch 4 --reps 1   # a look on CPU
"""

import argparse
import statistics
import time

import torch

from magicarp_nb.carp.train import build_carp
from magicarp_nb.core.config import PairDataConfig, load_config
from magicarp_nb.carp.gradcache import StepSettings, contrastive_step
from magicarp_nb.data.pairs import TokenizedPairs, load_pairs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--microbatch", type=int, default=32)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    device = torch.device(a.device)
    torch.manual_seed(0)
    model, tok, max_length = build_carp(load_config("carp-minilm", "encoder.dropout=0.0"))
    model.to(device).train()
    pairs = load_pairs(PairDataConfig(max_pairs=a.batch, max_val_pairs=1)).train
    batch = TokenizedPairs(pairs["passage"], pairs["review"], tok, max_length).collate(range(len(pairs)))
    sides = [{k: v.to(device) for k, v in batch[s].items()} for s in ("passage", "review")]
    mask = batch["duplicates"].to(device)
    enc = model.passage_encoder

    def step(bf16: bool, m):
        model.zero_grad(set_to_none=True)
        if device.type == "cuda":
            torch.cuda.synchronize(), torch.cuda.reset_peak_memory_stats()
        start = time.perf_counter()
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
            loss = contrastive_step(
                enc, enc, lambda P, R: model.objective(P, R, mask), list(sides), StepSettings(m)
            ).loss
        if device.type == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        peak = torch.cuda.max_memory_allocated() / 2**20 if device.type == "cuda" else None
        grad = torch.cat([p.grad.flatten().float() for p in model.parameters() if p.grad is not None])
        return float(loss), grad, seconds, peak

    contenders = {"float32": (False, a.microbatch), "bf16 plain": (True, None), "bf16 cached": (True, a.microbatch)}
    print(f"{device}: MiniLM, B = {len(pairs)} stdlib pairs, microbatches of {a.microbatch}, {torch.get_num_threads()} "
          f"CPU thread(s){', ' + torch.cuda.get_device_name(device) if device.type == 'cuda' else ''}")  # fmt: skip
    step(*contenders["bf16 cached"])  # warm-up
    runs = {name: [step(*how) for _ in range(a.reps)] for name, how in contenders.items()}
    ref, plain = runs["float32"][0], runs["bf16 plain"][0]
    print("| step | loss | Δ loss vs fp32 | grad diff vs fp32 | grad diff vs bf16 plain | s/step | peak MiB |")
    print("|---|---|---|---|---|---|---|")
    for name, rows in runs.items():
        loss, grad, _, peak = rows[0]
        d32 = float((grad - ref[1]).norm() / ref[1].norm())
        dplain = float((grad - plain[1]).norm() / plain[1].norm())
        seconds = statistics.median(r[2] for r in rows)
        print(f"| {name} | {loss:.5f} | {abs(loss - ref[0]) / ref[0]:.1e} | {d32:.1e} | {dplain:.1e} | {seconds:.3f} "
              f"| {'-' if peak is None else f'{peak:,.0f}'} |")  # fmt: skip


if __name__ == "__main__":
    main()
