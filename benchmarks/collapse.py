"""Collapse statistics and measures: throughput, time and peak memory, side by side.

    .venv/bin/python benchmarks/collapse.py                 # everything (about 10 minutes on 2 cores)
    .venv/bin/python benchmarks/collapse.py --quick         # small sizes only

Part 1, collection: tokens/s of a bare forward against the collection passes on the same batches of a
GPT-Neo (2 layers x 128, vocabulary 4,096, blocks of 128, batch 32), and the per-class sums done the way the
paper's code does them (a one-hot matrix product) against ours (index_add).

Part 2, measures: time and peak memory of every group of measures from `nc_row` against a plain implementation
that materialises K x K matrices, on synthetic statistics (K classes, dimension D). Each cell runs in a fresh
process; its peak RSS is reset (Linux /proc/self/clear_refs) once the inputs are built, so "peak" is the
process's peak during the measure and "extra" that peak minus the RSS before it.
"""

import argparse
import json
import math
import subprocess
import sys
import time

import torch

GROUPS = ["norms", "etf", "pairs", "dual", "agreement"]


# ----------------------------------------------------------------------------------------------------------------
# plain implementations: the obvious dense code, K x K matrices included
def plain_group(group, stats, W, ag):
    from magicarp_nb.geometry.measures import kept_classes

    idx = kept_classes(stats.counts)
    M = stats.means[idx]
    Mc = M - M.mean(0)
    K = len(idx)

    def etf():
        return (torch.eye(K, dtype=torch.float64) - 1 / K) / math.sqrt(K - 1)

    if group == "norms":
        n = Mc.norm(dim=1)
        return [n.mean(), n.var(), n.log().mean(), n.log().var()]
    if group == "etf":
        G = Mc @ Mc.T
        return [(G / G.norm() - etf()).norm()]
    if group == "pairs":
        iu = torch.triu_indices(K, K, 1)
        G = Mc @ Mc.T
        D2 = torch.cdist(M, M) ** 2
        V = stats.variances[idx]
        cdnv = ((V[:, None] + V[None, :]) / 2 / D2**2)[iu[0], iu[1]].mean()
        U = Mc / Mc.norm(dim=1, keepdim=True)
        LK = -torch.log(torch.cdist(U, U))[iu[0], iu[1]]
        g = G[iu[0], iu[1]]
        return [cdnv, g.mean(), g.var(unbiased=False), LK.mean(), LK.var(unbiased=False)]
    if group == "dual":
        Wk = W[idx].double()
        Gw = Wk @ Mc.T
        cos = torch.nn.functional.cosine_similarity(Wk, Mc)
        return [(Gw / Gw.norm() - etf()).norm(), (Wk * Mc).sum(1).mean(), cos.mean()]
    if group == "agreement":
        return [ag.hits[idx].sum(), (ag.counts[idx] - ag.hits[idx]).sum()]


def synthetic(K, D, seed=0):
    from magicarp_nb.geometry.collapse import AgreementStats, CollapseStats

    g = torch.Generator().manual_seed(seed)
    s = CollapseStats(K, D)
    s.counts = torch.randint(1, 1000, (K,), generator=g).double()
    s.sums = torch.randn(K, D, generator=g, dtype=torch.float64) * s.counts[:, None]
    s.m2 = torch.rand(K, generator=g, dtype=torch.float64) * s.counts
    W = torch.randn(K, D, generator=g)
    ag = AgreementStats(K)
    ag.train_fingerprint = s.fingerprint()
    ag.counts = torch.full((K,), 5.0, dtype=torch.float64)
    ag.hits = torch.randint(0, 6, (K,), generator=g).double()
    return s, W, ag


def _status_kb(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])


def child(impl, group, K, D, threads):
    torch.set_num_threads(threads)
    from magicarp_nb.geometry.measures import nc_row

    stats, W, ag = synthetic(K, D)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the peak (VmHWM) to the current RSS
    base = _status_kb("VmRSS") * 1024
    t = time.perf_counter()
    if impl == "ours":
        nc_row(stats, W, ag, groups=[group])
    else:
        plain_group(group, stats, W, ag)
    secs = time.perf_counter() - t
    peak = _status_kb("VmHWM") * 1024
    print(json.dumps({"secs": secs, "peak_mb": peak / 2**20, "extra_mb": max(0, peak - base) / 2**20}))


def run_child(impl, group, K, D, threads):
    out = subprocess.run(
        [sys.executable, __file__, "--child", impl, group, str(K), str(D), "--threads", str(threads)],
        capture_output=True,
        text=True,
    )
    if out.returncode:
        return {"error": out.stderr.strip().splitlines()[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def interleaved_best(fns: dict, batches: list, rounds: int = 3) -> dict:
    "Each contender's fastest pass over `batches`, in interleaved rounds (after a warm-up call each)."
    times = {k: [] for k in fns}
    for f in fns.values():
        f(batches[0])
    for _ in range(rounds):  # interleaved: every contender sees the same machine state
        for k, f in fns.items():
            t = time.perf_counter()
            for ids in batches:
                f(ids)
            times[k].append(time.perf_counter() - t)
    return {k: min(v) for k, v in times.items()}


# ----------------------------------------------------------------------------------------------------------------
def collection(threads, n_batches=24, batch=32, L=128):
    from magicarp_nb.collapse.clm import neo_config
    from magicarp_nb.geometry.collapse import AgreementStats, CollapseStats
    from magicarp_nb.collapse.collect import feature_forward, head_input_forward
    from magicarp_nb.core.config import CLMModelConfig
    from transformers import GPTNeoForCausalLM

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    V = 4096
    model = GPTNeoForCausalLM(neo_config(CLMModelConfig(n_layer=2, width=128, n_head=4), V, L, 0)).eval()
    blocks = torch.randint(0, V, (n_batches * batch, L))
    batches = list(blocks.split(batch))
    forward = feature_forward(model, blocks[:1])

    def feats(ids):
        return forward(ids)[0]

    W = model.get_output_embeddings().weight
    train = CollapseStats(V, 128).update(torch.randn(V * 4, 128), torch.arange(V).repeat(4))

    def bare_full(ids):
        model(input_ids=ids)

    def bare_base(ids):
        feats(ids)

    st, ag, sums = CollapseStats(V, 128), AgreementStats(V), torch.zeros(V, 128, dtype=torch.float64)

    def train_pass(ids):
        st.update(feats(ids)[:, :-1], ids[:, 1:])

    def val_pass(ids):
        x, logits, _ = head_input_forward(model, ids)
        ag.update(x[:, :-1], ids[:, 1:], W, train, logits=logits[:, :-1].reshape(-1, V))

    def onehot_sums(ids):  # the paper's per-class sums
        x = feats(ids)[:, :-1].reshape(-1, 128).double()
        onehot = ids[:, 1:].reshape(-1)[:, None] == torch.arange(V)[None, :]
        sums.add_(onehot.T.double() @ x)

    fns = {
        "bare forward (full, with LM head)": bare_full,
        "bare forward (base model)": bare_base,
        "train pass (base + CollapseStats)": train_pass,
        "val pass (full + AgreementStats)": val_pass,
        "base + one-hot sums (paper's way)": onehot_sums,
    }
    with torch.no_grad():
        best = interleaved_best(fns, batches)
    tokens = n_batches * batch * (L - 1)
    print(
        f"\n## Collection throughput (GPT-Neo 2x128, vocab {V}, {n_batches} batches of {batch}x{L}, "
        f"{threads} threads; best of 3)\n"
    )
    print("| pass | tokens/s | vs bare forward of the same kind |\n|---|---|---|")
    pairs = {
        "train pass (base + CollapseStats)": "bare forward (base model)",
        "base + one-hot sums (paper's way)": "bare forward (base model)",
        "val pass (full + AgreementStats)": "bare forward (full, with LM head)",
    }
    for k, t in best.items():
        rel = f"{100 * (t / best[pairs[k]] - 1):+.1f} % time" if k in pairs else "reference"
        print(f"| {k} | {tokens / t:,.0f} | {rel} |")


def measures(threads, sizes):
    print(f"\n## Measures ({threads} threads; time, peak RSS of the process and extra memory over the inputs)\n")
    print("| K | D | group | ours: s | ours: peak / extra MB | plain (K x K): s | plain: peak / extra MB |")
    print("|---|---|---|---|---|---|---|")
    for K, D in sizes:
        for group in GROUPS:
            o = run_child("ours", group, K, D, threads)
            dense = group in ("etf", "pairs", "dual") and K * K * 8 * 4 > 8 * 2**30
            p = {"skip": True} if dense else run_child("plain", group, K, D, threads)
            fo = (
                f"{o['secs']:.2f} | {o['peak_mb']:.0f} / {o['extra_mb']:.0f}"
                if "secs" in o
                else f"error | {o['error']}"
            )
            if "skip" in p:
                fp = f"n/a | one K x K float64 matrix is {K * K * 8 / 2**30:.0f} GB"
            elif "secs" in p:
                fp = f"{p['secs']:.2f} | {p['peak_mb']:.0f} / {p['extra_mb']:.0f}"
            else:
                fp = f"error | {p['error']}"
            print(f"| {K:,} | {D} | {group} | {fo} | {fp} |", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", nargs=4)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    if a.child:
        impl, group, K, D = a.child
        child(impl, group, int(K), int(D), a.threads)
    else:
        print(f"torch {torch.__version__}, {a.threads} threads")
        collection(a.threads, n_batches=6 if a.quick else 24)
        measures(a.threads, [(2048, 128)] if a.quick else [(8192, 256), (50257, 768)])
