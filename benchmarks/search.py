"""Top-k search over a corpus of embeddings: exact blockwise (torch) against faiss, flat and IVF.

Seeded clustered unit vectors (d = 384, float32; 256 random centres, each document a centre plus noise, each query
a document plus noise) as --queries queries and N documents, top k = 100, for:

* exact blockwise - `beir.top_k` with blocks of 4,096 documents (its memory: a block of scores per query block)
* faiss flat      - `beir.faiss_top_k`: faiss's exact inner-product index (`IndexFlatIP`)
* faiss IVF       - `faiss.IndexIVFFlat` with √N lists, trained on the corpus, 8 lists probed: approximate

Columns: seconds to build the index (IVF: training and adding), milliseconds per query (the median of --reps
searches of all queries, divided by their number), the largest resident size during the searches less the size
before them (sampled every millisecond by a thread, each row in a fresh process with glibc's
MALLOC_MMAP_THRESHOLD_=65536 so that freed buffers go back: what the search holds beyond the corpus and the built
index), and the share of the exact top 100 that the search returns (1 for the exact ones).

    nice -n 10 env OMP_NUM_THREADS=1 .venv/bin/python benchmarks/search.py   # the quoted table
    .venv/bin/python benchmarks/search.py --sizes 10000 --reps 1              # a quick look
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time

MIB = 2**20


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / MIB


def one(n: int, method: str, n_queries: int, reps: int) -> dict:
    import faiss
    import torch

    from magicarp_nb.carp.beir import faiss_top_k, top_k

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    faiss.omp_set_num_threads(torch.get_num_threads())
    g = torch.Generator().manual_seed(0)
    unit = torch.nn.functional.normalize
    centres = unit(torch.randn(256, 384, generator=g), dim=-1)  # clustered, as text embeddings are
    D = unit(centres[torch.randint(256, (n,), generator=g)] + 0.08 * torch.randn(n, 384, generator=g), dim=-1)
    Q = unit(D[torch.randint(n, (n_queries,), generator=g)] + 0.08 * torch.randn(n_queries, 384, generator=g), dim=-1)
    want = top_k(Q[:50], D, 100)[1]  # the exact answer of the first 50 queries, for the overlap
    t0 = time.perf_counter()
    if method == "faiss IVF":
        lists = int(n**0.5)
        index = faiss.IndexIVFFlat(faiss.IndexFlatIP(384), 384, lists, faiss.METRIC_INNER_PRODUCT)
        index.train(D.numpy())
        index.add(D.numpy())
        index.nprobe = 8

        def search(q):
            return torch.from_numpy(index.search(q.numpy(), 100)[1]).long()
    elif method == "faiss flat":

        def search(q):
            return faiss_top_k(q, D, 100)[1]
    else:

        def search(q):
            return top_k(q, D, 100, 4096)[1]

    build = time.perf_counter() - t0
    before, seconds, highest, done = rss_mib(), [], [0.0], threading.Event()

    def sample():  # the resident size every millisecond while the searches run (the lifetime mark is the data's)
        while not done.is_set():
            highest[0] = max(highest[0], rss_mib())
            time.sleep(0.001)

    sampler = threading.Thread(target=sample)
    sampler.start()
    for _ in range(reps):
        t = time.perf_counter()
        got = search(Q)
        seconds.append(time.perf_counter() - t)
    done.set(), sampler.join()
    peak = highest[0] - before
    overlap = sum(len(set(a.tolist()) & set(b.tolist())) for a, b in zip(got[:50], want)) / want.numel()
    return {"build": build, "ms_per_query": 1000 * statistics.median(seconds) / n_queries, "peak": peak,
            "overlap": overlap, "threads": torch.get_num_threads()}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(one(int(a.child[0]), a.child[1], a.queries, a.reps)))
        return
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "65536"}
    rows = []
    for n in a.sizes:
        for method in ("exact blockwise", "faiss flat", "faiss IVF"):
            cmd = [sys.executable, __file__, "--child", str(n), method, "--queries", str(a.queries)]
            cmd += ["--reps", str(a.reps)]
            r = json.loads(subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout)
            rows.append((n, method, r))
            print(f"{n} {method}: {r['ms_per_query']:.3f} ms/query", flush=True)
    print(f"\n{a.queries} queries, d = 384, k = 100, {rows[0][2]['threads']} thread(s)\n")
    print("| documents | search | build s | ms / query | peak rise MiB | share of the exact top 100 |")
    print("|---|---|---|---|---|---|")
    for n, method, r in rows:
        print(
            f"| {n:,} | {method} | {r['build']:.2f} | {r['ms_per_query']:.3f} | {r['peak']:.0f} | {r['overlap']:.3f} |"
        )


if __name__ == "__main__":
    main()
