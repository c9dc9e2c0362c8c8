"""Data-parallel CARP training with and without DeepSpeed ZeRO: seconds per step, per-rank optimiser state, memory.

The same CARP run (a preset, 2 ranks by default, the same global batch and seed) trained three ways, each in
its own `torchrun` launch of `magicarp train`, side by side:

* ddp   - the trainer's own data parallelism (DDP): every rank holds the whole AdamW state, one reduction a step
* zero1 - `train.deepspeed=zero1`: AdamW's moments partitioned over the ranks
* zero2 - `train.deepspeed=zero2`: the gradients partitioned too

Seconds per step are the median over the logged steps after the first (`log.csv`, `train.log_every=1`).
The per-rank optimiser state is measured from the run's last checkpoint (`optimizer.pt`: the whole AdamW state
for ddp, every rank's partition for ZeRO, divided by the ranks). The peak resident memory is the largest rank's
(ru_maxrss of the launcher's children). The final training loss shows the three runs train the same model.

    .venv/bin/python benchmarks/zero.py                              # carp-minilm, 2 ranks, 8 steps
    .venv/bin/python benchmarks/zero.py --preset carp-tiny --steps 20
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

import pandas as pd
import torch


def _tensor_mib(x) -> float:
    "MiB of the tensors in a nest of dicts, lists and tuples."
    if isinstance(x, torch.Tensor):
        return x.numel() * x.element_size() / 2**20
    items = x.values() if isinstance(x, dict) else x if isinstance(x, (list, tuple)) else ()
    return sum(_tensor_mib(v) for v in items)


def _state_mib(optimizer_pt: Path, ranks: int) -> float:
    "MiB of optimiser state one rank holds."
    state = torch.load(optimizer_pt, map_location="cpu", weights_only=True)
    if "engine" in state:  # every rank's ZeRO partition of AdamW's moments: one share per rank
        return _tensor_mib([sd["base_optimizer_state"] for sd in state["ranks"]]) / ranks
    return _tensor_mib(state["state"])


def run(mode: str, a, root: Path) -> dict:
    run_dir = root / mode
    overrides = [f"train.max_steps={a.steps}", "train.log_every=1", f"train.batch_size={a.batch_size}"]
    overrides += [
        f"train.num_threads={a.threads}",
        "train.device=cpu",
        f"seed={a.seed}",
        "train.eval_every=1000",
        "train.eval_at_start=false",
    ]
    overrides += [] if mode == "ddp" else [f"train.deepspeed={mode}"]
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(a.nproc)]
    cmd += ["-m", "magicarp_nb.cli", "train", a.preset, *overrides, "--run-dir", str(run_dir)]
    t0 = time.time()
    env = {**os.environ, "OMP_NUM_THREADS": str(a.threads)}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode:
        raise SystemExit(f"{mode} failed:\n{proc.stderr[-3000:]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # this process runs one launch: its ranks' peak
    log = pd.read_csv(run_dir / "log.csv").dropna(subset=["train_loss"])
    last = sorted(run_dir.glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[1]))[-1]
    return {
        "mode": mode,
        "s/step": float(log["seconds"].diff().iloc[1:].median()),
        "optimiser MiB/rank": round(_state_mib(last / "optimizer.pt", a.nproc), 1),
        "peak RSS MiB (largest rank)": round(peak / 1024),
        "final train loss": float(log["train_loss"].iloc[-1]),
        "wall s": round(time.time() - t0, 1),
    }


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--preset", default="carp-minilm")
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=16, help="pairs per rank")
    p.add_argument("--threads", type=int, default=1, help="torch threads per rank")
    p.add_argument("--seed", type=int, default=12)
    p.add_argument("--modes", nargs="+", default=["ddp", "zero1", "zero2"])
    p.add_argument("--one", help=argparse.SUPPRESS)  # run one mode in this process and print its row as JSON
    a = p.parse_args(argv)
    if a.one:
        with tempfile.TemporaryDirectory() as d:
            print(json.dumps(run(a.one, a, Path(d))))
        return
    rows = []
    for mode in a.modes:  # each launch in a process of its own, so that its peak memory is its own
        args = [a.preset, a.nproc, a.steps, a.batch_size, a.threads, a.seed]
        flags = ["--preset", "--nproc", "--steps", "--batch-size", "--threads", "--seed"]
        cmd = [sys.executable, __file__, "--one", mode, *[x for f, v in zip(flags, args) for x in (f, str(v))]]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        rows.append(json.loads(out.strip().splitlines()[-1]))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print(f"{a.preset}, {a.nproc} ranks × {a.batch_size} pairs, {a.steps} steps, {a.threads} thread(s) per rank, CPU")
    print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
