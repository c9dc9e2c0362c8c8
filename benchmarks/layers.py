"""Layerwise collapse statistics: the cost of every layer's statistics against the last layer's alone.

    .venv/bin/python benchmarks/layers.py              # GPT-Neo 4 x 256 and 2 x 128 (about 2 minutes, one thread)
    .venv/bin/python benchmarks/layers.py --quick      # 2 x 128 only

The train pass of `anymodel.collect_model` over the same blocks (random tokens, vocabulary 4,096, blocks of
128, batch 32) with `layers="last"` (`collect.collect_stats`: one forward of the base model and one
`CollapseStats.update`) and `layers="all"` (`collect_stats` given `StatsTarget.layers({layer: file})`: the same
forward with every hidden state kept, and one update per layer). Best of 3 interleaved rounds; torch threads as given.
"""

import argparse
import tempfile
import time
from pathlib import Path

import torch
from transformers import GPTNeoForCausalLM

from magicarp_nb.collapse.clm import neo_config
from magicarp_nb.collapse.collect import PassSettings, StatsTarget, collect_stats
from magicarp_nb.core.config import CLMModelConfig
from magicarp_nb.core.stats_files import stats_path


def model_of(depth, width, vocab=4096, ctx=128):
    cfg = CLMModelConfig(n_layer=depth, width=width, n_head=max(1, width // 64), dropout=0.0)
    torch.manual_seed(0)
    return GPTNeoForCausalLM(neo_config(cfg, vocab, ctx, 0)).eval()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--batches", type=int, default=12)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    sizes = [(2, 128)] if a.quick else [(2, 128), (4, 256)]
    print(f"torch threads: {torch.get_num_threads()}; {a.batches} batches of 32 x 128 tokens; best of 3")
    print("| model | layers | last only (s) | all layers (s) | overhead |")
    print("|---|---|---|---|---|")
    for depth, width in sizes:
        model = model_of(depth, width)
        blocks = torch.randint(0, 4096, (32 * a.batches, 128), generator=torch.Generator().manual_seed(0))
        with tempfile.TemporaryDirectory() as d:
            ck = Path(d) / "checkpoint-0"
            times = {"last": [], "all": []}
            fresh = PassSettings(progress=False, resume=False)
            for _ in range(3):  # interleaved rounds
                for kind in ("last", "all"):
                    for p in Path(d).glob("stats/*"):
                        p.unlink()
                    t = time.perf_counter()
                    if kind == "last":
                        collect_stats(model, blocks, StatsTarget.head(stats_path(ck, "train")), settings=fresh)
                    else:
                        paths = {k: stats_path(ck, "train", layer=None if k == depth else k) for k in range(depth + 1)}
                        collect_stats(model, blocks, StatsTarget.layers(paths), settings=fresh)
                    times[kind].append(time.perf_counter() - t)
        last, every = min(times["last"]), min(times["all"])
        print(f"| {depth} x {width} | {depth + 1} | {last:.2f} | {every:.2f} | {100 * (every / last - 1):+.1f} % |")


if __name__ == "__main__":
    main()
