"""Mass-encoding throughput: `embeddings.encode_corpus` of stdlib passages and docstrings with the zero-shot MiniLM.

    .venv/bin/python benchmarks/encode.py --n 512 --threads 1

Prints one row per (column, dtype): texts, seconds, texts/s, and the torch thread count.
"""

import argparse
import tempfile
import time
from pathlib import Path

import pandas as pd
import torch

from magicarp_nb.core.config import PairDataConfig
from magicarp_nb.data.pairs import load_pairs
from magicarp_nb.carp.embeddings import EncodeSettings, encode_corpus
from magicarp_nb.carp.carp_eval import zero_shot_model


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=512, help="texts per column (a seeded sample of the training pairs)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads")
    ap.add_argument("--batch-size", type=int, default=64)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    model, tok, max_length = zero_shot_model()
    train = load_pairs(PairDataConfig()).train
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for column in ("passage", "review"):
            for dtype in ("float32", "float16"):
                t0 = time.perf_counter()
                settings = EncodeSettings(sample=a.n, dtype=dtype, batch_size=a.batch_size, progress=False)
                encode_corpus(
                    model.passage_encoder, tok, train[column], Path(d) / f"{column}-{dtype}", settings, max_length
                )
                secs = time.perf_counter() - t0
                rows.append({"column": column, "dtype": dtype, "texts": a.n, "seconds": secs, "texts/s": a.n / secs})
    print(f"encode_corpus, zero-shot MiniLM, max_length {max_length}, {torch.get_num_threads()} thread(s)")
    print(pd.DataFrame(rows).round(2).to_string(index=False))


if __name__ == "__main__":
    main()
