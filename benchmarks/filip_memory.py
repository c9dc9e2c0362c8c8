"""FILIP's late interaction with the similarity blocks kept for the backward, against blocks recomputed in it.

`objectives.late_interaction_logits` scores B passages against B reviews through (chunk, B, Lp, Lr) blocks of
token similarities. Kept (`recompute=False`), autograd saves every block, so the memory grows as B²·Lp·Lr;
recomputed (`recompute=True`, the default), it saves the blocks' inputs and the (B, B) scores. For each B the
script measures, on random unit token features (float32, CPU), the bytes of the distinct storages autograd saves
during the forward (`torch.autograd.graph.saved_tensors_hooks`), seconds for forward + backward (median of
--reps), and the largest difference of the scores and of the gradients between the two.

    nice -n 10 env OMP_NUM_THREADS=1 .venv/bin/python benchmarks/filip_memory.py
    .venv/bin/python benchmarks/filip_memory.py --sizes 64 --reps 1                    # a quick look
"""

import argparse
import os
import statistics
import time

import torch
import torch.nn.functional as F

from magicarp_nb.carp.objectives import late_interaction_logits


def run(B: int, L: int, d: int, recompute: bool, reps: int) -> dict:
    g = torch.Generator().manual_seed(B)
    P = F.normalize(torch.randn(B, L, d, generator=g), dim=-1).requires_grad_()
    R = F.normalize(torch.randn(B, L, d, generator=g), dim=-1).requires_grad_()
    mask = torch.ones(B, L, dtype=torch.bool)
    w = torch.randn(B, B, generator=g)
    seen = {}

    def pack(t):
        seen[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return t

    inputs = {P.untyped_storage().data_ptr(), R.untyped_storage().data_ptr()}
    times = []
    for k in range(reps):  # the saved bytes of the first repetition; the median time of all
        P.grad = R.grad = None
        start = time.perf_counter()
        with torch.autograd.graph.saved_tensors_hooks(pack if k == 0 else (lambda t: t), lambda t: t):
            p2r, r2p = late_interaction_logits(P, mask, R, mask, recompute=recompute)
        ((p2r + r2p.T) * w).sum().backward()
        times.append(time.perf_counter() - start)
    saved = sum(v for ptr, v in seen.items() if ptr not in inputs)
    return dict(saved=saved, s=statistics.median(times), p2r=p2r.detach(), grad=(P.grad.clone(), R.grad.clone()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="64,256,1024", help="comma-separated B")
    ap.add_argument("--length", type=int, default=16, help="tokens per text (Lp = Lr)")
    ap.add_argument("--dim", type=int, default=32, help="token feature size")
    ap.add_argument("--reps", type=int, default=3, help="forward + backward repetitions per contender")
    args = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    print(f"late interaction, L = {args.length}, d = {args.dim}, float32, CPU, {torch.get_num_threads()} thread(s)")
    print("| B | blocks | saved MiB | s fwd+bwd | max abs Δ scores | max abs Δ grads |")
    print("|---|---|---|---|---|---|")
    for B in (int(x) for x in args.sizes.split(",")):
        kept = run(B, args.length, args.dim, False, args.reps)
        for name, out in (("kept", kept), ("recomputed", run(B, args.length, args.dim, True, args.reps))):
            ds = float((out["p2r"] - kept["p2r"]).abs().max())
            dg = max(float((a - b).abs().max()) for a, b in zip(out["grad"], kept["grad"]))
            print(f"| {B} | {name} | {out['saved'] / 2**20:.1f} | {out['s']:.3f} | {ds:.1e} | {dg:.1e} |", flush=True)


if __name__ == "__main__":
    main()
