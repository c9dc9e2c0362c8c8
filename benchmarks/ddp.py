"""Data-parallel gradient reduction of the CARP step: torch's DDP (the torch engine) against one all-reduce after
the backward (`distributed.average_gradients`, the trainer's reduction before DDP), side by side on the same ranks.

Each rank runs the microbatched contrastive step (`gradcache.contrastive_step`, GradCache replays included) on
its shard of a global batch of random token ids through a randomly initialised MiniLM-L6 tower (22.7 M
parameters) and InfoNCE, then the gradients are reduced over the ranks:

* ddp     - `engines.TorchEngine`: DDP's bucketed all-reduce, overlapped with the step's last backward (every
            backward but the last inside `no_sync`), one reduction per step
* average - the plain step, then `average_gradients`: one collective for the sizes and one all-reduce of every
            gradient concatenated, after the backward

The contenders alternate step by step (A B A B ...) so that a slow phase of a shared machine hits both; the table
gives the median seconds per step after a warm-up step each, the reductions counted per step, the relative
gradient difference between the two (they must agree), ranks and torch threads per rank.

    .venv/bin/python benchmarks/ddp.py                      # 2 ranks × 16 pairs, microbatches of 8, 6 steps
    .venv/bin/python benchmarks/ddp.py --nproc 2 --batch 32 --microbatch 16 --steps 10
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

import torch


def _batch(n: int, length: int, vocab: int, seed: int) -> dict:
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, vocab, (n, length), generator=g)
    lengths = torch.randint(length // 4, length + 1, (n,), generator=g)
    mask = (torch.arange(length) < lengths[:, None]).long()
    return {"input_ids": ids * mask, "attention_mask": mask}


def worker(a) -> None:
    from magicarp_nb.core.config import EncoderConfig, TrainConfig
    from magicarp_nb.training.distributed import average_gradients, process_group, rank_of, world_size_of
    from magicarp_nb.carp.encoders import build_encoder
    from magicarp_nb.training.engines import TorchEngine
    from magicarp_nb.carp.gradcache import StepSettings, contrastive_step
    from magicarp_nb.carp.objectives import InfoNCE

    torch.set_num_threads(a.threads)
    with process_group("gloo") as group:
        rank, n = rank_of(group), world_size_of(group)
        torch.manual_seed(0)
        enc = build_encoder(EncoderConfig(random_init=True, dropout=0.0))[0]
        model = torch.nn.ModuleDict(dict(enc=enc, obj=InfoNCE(temperature=0.05)))
        params = list(model.parameters())
        vocab = enc.backbone.config.vocab_size
        engine = TorchEngine()
        engine.setup(model, torch.optim.SGD(params, lr=0.0), TrainConfig(), group)

        def loss_fn(P, R):
            return model["obj"](P, R)

        def step(mode: str, k: int) -> tuple:
            bp, br = (_batch(a.batch, a.length, vocab, 1000 * k + 2 * rank + s) for s in (0, 1))
            model.zero_grad(set_to_none=True)
            before, t0 = engine.reductions, time.perf_counter()
            if mode == "ddp":
                contrastive_step(
                    enc, enc, loss_fn, [bp, br], StepSettings(a.microbatch), backward=engine.backward, group=group
                )
                engine.reduce_gradients()
                reductions = engine.reductions - before
            else:
                contrastive_step(enc, enc, loss_fn, [bp, br], StepSettings(a.microbatch), group=group)
                average_gradients(params, group)
                reductions = 1
            seconds = time.perf_counter() - t0
            return seconds, reductions, torch.cat([p.grad.flatten() for p in params if p.grad is not None])

        times, counts, diffs = {"ddp": [], "average": []}, {"ddp": set(), "average": set()}, []
        for k in range(a.steps + 1):
            grads = {}
            for mode in ("ddp", "average") if k % 2 == 0 else ("average", "ddp"):
                s, r, grads[mode] = step(mode, k)
                if k:  # the first step of each is a warm-up
                    times[mode].append(s)
                counts[mode].add(r)
            diffs.append(float((grads["ddp"] - grads["average"]).norm() / grads["average"].norm()))
        if rank == 0:
            head = f"CARP step, MiniLM-L6 random init, {n} gloo ranks × {a.batch} pairs, microbatches of {a.microbatch}"
            print(f"{head}, {a.threads} torch thread(s) per rank, {a.steps} steps each after a warm-up")
            print(f"{'reduction':<10}{'s/step':>10}{'reductions/step':>17}")
            for mode in ("ddp", "average"):
                print(
                    f"{mode:<10}{statistics.median(times[mode]):>10.3f}{'/'.join(map(str, sorted(counts[mode]))):>17}"
                )
            ratio = statistics.median(times["average"]) / statistics.median(times["ddp"])
            print(f"average / ddp: {ratio:.2f}; largest relative gradient difference between them {max(diffs):.1e}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nproc", type=int, default=2, help="ranks (gloo processes on this machine)")
    ap.add_argument("--batch", type=int, default=16, help="pairs per rank")
    ap.add_argument("--microbatch", type=int, default=8, help="items per encoder forward")
    ap.add_argument("--length", type=int, default=64, help="tokens per text (lengths drawn from a quarter of it up)")
    ap.add_argument("--steps", type=int, default=6, help="measured steps per contender")
    ap.add_argument("--threads", type=int, default=1, help="torch threads per rank")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return worker(a)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(a.nproc), __file__]
    cmd += ["--worker", *sys.argv[1:]]
    env = {**os.environ, "OMP_NUM_THREADS": str(a.threads), "PYTHONWARNINGS": "ignore"}
    raise SystemExit(subprocess.run(cmd, env=env).returncode)


if __name__ == "__main__":
    main()
