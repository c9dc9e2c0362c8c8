"""CARP past one replica: two towers over 2 ranks four ways, side by side: seconds per step and peak memory.

The same two-tower CARP run (a preset with `encoder.shared=false`, the same global batch of B pairs, microbatches
of 32, the same seed), each in its own `torchrun` launch of `magicarp train`:

* ddp       - data parallel (the torch engine): every rank holds both towers and encodes its B/N pairs, both sides
* tower     - `train.tower_parallel=true`: half the ranks hold the passage tower, half the review tower; each rank
              encodes its side of B/(N/2) pairs, embeddings exchanged
* fsdp      - `train.fsdp=true`: FSDP2, weights, gradients and AdamW state sharded over the ranks
* fsdp_lora - FSDP2 with LoRA adapters (`encoder.lora_r=8`): only the adapters (and projection) train

Seconds per step are the median over the logged steps after the first (`log.csv`, `train.log_every=1`). The
peak resident memory is the largest rank's (ru_maxrss of the launcher's children, on the CPU; each launch runs in
a process of its own so that its peak is its own). On a GPU (`--device cuda`) the resident memory says little;
read `nvidia-smi` or the run's own log there. The final training loss shows that the first three train the same
model (LoRA trains another).

    .venv/bin/python benchmarks/scale_carp.py                          # carp-minilm, 2 ranks, B = 256, 4 steps
    .venv/bin/python benchmarks/scale_carp.py --modes ddp tower --steps 2
    .venv/bin/python benchmarks/scale_carp.py --device cuda --nproc 2  # on a machine with 2 GPUs (gpu.sh)
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

MODES = {
    "ddp": [],
    "tower": ["train.tower_parallel=true"],
    "fsdp": ["train.fsdp=true"],
    "fsdp_lora": ["train.fsdp=true", "encoder.lora_r=8"],
}


def run(mode: str, a, root: Path) -> dict:
    run_dir = root / mode
    holders = a.nproc // 2 if mode == "tower" else a.nproc  # the ranks that share one side of the global batch
    if a.batch % holders:
        raise SystemExit(f"--batch {a.batch} does not split over {holders} ranks ({mode})")
    overrides = ["encoder.shared=false", f"microbatch_size={a.microbatch}", f"train.batch_size={a.batch // holders}"]
    overrides += [f"train.max_steps={a.steps}", "train.log_every=1", "train.eval_every=1000", f"seed={a.seed}"]
    overrides += [f"train.num_threads={a.threads}", f"train.device={a.device}", *MODES[mode]]
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(a.nproc)]
    cmd += ["-m", "magicarp_nb.cli", "train", a.preset, *overrides, "--run-dir", str(run_dir)]
    t0 = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": str(a.threads)})
    if proc.returncode:
        raise SystemExit(f"{mode} failed:\n{proc.stderr[-3000:]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # this process runs one launch: its ranks' peak
    log = pd.read_csv(run_dir / "log.csv").dropna(subset=["train_loss"])
    return {
        "mode": mode,
        "pairs/rank": a.batch // holders,
        "s/step": round(float(log["seconds"].diff().iloc[1:].median()), 2),
        "peak RSS MiB (largest rank)": round(peak / 1024),
        "final train loss": round(float(log["train_loss"].iloc[-1]), 4),
        "wall s": round(time.time() - t0, 1),
    }


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--preset", default="carp-minilm")
    p.add_argument("--nproc", type=int, default=2, help="ranks (an even number: towers in parallel halves them)")
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--batch", type=int, default=256, help="pairs in the global batch")
    p.add_argument("--microbatch", type=int, default=32, help="pairs per encoder forward")
    p.add_argument("--threads", type=int, default=1, help="torch threads per rank")
    p.add_argument("--device", default="cpu")
    p.add_argument("--seed", type=int, default=12)
    p.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    p.add_argument("--one", help=argparse.SUPPRESS)  # run one mode in this process and print its row as JSON
    a = p.parse_args(argv)
    if a.one:
        with tempfile.TemporaryDirectory() as d:
            print(json.dumps(run(a.one, a, Path(d))))
        return
    rows = []
    for mode in a.modes:  # each launch in a process of its own, so that its peak memory is its own
        args = [a.preset, a.nproc, a.steps, a.batch, a.microbatch, a.threads, a.device, a.seed]
        flags = ["--preset", "--nproc", "--steps", "--batch", "--microbatch", "--threads", "--device", "--seed"]
        cmd = [sys.executable, __file__, "--one", mode, *[x for f, v in zip(flags, args) for x in (f, str(v))]]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode:
            print(f"{mode}: failed\n{out.stderr[-2000:]}", file=sys.stderr)
            continue
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print(f"{a.preset}, two towers, {a.nproc} ranks, global batch {a.batch}, microbatches of {a.microbatch}, "
          f"{a.steps} steps, {a.threads} thread(s) per rank, {a.device}")  # fmt: skip
    print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
