"""The global loss against the local loss over ranks: the memory autograd keeps, peak memory and seconds per step.

`gradcache.contrastive_step` on N gloo processes on CPU (default 2), each with its B/N pairs of a global batch of
B, InfoNCE with a hard negative-free batch, d = 384, float32. The towers are one shared linear layer over fixed
random inputs, so that what differs, the loss over the gathered batch, is most of the step. The step is the one
training runs; `local_loss=False` computes the B × B loss on every rank, `local_loss=True` each rank's share
(its b = B/N passages against all B reviews and its b reviews against all B passages, `local_loss`). Columns, per
rank (rank 0; the others agree):

* saved MiB    - what autograd keeps for the backward during the step: the distinct storages of every tensor handed
                 to `torch.autograd.graph.saved_tensors_hooks`, less the inputs (gathered embeddings included)
* × B²·4       - that, in B × B float32 matrices
* peak rise MiB - the process's resident high-water mark (ru_maxrss) after the timed steps, less its resident size
                 before them, in fresh processes per row with glibc's MALLOC_MMAP_THRESHOLD_=65536 (every buffer of
                 64 KiB or more its own mapping, returned when freed: the rise follows the tensors alive at the peak)
* s/step       - the median of --reps steps after one warm-up step
* loss         - the global batch's loss the step returns (equal in both modes)

    nice -n 10 .venv/bin/python benchmarks/local_loss.py                # the quoted table (2 ranks, one thread each)
    .venv/bin/python benchmarks/local_loss.py --sizes 256 --reps 2      # a quick look
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

MIB = 2**20


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / MIB


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def rank_run(B: int, d: int, local: bool, reps: int) -> dict:
    "One rank's measurements (called in each process that `launch_local` starts)."
    import torch

    from magicarp_nb.training.distributed import process_group, rank_of, world_size_of
    from magicarp_nb.carp.gradcache import StepSettings, contrastive_step
    from magicarp_nb.carp.objectives import InfoNCE

    torch.set_num_threads(1)
    with process_group("gloo") as group:
        rank, n = rank_of(group), world_size_of(group)
        torch.manual_seed(0)
        tower, objective = torch.nn.Linear(d, d), InfoNCE()
        g = torch.Generator().manual_seed(1 + rank)
        own = torch.arange(B).tensor_split(n)[rank]
        xp, xr = ({"x": torch.randn(len(own), d, generator=g)} for _ in range(2))

        def encode(batch):
            return tower(batch["x"])

        def loss_fn(P, R, shard=None):
            return objective(P, R, shard=shard)

        def step():
            tower.zero_grad(set_to_none=True), objective.zero_grad(set_to_none=True)
            return contrastive_step(encode, encode, loss_fn, [xp, xr], StepSettings(local_loss=local), group=group).loss

        step()  # warm-up: thread pools and gloo's buffers
        storages = {}

        def pack(t):
            storages[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            step()
        for x in (xp["x"], xr["x"], *tower.parameters(), *objective.parameters()):
            storages.pop(x.untyped_storage().data_ptr(), None)
        before, seconds = rss_mib(), []
        for _ in range(reps):
            t0 = time.perf_counter()
            loss = step()
            seconds.append(time.perf_counter() - t0)
        return dict(
            rank=rank,
            saved=sum(storages.values()) / MIB,
            peak_rise=peak_rss_mib() - before,
            seconds=statistics.median(seconds),
            loss=float(loss),
        )


def child(B: int, d: int, local: bool, reps: int, nproc: int) -> None:
    from magicarp_nb.training.distributed import launch_local

    print(json.dumps(launch_local(rank_run, nproc, (B, d, local, reps))[0]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[64, 256, 1024])
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--d", type=int, default=384)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)  # B local(0/1) -- one row in a fresh process
    a = ap.parse_args()
    if a.child:
        child(int(a.child[0]), a.d, a.child[1] == "1", a.reps, a.nproc)
        return
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "65536", "OMP_NUM_THREADS": "1"}
    print(f"{a.nproc} gloo ranks, 1 thread each, d = {a.d}, float32, InfoNCE; per rank (rank 0)")
    print(
        f"{'B':>5} {'loss':>7} {'saved MiB':>10} {'× B²·4':>7} {'peak rise MiB':>14} {'s/step':>8} {'loss value':>11}"
    )
    for B in a.sizes:
        for local in (False, True):
            cmd = [sys.executable, __file__, "--child", str(B), str(int(local)), "x", "--d", str(a.d)]
            cmd += ["--reps", str(a.reps), "--nproc", str(a.nproc)]
            out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout
            r = json.loads(out.strip().splitlines()[-1])
            mode = "local" if local else "global"
            print(
                f"{B:>5} {mode:>7} {r['saved']:>10.1f} {r['saved'] * MIB / (B * B * 4):>7.2f} "
                f"{r['peak_rise']:>14.1f} {r['seconds']:>8.4f} {r['loss']:>11.6f}"
            )


if __name__ == "__main__":
    main()
