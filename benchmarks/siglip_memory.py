"""SigLIP's loss whole and in recomputed blocks: the memory kept for the backward, peak memory, time and error.

`objectives.siglip_loss` on B unit passage and review embeddings (d = 384, float32, CPU, seeded, no mask) with a
learnable scale t = 10 and bias b = -10 (SigLIP's initial values), for each batch size B and each `block`:
None keeps the whole B × B logits and their sigmoid terms for the backward; a block of k passages keeps nothing
of its k × B rows and recomputes them in the backward (`torch.utils.checkpoint`). Columns:

* saved MiB     - what autograd keeps for the backward during the loss forward: the distinct storages of every
                  tensor handed to `torch.autograd.graph.saved_tensors_hooks`, less those of the inputs P, R, t,
                  b (which exist anyway); a checkpointed block's inner tensors never reach the hooks, and the
                  block's arguments, views of the inputs held by the checkpoint, are not counted either
* × B²·4        - that, in B × B float32 matrices
* peak rise MiB - the process's resident high-water mark (ru_maxrss) after one forward + backward, less its
                  resident size (/proc/self/statm) just before, in a fresh process per row, after a warm-up at
                  B = 64 (in blocks of 32 where the row has blocks): what the run added to the peak (saved
                  tensors, gradients and the backward's transients together, as the allocator holds them);
                  "≤ x" where the run did not raise the high-water mark left by the imports (x: that mark less
                  the size before)
* peak rise, mmap MiB - the same in another fresh process with glibc's MALLOC_MMAP_THRESHOLD_=65536, so that
                  every buffer of 64 KiB or more is its own mapping and returns to the system when freed: the
                  rise then follows the tensors alive at the peak, not what the default allocator keeps cached
* s fwd+bwd     - median seconds of one forward + backward over --reps runs (after the first)
* loss          - the loss (the mean over passages of the summed −log σ over reviews)
* abs Δ loss, max abs Δ ∂P, ∂R - against block=None at the same B (0 for that row)

A block of B or more is the whole matrix, computed as block=None.

    nice -n 10 env OMP_NUM_THREADS=1 .venv/bin/python benchmarks/siglip_memory.py         # the quoted table
    .venv/bin/python benchmarks/siglip_memory.py --sizes 1024 --reps 1                    # a quick look
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MIB = 2**20


def rss_mib() -> float:
    "The resident size of this process now."
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / MIB


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def inputs(B: int, d: int) -> tuple:
    "Seeded unit passages and reviews and the learnable scale and bias, all leaves that require gradients."
    import torch

    g = torch.Generator().manual_seed(0)
    P, R = (torch.nn.functional.normalize(torch.randn(B, d, generator=g), dim=-1) for _ in range(2))
    return tuple(x.requires_grad_() for x in (P, R, torch.tensor(10.0), torch.tensor(-10.0)))


def saved_bytes(loss_fn, args) -> int:
    "Bytes of the distinct storages autograd saves during `loss_fn(*args)`, less the storages of `args`."
    import torch

    storages = {}

    def pack(t):
        storages[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss_fn(*args)
    for x in args:
        storages.pop(x.untyped_storage().data_ptr(), None)
    return sum(storages.values())


def run_one(B: int, block: int | None, d: int, reps: int, grad_path: str, rss_only: bool = False) -> dict:
    "One (B, block) in this process: peak rise, saved bytes and times; the loss, ∂P and ∂R go to `grad_path`."
    import torch

    from magicarp_nb.carp.objectives import siglip_loss

    def fwd_bwd(args):
        for x in args:
            x.grad = None
        loss = siglip_loss(*args, block=block)
        loss.backward()
        return loss.detach()

    warm = inputs(64, d)  # thread pools, kernels and the checkpoint's first call outside the measured run
    siglip_loss(*warm, block=None if block is None else 32).backward()
    args = inputs(B, d)
    before, peak_before = rss_mib(), peak_rss_mib()
    loss = fwd_bwd(args)
    peak = peak_rss_mib()
    rise = f"{peak - before:.0f}" if peak > peak_before else f"≤ {peak_before - before:.0f}"  # no new peak: a bound
    if rss_only:
        return {"rise": rise}
    torch.save({"loss": loss, "grad_P": args[0].grad, "grad_R": args[1].grad}, grad_path)
    saved = saved_bytes(lambda *a: siglip_loss(*a, block=block), args)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fwd_bwd(args)
        times.append(time.perf_counter() - t0)
    return {"saved": saved, "rise": rise, "s": statistics.median(times), "threads": torch.get_num_threads()}


def run_in_process(B: int, block: int | None, args, tmp: str, env: dict | None = None) -> dict:
    "One (B, block) in a fresh process, so that its resident peak is its own (`env`: only that peak)."
    grad = str(Path(tmp) / f"{B}_{block}.pt")
    cmd = [sys.executable, __file__, "--one", str(B), str(block), grad]
    cmd += ["--dim", str(args.dim), "--reps", str(args.reps)] + (["--rss-only"] if env else [])
    out = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})})
    line = [x for x in out.stdout.splitlines() if x.startswith("RESULT ")]
    if out.returncode != 0 or not line:
        raise SystemExit(f"B={B} block={block} failed: {out.stderr.strip()[-500:]}")
    return {**json.loads(line[0][len("RESULT ") :]), "grad": grad}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1024,4096,8192", help="comma-separated batch sizes B")
    ap.add_argument("--blocks", default="none,256,1024", help="comma-separated blocks (none: the whole B × B)")
    ap.add_argument("--dim", type=int, default=384, help="embedding width d")
    ap.add_argument("--reps", type=int, default=3, help="timed forward + backward runs per row (median)")
    ap.add_argument("--one", nargs=3, metavar=("B", "BLOCK", "GRAD"), help=argparse.SUPPRESS)
    ap.add_argument("--rss-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    import torch

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    if args.one:
        B, block, grad = args.one
        row = run_one(int(B), None if block == "None" else int(block), args.dim, args.reps, grad, args.rss_only)
        print("RESULT " + json.dumps(row))
        return
    blocks = [None if b.strip().lower() == "none" else int(b) for b in args.blocks.split(",")]
    blocks = [None] + [b for b in blocks if b is not None]  # the reference first
    print(f"siglip_loss, d = {args.dim}, float32, CPU, {torch.get_num_threads()} torch thread(s), {args.reps} reps")
    cols = "| B | block | saved MiB | × B²·4 | peak rise MiB | peak rise, mmap MiB | s fwd+bwd | "
    cols += "loss | abs Δ loss | max abs Δ ∂P | max abs Δ ∂R |"
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for B in (int(s) for s in args.sizes.split(",")):
            ref = None
            for block in blocks:
                r = run_in_process(B, block, args, tmp)
                live = run_in_process(B, block, args, tmp, {"MALLOC_MMAP_THRESHOLD_": "65536"})["rise"]
                got = torch.load(r["grad"])
                ref = ref or got
                dl, dp, dr = ((got[k] - ref[k]).abs().max().item() for k in ("loss", "grad_P", "grad_R"))
                row = (
                    f"| {B} | {block or 'None'} | {r['saved'] / MIB:.1f} | {r['saved'] / (4 * B * B):.2f} | "
                    f"{r['rise']} | {live} | {r['s']:.3f} | {float(got['loss']):.4f} | {dl:.1e} | {dp:.1e} | {dr:.1e} |"
                )
                print(row, flush=True)
                rows.append(row)
    print("\n" + cols + "\n|---|" + "---|" * (cols.count("|") - 2) + "\n" + "\n".join(rows))


if __name__ == "__main__":
    main()
