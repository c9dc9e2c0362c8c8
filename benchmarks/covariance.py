"""NC1 by covariances: what the D x D within-class scatter costs the train pass, side by side.

    .venv/bin/python benchmarks/covariance.py                        # K = 8,192, D = 256 and 768 (a few minutes)
    .venv/bin/python benchmarks/covariance.py --dims 256 --rounds 1  # a first look

The train pass folds each batch into `CollapseStats` (09_collapse). With the scatter (the default) it also adds
one (D x N) by (N x D) float64 product and a rank update of the classes present; without it (`scatter=False`:
the statistics before NC1 by covariances) it keeps per-class counts, sums and squared deviations only. On the
same batches, in interleaved rounds (each contender's best round is kept):

- the update alone: `CollapseStats.update` on synthetic float32 features, N = batch x (L - 1) tokens of D
  dimensions, labelled by the next tokens of random blocks over K classes;
- the train pass as `21_collect` runs it: a GPT-Neo base model (2 layers of width D, vocabulary K, blocks of L)
  forward, then the update, against the bare forward.

Then the covariance group of measures at those sizes (`nc_row(groups=["covariance"])`: K > D, so `nc1_svd` is
NaN). Run nothing else meanwhile; the table states the thread count.
"""

import argparse
import time
import warnings

import torch

from collapse import interleaved_best  # the same interleaved timer as the collapse benchmark (this folder)


def one_width(D, K, batch, L, n_batches, rounds):
    from magicarp_nb.collapse.clm import neo_config
    from magicarp_nb.geometry.collapse import CollapseStats
    from magicarp_nb.collapse.collect import feature_forward
    from magicarp_nb.core.config import CLMModelConfig
    from magicarp_nb.geometry.measures import nc_row
    from transformers import GPTNeoForCausalLM

    torch.manual_seed(0)
    model = GPTNeoForCausalLM(neo_config(CLMModelConfig(n_layer=2, width=D, n_head=max(1, D // 64)), K, L, 0)).eval()
    blocks = torch.randint(0, K, (n_batches * batch, L))
    batches = list(blocks.split(batch))
    forward = feature_forward(model, blocks[:1])
    feats = {id(b): torch.randn(batch, L - 1, D) for b in batches}  # synthetic features for the update alone
    stats = {"with": CollapseStats(K, D), "without": CollapseStats(K, D, scatter=False)}

    def update(kind):
        return lambda ids: stats[kind].update(feats[id(ids)], ids[:, 1:])

    def train_pass(kind):
        return lambda ids: stats[kind].update(forward(ids)[0][:, :-1], ids[:, 1:])

    fns = {
        ("update", "without"): update("without"),
        ("update", "with"): update("with"),
        ("pass", "bare"): lambda ids: forward(ids),
        ("pass", "without"): train_pass("without"),
        ("pass", "with"): train_pass("with"),
    }
    with torch.no_grad():
        best = interleaved_best(fns, batches, rounds)
    full = CollapseStats(K, D)
    full.update(torch.randn(K * 4, D), torch.arange(K).repeat(4))  # every class seen, 4 samples each
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nc1_svd is NaN for K > D, by definition
        nc_row(full, groups=["covariance"])
    measure_s = time.perf_counter() - t
    return {k: v / n_batches for k, v in best.items()}, measure_s


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dims", type=int, nargs="+", default=[256, 768])
    ap.add_argument("--classes", type=int, default=8192)
    ap.add_argument("--batch", type=int, default=32, help="blocks per batch")
    ap.add_argument("--block", type=int, default=128, help="tokens per block")
    ap.add_argument("--batches", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    N = a.batch * (a.block - 1)
    print(
        f"\n## The within-class scatter in the train pass (K = {a.classes:,} classes, batches of {a.batch} x "
        f"{a.block} tokens = {N:,} samples, {a.threads} thread(s), best of {a.rounds} interleaved rounds)\n"
    )
    print("| D | per batch | without scatter: ms | with scatter: ms | the scatter costs |")
    print("|---|---|---|---|---|")
    for D in a.dims:
        ms, measure_s = one_width(D, a.classes, a.batch, a.block, a.batches, a.rounds)
        up0, up1 = ms[("update", "without")] * 1e3, ms[("update", "with")] * 1e3
        bare, p0, p1 = (ms[("pass", k)] * 1e3 for k in ("bare", "without", "with"))
        print(f"| {D} | `CollapseStats.update` alone | {up0:,.1f} | {up1:,.1f} | {up1 - up0:+,.1f} ms |")
        print(
            f"| {D} | train pass: GPT-Neo 2 x {D} forward ({bare:,.0f} ms bare) + update | {p0:,.0f} | {p1:,.0f} | "
            f"{100 * (p1 - p0) / p0:+.1f} % of the pass |"
        )
        print(
            f"| {D} | covariance measures (`nc_row`, K = {a.classes:,}) | | {measure_s * 1e3:,.0f} (once) | |",
            flush=True,
        )


if __name__ == "__main__":
    main()
